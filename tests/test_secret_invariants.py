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


# -- secrets planted in ordinary files -------------------------------------------------------

AWS_BODY = "QWERTYUIOPASDFGH"
GH_BODY = "Zx9" * 12
KEY_LINES = [f"MIIE{c * 60}" for c in "ABCDEFG"]
CREDS = (
    '"""Settings."""\n'
    f'AWS_KEY = "AKIA{AWS_BODY}"\n'
    "\n"
    f'def connect(token="ghp_{GH_BODY}"):\n'
    "    return token\n"
    "\n"
    'PEM = """\n'
    "-----BEGIN RSA PRIVATE KEY-----\n" + "".join(ln + "\n" for ln in KEY_LINES) + "-----END RSA PRIVATE KEY-----\n"
    '"""\n'
)
LEAKS = (AWS_BODY, GH_BODY, *(ln[4:30] for ln in KEY_LINES))


def _clean(text: str, where: str) -> None:
    for leak in LEAKS:
        assert leak not in text, (where, leak, text)


@pytest.fixture
def planted(make_repo):
    repo = make_repo("code")
    repo.write("creds.py", CREDS)
    repo.commit("creds")
    return repo


@pytest.mark.slow
def test_issue_29_a_planted_secret_is_never_shown_by_a_session(planted):
    from jitctx.window.compact import compact
    from jitctx.window.for_task import context_for_task
    from jitctx.window.sources import Message, ToolCall

    repo = planted
    history: list[Message] = [Message("user", "look at the settings")]
    with Workspace(repo.root) as w:

        def show(name, res, args):
            text = render_text(res) + json.dumps(res.to_dict())
            _clean(text, f"{name} {args}")
            cid = f"c{len(history)}"
            history.append(Message("assistant", "", (ToolCall(cid, name, json.dumps(args)),)))
            history.append(Message("tool", render_text(res), tool_call_id=cid))

        reads = [{"path": "creds.py"}, {"path": "creds.py", "start": 10, "n": 3}, {"path": "creds.py", "start": 9, "n": 1}, {"path": "creds.py", "start": 2, "n": 1}]
        for round_ in range(3):
            for args in reads:
                show("head", w.head(**args), args)
            show("tail", w.tail("creds.py", n=6), {"path": "creds.py", "n": 6})
            for pattern in ("AKIA", "ghp_", "PRIVATE", "MIIE", "token"):
                for mode, ctx in (("content", 0), ("content", 3), ("files", 0), ("count", 0)):
                    for backend in ("rg", "python"):
                        show("grep", w.grep(pattern, mode=mode, context=ctx, backend=backend), {"pattern": pattern})
            show("outline", w.outline("creds.py", force=True), {"path": "creds.py"})
            show("symbols", w.symbols("connect"), {"query": "connect"})
            old = (repo.root / "creds.py").read_text()
            repo.write("creds.py", f"# edit {round_}\n" + old.replace("return token", f"return token  # {round_}"))  # lines move: diffs next round
        show("notes", w.notes("add", f"the key is AKIA{AWS_BODY}", paths=["creds.py"]), {"action": "add"})
        show("notes", w.notes("list"), {"action": "list"})
        show("notes", w.notes("read", id=1), {"action": "read", "id": 1})
        assert any("the diff against what was shown" in m.content for m in history if m.role == "tool")
        # a call that itself holds a secret, then compaction of everything
        cid = "cx"
        history.append(Message("assistant", "", (ToolCall(cid, "grep", json.dumps({"pattern": f"AKIA{AWS_BODY}"})),)))
        history.append(Message("tool", render_text(w.grep(f"AKIA{AWS_BODY}")), tool_call_id=cid))
        done = compact(history, 0, keep_recent=0, is_current=w.current)
        assert len(done.cleared) > 20
        for m in done.messages:
            if m.role == "tool":
                _clean(m.content, "placeholder")
        assert all(AWS_BODY not in c.call for c in done.cleared)
        ctx = context_for_task(w, "connect token settings", budget=6000)
        _clean(ctx.text + json.dumps(ctx.to_dict()), "context --task")


