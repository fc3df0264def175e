"""The watcher: event classification, debounce, and real git in temp repos.

Real observers are marked ``slow`` (still run by default); their waits are
generous, and every "no event" check is closed by a sentinel commit whose
event must come first, so a false alarm cannot hide behind a short wait.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import queue
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from jitctx.adapters import cli
from jitctx.session.event_kinds import GitPaths
from jitctx.session.ledger import Ledger
from jitctx.session.watcher import HeadWatcher
from jitctx.session.workspace import Workspace

GIT_DATE = "2024-01-01T00:00:00+00:00"
WAIT = 15.0  # seconds: generous, the machine is shared


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": GIT_DATE, "GIT_COMMITTER_DATE": GIT_DATE}
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr}"
    return proc.stdout.strip()


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD")


from watch_support import FakePrefix, _no_threads_left, fake_preload, need_inotify  # noqa: E402,F401  (fixtures)

# -- the watcher with synthetic events ------------------------------------------


@dataclass
class Ev:
    src_path: str
    dest_path: str = ""
    is_directory: bool = False


class Recorder:
    def __init__(self):
        self.calls: queue.Queue = queue.Queue()

    def __call__(self, reasons):
        self.calls.put((time.monotonic(), reasons))

    def get(self, timeout=WAIT):
        return self.calls.get(timeout=timeout)

    def empty_for(self, seconds):
        try:
            got = self.calls.get(timeout=seconds)
        except queue.Empty:
            return True
        raise AssertionError(f"unexpected callback: {got}")


@pytest.fixture
def gitdir(tmp_path):
    g = tmp_path / "repo" / ".git"
    (g / "refs" / "heads").mkdir(parents=True)
    return g


def _watcher(gitdir, rec, ledger=None, **kw):
    gp = GitPaths(str(gitdir), str(gitdir))
    return HeadWatcher(gitdir.parent, gp, ledger or Ledger(), rec, **kw)


@pytest.mark.slow
def test_debounce_coalesces_a_burst(gitdir):
    rec = Recorder()
    w = _watcher(gitdir, rec).start()
    try:
        t0 = time.monotonic()
        for _ in range(10):
            w.on_event(Ev(str(gitdir / "HEAD.lock"), str(gitdir / "HEAD")))
            time.sleep(0.02)
        w.on_event(Ev(str(gitdir / "index")))  # noise, dropped
        at, reasons = rec.get()
        assert reasons == frozenset({"head"})
        assert at - t0 >= 0.15 + 0.18
        rec.empty_for(0.4)
    finally:
        w.stop()


@pytest.mark.slow
def test_busy_git_holds_the_verdict_until_the_lock_goes(gitdir):
    rec = Recorder()
    w = _watcher(gitdir, rec, busy_cap=10.0).start()
    try:
        (gitdir / "index.lock").write_text("")
        w.signal("head")
        rec.empty_for(0.6)
        (gitdir / "index.lock").unlink()
        assert rec.get()[1] == frozenset({"head"})
    finally:
        w.stop()


@pytest.mark.slow
def test_busy_cap_judges_a_stopped_rebase_anyway(gitdir):
    rec = Recorder()
    w = _watcher(gitdir, rec, busy_cap=0.5).start()
    try:
        (gitdir / "rebase-merge").mkdir()
        t0 = time.monotonic()
        w.signal("head")
        at, _ = rec.get()
        assert 0.45 <= at - t0 < 5
    finally:
        w.stop()


@pytest.mark.slow
def test_overflow_in_watchdogs_log_triggers_a_full_recheck(gitdir):
    rec = Recorder()
    w = _watcher(gitdir, rec).start()
    try:
        logging.getLogger("watchdog.observers.inotify_c").warning("Inotify queue overflowed; filesystem events were lost")
        assert "overflow" in rec.get()[1]
    finally:
        w.stop()
    assert not logging.getLogger("watchdog.observers.inotify_c").handlers  # the tap is removed


@pytest.mark.slow
def test_overflow_makes_the_workspace_rehash(repo, monkeypatch):
    ws = Workspace(repo.root)
    ws.head("AGENTS.md")
    fulls = []
    check = ws.ledger.check
    monkeypatch.setattr(ws.ledger, "check", lambda h, full=False: fulls.append(full) or check(h, full=full))
    ws._stale_for(ws.head_sha())
    ws.events.on_settle(frozenset({"overflow"}))
    ws.events.on_settle(frozenset({"file"}))
    assert fulls == [False, True, False]


@pytest.mark.slow
def test_callback_failure_does_not_kill_the_watcher(gitdir, caplog):
    calls = []

    def boom(reasons):
        calls.append(reasons)
        if len(calls) == 1:
            raise RuntimeError("boom")

    w = _watcher(gitdir, boom).start()
    try:
        w.signal("head")
        deadline = time.monotonic() + WAIT
        while len(calls) < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        w.signal("head")
        while len(calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(calls) == 2
    finally:
        w.stop()


# -- real git, real observer ------------------------------------------------


class Stream:
    """``ws.watch`` drained by a thread into a queue."""

    def __init__(self, ws: Workspace, *, poll: bool = False, refresh: bool = False):
        self.ws = ws
        self.q: queue.Queue = queue.Queue()
        self.gen = ws.watch(poll=poll, refresh=refresh)
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self):
        for event in self.gen:
            self.q.put(event)

    def next(self, timeout: float = WAIT) -> dict:
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no event within the timeout") from None

    def none_for(self, seconds: float) -> None:
        try:
            got = self.q.get(timeout=seconds)
        except queue.Empty:
            return
        raise AssertionError(f"unexpected event: {got}")

    def close(self):
        self.ws.close()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()


@pytest.fixture
def stream():
    made = []

    def make(ws, **kw):
        s = Stream(ws, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def _moved(s: Stream, old: str, new: str, branch="<any>") -> dict:
    ev = s.next()
    assert ev["event"] == "head_moved", ev
    assert (ev["old_head"], ev["new_head"]) == (old, new)
    if branch != "<any>":
        assert ev["branch"] == branch
    return ev


def _stale(s: Stream, paths: list[str]) -> dict:
    ev = s.next()
    assert ev["event"] == "stale", ev
    assert [e["path"] for e in ev["stale"]] == paths
    return ev


def _side_branch(repo, name: str, path: str, text: str, message: str) -> tuple[str, str]:
    """A branch ``name`` with one commit writing ``path``; back on main. Returns (main, branch) shas."""
    main = repo.head()
    repo.checkout(name, create=True)
    repo.write(path, text)
    sha = repo.commit(message)
    repo.checkout("main")
    return main, sha


def _preloaded(repo_root: Path) -> Workspace:
    ws = Workspace(repo_root)
    ws.ledger.record("AGENTS.md", (repo_root / "AGENTS.md").resolve(), "preload", ws.head_sha())
    return ws


@pytest.mark.slow
def test_commit_on_current_branch(repo, stream):
    s = stream(_preloaded(repo.root))
    before = repo.head()
    repo.write("src/app.py", "print('v2')\n")
    after = repo.commit("v2")
    _moved(s, before, after, "main")
    s.none_for(0.5)  # AGENTS.md untouched: no stale event


@pytest.mark.slow
def test_checkout_other_branch_changing_agents_md(repo, stream):
    main, feat = _side_branch(repo, "feat", "AGENTS.md", "# feature rules\n", "feature rules")
    s = stream(_preloaded(repo.root))
    repo.checkout("feat")
    _moved(s, main, feat, "feat")
    ev = _stale(s, ["AGENTS.md"])
    assert ev["stale"][0] == {"path": "AGENTS.md", "kind": "preload", "change": "changed", "old_head": main, "new_head": feat}
    assert ev["git_head"] == feat


@pytest.mark.slow
def test_checkout_branch_with_same_agents_md_invalidates_nothing(repo, stream):
    main, docs = _side_branch(repo, "docs", "docs/guide.md", "new\n", "docs only")
    s = stream(_preloaded(repo.root))
    repo.checkout("docs")
    _moved(s, main, docs, "docs")
    s.none_for(0.6)


@pytest.mark.slow
def test_detached_checkout(repo, stream):
    first = repo.head()
    second = repo.commit("second")
    s = stream(_preloaded(repo.root))
    repo.git("checkout", "-q", "--detach", first)
    _moved(s, second, first, None)


@pytest.mark.slow
def test_reset_hard(repo, stream):
    first = repo.head()
    repo.write("AGENTS.md", "# v2\n")
    second = repo.commit("v2")
    s = stream(_preloaded(repo.root))
    repo.git("reset", "-q", "--hard", first)
    _moved(s, second, first, "main")
    _stale(s, ["AGENTS.md"])


def _diverged_topic(repo, commits: int) -> str:
    """A branch ``topic`` with ``commits`` commits while main moved on; on topic. Returns its head."""
    repo.checkout("topic", create=True)
    for i in range(commits):
        repo.write(f"topic{i}.txt", f"{i}\n")
        repo.commit(f"topic {i}")
    repo.checkout("main")
    repo.write("main.txt", "main\n")
    repo.commit("main moves")
    repo.checkout("topic")
    return repo.head()


@pytest.mark.slow
def test_rebase_reported_once_after_it_settles(repo, stream):
    base = repo.head()
    old = _diverged_topic(repo, 4)
    s = stream(_preloaded(repo.root))
    repo.git("rebase", "-q", "main")
    new = repo.head()
    assert new != old and base != new
    _moved(s, old, new, "topic")
    s.none_for(1.0)


@pytest.mark.slow
def test_slow_rebase_with_pauses_between_picks_is_still_one_move(repo, stream):
    old = _diverged_topic(repo, 3)
    s = stream(_preloaded(repo.root))
    repo.git("rebase", "-q", "--exec", "sleep 0.4", "main")  # gaps longer than the debounce
    _moved(s, old, repo.head(), "topic")
    s.none_for(1.0)


@pytest.mark.slow
def test_merge(repo, stream):
    repo.checkout("feat", create=True)
    repo.write("feat.txt", "f\n")
    repo.commit("feat")
    repo.checkout("main")
    repo.write("main.txt", "m\n")
    before = repo.commit("main")
    s = stream(_preloaded(repo.root))
    repo.git("merge", "-q", "--no-edit", "feat")
    _moved(s, before, repo.head(), "main")
    s.none_for(0.5)


@pytest.mark.slow
def test_amend(repo, stream):
    before = repo.head()
    s = stream(_preloaded(repo.root))
    repo.git("commit", "-q", "--amend", "-m", "amended")
    _moved(s, before, repo.head(), "main")


@pytest.mark.slow
def test_pull_from_local_remote(repo, stream, tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo.root), str(clone))
    repo.write("AGENTS.md", "# upstream rules\n")
    upstream = repo.commit("upstream")
    before = head(clone)
    s = stream(_preloaded(clone))
    git(clone, "pull", "-q", "--ff-only")
    _moved(s, before, upstream, "main")
    _stale(s, ["AGENTS.md"])


@pytest.mark.slow
def test_linked_worktree(repo, stream, tmp_path):
    wt = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "wtb", str(wt))
    ws = _preloaded(wt)
    assert ws.repo.git.git_dir != ws.repo.git.common_dir  # HEAD under the common dir's worktrees/
    s = stream(ws)
    before = head(wt)
    repo.write("elsewhere.txt", "main worktree moves\n")
    repo.commit("main moves")  # another work tree's branch: not our HEAD
    (wt / "AGENTS.md").write_text("# wt rules\n")
    git(wt, "commit", "-q", "-am", "in wt")
    after = head(wt)
    _moved(s, before, after, "wtb")
    ev = s.next()
    assert ev["event"] == "stale" and ev["stale"][0]["path"] == "AGENTS.md"
    git(wt, "checkout", "-q", "-b", "wtc")
    git(wt, "checkout", "-q", "--detach", before)
    _moved(s, after, before, None)


@pytest.mark.slow
def test_submodule(tmp_path, stream):
    src = tmp_path / "subsrc"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    (src / "AGENTS.md").write_text("# sub rules\n")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "sub")
    sup = tmp_path / "super"
    sup.mkdir()
    git(sup, "init", "-q", "-b", "main")
    (sup / "README.md").write_text("super\n")
    git(sup, "add", "-A")
    git(sup, "commit", "-q", "-m", "super")
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(src), "sub")
    git(sup, "commit", "-q", "-m", "add sub")
    sub = sup / "sub"
    ws = _preloaded(sub)
    assert ws.root == sub.resolve()
    assert ws.repo.git.git_dir == (sup / ".git" / "modules" / "sub").resolve()
    s = stream(ws)
    before = head(sub)
    (sub / "AGENTS.md").write_text("# sub rules v2\n")
    git(sub, "commit", "-q", "-am", "sub v2")
    _moved(s, before, head(sub))
    _stale(s, ["AGENTS.md"])


@pytest.mark.slow
def test_no_false_alarms(repo, stream, tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo.root), str(clone))
    (clone / "AGENTS.md").write_text("# local, uncommitted\n")
    git(clone, "commit", "-q", "-am", "local rules")
    ws = _preloaded(clone)
    ws.head("src/app.py")
    s = stream(ws)
    before = head(clone)
    git(clone, "status")
    git(clone, "fetch", "-q")  # nothing new
    git(clone, "gc", "-q")
    git(clone, "pack-refs", "--all")
    (clone / "docs" / "guide.md").write_text("scratch\n")
    git(clone, "stash", "-q")  # HEAD stays
    git(clone, "stash", "pop", "-q")
    git(clone, "checkout", "-q", "--", "docs/guide.md")
    git(clone, "branch", "other")
    git(clone, "branch", "-f", "other", "HEAD~1")
    git(clone, "tag", "v1")
    git(clone, "update-index", "--refresh")
    (Path(ws.repo.git.git_dir) / "ORIG_HEAD").write_text(before + "\n")
    (Path(ws.repo.git.git_dir) / "FETCH_HEAD").write_text("")
    files = [p for p in clone.rglob("*") if p.is_file() and ".git" not in p.parts]
    for _ in range(50):  # what a grep does: open, read, close every file; not write events
        for p in files:
            p.read_bytes()
    assert head(clone) == before
    s.none_for(1.0)
    after = git(clone, "commit", "-q", "--allow-empty", "-m", "sentinel") or head(clone)
    _moved(s, before, after, "main")  # the first event is the sentinel's
    s.none_for(0.3)


@pytest.mark.slow
def test_packed_refs_only_branch(repo, stream):
    main, packed = _side_branch(repo, "packed", "p.txt", "p\n", "packed")
    repo.git("pack-refs", "--all")
    assert not (repo.root / ".git" / "refs" / "heads" / "packed").exists()
    s = stream(_preloaded(repo.root))
    repo.checkout("packed")
    _moved(s, main, packed, "packed")
    repo.git("pack-refs", "--all")
    s.none_for(0.5)


@pytest.mark.slow
def test_delivered_file_edits_atomic_save_and_recreate(repo, stream):
    ws = _preloaded(repo.root)
    ws.head("src/util/helpers.py")
    s = stream(ws)
    agents = repo.root / "AGENTS.md"
    text = agents.read_text()
    agents.unlink()  # delete then recreate, same bytes
    agents.write_text(text)
    s.none_for(0.6)
    tmp = repo.root / ".AGENTS.md.swp"
    tmp.write_text("# saved by an editor\n")
    os.replace(tmp, agents)
    ev = _stale(s, ["AGENTS.md"])
    assert ev["stale"][0]["change"] == "changed"
    (repo.root / "src" / "util" / "helpers.py").write_text("changed\n")
    ev = _stale(s, ["AGENTS.md", "src/util/helpers.py"])
    assert ev["stale"][1]["kind"] == "read"
    (repo.root / "src" / "util" / "helpers.py").unlink()
    ev = _stale(s, ["AGENTS.md", "src/util/helpers.py"])
    assert ev["stale"][1]["change"] == "deleted"


@pytest.mark.slow
def test_a_symlinked_instruction_file_pointed_elsewhere_is_reported(repo, stream):
    repo.write("docs/rules.md", "# rules\n")
    repo.write("docs/other.md", "# other rules\n")
    link = repo.root / "CLAUDE.md"
    link.symlink_to("docs/rules.md")
    ws = Workspace(repo.root)
    ws.ledger.record("CLAUDE.md", link.resolve(), "preload", ws.head_sha(), named=link)
    s = stream(ws)
    s.none_for(0.3)
    tmp = repo.root / "CLAUDE.md.tmp"
    tmp.symlink_to("docs/other.md")
    os.replace(tmp, link)  # the link now leads elsewhere; docs/rules.md is untouched
    ev = _stale(s, ["CLAUDE.md"])
    assert ev["stale"][0]["change"] == "changed"


@pytest.mark.slow
def test_watch_set_is_narrow_and_follows_reads(repo):
    need_inotify()
    with Workspace(repo.root) as ws:
        w = ws.start_watching()
        assert w.observer_kind == "native"
        g = str(repo.root / ".git")
        assert w.watched() == {g: False, g + "/refs/heads": True}
        ws.head("src/util/helpers.py")
        assert w.watched() == {g: False, g + "/refs/heads": True, str(repo.root / "src" / "util"): False}
        assert ws.start_watching() is w
    assert ws.events.watcher is None


@pytest.mark.slow
def test_deleted_directory_is_rewatched_when_it_comes_back(repo, stream):
    ws = _preloaded(repo.root)
    ws.head("src/util/helpers.py")
    main = repo.head()
    repo.checkout("noutil", create=True)
    repo.git("rm", "-q", "-r", "src/util")
    gone = repo.commit("drop util")
    repo.checkout("main")
    s = stream(ws)
    repo.checkout("noutil")
    _moved(s, main, gone)
    _stale(s, ["src/util/AGENTS.md", "src/util/helpers.py"])  # the nested AGENTS.md came just in time
    assert str(repo.root / "src" / "util") not in ws.events.watcher.watched()
    repo.checkout("main")
    _moved(s, gone, main)
    _stale(s, [])
    (repo.root / "src" / "util" / "helpers.py").write_text("edited after the directory came back\n")
    _stale(s, ["src/util/helpers.py"])


@pytest.mark.slow
def test_polling_observer(repo, stream):
    main, feat = _side_branch(repo, "feat", "AGENTS.md", "# feature\n", "feat")
    ws = _preloaded(repo.root)
    s = stream(ws, poll=True)
    assert ws.events.watcher.observer_kind == "polling"
    assert ws.events.watcher.watched() == {str(repo.root / ".git"): False, str(repo.root / ".git" / "refs" / "heads"): True}
    repo.checkout("feat")
    _moved(s, main, feat, "feat")
    _stale(s, ["AGENTS.md"])
    ws.head("src/app.py")  # delivered files are polled by stat, not by a thread per directory
    (repo.root / "src" / "app.py").write_text("print('edited')\n")
    _stale(s, ["AGENTS.md", "src/app.py"])


@pytest.mark.slow
def test_directories_past_the_cap_are_polled_by_stat(repo, stream, monkeypatch):
    import jitctx.session.watcher

    need_inotify()
    monkeypatch.setattr(jitctx.session.watcher, "MAX_WATCHED_DIRS", 1)
    ws = _preloaded(repo.root)  # the root directory takes the one native slot
    s = stream(ws)
    ws.head("src/util/helpers.py")
    w = ws.events.watcher
    assert str(repo.root / "src" / "util") not in w.watched()
    util = (repo.root / "src" / "util").resolve()
    assert w._polled == frozenset({str(util / "helpers.py"), str(util / "AGENTS.md")})  # read, and met just in time
    (repo.root / "src" / "util" / "helpers.py").write_text("edited\n")
    _stale(s, ["src/util/helpers.py"])


@pytest.mark.slow
def test_native_unavailable_falls_back_to_polling(repo, monkeypatch):
    import watchdog.observers

    def broken():
        raise OSError(24, "inotify instance limit reached")

    monkeypatch.setattr(watchdog.observers, "Observer", broken)
    with Workspace(repo.root) as ws:
        assert ws.start_watching().observer_kind == "polling"


@pytest.mark.slow
def test_watch_refresh_session(repo, fake_preload):
    main, feat = _side_branch(repo, "feat", "AGENTS.md", "# feature\n", "feat")
    ws = Workspace(repo.root)
    s = Stream(ws, refresh=True)
    try:
        first = s.next()
        assert first["event"] == "refreshed" and first["cleared"] == [] and first["git_head"] == main
        repo.checkout("feat")
        _moved(s, main, feat)
        _stale(s, ["AGENTS.md"])
        ev = s.next()
        assert ev == {"event": "refreshed", "prefix_hash": hashlib.sha256(b"# feature\n").hexdigest(), "git_head": feat, "cleared": ["AGENTS.md"]}
        repo.checkout("main")  # reported again: the refresh re-baselined
        _moved(s, feat, main)
        _stale(s, ["AGENTS.md"])
    finally:
        s.close()


@pytest.mark.slow
def test_watch_timeout_ends_and_stops(repo):
    ws = Workspace(repo.root)
    t0 = time.monotonic()
    assert list(ws.watch(timeout=0.3, refresh=False)) == []
    assert 0.25 <= time.monotonic() - t0 < 5
    assert ws.events.watcher is None


@pytest.mark.slow
def test_cli_watch_streams_json_lines(repo, fake_preload, capsys):
    import json

    main, feat = _side_branch(repo, "feat", "AGENTS.md", "# feature\n", "feat")
    codes = []
    t = threading.Thread(target=lambda: codes.append(cli.main(["watch", "--root", str(repo.root), "--timeout", "4"])))
    t.start()
    out = ""
    deadline = time.monotonic() + WAIT
    while '"refreshed"' not in out and time.monotonic() < deadline:
        out += capsys.readouterr().out
        time.sleep(0.02)
    repo.checkout("feat")
    t.join(WAIT)
    out += capsys.readouterr().out
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["event"] for e in events] == ["refreshed", "head_moved", "stale", "refreshed"]
    assert (events[1]["old_head"], events[1]["new_head"]) == (main, feat)
    assert codes == [0]


@pytest.mark.slow
def test_cli_watch_nothing_happened_exits_1(repo, fake_preload, capsys):
    assert cli.main(["watch", "--root", str(repo.root), "--timeout", "0.3", "--poll"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and '"refreshed"' in lines[0]


def test_cli_watch_bad_timeout(repo, capsys):
    assert cli.main(["watch", "--root", str(repo.root), "--timeout", "-1"]) == 2
    err = capsys.readouterr().err
    assert "timeout" in err and "-1" in err


@pytest.mark.slow
def test_cli_watch_preloads_from_the_working_directory(repo, fake_preload, monkeypatch, capsys):
    """Like `jitctx preload`: the session's prefix runs to the working directory, refreshes repeat it."""
    monkeypatch.chdir(repo.root / "src")
    assert cli.main(["watch", "--root", str(repo.root), "--timeout", "0.3", "--poll"]) == 1
    capsys.readouterr()
    assert fake_preload and all(c["cwd"] == "src" for c in fake_preload)  # from the root


