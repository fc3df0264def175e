"""Where jitctx keeps its state (issue 30, item 8): the run folder and the caches.

Something else at a server's socket, lock or log path (a folder, a link, a FIFO) is
named with what to do and never followed or blocked on; a cache or run folder inside
the repository, or a temporary folder there, gets nothing written inside the root; a
cache that cannot be written costs a notice, not an index built in memory on every call.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_support import subprocess_env

from jitctx import __version__
from jitctx.server import protocol

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the server's run folder checks are Linux's"),
    pytest.mark.skipif(os.environ.get("JITCTX_TEST_SERVER") == "1", reason="these tests choose JITCTX_SERVER themselves: the first run covers them"),
]


def run(*argv: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jitctx", *argv], cwd=cwd, env=subprocess_env(**env), capture_output=True, stdin=subprocess.DEVNULL, timeout=120)


def server_path(root: Path, kind: str) -> Path:
    env = subprocess_env()
    folder = protocol.run_dir(env)
    assert folder is not None
    sock = protocol.socket_name(folder, str(root), protocol.fingerprint(env, protocol.PACKAGE, __version__))
    assert sock is not None
    return Path(sock[: -len(".sock")] + kind)


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` but ``.git``, with its size and mtime."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs + files:
            p = os.path.join(folder, name)
            st = os.lstat(p)
            found[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return found


@pytest.mark.parametrize("kind", [".sock", ".lock", ".log"])
@pytest.mark.parametrize("what", ["folder", "symlink", "fifo"])
def test_issue_30_something_else_at_a_servers_path_is_named_never_followed(make_repo, tmp_path, kind, what):
    repo = make_repo("basic")
    path = server_path(repo.root, kind)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = tmp_path / "target.txt"
    target.write_text("not jitctx's\n")
    if what == "folder":
        path.mkdir()
    elif what == "symlink":
        path.symlink_to(target)
    else:
        os.mkfifo(path)
    here = run("glob", "*.md", cwd=repo.root)
    if kind == ".log":  # the server runs without its log file (it says so in the foreground)
        served = run("serve", "--root", str(repo.root), "--idle", "1", cwd=repo.root)
        assert served.returncode == 0 and b"no log file" in served.stderr and str(path).encode() in served.stderr
        session = run("glob", "*.md", cwd=repo.root, JITCTX_SERVER="wait", JITCTX_SESSION="s1")
        assert (session.returncode, session.stdout, session.stderr) == (here.returncode, here.stdout, here.stderr)
        assert target.read_text() == "not jitctx's\n"  # never written through the link
        return
    started = time.monotonic()
    session = run("glob", "*.md", cwd=repo.root, JITCTX_SERVER="wait", JITCTX_SESSION="s1")  # no server can start: not waited for
    took = time.monotonic() - started
    assert (session.returncode, session.stdout, session.stderr) == (here.returncode, here.stdout, here.stderr)
    served = run("serve", "--root", str(repo.root), "--idle", "1", cwd=repo.root)
    assert target.read_text() == "not jitctx's\n"  # never written through the link
    assert served.returncode == 2 and b"Traceback" not in served.stderr
    assert str(path).encode() in served.stderr and b"remove it" in served.stderr, served.stderr
    from jitctx.client import SPAWN_WAIT

    assert took < SPAWN_WAIT + 2 * max(1.0, here_time(repo.root))  # no wait for a server that cannot start


def here_time(root: Path) -> float:
    started = time.monotonic()
    run("glob", "*.md", cwd=root)
    return time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize("inside", ["XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "TMPDIR"])
def test_issue_30_nothing_is_written_inside_the_root(make_repo, monkeypatch, inside, request):
    """A cache, run or temporary folder inside the repository: every call answers the same,
    in process and through the server, and not a byte is written inside the root
    (tiktoken's own cache included: it copied its 1.6 MB file to $TMPDIR)."""
    from conftest import stop_servers

    repo = make_repo("basic")
    home_cache = str(Path(os.environ["HOME"]) / ".cache" / "jitctx")
    request.addfinalizer(lambda: stop_servers(os.path.join(home_cache, "run"), home_cache))  # where a server runs without those
    for key in ("JITCTX_CACHE_DIR", "XDG_RUNTIME_DIR", "TIKTOKEN_CACHE_DIR"):
        monkeypatch.delenv(key, raising=False)
    folder = repo.root / "state"
    folder.mkdir(mode=0o700)
    (folder / "keep.txt").write_text("x\n")
    monkeypatch.setenv(inside, str(folder))
    before = tree(repo.root)
    calls = [("head", "src/app.py", "-n", "3"), ("locate", "--task", "make greet shout"), ("symbols", "greet"), ("glob", "**/*.py")]
    for argv in calls:
        here = run(*argv, cwd=repo.root)
        there = run(*argv, cwd=repo.root, JITCTX_SERVER="wait")
        assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr), argv
    assert tree(repo.root) == before


def test_issue_30_a_cache_that_cannot_be_written_costs_no_build_per_call(make_repo, monkeypatch, tmp_path):
    """An unwritable cache on a tree of some hundred files: locate answers from the quick
    pass and says the index cannot be kept; it does not build one in memory each call."""
    from jitctx import Workspace
    from jitctx.code.structure import CodeIndex

    repo = make_repo("basic")
    for i in range(400):
        repo.write(f"pkg/m{i:03}.py", f"def f{i}(x):\n    return x + {i}\n")
    repo.write("pkg/retry.py", "def retry_handshake(conn):\n    return conn.handshake(timeout=5)\n")
    repo.commit("modules")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(blocker / "cache"))
    refreshed: list[int] = []
    real = CodeIndex.refresh
    monkeypatch.setattr(CodeIndex, "refresh", lambda self, *a, **k: refreshed.append(1) or real(self, *a, **k))
    with Workspace(repo.root) as ws:
        res = ws.locate("retry the handshake")
    assert res.results and res.results[0].path == "pkg/retry.py"
    assert "quick pass" in res.notice and "none is built" in res.notice
    assert refreshed == []


def test_issue_30_a_builders_files_are_opened_as_untrusted(tmp_path):
    """A link at the builder's lock is not followed (no builder starts, its target is left
    as it was); a FIFO at its status file does not block a call asking how far it got."""
    import fcntl

    from jitctx.code import build

    index = str(tmp_path / "root-0123.sqlite")
    target = tmp_path / "target.txt"
    target.write_text("keep\n")
    os.symlink(target, index + ".build.lock")
    assert build.start(str(tmp_path), index) is False
    assert target.read_text() == "keep\n" and build.progress(index) is None
    os.unlink(index + ".build.lock")
    os.mkfifo(index + ".build.json")
    fd = os.open(index + ".build.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a builder holds it
        got = build.progress(index)
        assert got is not None and (got.done, got.total, got.pid) == (0, 0, 0)
        assert build.failed(index) is None and build.stop(index) is None
    finally:
        os.close(fd)
