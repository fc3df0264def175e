"""Shared fixtures: isolated git, fixture repos built from ``fixtures_repo/``.

``make_repo(name)`` copies ``fixtures_repo/<name>/`` into a temporary
directory, renames ``dot-*`` to ``.*``, runs ``git init`` and commits with a
fixed author, dates and mtimes. Each template is built once per session and
copied per test.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures_repo"
MTIME = 1_700_000_000  # 2023-11-14, fixed for every fixture file
GIT_DATE = "2024-01-01T00:00:00+00:00"


def _git(root: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": GIT_DATE, "GIT_COMMITTER_DATE": GIT_DATE}
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


def _set_mtimes(root: Path, mtime: float = MTIME) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        if ".git" in dirnames:
            dirnames.remove(".git")
        for name in filenames:
            p = Path(dirpath) / name
            if not p.is_symlink():
                os.utime(p, (mtime, mtime))


def _materialize(name: str, dest: Path) -> None:
    src = FIXTURES / name
    if not src.is_dir():
        raise AssertionError(f"no fixture repo {name!r} in {FIXTURES}")
    shutil.copytree(src, dest, symlinks=True)
    for dirpath, dirnames, filenames in os.walk(dest, topdown=False):
        for entry in [*filenames, *dirnames]:
            if entry.startswith("dot-"):
                os.rename(Path(dirpath) / entry, Path(dirpath) / ("." + entry[4:]))
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "fixture")
    _set_mtimes(dest)


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", help="also run the tests marked slow (CI runs them; left out of a bare run)")


def _leaves_out_slow(config) -> bool:
    """A bare run (no paths, no -m, no --slow) leaves out the tests marked slow, so that the
    default run stays short; naming a file or a test runs it as asked."""
    return not (config.getoption("--slow") or config.option.markexpr or config.args_source != pytest.Config.ArgsSource.TESTPATHS)


def pytest_collection_modifyitems(config, items):
    if not _leaves_out_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def pytest_terminal_summary(terminalreporter, config):
    if _leaves_out_slow(config):  # (under -n the workers deselect, so the count is not known here)
        terminalreporter.write_line("the tests marked slow were left out: run them with --slow (CI does)")


class FixtureRepo:
    """A real temporary git repository built from a fixture."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def git(self, *args: str, check: bool = True) -> str:
        return _git(self.root, *args, check=check)

    def write(self, path: str, text: str | bytes, mtime: float | None = None) -> Path:
        p = self.root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
        if mtime is not None:
            os.utime(p, (mtime, mtime))
        return p

    def commit(self, message: str = "change", *paths: str) -> str:
        self.git("add", *(paths or ("-A",)))
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def checkout(self, ref: str, *, create: bool = False) -> None:
        self.git("checkout", "-q", *(["-b"] if create else []), ref)

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")


@pytest.fixture(autouse=True)
def _isolate(tmp_path_factory, monkeypatch):
    """No user or system git config, no GIT_* leaking in; no leaked threads."""
    for key in list(os.environ):
        if key.startswith("GIT_") or key in ("JITCTX_ROOT", "CLAUDE_PROJECT_DIR"):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Fixture\n\temail = fixture@example.com\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(home / "tiktoken"))
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(home / "jitctx-cache"))
    # each test's servers in a short private folder of its own (a socket path holds ~100 bytes),
    # stopped when it ends; JITCTX_TEST_SERVER=1 sends every CLI subprocess through one
    runtime = tempfile.mkdtemp(prefix="jx-", dir="/tmp")
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
    monkeypatch.setenv("JITCTX_SERVER", "wait" if os.environ.get("JITCTX_TEST_SERVER") == "1" else "0")
    monkeypatch.delenv("JITCTX_SESSION", raising=False)
    before = set(threading.enumerate())
    yield
    stop_servers(runtime, str(home / "jitctx-cache"))
    shutil.rmtree(runtime, ignore_errors=True)
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon]
    for t in leaked:  # a worker may still be returning from work the test saw end: a moment to finish
        t.join(2.0)
    leaked = [t for t in leaked if t.is_alive()]
    assert not leaked, f"threads leaked: {leaked}"


def stop_servers(runtime: str, cache: str | None = None) -> None:
    """Kill every server started under ``runtime`` (its ``jitctx/`` run folder, or the
    folder itself), and every index builder of the ``cache`` folder (a server's, or a call's
    in this process): a test stops every process it started."""
    from jitctx import procs
    from jitctx.code import build
    from jitctx.server.registry import running

    folder = runtime if os.path.basename(runtime) in ("jitctx", "run") else os.path.join(runtime, "jitctx")
    pids = running(folder)
    # and those still starting (no lock file yet: a client that spawned one was killed, or the
    # machine is slow), found by the run folder their environment names
    if os.path.isdir(folder):  # a client made it: a server may have been started (not a /proc scan per test)
        xdg = os.path.dirname(folder)  # the $XDG_RUNTIME_DIR whose jitctx/ the folder is
        pids += [p.pid for p in procs.find() if p.pid not in pids and (p.environ() or {}).get("XDG_RUNTIME_DIR") == xdg]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for lock in Path(cache, "index").glob("*.build.lock") if cache else []:
        build.stop(str(lock)[: -len(".build.lock")])
    procs.stop(pids, grace=5.0)  # gone before the folder is removed (their sockets with it)


@pytest.fixture(scope="session", autouse=True)
def _nothing_left(tmp_path_factory):
    """At the end of the run, no jitctx process of a test's repository or cache is left:
    they are stopped, and named (a test that started one did not stop it)."""
    yield
    from jitctx import procs

    base = str(tmp_path_factory.getbasetemp()) + os.sep  # this run's (pytest-12/ is not pytest-123/)

    def ours(p) -> bool:
        env = p.environ() or {}
        return any(base in a for a in p.argv[3:]) or any(str(env.get(k, "")).startswith(base) for k in ("JITCTX_CACHE_DIR", "HOME"))

    left = [p for p in procs.find() if ours(p)]
    procs.stop([p.pid for p in left], grace=2.0)
    assert not left, "jitctx processes left by the tests: " + "; ".join(f"{p.role} {p.pid} {p.root}" for p in left)


@pytest.fixture(scope="session")
def _templates(tmp_path_factory):
    built: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in built:
            dest = tmp_path_factory.mktemp("tpl") / name
            env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(dest.parent), "GIT_CONFIG_GLOBAL": str(dest.parent / ".gitconfig")}
            (dest.parent / ".gitconfig").write_text("[user]\n\tname = Fixture\n\temail = fixture@example.com\n")
            old = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                _materialize(name, dest)
            finally:
                for k, v in old.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            built[name] = dest
        return built[name]

    return get


@pytest.fixture
def make_repo(_templates, tmp_path):
    """``make_repo(name="basic")`` -> FixtureRepo, a fresh copy per call."""
    count = 0

    def make(name: str = "basic") -> FixtureRepo:
        nonlocal count
        count += 1
        dest = tmp_path / f"{name}-{count}" / name
        shutil.copytree(_templates(name), dest, symlinks=True)
        return FixtureRepo(dest)

    return make


@pytest.fixture
def repo(make_repo) -> FixtureRepo:
    return make_repo("basic")
