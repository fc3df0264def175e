"""Staleness: pure verdicts, the ledger, and the Workspace's per-request re-check.

The watcher (events, real git, the CLI stream) is tested in test_watcher.py.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from watch_support import FakePrefix, _no_threads_left, fake_preload  # noqa: E402,F401  (fixtures)

from jitctx.session.ledger import MISSING, Delivery, Ledger, Seen, judge, observe
from jitctx.session.workspace import Refreshed, Workspace

# -- pure: judge -----------------------------------------------------------------


def _seen(sha: str | None, sig=(1, 1, 1, 1)) -> Seen:
    return Seen(True, sig, sha, 10**19)


def _delivery(seen: Seen, path: str = "AGENTS.md", kind: str = "preload") -> Delivery:
    return Delivery(path, Path("/r") / path, kind, "a" * 40, seen)


def test_judge_same_bytes_is_fresh_even_if_stat_moved():
    assert judge(_delivery(_seen("x", (1, 1, 1, 1))), _seen("x", (1, 2, 3, 4)), "b" * 40) is None


def test_judge_changed_bytes_is_stale_with_both_heads():
    assert judge(_delivery(_seen("x")), _seen("y"), "b" * 40) == {
        "path": "AGENTS.md",
        "kind": "preload",
        "change": "changed",
        "old_head": "a" * 40,
        "new_head": "b" * 40,
    }


def test_judge_deleted_added_and_still_absent():
    assert judge(_delivery(_seen("x")), MISSING, None)["change"] == "deleted"
    assert judge(_delivery(MISSING), _seen("x"), None)["change"] == "added"
    assert judge(_delivery(MISSING), MISSING, None) is None


def test_judge_unhashed_big_file_by_stat_signature():
    big = Seen(True, (9, 9, 9, 9), None, 10**19)
    assert judge(_delivery(big), Seen(True, (9, 9, 9, 9), None, 10**19), None) is None
    assert judge(_delivery(big), Seen(True, (9, 10, 9, 9), None, 10**19), None)["change"] == "changed"


def test_seen_is_racy_only_when_written_right_before_it_was_observed():
    assert Seen(True, (1, 10**18, 1, 1), "x", 10**18 + 10**9).racy
    assert not Seen(True, (1, 10**18, 1, 1), "x", 10**18 + 3 * 10**9).racy
    assert not MISSING.racy


# -- the ledger -------------------------------------------------------------


def test_ledger_content_decides(tmp_path):
    f = tmp_path / "a.md"
    f.write_text("one\n")
    led = Ledger()
    led.record("a.md", f, "read", "h1")
    assert led.check("h1") == []
    f.write_text("one\n")  # same bytes rewritten
    assert led.check("h2") == []
    f.write_text("two\n")
    assert led.check("h2") == [{"path": "a.md", "kind": "read", "change": "changed", "old_head": "h1", "new_head": "h2"}]
    f.write_text("one\n")  # back to what was delivered: the agent's copy is right again
    assert led.check("h2") == []
    f.unlink()
    assert led.check("h3") == [{"path": "a.md", "kind": "read", "change": "deleted", "old_head": "h1", "new_head": "h3"}]


def test_ledger_follows_a_symlinked_name_to_where_it_leads_now(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("rules\n")
    (tmp_path / "OTHER.md").write_text("other rules\n")
    (tmp_path / "SAME.md").write_text("rules\n")
    link = tmp_path / "AGENTS.md"
    link.symlink_to("CLAUDE.md")
    led = Ledger()
    led.record("AGENTS.md", link.resolve(), "preload", "h1", named=link)
    assert led.deliveries()[0].watch_paths == (tmp_path / "CLAUDE.md", link)
    assert led.check("h1") == []

    def point(target):
        tmp = tmp_path / "AGENTS.md.new"
        tmp.symlink_to(target)
        os.replace(tmp, link)

    point("SAME.md")  # another file with the delivered bytes: nothing the agent holds is wrong
    assert led.check("h1") == []
    point("OTHER.md")
    assert [(e["path"], e["change"]) for e in led.check("h1")] == [("AGENTS.md", "changed")]
    link.unlink()
    link.write_text("rules\n")  # the link became a file with the delivered bytes
    assert led.check("h1") == []
    link.write_text("edited\n")  # ...and that file, not CLAUDE.md, is what counts now
    assert [(e["path"], e["change"]) for e in led.check("h1")] == [("AGENTS.md", "changed")]
    link.unlink()
    assert [(e["path"], e["change"]) for e in led.check("h1")] == [("AGENTS.md", "deleted")]


def test_ledger_keeps_no_name_when_it_is_the_resolved_path(tmp_path):
    f = tmp_path / "a.md"
    f.write_text("x\n")
    led = Ledger()
    led.record("a.md", f, "read", "h1", named=f)
    assert led.deliveries()[0].named is None and led.deliveries()[0].watch_paths == (f,)


def test_ledger_atomic_save_by_rename_and_delete_recreate(tmp_path):
    f = tmp_path / "AGENTS.md"
    f.write_text("rules\n")
    led = Ledger()
    led.record("AGENTS.md", f, "preload", None)
    tmp = tmp_path / ".AGENTS.md.tmp"
    tmp.write_text("rules\n")
    os.replace(tmp, f)  # same bytes, new inode
    assert led.check(None) == []
    f.unlink()
    f.write_text("rules\n")
    assert led.check(None) == []
    tmp.write_text("new rules\n")
    os.replace(tmp, f)
    assert [e["change"] for e in led.check(None)] == ["changed"]


def test_ledger_same_size_rewrite_with_mtime_put_back(tmp_path):
    """A same-size rewrite whose mtime is restored (cp -p, rsync) is still caught."""
    f = tmp_path / "a.md"
    f.write_text("aaaa\n")
    old = 1_600_000_000_000_000_000
    os.utime(f, ns=(old, old))
    led = Ledger()
    led.record("a.md", f, "read", None)
    f.write_text("bbbb\n")
    os.utime(f, ns=(old, old))
    assert [e["change"] for e in led.check(None)] == ["changed"]
    assert [e["change"] for e in led.check(None, full=True)] == ["changed"]


def test_ledger_absent_candidate_reported_when_it_appears(tmp_path):
    led = Ledger()
    led.record("AGENTS.override.md", tmp_path / "AGENTS.override.md", "preload", "h1")
    assert led.check("h1") == []
    (tmp_path / "AGENTS.override.md").write_text("x")
    assert led.check("h2") == [{"path": "AGENTS.override.md", "kind": "preload", "change": "added", "old_head": "h1", "new_head": "h2"}]


def test_ledger_latest_delivery_wins_and_forget(tmp_path):
    f = tmp_path / "a.md"
    f.write_text("one")
    led = Ledger()
    led.record("a.md", f, "preload", "h1")
    f.write_text("two")
    assert len(led.check("h1")) == 1
    led.record("a.md", f, "read", "h1")  # read again: the agent has the new bytes
    assert led.check("h1") == []
    g = tmp_path / "b.md"
    g.write_text("b")
    led.record("b.md", g, "preload", "h1")
    led.forget(kind="preload")
    assert [d.path for d in led.deliveries()] == ["a.md"]
    led.forget(["a.md"])
    assert len(led) == 0


def test_ledger_listeners_and_hash_cache(tmp_path, monkeypatch):
    f = tmp_path / "a.md"
    f.write_text("one")
    old = 1_600_000_000_000_000_000
    os.utime(f, ns=(old, old))  # not racy: the stat signature may be trusted
    led = Ledger()
    got = []
    led.listen(got.append)
    led.record("a.md", f, "read", None)
    assert [d.path for d in got] == ["a.md"]
    led.unlisten(got.append)
    hashed = []
    import jitctx.session.ledger as w

    real_hash = w.hash_file
    monkeypatch.setattr(w, "hash_file", lambda p: hashed.append(p) or real_hash(p))
    for _ in range(3):
        assert led.check(None) == []
    assert hashed == []  # unchanged stat: no re-hash
    assert led.check(None, full=True) == []
    assert hashed == [f]


def test_ledger_is_thread_safe(tmp_path):
    files = []
    for i in range(20):
        p = tmp_path / f"f{i}.txt"
        p.write_text(str(i))
        files.append(p)
    led = Ledger()
    errors = []

    def writer():
        try:
            for _ in range(50):
                for i, p in enumerate(files):
                    led.record(f"f{i}.txt", p, "read", None)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def checker():
        try:
            for _ in range(100):
                led.check(None)
                led.forget(["f0.txt"])
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=writer), threading.Thread(target=checker), threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert led.check(None) == []


def test_observe_missing_and_reuse(tmp_path):
    assert observe(tmp_path / "nope") is MISSING
    f = tmp_path / "x"
    f.write_text("x")
    os.utime(f, ns=(10**18, 10**18))
    first = observe(f)
    assert first.sha256 == hashlib.sha256(b"x").hexdigest()
    assert observe(f, first) is first
    again = observe(f, first, full=True)
    assert again is not first and (again.sig, again.sha256) == (first.sig, first.sha256) and again.at_ns > first.at_ns


# -- the Workspace without a watcher ---------------------------------------------


def test_every_request_rechecks_without_a_watcher(repo):
    ws = Workspace(repo.root)
    before = repo.head()
    ws.head("AGENTS.md")
    repo.checkout("other", create=True)
    repo.write("AGENTS.md", "# other rules\n")
    after = repo.commit("other rules")
    res = ws.glob("*.md")
    assert res.stale == [{"path": "AGENTS.md", "kind": "read", "change": "changed", "old_head": before, "new_head": after}]
    assert ws.stale() == res.stale
    ws.head("AGENTS.md")  # read again: fresh
    assert ws.glob("*.md").stale == []


def test_a_preloaded_instruction_link_pointed_elsewhere_goes_stale(repo):
    (repo.root / "AGENTS.md").unlink()
    repo.write("docs/rules.md", "# shared rules\n")
    repo.write("docs/other.md", "# other rules\n")
    (repo.root / "AGENTS.md").symlink_to("docs/rules.md")
    ws = Workspace(repo.root)
    assert "# shared rules" in ws.preload().text
    assert ws.glob("*.md").stale == []
    (repo.root / "AGENTS.md").unlink()
    (repo.root / "AGENTS.md").symlink_to("docs/other.md")
    assert [(e["path"], e["kind"], e["change"]) for e in ws.glob("*.md").stale] == [("AGENTS.md", "preload", "changed")]


def test_branch_switch_leaving_agents_md_alone_invalidates_nothing(repo):
    ws = Workspace(repo.root)
    ws.head("AGENTS.md")
    ws.tail("src/app.py")
    repo.checkout("side", create=True)
    repo.write("docs/guide.md", "changed guide\n")
    repo.commit("guide only")
    repo.checkout("main")
    repo.checkout("side")
    assert ws.head_sha() == repo.head()
    assert ws.stale() == []


def test_refresh_rerenders_prefix_and_clears(repo, fake_preload):
    ws = Workspace(repo.root)
    pre = ws.preload(budget=500)
    ws.head("docs/guide.md")
    ws.head("src/app.py")
    h1 = repo.head()
    repo.write("AGENTS.md", "# new rules\n")
    repo.write("docs/guide.md", "new guide\n")
    assert [s["path"] for s in ws.glob("**/*.md").stale] == ["AGENTS.md", "docs/guide.md"]
    assert len(fake_preload) == 1  # requests never re-render the prefix
    r = ws.refresh()
    assert isinstance(r, Refreshed)
    assert r.prefix_hash == hashlib.sha256(b"# new rules\n").hexdigest() != pre.prefix_hash
    assert r.text == "# new rules\n"
    assert fake_preload[-1] == {"cwd": None, "budget": 500, "readme_budget": 2000}
    assert [s["path"] for s in r.cleared] == ["AGENTS.md", "docs/guide.md"]
    assert r.to_event() == {"event": "refreshed", "prefix_hash": r.prefix_hash, "git_head": h1, "cleared": ["AGENTS.md", "docs/guide.md"]}
    assert ws.stale() == []
    paths = {d.path: d.kind for d in ws.ledger.deliveries()}
    # fresh reads stay tracked, and so does src/util/AGENTS.md, met just in time by the glob
    assert paths == {"AGENTS.md": "preload", "src/app.py": "read", "src/util/AGENTS.md": "instructions"}
    repo.write("src/app.py", "print('changed')\n")
    assert [s["path"] for s in ws.stale()] == ["src/app.py"]


def test_refresh_without_preload_just_clears(repo):
    ws = Workspace(repo.root)
    ws.head("docs/guide.md")
    repo.write("docs/guide.md", "x\n")
    r = ws.refresh()
    assert (r.prefix_hash, [s["path"] for s in r.cleared], r.text) == (None, ["docs/guide.md"], None)
    assert ws.stale() == []


def test_workspace_outside_git(tmp_path):
    (tmp_path / "AGENTS.md").write_text("rules\n")
    ws = Workspace(tmp_path)
    ws.head("AGENTS.md")
    (tmp_path / "AGENTS.md").write_text("other\n")
    assert ws.stale() == [{"path": "AGENTS.md", "kind": "read", "change": "changed", "old_head": None, "new_head": None}]


def test_staleness_is_exactly_a_content_change():
    """Property: after any rewrite, stale iff the bytes differ from the delivered ones."""
    import tempfile

    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=60, deadline=None)
    @given(st.binary(max_size=64), st.binary(max_size=64), st.booleans())
    def prop(before: bytes, after: bytes, by_rename: bool):
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "f"
            f.write_bytes(before)
            led = Ledger()
            led.record("f", f, "read", "h")
            if by_rename:
                (Path(d) / "t").write_bytes(after)
                os.replace(Path(d) / "t", f)
            else:
                f.write_bytes(after)
            got = led.check("h")
            assert (got != []) == (before != after)
            assert led.check("h", full=True) == got

    prop()


def test_a_one_call_workspace_records_nothing(repo):
    ws = Workspace(repo.root, record=False)  # the CLI's: no later call could be told
    ws.head("AGENTS.md")
    repo.write("AGENTS.md", "changed\n")
    assert ws.glob("*.md").stale == [] and ws._ledger is None
    ws = Workspace(repo.root)
    ws.head("AGENTS.md")
    repo.write("AGENTS.md", "changed again\n")
    assert [s["path"] for s in ws.glob("*.md").stale] == ["AGENTS.md"]
