"""The docs agree with what runs (issue 33 items 2 and 3): every jitctx command in the code
blocks of README.md and docs/agents.md runs on the fixture repository and exits as
documented, the Python example runs, and every count or list of the tools the docs and
the CLI help state is the tool list itself (``adapters.tools.TOOLS``)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from jitctx.adapters.cli import main
from jitctx.adapters.cli.parser import build_parser
from jitctx.adapters.tools import TOOLS

PROJECT = Path(__file__).resolve().parent.parent
DOCS = {name: (PROJECT / name).read_text(encoding="utf-8") for name in ("README.md", "docs/agents.md")}
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
_NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


def blocks(text: str, *langs: str) -> list[str]:
    return [body for lang, body in _BLOCK.findall(text) if lang in langs]


def commands(text: str) -> list[list[str]]:
    """The jitctx commands of a doc's shell blocks, in order, as argv: one a line (its
    comment dropped), each part of ``a && b`` and ``$(...)`` that runs jitctx."""
    out = []
    for body in blocks(text, "bash", "sh"):
        for line in body.splitlines():
            for part in re.split(r"\s*&&\s*|\$\(|\)", line):
                words = shlex.split(part, comments=True)
                if words and words[0].endswith("jitctx"):
                    out.append(words)
    return out


def test_the_docs_have_commands_to_check():
    names = {argv[1] for text in DOCS.values() for argv in commands(text)}
    assert {"preload", "glob", "grep", "head", "tail", "outline", "symbols", "locate", "notes", "context", "watch", "tools", "mcp", "session"} <= names


@pytest.mark.parametrize("doc", list(DOCS))
def test_issue_33_every_documented_command_runs_on_the_fixture(make_repo, capsys, monkeypatch, doc):
    """In order, in one copy of the fixture repository (a walkthrough: notes list after
    notes add), each as printed; exit 0 (found or done), watch 1 (nothing changed)."""
    import os

    repo = make_repo("basic")
    for words in commands(DOCS[doc]):
        argv = words[1:]
        monkeypatch.chdir(PROJECT if "fixtures_repo/basic" in argv else repo.root)  # README's first command runs from a checkout
        if argv[0] == "mcp":  # serves until the client closes stdin: closed at once
            env = {**os.environ, "PYTHONPATH": str(PROJECT)}
            proc = subprocess.run([sys.executable, "-m", "jitctx", *argv], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, env=env)
            assert proc.returncode == 0 and proc.stdout == "", proc.stderr
            continue
        if argv[0] == "watch":  # nothing changes: it exits 1 at its timeout (shortened here)
            argv[argv.index("--timeout") + 1] = "0.3"
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        expected = 1 if argv[0] == "watch" else 0
        assert code == expected, f"{doc}: {' '.join(words)} exited {code}: {err[-500:]}"
        assert "Traceback" not in err


def test_issue_33_readmes_python_example_runs(make_repo, capsys):
    (code,) = [b for b in blocks(DOCS["README.md"], "python") if "Workspace(" in b]
    repo = make_repo("basic")
    exec(compile(code.replace('"path/to/repo"', repr(str(repo.root))), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "greet" in out and "[Task]" in out


def _sentences(text: str) -> list[str]:
    flat = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return [s for p in flat for s in re.split(r"(?<=[.;:])\s+(?=[A-Z`(])", p)]


def _help_texts() -> dict[str, str]:
    subs = next(a for a in build_parser()._subparsers._group_actions).choices  # type: ignore[union-attr]
    return {f"jitctx {name} --help": p.format_help() for name, p in subs.items()} | {"jitctx --help": build_parser().format_help()}


def test_issue_33_every_count_or_list_of_tools_is_the_tool_list():
    """A sentence about tools that names three or more of them names them all; a count
    of tools is their number (README, docs/agents.md, docs/cli.md, every --help)."""
    names = list(TOOLS)
    texts = {**DOCS, "docs/cli.md": (PROJECT / "docs/cli.md").read_text(encoding="utf-8"), **_help_texts()}
    checked = 0
    for where, text in texts.items():
        for s in _sentences(text):
            if not re.search(r"\btools?\b", s):
                continue
            for m in re.finditer(r"\b(\w+) (?:\w+ )?tools?\b", s):
                n = _NUMBERS.get(m.group(1).lower())
                if n is not None and n > 1:
                    checked += 1
                    assert n == len(names), f"{where}: {m.group(0)!r} in {s!r}; there are {len(names)}"
            named = [t for t in names if re.search(rf"(?<![\w-]){t}(?![\w-])", s)]
            if len(named) >= 3:
                checked += 1
                assert named == names, f"{where}: {s!r} names {named}, not every tool ({names})"
    assert checked >= 4  # README, agents.md (two), mcp --help


def test_issue_33_mcp_help_names_every_tool(capsys):
    with pytest.raises(SystemExit):
        main(["mcp", "--help"])
    out = capsys.readouterr().out
    assert all(t in out for t in TOOLS)


def test_issue_33_every_help_example_parses():
    """Each subcommand's help examples use options it takes (no usage error)."""
    from jitctx.adapters.cli.parser import HELP as _HELP

    checked = 0
    for name, (_, examples) in _HELP.items():
        for example in examples:
            for part in re.split(r"\$\(|\)", example):
                words = shlex.split(part, comments=True)
                if not words or words[0] != "jitctx":
                    continue
                parser = build_parser(words[1])
                args, extra = parser.parse_known_args(words[1:])
                assert not extra and args.command == words[1], f"jitctx {name} --help: {example!r} leaves {extra}"
                checked += 1
    assert checked >= 20