def test_issue_29_a_planted_secret_is_never_shown_through_the_cli_and_mcp(planted, capsys):
    from jitctx.adapters.cli import main

    root = str(planted.root)
    for argv in (
        ["head", "creds.py"],
        ["head", "creds.py", "--start", "10", "-n", "2"],
        ["tail", "creds.py", "-n", "4"],
        ["grep", "AKIA", "--json"],
        ["grep", "MIIE", "-C", "2"],
        ["grep", "ghp_", "--mode", "count"],
        ["outline", "creds.py"],
        ["symbols", "connect", "--json"],
        ["context", "--task", "connect token settings"],
    ):
        main([*argv, "--root", root])
        got = capsys.readouterr()
        _clean(got.out + got.err, " ".join(argv))
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from jitctx.adapters.mcp import build_server

    app = build_server(workspace=Workspace(planted.root, max_tokens=4000))

    async def run():
        out = []
        async with Client(app.server) as c:
            for name, args in (
                ("head", {"path": "creds.py"}),
                ("head", {"path": "creds.py", "start": 9, "n": 2}),
                ("grep", {"pattern": "MIIE", "context": 1}),
                ("outline", {"path": "creds.py"}),
                ("symbols", {"query": "connect"}),
            ):
                res = await c.call_tool(name, args)
                out.append(json.dumps(res.structured_content) + "".join(getattr(x, "text", "") for x in res.content))
        return out

    for text in anyio.run(run):
        _clean(text, "mcp")


# -- a count never confirms a secret's bytes ----------------------------------------------

# each pair: a pattern that matches only inside a planted secret, and one that matches nothing
ORACLE_PAIRS = (
    (f"AKIA{AWS_BODY[:6]}", f"AKIA{AWS_BODY[:5]}#"),
    (AWS_BODY[3:12], AWS_BODY[3:11] + "#"),  # no needle in the pattern itself
    (f"ghp_{GH_BODY[:9]}", f"ghp_{GH_BODY[:8]}#"),
    (KEY_LINES[2][:20], KEY_LINES[2][:19] + "#"),  # a private key's body line
    (f'KEY = "AKIA{AWS_BODY[:2]}', f'KEY = "AKIA{AWS_BODY[:1]}#'),  # a match that only overlaps the secret
    (f"zzznomatch|AKIA{AWS_BODY[:4]}", f"zzznomatch|AKIA{AWS_BODY[:3]}#"),  # an alternation
)


def _oracle_variants():
    for backend in ("rg", "python"):
        for mode in ("content", "files", "count"):
            for path in (".", "creds.py"):
                yield {"backend": backend, "mode": mode, "path": path}
    yield {"backend": "rg", "mode": "count", "path": ".", "multiline": True}
    yield {"backend": "python", "mode": "count", "path": ".", "multiline": True}
    yield {"backend": "rg", "mode": "content", "path": ".", "context": 2}


def _answer(res) -> str:
    data = {k: v for k, v in res.to_dict().items() if k != "query"}
    return render_text(res) + "\n" + json.dumps(data, sort_keys=True)


def test_issue_29_a_pattern_inside_a_secret_is_not_counted_in_any_mode(planted):
    with Workspace(planted.root, record=False) as w:
        for args in _oracle_variants():
            for hit, miss in ORACLE_PAIRS:
                a = _answer(w.grep(hit, **args)).replace(json.dumps(hit)[1:-1], "PROBE").replace(hit, "PROBE")
                b = _answer(w.grep(miss, **args)).replace(json.dumps(miss)[1:-1], "PROBE").replace(miss, "PROBE")
                assert a == b, (args, hit)
        # a match outside the secret, on the same line, still counts
        for backend in ("rg", "python"):
            res = w.grep("AWS_KEY", backend=backend, mode="count")
            assert res.total == 1 and res.extra["matching_lines"] == 1
            res = w.grep(f"AWS_KEY|AKIA{AWS_BODY[:4]}", backend=backend, mode="content")
            assert [r.line for r in res.results] == [2] and AWS_BODY not in _answer(res)


