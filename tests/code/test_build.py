"""The code index built in the background (issue 23): a first answer at once, a partly old
answer said so, one builder per index, a killed builder resumed, an unusable cache."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jitctx import Workspace
from jitctx.cache.folders import index_file
from jitctx.code import build

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="posix_spawn, flock")

WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()


def big_repo(make_repo, files: int = 600):
    """The basic fixture plus ``files`` small modules, one of them the task's answer."""
    repo = make_repo("basic")
    rng = random.Random(23)
    for i in range(files):
        body = "\n".join(f"def f{i}_{j}(x):\n    return x + {rng.choice(WORDS)!r}\n" for j in range(4))
        repo.write(f"pkg/m{i:04}.py", body)
    repo.write("pkg/retry.py", "def retry_handshake(conn):\n    '''Retry the TLS handshake when it times out.'''\n    return conn.handshake(timeout=5)\n")
    repo.commit("many modules")
    return repo


def wait_built(root: Path, limit: float = 60.0) -> None:
    path = index_file(root)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if build.progress(path) is None:
            return
        time.sleep(0.1)
    raise AssertionError("the background build did not end")


def test_issue_23_no_index_answers_at_once_and_builds_in_the_background(make_repo):
    repo = big_repo(make_repo)
    with Workspace(repo.root) as ws:
        res = ws.locate("retry the handshake when it times out")
    assert res.results and res.results[0].path == "pkg/retry.py"
    assert "being built in the background" in res.notice and "quick pass" in res.notice
    wait_built(repo.root)
    with Workspace(repo.root) as ws:
        again = ws.locate("retry the handshake when it times out")
    assert again.results[0].path == "pkg/retry.py"
    assert "background" not in (again.notice or "") and "quick pass" not in (again.notice or "")


def test_issue_23_with_no_index_the_first_answer_stats_no_file(make_repo, monkeypatch):
    # an index that holds too little to answer from is not compared with the tree first:
    # 100k stats (~0.7 s) would come before the first answer for nothing
    from jitctx.code.structure import CodeIndex

    statted: list[int] = []
    real = CodeIndex._entries
    monkeypatch.setattr(CodeIndex, "_entries", lambda self, paths: statted.append(len(paths)) or real(self, paths))
    repo = big_repo(make_repo)
    with Workspace(repo.root) as ws:
        res = ws.locate("retry the handshake when it times out")
    assert res.results[0].path == "pkg/retry.py" and "quick pass" in res.notice and "0 of 6" in res.notice
    assert all(n < 10 for n in statted)  # a file shown is checked (its own stat), never the universe
    wait_built(repo.root)


def test_issue_23_a_slow_listing_still_leaves_the_first_pass_its_time(make_repo, monkeypatch):
    # the deadline has passed before the first pass starts (a loaded machine): a later answer, not an empty one
    import jitctx.session.workspace as W

    monkeypatch.setattr(W, "QUICK_SECONDS", 0.0)
    repo = big_repo(make_repo)
    with Workspace(repo.root) as ws:
        res = ws.locate("retry the handshake when it times out")
    assert res.results and res.results[0].path == "pkg/retry.py"
    assert "time cap" not in (res.notice or "")
    wait_built(repo.root)


def test_issue_23_after_many_changes_the_answer_is_partly_old_and_says_which(make_repo):
    repo = big_repo(make_repo)
    assert build.build_here(str(repo.root), index_file(repo.root), nice=False) == 0
    for i in range(build.INLINE + 40):
        repo.write(f"pkg/m{i:04}.py", f"def changed_{i}():\n    return {i}\n")
    (repo.root / "pkg/m0599.py").unlink()
    with Workspace(repo.root) as ws:
        res = ws.locate("retry the handshake when it times out")
    assert res.results[0].path == "pkg/retry.py"
    assert "partly old" in res.notice and "pkg/m0000.py" in res.notice and f"{build.INLINE + 40:,} changed or new files" in res.notice
    assert "1 files gone since are left out" in res.notice or "1 file" in res.notice
    assert all(f.path != "pkg/m0599.py" for f in res.results)
    wait_built(repo.root)
    with Workspace(repo.root) as ws:
        assert "partly old" not in (ws.locate("changed_3").notice or "")