def _close_once_subscribed(ws: Workspace) -> threading.Thread:
    """Close ``ws`` once its watch stream waits for an event (blocked in its queue's get)."""

    def waiting() -> bool:
        return any(q.not_empty._waiters for q in ws.events.subscribers)  # CPython's Condition: the threads waiting on it

    def run():
        deadline = time.monotonic() + WAIT
        while not waiting() and time.monotonic() < deadline:
            time.sleep(0.02)
        ws.close()

    t = threading.Thread(target=run)
    t.start()
    return t


@pytest.mark.slow
@pytest.mark.parametrize("timeout", [math.inf, 1e10, 1e300])
def test_watch_unbounded_timeouts(repo, timeout):
    """inf means no time cap; a huge finite one is waited for in TIMEOUT_MAX steps, never OverflowError."""
    ws = Workspace(repo.root)
    closer = _close_once_subscribed(ws)
    assert list(ws.watch(timeout=timeout, refresh=False, poll=True)) == []
    closer.join(WAIT)
    assert ws.events.watcher is None


@pytest.mark.slow
@pytest.mark.parametrize("timeout", ["inf", "1e10"])
def test_cli_watch_timeout_inf(repo, fake_preload, monkeypatch, capsys, timeout):
    ws = Workspace(repo.root)
    monkeypatch.setattr(cli.commands, "workspace", lambda args, caller: ws)
    closer = _close_once_subscribed(ws)
    code = cli.main(["watch", "--root", str(repo.root), "--timeout", timeout, "--poll"])
    closer.join(WAIT)
    out, err = capsys.readouterr()
    assert (code, err) == (1, "")
    assert [json.loads(line)["event"] for line in out.splitlines()] == ["refreshed"]