def test_issue_29_many_files_with_secrets_are_judged_by_the_engine_and_remembered(make_repo, monkeypatch):
    from jitctx.primitives import secrets

    repo = make_repo("basic")
    for k in range(secrets.FEW + 10):
        repo.write(f"keys/k{k:03}.py", f'NAME = "n{k}"\nKEY = "AKIA{k:03}{AWS_BODY[3:]}"\n')
    asked: list[int] = []
    real = secrets._holding

    def counting(scope, paths):
        asked.append(len(paths))
        return real(scope, paths)

    monkeypatch.setattr(secrets, "_holding", counting)
    monkeypatch.setattr(secrets, "RACY_NS", 0)  # the files were just written
    with Workspace(repo.root, record=False) as w:
        for backend in ("rg", "python"):
            assert w.grep(AWS_BODY[3:12], backend=backend, mode="count").total == 0
            assert w.grep("NAME", backend=backend, mode="count").total == secrets.FEW + 10
        assert asked == []  # rg judged them on the first grep (more than FEW); every later grep remembered
        # an edit that keeps the size and puts the mtime back is seen (the ctime moved)
        path = repo.root / "keys" / "k000.py"
        st = path.stat()
        path.write_text(path.read_text().replace('"n0"', '"m0"'))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert w.grep("NAME", backend="python", mode="count").total == secrets.FEW + 10
        assert asked == [1]


def test_issue_29_a_secret_written_into_a_file_already_judged_is_seen(make_repo, monkeypatch):
    from jitctx.primitives import secrets

    monkeypatch.setattr(secrets, "RACY_NS", 0)
    repo = make_repo("basic")
    path = repo.root / "cfg.py"
    plain = f'KEY = "{"x" * 20}"\n'
    repo.write("cfg.py", plain)
    with Workspace(repo.root, record=False) as w:
        assert w.grep("KEY", mode="count").total == 1  # judged: no needle
        st = path.stat()
        secret = f'KEY = "AKIA{AWS_BODY}"\n'
        assert len(secret) == len(plain)
        path.write_text(secret)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        for backend in ("rg", "python"):
            assert w.grep(AWS_BODY[2:10], backend=backend, mode="count").total == 0
            assert w.grep(AWS_BODY[2:9] + "#", backend=backend, mode="count").total == 0


def test_issue_29_a_binary_file_with_a_secret_does_not_confirm_it(make_repo):
    repo = make_repo("basic")
    (repo.root / "blob.bin").write_bytes(b"\x00\x01head " + f"AKIA{AWS_BODY}".encode() + b" tail\x00")
    with Workspace(repo.root, record=False) as w:
        for backend in ("rg", "python"):
            hit, miss = (w.grep(p, path="blob.bin", backend=backend) for p in (AWS_BODY[2:11], AWS_BODY[2:10] + "#"))
            assert hit.notice.replace(AWS_BODY[2:11], "P") == miss.notice.replace(AWS_BODY[2:10] + "#", "P")
            assert "contains the pattern" in w.grep("head", path="blob.bin", backend=backend).notice


def test_issue_29_locate_does_not_confirm_a_secret(planted):
    from jitctx.code.words import content_terms

    assert "qwertyuiopasdfgh" not in content_terms(CREDS).lower() and "awskey" in content_terms(CREDS)
    with Workspace(planted.root, record=False) as w:
        hit, miss = f"AKIA{AWS_BODY}", f"AKIA{AWS_BODY[:-1]}X"
        a, b = (_answer(w.locate(f"the key {t} is refused")).replace(t, "PROBE").replace(t.lower(), "probe") for t in (hit, miss))
        assert a == b
