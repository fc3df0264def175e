"""Rules from every agent's format (issue 34) on every surface: the CLI (in
process and as a command, so CI runs it again through the warm server), the
tools' dispatch, MCP; the formats setting on each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from rules_table import CALLS, FIXTURES, PREFIX, delivered

from jitctx.adapters import cli
from jitctx.adapters import tools as tools_mod
from jitctx.adapters.cliview import CliView
from jitctx.session.workspace import Workspace
from jitctx.tools import dispatch

WORKTREE = Path(__file__).resolve().parents[2]
IDS = [f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CALLS)]


def argv_of(tool: str, args: dict) -> list[str]:
    """A table call as CLI arguments."""
    if tool == "locate":
        return ["locate", "--task", args["task"]]
    first = {"glob": "pattern", "grep": "pattern", "symbols": "query"}.get(tool, "path")
    return [tool, args[first]]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- CLI ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURES)
def test_issue_34_cli_preload_prints_the_table_prefix(make_repo, capsys, name):
    root = str(make_repo(name).root)
    code, out, _ = run(capsys, "preload", "--root", root)
    assert code == 0 and out == CliView().calls(PREFIX[name])  # the calls in its labels as command lines (issue 33)
    code, out, _ = run(capsys, "preload", "--root", root, "--json")
    assert json.loads(out)["text"] == PREFIX[name]


@pytest.mark.parametrize(("name", "tool", "args", "want"), CALLS, ids=IDS)
def test_issue_34_cli_delivers_the_table(make_repo, capsys, name, tool, args, want):
    root = str(make_repo(name).root)
    code, out, err = run(capsys, *argv_of(tool, args), "--root", root, "--json")
    assert code == 0, err
    assert delivered(json.loads(out)["instructions"]) == want


def test_issue_34_cli_text_names_the_rule_and_the_call_that_reads_it(make_repo, capsys):
    root = str(make_repo("rules_copilot").root)
    _, out, _ = run(capsys, "glob", "web/*", "--root", root)
    first = out.splitlines()[0]
    assert first == (
        "[instructions] .github/instructions/web.instructions.md (copilot rule for web/*.js, web/*.ts) applies to web/app.js; "
        "read it with jitctx head .github/instructions/web.instructions.md --start 4"
    )
    _, out, _ = run(capsys, "head", "app/main.py", "--root", root)
    assert out.startswith(
        "[instructions] .github/instructions/lang/python.instructions.md (copilot rule for **/*.py) applies to app/main.py:\n# Python\n\nUse pathlib, not os.path.\n"
    )


def test_issue_34_cli_formats_option(make_repo, capsys):
    root = str(make_repo("rules_all").root)
    code, out, _ = run(capsys, "preload", "--formats", "cursor", "--root", root)
    assert code == 0 and out.startswith("==> .cursor/rules/always.mdc (Cursor rule, always applied) <==\n") and "AGENTS.md" not in out
    code, out, _ = run(capsys, "head", "svc/api.py", "--formats", "agents,cursor", "--root", root, "--json")
    assert [i["path"] for i in json.loads(out)["instructions"]] == [".cursor/rules/py.mdc"]
    code, out, err = run(capsys, "grep", "serve", "--formats", "cursor,vscode", "--root", root)
    assert code == 2 and out == "" and "unknown format 'vscode'" in err and "agents, claude, gemini" in err
    code, out, _ = run(capsys, "glob", "svc/*", "--formats", "bogus", "--root", root, "--json")
    assert code == 2 and json.loads(out)["error"]["message"] == "unknown format 'bogus'"
    code, _, err = run(capsys, "mcp", "--formats", "bogus", "--root", root)
    assert code == 2 and "unknown format 'bogus'" in err


def _command(*argv: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(WORKTREE), **env}
    return subprocess.run([sys.executable, "-m", "jitctx", *argv], capture_output=True, text=True, env=full, timeout=120)


@pytest.mark.slow
def test_issue_34_the_command_answers_as_the_table_says(make_repo):
    """As a command: CI runs this file again with every call through the warm server."""
    root = str(make_repo("rules_all").root)
    pre = _command("preload", "--root", root)
    assert pre.returncode == 0 and pre.stdout == CliView().calls(PREFIX["rules_all"])
    head = _command("head", "svc/api.py", "--root", root, "--json")
    assert delivered(json.loads(head.stdout)["instructions"]) == next(c[3] for c in CALLS if c[:2] == ("rules_all", "head"))
    only = _command("head", "svc/api.py", "--root", root, "--json", JITCTX_FORMATS="copilot")
    assert [i["path"] for i in json.loads(only.stdout)["instructions"]] == [".github/instructions/svc.instructions.md"]
    flag = _command("preload", "--root", root, "--formats", "windsurf")
    assert flag.stdout.startswith("==> rules to read when they apply")


# -- tools ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "tool", "args", "want"), CALLS, ids=IDS)
def test_issue_34_tools_deliver_the_table_once(make_repo, name, tool, args, want):
    ws = Workspace(make_repo(name).root, max_tokens=4000)
    out = dispatch(tool, args, workspace=ws)
    assert not out.is_error, out.text
    assert delivered(out.data["instructions"]) == want
    assert dispatch(tool, args, workspace=ws).data["instructions"] == []


def test_issue_34_tools_default_workspace_takes_the_environment(make_repo, monkeypatch):
    root = make_repo("rules_all").root
    monkeypatch.setattr(tools_mod, "_DEFAULT", {})
    monkeypatch.setenv("JITCTX_ROOT", str(root))
    monkeypatch.setenv("JITCTX_FORMATS", "claude")
    out = dispatch("head", {"path": "svc/api.py"})
    assert [i["path"] for i in out.data["instructions"]] == [".claude/rules/py.md"]
    monkeypatch.setattr(tools_mod, "_DEFAULT", {})
    monkeypatch.setenv("JITCTX_FORMATS", "nope")
    bad = dispatch("head", {"path": "svc/api.py"})
    assert bad.is_error and bad.data["error"]["message"] == "unknown format 'nope'"


# -- MCP -------------------------------------------------------------------------------------


def _mcp():
    return pytest.importorskip("mcp")


def _run(coro_fn):
    import anyio

    before = set(threading.enumerate())
    try:
        return anyio.run(coro_fn)
    finally:
        for t in set(threading.enumerate()) - before:
            if t.name == "AnyIO worker thread":
                t.join(timeout=5)


@pytest.mark.parametrize("name", FIXTURES)
def test_issue_34_mcp_delivers_the_table_once_and_serves_the_prefix(make_repo, name):
    _mcp()
    from mcp import Client

    from jitctx.adapters.mcp import PRELOAD_URI, build_server

    root = make_repo(name).root
    calls = [c for c in CALLS if c[0] == name]

    async def main():
        for _, tool, args, want in calls:
            app = build_server(workspace=Workspace(root, max_tokens=4000), poll=None)
            async with Client(app.server) as c:
                first = await c.call_tool(tool, args)
                assert not first.is_error
                assert delivered(first.structured_content["instructions"]) == want, (tool, args)
                again = await c.call_tool(tool, args)
                assert again.structured_content["instructions"] == []
        app = build_server(workspace=Workspace(root, max_tokens=4000), poll=None)
        async with Client(app.server) as c:
            assert (await c.read_resource(PRELOAD_URI)).contents[0].text == PREFIX[name]

    _run(main)


def test_issue_34_mcp_server_formats_setting(make_repo):
    _mcp()
    from mcp import Client

    from jitctx.adapters.mcp import PRELOAD_URI, build_server

    root = make_repo("rules_all").root
    app = build_server(str(root), formats="cursor", poll=None)

    async def main():
        async with Client(app.server) as c:
            text = (await c.read_resource(PRELOAD_URI)).contents[0].text
            assert text.startswith("==> .cursor/rules/always.mdc (Cursor rule, always applied) <==\n")
            got = await c.call_tool("head", {"path": "svc/api.py"})
            assert [i["path"] for i in got.structured_content["instructions"]] == [".cursor/rules/py.mdc"]

    _run(main)
