"""Redaction and the deny list as invariants (issue 29).

A denied file reached through a hard link answers nothing, in any mode or count,
on any surface: the answer to a pattern that matches its bytes and to one that
does not are the same text. A secret planted in ordinary files is never shown,
whatever reads it: head, tail, grep in every mode, a re-read's diff, an outline's
signatures, notes, compaction's placeholders, ``context --task``, the CLI and MCP.
"""

from __future__ import annotations

import json
import os

import pytest

from jitctx import Workspace
from jitctx.render import render_text

SECRET = "s3cr3t-Zq81"
PROBES = ("API_KEY=s3c", "API_KEY=s3d")  # the first matches the denied file's bytes, the second does not


@pytest.fixture
def linked(make_repo):
    repo = make_repo("basic")
    env = repo.root / "conf" / ".env"
    env.parent.mkdir()
    env.write_text(f"API_KEY={SECRET}\n")
    os.link(env, repo.root / "conf" / "notes.txt")  # an ordinary name for the denied file's inode
    repo.write("conf/other.txt", "API_KEY is read from the environment\n")
    return repo


def _grep_variants():
    for backend in ("rg", "python"):
        for mode in ("content", "files", "count"):
            for path in (".", "conf", "conf/notes.txt"):
                yield {"backend": backend, "mode": mode, "path": path}
    yield {"backend": "rg", "mode": "content", "context": 2, "path": "."}
    yield {"backend": "rg", "mode": "count", "include_ignored": True, "path": "."}
    yield {"backend": "python", "mode": "count", "include_ignored": True, "path": "."}


def _same(outs: list[str]) -> None:
    a, b = (
        (o.replace(PROBES[0], "PROBE").replace(json.dumps(PROBES[0])[1:-1], "PROBE") for o in outs[:1]),
        (o.replace(PROBES[1], "PROBE").replace(json.dumps(PROBES[1])[1:-1], "PROBE") for o in outs[1:]),
    )
    first, second = next(a), next(b)
    assert first == second
    assert SECRET not in first and "s3cr3t" not in first


def test_issue_29_a_hard_link_to_a_denied_file_answers_nothing_in_any_mode(linked):
    with Workspace(linked.root, record=False) as w:
        for args in _grep_variants():
            outs = []
            for pattern in PROBES:
                res = w.grep(pattern, **args)
                outs.append(render_text(res) + "\n" + json.dumps({k: v for k, v in res.to_dict().items() if k != "query"}, sort_keys=True))
            _same(outs)


def test_issue_29_a_hard_link_to_a_denied_file_answers_nothing_through_the_cli_and_tools(linked, capsys):
    from jitctx.adapters.cli import main
    from jitctx.tools import dispatch

    for extra in ([], ["--mode", "count"], ["--mode", "files"], ["--backend", "python", "--mode", "count"], ["--json", "--mode", "count"]):
        outs = []
        for pattern in PROBES:
            code = main(["grep", pattern, "--root", str(linked.root), *extra])
            got = capsys.readouterr()
            outs.append(f"{code}\n{got.out}\n{got.err}")
        _same(outs)
    with Workspace(linked.root) as w:
        for mode in ("content", "files", "count"):
            outs = []
            for pattern in PROBES:
                out = dispatch("grep", {"pattern": pattern, "mode": mode}, workspace=w)
                outs.append(out.text + json.dumps(out.data.get("total")) + json.dumps(out.data.get("extra"), sort_keys=True))
            _same(outs)


def test_issue_29_a_hard_link_to_a_denied_file_answers_nothing_over_mcp(linked):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from jitctx.adapters.mcp import build_server

    app = build_server(workspace=Workspace(linked.root, max_tokens=4000))

    async def main():
        got = []
        async with Client(app.server) as c:
            for pattern in PROBES:
                out = await c.call_tool("grep", {"pattern": pattern, "mode": "count"})
                got.append(json.dumps(out.structured_content, sort_keys=True) + "".join(getattr(x, "text", "") for x in out.content))
        return got

    _same(anyio.run(main))