def test_issue_23_a_few_changes_are_indexed_by_the_call(make_repo):
    repo = big_repo(make_repo, files=100)
    assert build.build_here(str(repo.root), index_file(repo.root), nice=False) == 0
    repo.write("pkg/m0001.py", "def brand_new_sparkle():\n    return 1\n")
    with Workspace(repo.root) as ws:
        res = ws.locate("brand_new_sparkle")
    assert res.results[0].path == "pkg/m0001.py" and "background" not in (res.notice or "")


def test_issue_23_one_builder_per_index(make_repo):
    repo = big_repo(make_repo, files=300)
    path = index_file(repo.root)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    code = "import sys, time; from jitctx.code.build import build_here; sys.exit(build_here(sys.argv[1], sys.argv[2], nice=False))"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(repo.root), path], env=env) for _ in range(3)]
    codes = sorted(p.wait(timeout=120) for p in procs)
    assert codes.count(0) >= 1 and set(codes) <= {0, 1}
    assert build.progress(path) is None  # no lock is left held


def _written(path: str, since_ns: int) -> tuple[int, float]:
    """Rows the builder committed since ``since_ns`` and how many of them have their
    definitions (0, 0 before its store has its tables)."""
    if not os.path.exists(path):
        return 0, 0.0
    with contextlib.closing(sqlite3.connect(path, timeout=5.0)) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'files'").fetchone():
            return 0, 0.0
        return conn.execute("SELECT count(*), total(outlined) FROM files WHERE path GLOB 'pkg/m*' AND indexed_ns > ?", (since_ns,)).fetchone()


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("JITCTX_TEST_SERVER") == "1", reason="no CLI call: the first run covers it")
def test_issue_23_a_killed_builder_is_resumed_and_the_store_is_never_corrupt(make_repo):
    """SIGKILL at random moments of the build, 30 times, with files changing between kills
    so there is always work: the store passes SQLite's and FTS5's integrity checks every
    time, and the build that finally runs to its end answers as a clean one. Each kill
    waits for the build to get somewhere (a random number of rows committed, issue 30:
    events, not a random sleep that a busy machine turns into a kill before the start)."""
    repo = big_repo(make_repo, files=300)
    path = index_file(repo.root)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    # small batches: a kill lands between commits, and inside one, as often as before them
    code = "import sys; import jitctx.code.refresh as r; r.BATCH = 16; from jitctx.code.build import build_here; sys.exit(build_here(sys.argv[1], sys.argv[2], nice=False))"
    rng = random.Random(2323)
    mid_build = 0
    for i in range(30):
        started_ns = time.time_ns()
        for n in rng.sample(range(300), 150):
            repo.write(f"pkg/m{n:04}.py", "".join(f"def changed_{i}_{n}_{j}(y):\n    return y * {j} + {rng.choice(WORDS)!r}\n\n" for j in range(60)))
        p = subprocess.Popen([sys.executable, "-c", code, str(repo.root), str(path)], env=env)
        target = rng.randint(0, 140)  # rows committed before the kill (0: at once, maybe before any table)
        deadline = time.monotonic() + 60
        while target and p.poll() is None and _written(path, started_ns)[0] < target and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.03))  # not for the outcome: only to vary where in a batch it lands
        p.send_signal(signal.SIGKILL)
        p.wait()
        status = str(path) + ".build.json"
        if os.path.exists(status):  # the builder's own clean-up never ran: killed while building
            os.unlink(status)
        written, done = _written(path, started_ns)
        mid_build += 0 < written and done < 150  # a build writes the words, then the definitions (issue 32): either part unfinished
        if os.path.exists(path):
            with contextlib.closing(sqlite3.connect(path)) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", i
                if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'lexical'").fetchone():
                    conn.execute("INSERT INTO lexical(lexical) VALUES ('integrity-check')")  # raises when the FTS index is corrupt
    assert mid_build >= 6, mid_build
    assert build.build_here(str(repo.root), path, nice=False) == 0
    with Workspace(repo.root) as ws:
        resumed = [(f.path, round(f.score, 6)) for f in ws.locate("retry the handshake when it times out").results]
    os.unlink(path)
    assert build.build_here(str(repo.root), path, nice=False) == 0
    with Workspace(repo.root) as ws:
        clean = [(f.path, round(f.score, 6)) for f in ws.locate("retry the handshake when it times out").results]
    assert resumed == clean


