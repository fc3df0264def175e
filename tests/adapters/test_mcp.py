"""``jitctx mcp``: a real stdio subprocess driven by the SDK's client, and in-memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

import jitctx.preload.prefix  # noqa: E402
from jitctx.adapters import cli  # noqa: E402
from jitctx.adapters.mcp import PRELOAD_URI, build_server  # noqa: E402
from jitctx.session.workspace import Workspace  # noqa: E402
from jitctx.tools import dispatch  # noqa: E402

WORKTREE = Path(__file__).resolve().parents[2]
TIMEOUT = 60
HAS_PRELOAD = hasattr(jitctx.preload.prefix, "preload")

pytestmark = pytest.mark.slow


def _env(**extra: str) -> dict[str, str]:
    env = {
        "PYTHONPATH": str(WORKTREE),
        "HOME": os.environ["HOME"],
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.environ["GIT_CONFIG_GLOBAL"],
        "TIKTOKEN_CACHE_DIR": os.environ["TIKTOKEN_CACHE_DIR"],
    }
    env.update(extra)
    return env


def _params(*args: str, cwd: Path | None = None, **env: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "jitctx", "mcp", *args], env=_env(**env), cwd=cwd)


def _run(coro_fn, *args):
    """anyio.run, then wait for its worker threads: they are told to stop when the loop ends, never joined."""
    before = set(threading.enumerate())
    try:
        return anyio.run(coro_fn, *args)
    finally:
        for t in set(threading.enumerate()) - before:
            if t.name == "AnyIO worker thread":
                t.join(timeout=5)


def _text(result) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


# -- a real subprocess over stdio -------------------------------------------------------


@pytest.mark.slow
def test_stdio_tools_calls_errors_and_stale(repo, tmp_path):
    async def main(errlog):
        async with Client(stdio_client(_params("--root", str(repo.root)), errlog=errlog)) as c:
            listed = await c.list_tools()
            tools = {t.name: t for t in listed.tools}
            assert list(tools) == ["glob", "grep", "head", "tail", "outline", "symbols", "locate", "notes"]
            assert all(t.annotations.read_only_hint is (name != "notes") for name, t in tools.items())  # notes writes (outside the tree)
            from jitctx.tokens.tokenizer import get_tokenizer

            listing = json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools])
            assert get_tokenizer().count(listing) < 2000  # the whole tool list (issue 13)

            g = await c.call_tool("glob", {"pattern": "src/**/*.py", "sort": "path"})
            assert not g.is_error
            assert [r["path"] for r in g.structured_content["results"]] == ["src/app.py", "src/util/__init__.py", "src/util/helpers.py"]
            assert _text(g).splitlines()[1].startswith("src/app.py  151 B  ")  # after src/util/AGENTS.md, just in time

            h = await c.call_tool("head", {"path": "src/app.py", "n": 1})
            assert not h.is_error and h.structured_content["results"][0]["content"] == '"""The fixture application."""\n'
            t = await c.call_tool("tail", {"path": "text/numbers.txt", "n": 1})
            assert _text(t).splitlines()[1] == "   300\tline 300"

            gr = await c.call_tool("grep", {"pattern": "greet"})
            assert not gr.is_error and "src/app.py" in [r["path"] for r in gr.structured_content["results"]]

            bad = await c.call_tool("glob", {"pattern": "*", "limit": True})
            assert (
                bad.is_error and _text(bad) == "error (query_error): glob: limit must be an integer, got a boolean true\nhint: pass a JSON number without quotes, e.g. limit: 100"
            )
            missing = await c.call_tool("head", {})
            assert missing.is_error and "missing required argument 'path'" in _text(missing)
            unknown = await c.call_tool("cat", {"path": "x"})
            assert unknown.is_error and 'unknown tool "cat"' in _text(unknown)

            esc = await c.call_tool("head", {"path": "../../../etc/passwd"})
            assert esc.is_error and esc.structured_content["error"]["reason"] == "outside_root"
            assert "'../../../etc/passwd'" in _text(esc) and "root:" not in _text(esc)

            old = repo.head()
            repo.write("src/app.py", "print('v2')\n")
            new = repo.commit("edit app")
            after = await c.call_tool("glob", {"pattern": "Makefile"})
            assert after.structured_content["stale"] == [{"path": "src/app.py", "kind": "read", "change": "changed", "old_head": old, "new_head": new}]
            assert _text(after).splitlines()[0] == f"[stale] src/app.py: changed since you read it (HEAD {old[:8]} -> {new[:8]})"

    with open(tmp_path / "stderr.txt", "w+") as errlog:
        _run(main, errlog)
        errlog.seek(0)
        assert "Traceback" not in errlog.read()


@pytest.mark.slow
def test_stdio_legacy_handshake_and_client_roots(repo, tmp_path):
    """No --root, no env: the client's roots name the repository (handshake-era protocol)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def roots(ctx):
        import mcp_types as types

        return types.ListRootsResult(roots=[types.Root(uri=repo.root.as_uri(), name="fixture")])

    async def main():
        async with Client(_params(cwd=elsewhere), mode="legacy", list_roots_callback=roots) as c:
            out = await c.call_tool("glob", {"pattern": "Makefile"})
            assert not out.is_error, _text(out)
            assert [r["path"] for r in out.structured_content["results"]] == ["Makefile"]

    _run(main)


