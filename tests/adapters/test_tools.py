"""jitctx.tools: schema export for three providers, validating dispatch."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jitctx.adapters import cli
from jitctx.adapters.tools import MAX_ARGUMENT_BYTES, TOOLS, parse_arguments
from jitctx.errors import QueryError
from jitctx.render import age
from jitctx.session.workspace import Workspace
from jitctx.tools import DEFAULT_MAX_TOKENS, FORMATS, ToolOutput, dispatch, export_schemas

WORKTREE = Path(__file__).resolve().parents[2]


@pytest.fixture
def ws(repo):
    return Workspace(repo.root, max_tokens=DEFAULT_MAX_TOKENS, rereads=False)  # dispatch as such (re-reads: tests/test_reread.py)


def _params(fmt: str) -> list[dict]:
    out = export_schemas(fmt)
    if fmt == "openai":
        return [t["function"]["parameters"] for t in out]
    if fmt == "openai-responses":
        return [t["parameters"] for t in out]
    return [t["input_schema"] for t in out]


# -- schemas ------------------------------------------------------------------


def test_export_anthropic_head_whole():
    head = export_schemas("anthropic")[2]
    assert head == {
        "name": "head",
        "description": (
            "Read a text file's lines from start. Use after glob or grep. "
            "Returns numbered lines; a notice gives the call that reads on; secret and binary files refused. "
            "In a session, unchanged lines shown before are a short note, a changed file may be a diff. "
            'Example: {"path": "src/app.py", "start": 120, "n": 40}'
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "file to read, repo-relative"},
                "n": {"type": "integer", "minimum": 1, "description": "number of lines (max 2000)", "default": 100},
                "start": {"type": "integer", "minimum": 1, "description": "first line to show, 1-based", "default": 1},
                "symbol": {"type": "string", "description": "one definition (name or Class.method) instead of lines"},
                "force": {"type": "boolean", "description": "in a session: show again even if unchanged", "default": False},
                "max_tokens": {"type": "integer", "minimum": 1, "description": "token cap (200-50,000)", "default": 4000},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    }


def test_export_openai_responses_tail_whole():
    tail = export_schemas("openai-responses")[3]
    assert tail == {
        "type": "function",
        "name": "tail",
        "description": TOOLS["tail"].description,
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "file to read, repo-relative"},
                "n": {"type": ["integer", "null"], "minimum": 1, "description": "number of lines (max 2000)"},
                "force": {"type": ["boolean", "null"], "description": "in a session: show again even if unchanged"},
                "max_tokens": {"type": ["integer", "null"], "minimum": 1, "description": "token cap (200-50,000)"},
            },
            "required": ["path", "n", "force", "max_tokens"],
            "additionalProperties": False,
        },
        "strict": True,
    }


def test_export_openai_chat_shape():
    out = export_schemas("openai")
    assert [t["type"] for t in out] == ["function"] * 8
    assert [t["function"]["name"] for t in out] == ["glob", "grep", "head", "tail", "outline", "symbols", "locate", "notes"]
    assert out[0]["function"]["parameters"] == TOOLS["glob"].schema()


def test_export_unknown_format_names_it():
    with pytest.raises(QueryError, match="'gemini'"):
        export_schemas("gemini")


@pytest.mark.parametrize("fmt", FORMATS)
def test_schemas_are_valid_json_schema(fmt):
    for schema in _params(fmt):
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.Draft7Validator.check_schema(schema)


# What OpenAI structured outputs (strict) accept, per its documented subset.
_STRICT_KEYWORDS = {"type", "description", "properties", "required", "additionalProperties", "enum", "items", "minimum", "maximum", "anyOf", "const"}


def _check_strict(schema: dict, where: str) -> None:
    unknown = set(schema) - _STRICT_KEYWORDS
    assert not unknown, f"{where}: keywords strict mode refuses: {unknown}"
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if "object" in types:
        assert schema["additionalProperties"] is False, where
        assert sorted(schema["required"]) == sorted(schema["properties"]), f"{where}: every property must be required"
        for name, sub in schema["properties"].items():
            _check_strict(sub, f"{where}.{name}")
    if "array" in types:
        _check_strict(schema["items"], f"{where}[]")


def test_openai_responses_follow_strict_rules():
    for tool in export_schemas("openai-responses"):
        assert tool["strict"] is True
        _check_strict(tool["parameters"], tool["name"])
        # optional ones nullable, required ones not
        spec = TOOLS[tool["name"]]
        for p in spec.params:
            t = tool["parameters"]["properties"][p.name]["type"]
            assert ("null" in t) == (not p.required), (tool["name"], p.name)


@pytest.mark.parametrize("fmt", FORMATS)
def test_all_objects_closed_and_described(fmt):
    for schema in _params(fmt):
        assert schema["additionalProperties"] is False
        assert all(p.get("description") for p in schema["properties"].values())


def test_descriptions_follow_template_and_examples_validate():
    for name, spec in TOOLS.items():
        d = spec.description
        assert "Use " in d and "Returns " in d and "Example: " in d, name
        assert len(d) < 400, (name, len(d))
        example = json.loads(d.split("Example: ", 1)[1])
        jsonschema.validate(example, spec.schema())
        parse_arguments(name, example)


def test_tool_list_under_2000_tokens():
    from jitctx.tokens.tokenizer import get_tokenizer

    count = get_tokenizer().count
    for fmt in FORMATS:
        assert count(json.dumps(export_schemas(fmt))) < 2000, fmt


def test_cli_tools_prints_each_format(capsys):
    for fmt in FORMATS:
        assert cli.main(["tools", "--format", fmt]) == 0
        assert json.loads(capsys.readouterr().out) == export_schemas(fmt)


def test_cli_tools_default_is_openai(capsys):
    assert cli.main(["tools"]) == 0
    assert json.loads(capsys.readouterr().out) == export_schemas("openai")


def test_jitctx_tools_imports_without_mcp_or_tiktoken():
    code = "import sys, jitctx.tools; print(sorted(m for m in ('mcp', 'tiktoken', 'git') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(WORKTREE)}, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_start_imports_no_mcp():
    code = "import sys; from jitctx.adapters.cli.parser import build_parser; build_parser().format_help(); print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(WORKTREE)}, check=True)
    assert out.stdout.strip() == "False"


# -- argument validation agrees with the schema ---------------------------------

_values = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 3000), st.floats(allow_nan=False, allow_infinity=False, width=32), st.text(max_size=6), st.lists(st.text(max_size=3), max_size=2)
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(TOOLS)),
    args=st.dictionaries(st.sampled_from(["pattern", "path", "n", "start", "limit", "mode", "sort", "glob", "ignore_case", "context", "max_tokens", "bogus"]), _values, max_size=5),
)
@pytest.mark.slow
def test_dispatch_validation_matches_json_schema(name, args):
    """parse_arguments accepts exactly what the schema accepts (null = default; a lone glob string is wrapped)."""
    spec = TOOLS[name]
    nullable = {p.name for p in spec.params if p.nullable}
    cleaned = {k: v for k, v in args.items() if v is not None or k in nullable or k not in {p.name for p in spec.params}}
    if isinstance(cleaned.get("glob"), str) and name == "grep":
        cleaned["glob"] = [cleaned["glob"]]
    expected = jsonschema.Draft202012Validator(spec.schema()).is_valid(cleaned)
    try:
        parse_arguments(name, args)
        accepted = True
    except QueryError:
        accepted = False
    assert accepted == expected, (name, args)


# -- dispatch -----------------------------------------------------------------


def test_dispatch_glob_text_and_envelope(ws, repo):
    out = dispatch("glob", {"pattern": "src/**/*.py", "sort": "path"}, workspace=ws)
    assert isinstance(out, ToolOutput) and not out.is_error
    assert [r["path"] for r in out.data["results"]] == ["src/app.py", "src/util/__init__.py", "src/util/helpers.py"]
    assert out.data["tool"] == "glob" and out.data["git_head"] == repo.head() and out.data["stale"] == []
    lines = out.text.splitlines()
    assert lines[0] == "[instructions] src/util/AGENTS.md applies to files under src/util/; read it with head path=src/util/AGENTS.md"
    assert lines[1].startswith("src/app.py  151 B  ")
    assert str(out) == out.text


def test_dispatch_accepts_json_string(ws):
    a = dispatch("head", '{"path": "src/app.py", "n": 2}', workspace=ws)
    b = dispatch("head", {"path": "src/app.py", "n": 2}, workspace=ws)
    assert a.data == b.data
    assert a.data["results"][0]["content"] == '"""The fixture application."""\n\n'
    assert a.text == (
        f"==> src/app.py (lines 1-2 of 11, 151 B, {age(a.data['results'][0]['mtime'])}, 5 tokens) <==\n"
        '     1\t"""The fixture application."""\n'
        "     2\t\n"
        "[note] 9 more lines; read on with head path=src/app.py start=3."
    )


def test_dispatch_null_means_default(ws):
    strict_style = {"path": "text/numbers.txt", "n": None, "max_tokens": None}
    out = dispatch("tail", strict_style, workspace=ws)
    assert not out.is_error
    assert out.data["results"][0]["start_line"] == 201 and out.data["results"][0]["end_line"] == 300


def test_dispatch_tail_numbers(ws):
    out = dispatch("tail", {"path": "text/numbers.txt", "n": 2}, workspace=ws)
    assert out.text.splitlines()[1:3] == ["   299\tline 299", "   300\tline 300"]


def _err(out: ToolOutput) -> dict:
    assert out.is_error
    assert "Traceback" not in out.text
    return out.data["error"]


@pytest.mark.parametrize(
    ("name", "args", "message", "hint"),
    [
        ("nope", {}, 'unknown tool "nope"', "call one of: glob, grep, head, tail, outline, symbols, locate, notes"),
        ("glob", {}, "glob: missing required argument 'pattern'", "pass pattern (glob relative to path: '*.md' is its top level, '**/*.md' every level)"),
        ("glob", {"pattern": "*", "colour": "red"}, "glob: unknown argument 'colour'", "glob takes: pattern, path, sort, limit, include_ignored, ignore_case, max_tokens"),
        ("glob", {"pattern": "*", "limit": True}, "glob: limit must be an integer, got a boolean true", "pass a JSON number without quotes, e.g. limit: 100"),
        ("head", {"path": "README.md", "n": "5"}, 'head: n must be an integer, got a string "5"', "pass a JSON number without quotes, e.g. n: 100"),
        ("head", {"path": "README.md", "n": 2.5}, "head: n must be an integer, got a number 2.5", "pass a JSON number without quotes, e.g. n: 100"),
        ("head", {"path": "README.md", "n": 0}, "head: n must be at least 1, got 0", "pass n >= 1"),
        ("glob", {"pattern": "*", "sort": "name"}, 'glob: sort must be one of mtime, path, size; got "name"', "pass sort: 'mtime' or leave it out"),
        (
            "glob",
            {"pattern": "*", "ignore_case": "yes"},
            'glob: ignore_case must be true or false, got a string "yes"',
            "pass ignore_case: true or ignore_case: false (JSON booleans, no quotes)",
        ),
        ("head", {"path": 7}, "head: path must be a string, got a number 7", "pass path as a JSON string"),
        ("glob", "{pattern: *}", None, 'send a JSON object such as {"pattern": "src/**/*.py"}'),
        ("grep", "{pattern: x}", None, 'send a JSON object such as {"pattern": "def main", "mode": "content"}'),  # its own example (issue 15)
        ("glob", "[1, 2]", "glob: arguments must be a JSON object, got an array [1, 2]", 'send a JSON object such as {"pattern": "src/**/*.py"}'),
        ("glob", {"pattern": "x" * 5000}, "glob: pattern is 5,000 characters; the limit is 4,096", "pass a shorter pattern"),
    ],
)
def test_dispatch_bad_arguments(ws, name, args, message, hint):
    err = _err(dispatch(name, args, workspace=ws))
    assert err["type"] == "query_error"
    if message is not None:
        assert err["message"] == message
    else:
        assert err["message"].startswith(f"{name}: arguments are not valid JSON (") and args in err["message"]
    assert err["hint"] == hint


def test_dispatch_oversized_arguments(ws):
    err = _err(dispatch("glob", json.dumps({"pattern": "a" * MAX_ARGUMENT_BYTES}), workspace=ws))
    assert err["message"].startswith("glob: arguments are ") and "the limit is 65,536" in err["message"]


def test_dispatch_path_escape(ws):
    out = dispatch("head", {"path": "../../etc/passwd"}, workspace=ws)
    err = _err(out)
    assert err["type"] == "path_error" and err["reason"] == "outside_root" and err["path"] == "../../etc/passwd"
    assert "'../../etc/passwd'" in err["message"]
    assert out.text == f"error (path_error): {err['message']}\nhint: {err['hint']}"


def test_dispatch_denied_file(ws):
    err = _err(dispatch("head", {"path": ".env"}, workspace=ws))
    assert err["type"] == "path_error" and err["reason"] == "denied"
    assert "secret-value" not in json.dumps(err)


def test_dispatch_internal_error_is_structured(ws, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ws, "glob", boom)
    err = _err(dispatch("glob", {"pattern": "*"}, workspace=ws))
    assert err == {"type": "internal_error", "message": "RuntimeError: disk on fire", "hint": "this is a bug in jitctx; try another call and report it"}


def test_dispatch_default_max_tokens_cuts(ws, repo):
    repo.write("big.txt", "".join(f"line {i} " + "word " * 30 + "\n" for i in range(2000)))
    out = dispatch("head", {"path": "big.txt", "n": 2000}, workspace=ws)
    assert out.data["truncated"] is True
    assert "max_tokens" in out.data["notice"]
    assert out.data["results"][0]["tokens"] <= DEFAULT_MAX_TOKENS
    wider = dispatch("head", {"path": "big.txt", "n": 2000, "max_tokens": 50000}, workspace=ws)
    assert wider.data["results"][0]["end_line"] > out.data["results"][0]["end_line"]


def test_dispatch_default_max_tokens_without_workspace_cap(repo):
    uncapped = Workspace(repo.root)  # library default: no cap; the tool surface still caps at 4,000
    repo.write("big.txt", "".join(" ".join(f"w{i}x{j}" for j in range(150)) + "\n" for i in range(100)))
    out = dispatch("head", {"path": "big.txt"}, workspace=uncapped)
    assert out.data["truncated"] is True


def test_issue_7_stale_notice_after_commit(ws, repo):
    first = dispatch("head", {"path": "src/app.py", "n": 3}, workspace=ws)
    assert first.data["stale"] == []
    old = repo.head()
    repo.write("src/app.py", "print('changed')\n")
    new = repo.commit("change app")
    out = dispatch("glob", {"pattern": "*.md"}, workspace=ws)
    assert out.data["stale"] == [{"path": "src/app.py", "kind": "read", "change": "changed", "old_head": old, "new_head": new}]
    assert out.text.splitlines()[0] == f"[stale] src/app.py: changed since you read it (HEAD {old[:8]} -> {new[:8]})"
    # errors carry it too
    bad = dispatch("head", {"path": "nope.txt"}, workspace=ws)
    assert bad.is_error and bad.data["stale"][0]["path"] == "src/app.py"
    assert bad.text.startswith("[stale] src/app.py: changed")


def test_dispatch_default_workspace_from_env(repo, monkeypatch):
    monkeypatch.setenv("JITCTX_ROOT", str(repo.root))
    out = dispatch("glob", {"pattern": "Makefile"})
    assert [r["path"] for r in out.data["results"]] == ["Makefile"]


def test_dispatch_bad_root_is_structured(tmp_path, monkeypatch):
    monkeypatch.setenv("JITCTX_ROOT", str(tmp_path / "missing"))
    err = _err(dispatch("glob", {"pattern": "*"}))
    assert err["type"] == "repo_error" and "missing" in err["message"]


def test_grep_through_dispatch(ws):
    pytest.importorskip("jitctx.primitives.search")
    out = dispatch("grep", {"pattern": "def main", "mode": "content"}, workspace=ws)
    assert not out.is_error, out.text
    assert ("src/app.py", 6) in [(r["path"], r["line"]) for r in out.data["results"]]
    lines = out.text.splitlines()
    assert "6 [main]:def main() -> None:" in lines and lines.index("6 [main]:def main() -> None:") > lines.index("src/app.py")  # under its file (issue 33)
    lone = dispatch("grep", {"pattern": "greet", "glob": "*.py"}, workspace=ws)
    assert not lone.is_error and all(r["path"].endswith(".py") for r in lone.data["results"])


def test_grep_bad_regex_is_structured(ws):
    pytest.importorskip("jitctx.primitives.search")
    err = _err(dispatch("grep", {"pattern": "(unclosed"}, workspace=ws))
    assert "(unclosed" in err["message"]


def test_instructions_field_travels(ws):
    out = dispatch("glob", {"pattern": "src/util/*.py"}, workspace=ws)
    assert "instructions" in out.data and isinstance(out.data["instructions"], list)
    if out.data["instructions"]:  # the just-in-time preload is merged: the nested AGENTS.md rides along once
        assert out.data["instructions"][0]["path"] == "src/util/AGENTS.md"
        assert out.text.startswith("[instructions] src/util/AGENTS.md")


def test_description_examples_are_literal_json():
    for spec in TOOLS.values():
        assert re.search(r"Example: \{.*\}$", spec.description), spec.name


def test_issue_15_limits_follow_one_rule_on_every_surface(repo):
    """Above a maximum: the most allowed, with a notice, on the tool surface as in the CLI and the API;
    max_tokens below the floor is raised to it, everywhere."""
    from jitctx import Workspace
    from jitctx.adapters.cli import main

    ws = Workspace(repo.root)
    out = dispatch("head", {"path": "text/numbers.txt", "n": 999999}, workspace=ws)
    assert not out.is_error and "n=999999 is above the maximum; clamped to 2,000." in out.data["notice"]
    out = dispatch("grep", {"pattern": "line", "context": 500, "mode": "content", "limit": 1}, workspace=ws)
    assert not out.is_error and "context=500 is above the maximum; clamped to 100." in out.data["notice"]
    out = dispatch("glob", {"pattern": "**", "max_tokens": 5}, workspace=ws)
    assert not out.is_error and "max_tokens=5 is below the minimum; raised to 200." in out.data["notice"]
    assert "max_tokens=5 is below the minimum; raised to 200." in (ws.glob("**", max_tokens=5).notice or "")
    assert main(["glob", "**", "--max-tokens", "5", "--root", str(repo.root)]) == 0
