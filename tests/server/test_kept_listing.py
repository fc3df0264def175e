"""The server's listing kept in memory (issue 21): exact or not used.

Each check compares the kept listing with git's own, listed afresh
(``Repo.file_chunks`` without a kept listing), after files, folders, links,
ignored files, index changes and ignore-rule edits, 1,000 times over.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from jitctx.repo.universe import Repo
from jitctx.server.kept_listing import LiveListing

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="native folder events (inotify) are Linux's")


def fresh(root: Path, under: str = "") -> tuple[list[str], list[str]]:
    """git's answer now: (tracked, untracked sorted)."""
    chunks = list(Repo(root).file_chunks(under=under))
    tracked = chunks[0]
    if under:
        tracked = [p for p in tracked if p.startswith(under + "/")]
    return sorted(tracked), sorted(p for c in chunks[1:] for p in c)


@pytest.fixture
def live(make_repo):
    from watch_support import need_inotify

    need_inotify()
    repo = make_repo("basic")
    private = tempfile.mkdtemp(prefix="jx-live-", dir="/tmp")
    r = Repo(repo.root)
    assert r.git is not None
    kept = LiveListing(r.root, r.git.git_dir, r.git.common_dir, private, None)
    kept.start()
    assert kept.wait(30), kept.state
    yield repo, kept
    kept.close()
    os.rmdir(private)


def kept_now(kept: LiveListing, under: str = "") -> tuple[list[str], list[str]]:
    """The kept answer, waiting out a rebuild (a changed ignore rule starts one)."""
    for _ in range(200):
        got = kept.listing(under)
        if got is not None:
            return sorted(got[0]), list(got[1])
        kept.wait(10)
    raise AssertionError(f"the kept listing is not usable: {kept.state}")


def test_issue_21_kept_listing_equals_git_after_each_kind_of_change(live):
    repo, kept = live
    root = repo.root
    assert kept_now(kept) == fresh(root)
    steps = [
        lambda: repo.write("new.txt", "x"),
        lambda: repo.write("deep/a/b/c.txt", "x"),  # folders made with files already inside
        lambda: os.rename(root / "deep", root / "moved"),
        lambda: os.rename(root / "moved/a/b/c.txt", root / "c-top.txt"),
        lambda: repo.write("moved/a/b/more.log", "ignored by *.log"),
        lambda: repo.write("build/artifact.bin", "ignored folder"),
        lambda: repo.write("logs/only/x.log", "a folder holding only ignored files"),
        lambda: repo.write("logs/only/now-listed.txt", "git lists it: the folder was watched all along"),
        lambda: os.symlink("src/app.py", root / "link.py"),
        lambda: os.unlink(root / "src/app.py"),  # tracked, deleted: still listed (callers stat)
        lambda: repo.git("add", "new.txt"),
        lambda: repo.git("rm", "-q", "--cached", "README.md"),
        lambda: __import__("shutil").rmtree(root / "moved"),
        lambda: os.mkdir(root / "empty"),
        lambda: repo.write("empty/.hidden", "x"),
        lambda: (root / "docs").rename(root / "docs2"),
        lambda: repo.write(".gitignore", "*.log\nbuild/\n*.txt\n"),  # a rule changed: rebuilt, then exact
        lambda: repo.write("more.txt", "now ignored"),
        lambda: repo.write("src/.gitignore", "*.tmp\n"),  # a folder's own rules, made
        lambda: repo.write("src/a.tmp", "ignored there"),
        lambda: repo.write("src/.gitignore", "*.tmq\n"),  # and rewritten in place, same size, same tick
        lambda: repo.write("nested/.git/HEAD", "ref: refs/heads/main\n"),  # a repository inside: one entry
    ]
    for i, step in enumerate(steps):
        step()
        assert kept_now(kept) == fresh(root), f"after step {i}"
        assert kept_now(kept, "src") == fresh(root, "src"), f"after step {i} (under src)"