def test_stdio_root_from_claude_project_dir(repo, tmp_path):
    async def main():
        async with Client(_params(cwd=tmp_path, CLAUDE_PROJECT_DIR=str(repo.root))) as c:
            out = await c.call_tool("head", {"path": "Makefile", "n": 1})
            assert not out.is_error and out.structured_content["results"][0]["path"] == "Makefile"

    _run(main)


def test_stdio_jitctx_root_beats_claude_project_dir(make_repo, tmp_path):
    a, b = make_repo(), make_repo()
    b.write("only-in-b.txt", "b\n")

    async def main():
        async with Client(_params(cwd=tmp_path, JITCTX_ROOT=str(a.root), CLAUDE_PROJECT_DIR=str(b.root))) as c:
            out = await c.call_tool("glob", {"pattern": "only-in-b.txt"})
            assert out.structured_content["results"] == []

    _run(main)


def test_mcp_refuses_filesystem_root():
    proc = subprocess.run([sys.executable, "-m", "jitctx", "mcp", "--root", "/"], capture_output=True, text=True, env=_env(), stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "jitctx: error: refusing to serve the filesystem root '/'\n  hint: pass a project directory as --root DIR\n"


def test_mcp_cwd_root_refused_becomes_tool_error(tmp_path):
    """Started in / with nothing configured: the server runs, each call says why it cannot serve."""

    async def main():
        async with Client(_params(cwd=Path("/"))) as c:
            out = await c.call_tool("glob", {"pattern": "*"})
            assert out.is_error and out.structured_content["error"]["type"] == "repo_error"
            assert "refusing to serve the filesystem root" in _text(out)

    _run(main)


def _rpc(proc, msg: dict) -> None:
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def _init(proc) -> dict:
    _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    reply = json.loads(proc.stdout.readline())
    _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return reply


@pytest.mark.slow
def test_stdout_carries_protocol_only_and_disconnect_mid_call(repo):
    proc = subprocess.Popen([sys.executable, "-m", "jitctx", "mcp", "--root", str(repo.root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        reply = _init(proc)
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "jitctx"
        _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "head", "arguments": {"path": "Makefile", "n": 1}}})
        line = json.loads(proc.stdout.readline())
        assert line["id"] == 2 and line["result"]["isError"] is False
        # a call, then the client goes away before reading the answer
        _rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "glob", "arguments": {"pattern": "**/*"}}})
        proc.stdin.close()
        rest = proc.stdout.read()
        code = proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for raw in rest.splitlines():
        assert json.loads(raw)["jsonrpc"] == "2.0"  # anything left on stdout is protocol
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    proc.stdout.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr


def test_mcp_start_to_first_result_is_quick(repo):
    t0 = time.perf_counter()

    async def main():
        async with Client(_params("--root", str(repo.root))) as c:
            out = await c.call_tool("glob", {"pattern": "Makefile"})
            assert not out.is_error

    _run(main)
    assert time.perf_counter() - t0 < 20  # generous: a shared 2-core machine; benchmarks/bench_tools.py measures it


# -- in memory ---------------------------------------------------------------------------


def test_in_memory_tools_and_resources(repo):
    app = build_server(workspace=Workspace(repo.root, max_tokens=4000))

    async def main():
        async with Client(app.server) as c:
            assert [t.name for t in (await c.list_tools()).tools] == ["glob", "grep", "head", "tail", "outline", "symbols", "locate", "notes"]
            res = (await c.list_resources()).resources
            assert [(r.uri, r.mime_type) for r in res] == [(PRELOAD_URI, "text/markdown")]
            assert [p.name for p in (await c.list_prompts()).prompts] == ["repo_context"]
            out = await c.call_tool("tail", {"path": "text/numbers.txt", "n": 2, "max_tokens": "many"})
            assert (
                out.is_error
                and _text(out) == 'error (query_error): tail: max_tokens must be an integer, got a string "many"\nhint: pass a JSON number without quotes, e.g. max_tokens: 4000'
            )
            huge = await c.call_tool("grep", {"pattern": "a" * 100_000})
            assert huge.is_error and huge.structured_content["error"]["message"] == "grep: pattern is 100,000 characters; the limit is 4,096"

    _run(main)


@pytest.mark.skipif(not HAS_PRELOAD, reason="the preload implementation is merged separately")
def test_in_memory_preload_resource_and_prompt(repo):
    ws = Workspace(repo.root, max_tokens=4000)
    app = build_server(workspace=ws)
    expected = Workspace(repo.root).preload()

    async def main():
        async with Client(app.server) as c:
            read = await c.read_resource(PRELOAD_URI)
            assert read.contents[0].text == expected.text
            prompt = await c.get_prompt("repo_context")
            assert prompt.messages[0].role == "user" and prompt.messages[0].content.text == expected.text
            assert expected.prefix_hash[:12] in prompt.description

    _run(main)


def _legacy_subscribe(c):
    with warnings.catch_warnings():  # removed in the 2026 protocol; clients on the 2025 one still subscribe
        warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
        return c.session.subscribe_resource(PRELOAD_URI)


def test_resource_updated_notification_when_preload_goes_stale(repo):
    """Handshake era, the real preload: a subscribed client hears resources/updated once per change."""
    app = build_server(workspace=Workspace(repo.root, max_tokens=4000), poll=None)
    heard: list[str] = []

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/resources/updated":
            heard.append(str(message.params.uri))

    async def main():
        async with Client(app.server, mode="legacy", message_handler=on_message) as c:
            await _legacy_subscribe(c)
            read = await c.read_resource(PRELOAD_URI)
            assert "Keep functions small." in read.contents[0].text
            await c.call_tool("glob", {"pattern": "Makefile"})
            await c.list_tools()  # a round trip: a notice of that call would have come before its answer
            assert heard == []
            repo.write("AGENTS.md", "# Agent notes\n\nRun `make check` now.\n")
            out = await c.call_tool("glob", {"pattern": "Makefile"})
            assert [(s["path"], s["kind"]) for s in out.structured_content["stale"]] == [("AGENTS.md", "preload")]
            await c.call_tool("glob", {"pattern": "Makefile"})  # same stale set: no second notice
            with anyio.fail_after(5):
                while not heard:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.05)
            assert heard == [PRELOAD_URI]
            again = await c.read_resource(PRELOAD_URI)  # the read re-renders it
            assert "Run `make check` now." in again.contents[0].text
            after = await c.call_tool("glob", {"pattern": "Makefile"})
            assert after.structured_content["stale"] == []

    _run(main)
    assert heard == [PRELOAD_URI]