def test_issue_23_a_cache_that_cannot_be_written_still_answers(make_repo, tmp_path, monkeypatch):
    import jitctx.code.build as b

    repo = big_repo(make_repo, files=300)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(b, "IN_MEMORY", 100)  # this tree counts as large: no index in memory per call
    with Workspace(repo.root) as ws:
        res = ws.locate("retry the handshake when it times out")
    assert res.results[0].path == "pkg/retry.py"
    assert "kept in memory" in res.notice and "quick pass" in res.notice and "none is built" in res.notice


def test_issue_23_a_store_that_cannot_be_written_stops_the_builder_and_is_said(make_repo, monkeypatch):
    # a full disk: the builder's first commit fails; it stops at once (no index built in memory
    # to be thrown away), leaves why, no builder starts again for a while, and the answers say so
    import jitctx.code.refresh as R
    from jitctx.cache.store import Transaction

    class Full(Transaction):
        def __enter__(self):
            raise sqlite3.OperationalError("database or disk is full")

    repo = big_repo(make_repo, files=300)
    path = index_file(repo.root)
    with monkeypatch.context() as m:
        m.setattr(R, "Transaction", Full)
        started = time.monotonic()
        assert build.build_here(str(repo.root), path, nice=False) == 3
        assert time.monotonic() - started < 10
    assert "disk is full" in (build.failed(path) or "")
    assert build.start(str(repo.root), path) is False and build.progress(path) is None
    with Workspace(repo.root) as ws:
        res = ws.locate("retry the handshake when it times out")
    assert res.results[0].path == "pkg/retry.py"
    assert "cannot be built (" in res.notice and "disk is full" in res.notice and "quick pass" in res.notice
    monkeypatch.setattr(build, "RETRY_SECONDS", 0)  # later: tried again, and it works now
    assert build.failed(path) is None
    assert build.start(str(repo.root), path) is True
    wait_built(repo.root)
    with Workspace(repo.root) as ws:
        assert "quick pass" not in (ws.locate("retry the handshake when it times out").notice or "")


def test_issue_23_a_big_tree_without_index_is_not_even_listed_before_the_first_pass():
    # git's index count says the tree is big and the store holds nothing: quick, no listing
    class Index:
        def rows(self):
            return 10

    class Code:
        index = Index()

        def pending(self, entries):
            return [], [], []

    def never(*_a):
        raise AssertionError("listed or statted before the first pass")

    got, entries = build.plan(Code(), never, never, stored=True, estimate=5_000)
    assert (got.mode, got.listed, got.indexed, got.estimated, entries) == ("quick", 5_000, 10, True, None)
    small, _ = build.plan(Code(), lambda: ["a.py"], lambda paths: [], stored=False, estimate=5)
    assert small.mode == "current" and not small.estimated


def test_issue_23_git_index_count_is_the_tracked_files(make_repo):
    from jitctx.repo.universe import Repo

    repo = big_repo(make_repo, files=40)
    tracked = subprocess.run(["git", "ls-files"], cwd=repo.root, capture_output=True, text=True, check=True).stdout.splitlines()
    assert Repo(Path(repo.root)).tracked_count() == len(tracked)
    assert Repo(Path(repo.root) / "pkg").tracked_count() is None  # a folder inside: the count is the whole tree's