@pytest.mark.slow
def test_issue_21_kept_listing_equals_git_over_1000_random_changes(live):
    """Files and folders created, deleted and renamed between two calls are never missed."""
    repo, kept = live
    root = repo.root
    rng = random.Random(21)
    names = ["a", "b", "c", "d", "sub", "x.log", "y.txt", "z.py"]

    def rand_rel(depth: int = 3) -> str:
        return "/".join(rng.choice(names) for _ in range(rng.randint(1, depth)))

    def existing(kind: str) -> list[Path]:
        out = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            out += [Path(dirpath) / n for n in (filenames if kind == "file" else dirnames)]
        return out

    for i in range(1000):
        for _ in range(rng.randint(1, 3)):
            op = rng.random()
            try:
                if op < 0.35:
                    repo.write(rand_rel(), "x")
                elif op < 0.55:
                    files = existing("file")
                    if files:
                        rng.choice(files).unlink()
                elif op < 0.75:
                    files = existing("file")
                    if files:
                        dest = root / rand_rel()
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        os.rename(rng.choice(files), dest)
                elif op < 0.85:
                    dirs = existing("dir")
                    if dirs:
                        src = rng.choice(dirs)
                        dest = root / rand_rel(2)
                        if not str(dest).startswith(str(src)):
                            dest.parent.mkdir(parents=True, exist_ok=True)
                            os.rename(src, dest)
                elif op < 0.92:
                    dirs = [d for d in existing("dir") if not (d / ".git").exists()]
                    if dirs:
                        __import__("shutil").rmtree(rng.choice(dirs))
                elif op < 0.96:
                    (root / rand_rel(2)).mkdir(parents=True, exist_ok=True)
                else:
                    untracked = fresh(root)[1]
                    if untracked:
                        repo.git("add", "--", rng.choice(untracked))
            except OSError:
                pass  # a name taken by a folder, a folder into itself: the tree stays as it is
        assert kept_now(kept) == fresh(root), f"iteration {i}"
    assert kept.missed == 0


def test_issue_21_an_overflow_or_a_lost_barrier_is_never_answered_from_memory(live, monkeypatch):
    repo, kept = live
    assert kept._watch is not None
    kept._watch.overflowed = True
    assert kept.listing() is None  # not exact: the caller lists with git
    assert kept.wait(30)
    assert kept_now(kept) == fresh(repo.root)
    monkeypatch.setattr(kept._watch, "drain", lambda timeout=1.0: None)
    assert kept.listing() is None and kept.is_listed("README.md") is None


def test_issue_21_missed_events_are_found_by_the_folder_check(live, monkeypatch):
    """Native events that never came (a network file system): the periodic check of the
    folders' signatures finds the folder that changed and lists it again."""
    import jitctx.server.kept_listing as livelist

    repo, kept = live
    assert kept._watch is not None
    real_drain = kept._watch.drain
    dropped: list = []

    def lossy(timeout: float = 1.0):
        events = real_drain(timeout)
        if events is not None:
            dropped.extend(events)
            return []
        return events

    monkeypatch.setattr(livelist, "RACY_NS", 0)  # past the racy window of the build's looks (issue 30: patched, not slept)
    with kept._lock:
        kept._looks = {d: kept._look(d) for d in kept._dirs}
    monkeypatch.setattr(kept._watch, "drain", lossy)
    repo.write("src/util/unseen.txt", "no event for me")
    got = kept.listing()
    assert got is not None and "src/util/unseen.txt" not in got[1]  # events lost, not yet checked
    monkeypatch.setattr(livelist, "CHECK_EVERY", 0.0)
    assert "src/util/unseen.txt" in kept_now(kept)[1]
    assert kept.missed >= 1 and dropped


def test_issue_21_a_server_never_answers_from_a_listing_on_a_network_file_system(tmp_path, monkeypatch):
    import jitctx.server.kept_listing as livelist

    monkeypatch.setattr(livelist, "remote_fs", lambda root: "nfs4")
    r = Repo(tmp_path)
    kept = LiveListing(tmp_path, tmp_path / ".git", tmp_path / ".git", str(tmp_path), None)
    kept.start()
    assert not kept.wait(10) and "nfs4" in kept.state and kept.listing() is None
    del r