def test_listen_stream_hears_preload_update_without_a_call(repo):
    """2026 protocol, the real preload: subscriptions/listen carries the update; the idle poller finds it."""
    app = build_server(workspace=Workspace(repo.root), poll=0.05)

    async def main():
        async with Client(app.server) as c:
            await c.read_resource(PRELOAD_URI)
            async with c.listen(resource_subscriptions=[PRELOAD_URI]) as sub:
                repo.write("AGENTS.md", "# Agent notes\n\nChanged under the agent.\n")
                with anyio.fail_after(10):
                    async for event in sub:
                        return event

    event = _run(main)
    assert event.uri == PRELOAD_URI


def test_deleted_preload_file_is_not_stale_after_the_resource_is_read(repo):
    """Reading the resource re-renders through ws.refresh(): a deleted file leaves the prefix and the stale list."""
    ws = Workspace(repo.root, max_tokens=4000)
    app = build_server(workspace=ws, poll=None)

    async def main():
        async with Client(app.server) as c:
            first = (await c.read_resource(PRELOAD_URI)).contents[0].text
            assert "Keep functions small." in first
            (repo.root / "AGENTS.md").unlink()
            gone = await c.call_tool("glob", {"pattern": "Makefile"})
            assert [(s["path"], s["change"]) for s in gone.structured_content["stale"]] == [("AGENTS.md", "deleted")]
            second = (await c.read_resource(PRELOAD_URI)).contents[0].text
            assert "Keep functions small." not in second
            after = await c.call_tool("glob", {"pattern": "Makefile"})
            assert after.structured_content["stale"] == []
            prompt = await c.get_prompt("repo_context")
            assert prompt.messages[0].content.text == second  # fresh now: not re-rendered again

    _run(main)
    assert [s for s in ws.stale() if s["kind"] == "preload"] == []


def test_unknown_resource_is_an_error(repo):
    app = build_server(workspace=Workspace(repo.root))

    async def main():
        async with Client(app.server) as c:
            with pytest.raises(mcp.MCPError, match="unknown resource 'jitctx://nope'"):
                await c.read_resource("jitctx://nope")

    _run(main)


# -- parity: CLI --json = tool call = MCP ------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "name", "args"),
    [
        (["head", "src/app.py", "-n", "4"], "head", {"path": "src/app.py", "n": 4}),
        (["tail", "text/numbers.txt", "-n", "3"], "tail", {"path": "text/numbers.txt", "n": 3}),
        (["glob", "**/*.md", "--sort", "path"], "glob", {"pattern": "**/*.md", "sort": "path"}),
    ],
)
def test_parity_cli_json_tool_call_mcp(repo, capsys, argv, name, args):
    assert cli.main([*argv, "--root", str(repo.root), "--json", "--max-tokens", "4000"]) == 0
    from_cli = json.loads(capsys.readouterr().out)
    from_tool = dispatch(name, args, workspace=Workspace(repo.root)).data
    app = build_server(workspace=Workspace(repo.root))

    async def main():
        async with Client(app.server) as c:
            return (await c.call_tool(name, args)).structured_content

    from_mcp = _run(main)
    assert from_cli == from_tool == from_mcp


def test_parity_grep(repo, capsys):
    pytest.importorskip("jitctx.primitives.search")
    cli.main(["grep", "greet", "--root", str(repo.root), "--json", "--max-tokens", "4000"])
    from_cli = json.loads(capsys.readouterr().out)
    from_tool = dispatch("grep", {"pattern": "greet"}, workspace=Workspace(repo.root)).data
    assert from_cli == from_tool