@pytest.mark.parametrize("timeout", ["-1", "nan", "-inf"])
def test_cli_watch_negative_or_nan_timeout_is_a_clear_error(repo, capsys, timeout):
    assert cli.main(["watch", "--root", str(repo.root), f"--timeout={timeout}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"jitctx: error: --timeout must be a number of seconds >= 0, got {float(timeout)!r}\n")  # the flag (issue 15)
    assert "Traceback" not in err and "internal" not in err


@pytest.mark.slow
def test_issue_15_cli_watch_paths_reports_their_edits_with_a_timestamp(repo, fake_preload, capsys):
    import json

    codes = []
    t = threading.Thread(target=lambda: codes.append(cli.main(["watch", "src/app.py", "text", "--root", str(repo.root), "--timeout", "4"])))
    t.start()

    def wait_for(count: int, out: str) -> str:
        deadline = time.monotonic() + WAIT
        while out.count('"refreshed"') < count and time.monotonic() < deadline:
            out += capsys.readouterr().out
            time.sleep(0.02)
        return out

    out = wait_for(1, "")
    repo.write("src/app.py", "print('edited')\n")
    out = wait_for(2, out)
    repo.write("text/numbers.txt", "new\n")  # a file in a watched folder, after a refresh
    t.join(WAIT)
    out += capsys.readouterr().out
    events = [json.loads(line) for line in out.splitlines()]
    stale = [e for e in events if e["event"] == "stale"]
    assert [[s["path"] for s in e["stale"]] for e in stale] == [["src/app.py"], ["text/numbers.txt"]]
    assert all(e["time"].endswith("Z") and e["time"][:2] == "20" for e in events)
    assert codes == [0]


def test_issue_15_cli_watch_help_says_what_it_watches(capsys):
    with pytest.raises(SystemExit):
        cli.main(["watch", "--help"])
    out = capsys.readouterr().out
    assert "edits to other files give no event" in out and "[PATH ...]" in out and "events are JSON lines either way" in out  # --json: its errors (issue 33)
