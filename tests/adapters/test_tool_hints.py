"""Every hint a tool call's answer gives runs as given on the tool surface (issue 33 item 1,
DESIGN 11): each call it names (``head path=x start=5``) dispatches without an error, and
each argument it says to pass or raise (``pass multiline=true``, ``raise limit``) is one
the tool takes, listed in its schema or not."""

from __future__ import annotations

import re

import pytest

from jitctx import Workspace
from jitctx.adapters.cliview import _VALUE
from jitctx.adapters.tools import TOOLS, dispatch

_HINT_LINE = re.compile(r"^(?:\[(?:note|truncated|instructions|stale)\] |error \(|hint: )")
_CALL = re.compile(rf"\b({'|'.join(TOOLS)})((?: [a-z_]+={_VALUE})+)")
_ARG = re.compile(rf"([a-z_]+)=({_VALUE})")
_NAMED = re.compile(rf"\b(?:pass|raise|lower) ([a-z_]+)(?:=({_VALUE}))?")


def _value(text: str) -> object:
    if text[:1] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"\d[\d,]*", text):
        return int(text.replace(",", ""))
    return text


def calls_in(text: str) -> list[tuple[str, dict]]:
    return [(m.group(1), {k: _value(v) for k, v in _ARG.findall(m.group(2))}) for m in _CALL.finditer(text)]


SCENARIOS = [
    ("basic", "glob", {"pattern": "*", "limit": 1}),
    ("basic", "glob", {"pattern": "src"}),
    ("basic", "glob", {"pattern": "*", "path": "README.md"}),
    ("basic", "glob", {"pattern": "*", "path": "missing-dir"}),
    ("basic", "grep", {"pattern": "a("}),
    ("basic", "grep", {"pattern": "a\nb"}),
    ("basic", "grep", {"pattern": "zzzzqq"}),
    ("basic", "grep", {"pattern": "line", "limit": 1}),
    ("basic", "grep", {"pattern": "line", "offset": 99999}),
    ("basic", "grep", {"pattern": "line", "mode": "content", "max_tokens": 200}),
    ("basic", "head", {"path": "text/numbers.txt", "n": 5}),
    ("basic", "head", {"path": "text/numbers.txt", "start": 999}),
    ("basic", "head", {"path": "text/numbers.txt", "start": 10, "n": 2}),
    ("basic", "head", {"path": "src"}),
    ("basic", "head", {"path": "missing.py"}),
    ("basic", "head", {"path": "src/app.py", "symbol": "nothing"}),
    ("basic", "head", {"path": "README.md", "symbol": "x"}),
    ("basic", "head", {"path": "src/util/helpers.py", "n": 1}),
    ("code", "head", {"path": "twice.py", "symbol": "run"}),  # two definitions bear the name
    ("code", "outline", {"path": "rational.py"}),
    ("basic", "outline", {"path": "README.md"}),
    ("code", "symbols", {"query": "zzzq"}),
    ("code", "symbols", {"query": "Rational.", "limit": 1}),
    ("basic", "locate", {"task": "greet", "limit": 1}),
    ("basic", "locate", {"task": "zzqx qqzz"}),
    ("basic", "notes", {"action": "add", "text": "greet is in helpers", "paths": ["src/util/helpers.py"]}),
    ("basic", "notes", {"action": "list"}),
    ("basic", "notes", {"action": "read"}),
    ("basic", "notes", {"action": "read", "id": 9}),
    ("basic", "notes", {"action": "add"}),
]


@pytest.mark.parametrize("fixture,tool,args", SCENARIOS, ids=[f"{t} {a}"[:60] for _, t, a in SCENARIOS])
def test_issue_33_every_tool_hint_runs_as_given(make_repo, fixture, tool, args):
    repo = make_repo(fixture)
    if args.get("path") == "twice.py":
        repo.write("twice.py", "class A:\n    def run(self):\n        pass\n\n\nclass B:\n    def run(self):\n        pass\n")
    with Workspace(repo.root, max_tokens=4000) as ws:
        if tool == "outline":  # a cut outline: shown in part, its hint names the call that lists all
            args = {**args, "limit": 1}
        out = dispatch(tool, args, workspace=ws)
        lines = [ln for ln in out.text.splitlines() if _HINT_LINE.match(ln)]
        assert lines, out.text
        for line in lines:
            for name, call_args in calls_in(line):
                again = dispatch(name, call_args, workspace=ws)
                assert not again.is_error, f"{tool} {args}: the hint {line!r} gave {name} {call_args}: {again.text}"
            for m in _NAMED.finditer(re.sub(_CALL, "", line)):
                arg, value = m.group(1), m.group(2)
                spec = TOOLS[tool]
                takes = {p.name for p in (*spec.params, *spec.unlisted)}
                if arg in ("the", "a", "it", "them", "one", "its"):
                    continue
                assert arg in takes, f"{tool} {args}: {line!r} names {arg!r}, which the {tool} tool does not take"
                if value is not None:
                    again = dispatch(tool, {**args, arg: _value(value)}, workspace=ws)
                    assert not again.is_error or again.data["error"].get("field") != arg, f"{line!r}: {again.text}"


def test_issue_33_a_tool_takes_its_unlisted_arguments():
    """What a hint may name beyond the schema: grep's multiline, locate's and outline's limit, max_tokens where unlisted."""
    from jitctx.adapters.tools import parse_arguments

    assert parse_arguments("grep", {"pattern": "a", "multiline": True})[1]["multiline"] is True
    assert parse_arguments("locate", {"task": "x", "limit": 30, "max_tokens": 8000})[1] == {"task": "x", "limit": 30, "max_tokens": 8000}
    assert parse_arguments("outline", {"path": "a.py", "limit": 5})[1]["limit"] == 5
    assert "multiline" not in TOOLS["grep"].schema()["properties"]  # not listed: the tool list stays small