def test_documented_mcp_json_snippets_start_the_server(repo, monkeypatch):
    """docs/agents.md: every mcpServers snippet parses, and its env holds no ${...} a client may leave unexpanded.

    A literal "${CLAUDE_PROJECT_DIR}" as $JITCTX_ROOT is not a directory: the server exits 2.
    jitctx reads $CLAUDE_PROJECT_DIR itself, so the snippet needs no env.
    """
    import re

    from jitctx.adapters.mcp import configured_root

    text = (WORKTREE / "docs" / "agents.md").read_text("utf-8")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, re.S) if "mcpServers" in b]
    assert blocks
    for block in blocks:
        for name, server in block["mcpServers"].items():
            env = server.get("env", {})
            assert not any("${" in str(v) for v in env.values()), (name, env)
            monkeypatch.delenv("JITCTX_ROOT", raising=False)
            monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo.root))  # what Claude Code sets
            for k, v in env.items():
                monkeypatch.setenv(k, v)
            if "--root" not in server["args"]:
                assert configured_root(None) == str(repo.root)


def test_issue_12_a_result_naming_a_file_that_is_not_utf8_is_served(repo):
    import os

    fd = os.open(os.path.join(os.fsencode(repo.root), b"bad\xff.txt"), os.O_WRONLY | os.O_CREAT)
    os.write(fd, b"needle\n")
    os.close(fd)

    async def scenario():
        async with Client(build_server(repo.root, poll=None).server) as c:
            g = await c.call_tool("glob", {"pattern": "bad*"})
            assert not g.is_error and g.structured_content["results"][0]["path"] == "bad\ufffd.txt"
            gr = await c.call_tool("grep", {"pattern": "needle", "mode": "content"})
            assert not gr.is_error and "bad\ufffd.txt" in _text(gr)

    anyio.run(scenario)


def test_issue_12_a_cancelled_call_stops_its_work_and_the_next_call_is_answered(repo, monkeypatch, tmp_path):
    from jitctx.primitives.engines import rg as rg_mod

    stub, started = tmp_path / "slow-rg", tmp_path / "rg-started"
    stub.write_text(f"#!/bin/sh\n: > {started}\nexec sleep 30\n")  # an rg that never ends
    stub.chmod(0o755)
    monkeypatch.setattr(rg_mod, "find_rg", lambda: str(stub))

    async def scenario():
        async with Client(build_server(repo.root, poll=None).server) as c:
            with anyio.fail_after(15):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(c.call_tool, "grep", {"pattern": "anything"})
                    while not started.exists():  # the call is under way: rg runs
                        await anyio.sleep(0.01)
                    tg.cancel_scope.cancel()
            t0 = time.monotonic()
            h = await c.call_tool("head", {"path": "README.md", "n": 1})
            assert not h.is_error and time.monotonic() - t0 < 3

    anyio.run(scenario)


def test_issue_15_resource_templates_list_is_empty_not_an_error(repo):
    app = build_server(workspace=Workspace(repo.root, max_tokens=4000))

    async def main():
        async with Client(app.server) as c:
            assert (await c.list_resource_templates()).resource_templates == []

    _run(main)


def test_issue_15_the_python_client_example_in_docs_agents_md_runs(repo, capsys):
    """docs/agents.md's client example, run against the fixture repo (the server started as this Python)."""
    import re
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "agents.md").read_text()
    code = re.search(r"## A Python MCP client.*?```python\n(.*?)```", doc, re.S).group(1)
    code = code.replace(
        'command="jitctx", args=["mcp", "--root", "fixtures_repo/basic"]', f'command={sys.executable!r}, args=["-m", "jitctx", "mcp", "--root", {str(repo.root)!r}]'
    )
    assert str(repo.root) in code
    exec(compile(code, "docs/agents.md", "exec"), {"__name__": "example"})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("jitctx ['glob', 'grep'") and out[1] == "False" and out[-1] == "src/util/helpers.py"