def test_issue_21_mountinfo_names_network_file_systems():
    from jitctx.server.kept_listing import remote_fs

    info = (
        "22 1 0:21 / / rw,relatime - ext4 /dev/vda rw\n"
        "30 22 0:40 / /mnt/share rw - nfs4 server:/export rw\n"
        "31 30 0:41 / /mnt/share/local rw - tmpfs tmpfs rw\n"
        "32 22 0:42 / /home/u/sshfs rw - fuse.sshfs host: rw\n"
    )
    assert remote_fs("/home/u/project", info) is None
    assert remote_fs("/mnt/share/repo", info) == "nfs4"
    assert remote_fs("/mnt/share/local/repo", info) is None  # the deepest mount decides
    assert remote_fs("/mnt/shared", info) is None  # a name that only starts like the mount point
    assert remote_fs("/home/u/sshfs/repo", info) == "fuse.sshfs"


@pytest.mark.parametrize("code", [24, 28])  # EMFILE: instances used up; ENOSPC: watches used up
def test_issue_30_inotify_limits_make_the_listing_not_kept_and_tried_again(make_repo, monkeypatch, code):
    """The user's inotify instances or watches used up (other programs hold them): the
    listing is not kept (calls list with git: slower, the same answers), its state says
    which limit and what happens, and it is tried again later (then it is kept)."""
    import errno

    import jitctx.server.kept_listing as livelist
    from jitctx.session import tree_watch

    repo = make_repo("basic")
    private = tempfile.mkdtemp(prefix="jx-live-", dir="/tmp")
    r = Repo(repo.root)
    assert r.git is not None
    real = tree_watch.TreeWatch
    refuse = [True]

    def limited(private_dir: str):
        if refuse[0]:
            raise OSError(code, "inotify instance limit reached" if code == errno.EMFILE else "inotify watch limit reached")
        return real(private_dir)

    monkeypatch.setattr(tree_watch, "TreeWatch", limited)
    kept = LiveListing(r.root, r.git.git_dir, r.git.common_dir, private, None)
    try:
        kept.start()
        assert not kept.wait(30)
        assert kept.listing() is None and kept.is_listed("README.md") is None
        assert "not kept: the user's inotify" in kept.state and ("max_user_instances" if code == errno.EMFILE else "max_user_watches") in kept.state
        refuse[0] = False
        monkeypatch.setattr(livelist, "LIMIT_RETRY", 0.0)
        kept._retry_at = 0.0  # the retry is due
        assert kept.listing() is None  # this call lists with git; a rebuild starts
        from watch_support import need_inotify

        need_inotify()
        assert kept.wait(30) and kept_now(kept) == fresh(repo.root)
    finally:
        kept.close()
        os.rmdir(private)


def test_issue_30_a_fifo_rule_file_never_blocks_the_listing(make_repo, monkeypatch):
    """``info/exclude`` made a FIFO just now (within the racy window, when its bytes are
    read): the listing's build ends (git's own time limit), not used, instead of its thread
    blocking for ever on opening the FIFO."""
    monkeypatch.setenv("JITCTX_GIT_TIMEOUT", "1")
    repo = make_repo("basic")
    for top in ["src", "docs", "text", "data", "build", "notes"]:  # no folder: git's check-ignore (blocked on it too) is not asked first
        shutil.rmtree(repo.root / top, ignore_errors=True)
    for p in repo.root.iterdir():
        if p.is_dir() and p.name != ".git":
            shutil.rmtree(p)
    exclude = repo.root / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    os.mkfifo(exclude)
    private = tempfile.mkdtemp(prefix="jx-live-", dir="/tmp")
    r = Repo(repo.root)
    assert r.git is not None
    kept = LiveListing(r.root, r.git.git_dir, r.git.common_dir, private, None)
    try:
        kept.start()
        kept.wait(30)
        assert not kept._building, "the listing's build is still blocked"
        assert kept.listing() is None and "not used" in kept.state
    finally:
        kept.close()
        os.rmdir(private)
