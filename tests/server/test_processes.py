"""No call hangs, nothing lingers (issue 30): the server's and the builder's processes.

Every call here is a real ``python -m jitctx`` process run as a harness runs it (stdout
and stderr captured to end-of-file): it must return as soon as its answer is written,
whatever the server or the call started (an index builder, analysis workers, a listing
rebuilt), and every process jitctx starts can be seen and stopped.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hostile_support import subprocess_env

from jitctx import __version__, procs
from jitctx.cache.folders import index_file
from jitctx.code import build
from jitctx.server import protocol

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, SO_PEERCRED, flock"),
    pytest.mark.skipif(os.environ.get("JITCTX_TEST_SERVER") == "1", reason="these tests choose JITCTX_SERVER themselves: the first run covers them"),
]

GAP = 1.0  # seconds a call may take to return after its answer was written (its process ended)
SUBCOMMANDS = [
    ("glob", "**/*.py", "--limit", "5"),
    ("grep", "handshake", "--mode", "content"),
    ("head", "pkg/retry.py", "-n", "3"),
    ("tail", "pkg/retry.py", "-n", "2"),
    ("outline", "pkg/retry.py"),
    ("symbols", "retry_handshake"),
    ("locate", "--task", "retry the handshake when it times out"),
    ("notes", "list"),
    ("preload",),
    ("context", "--task", "retry the handshake", "--budget", "3000"),
    ("tools", "--format", "openai"),
]


class Captured:
    """A finished call: exit code, stdout, stderr, and ``gap``: seconds between its process
    ending and the end of its output pipes (what a caller reading to end-of-file waits)."""

    def __init__(self, args, code: int | None, out: bytes, err: bytes, gap: float) -> None:
        self.args, self.code, self.out, self.err, self.gap = args, code, out, err, gap

    def __repr__(self) -> str:
        return f"{' '.join(self.args)}: exit {self.code}, gap {self.gap:.2f} s, stderr {self.err[-300:]!r}"


def captured(*args: str, cwd: Path, env: dict, limit: float = 90.0) -> Captured:
    """Run ``jitctx ARGS`` with stdout and stderr on pipes read to their end (as
    ``subprocess.run(capture_output=True)`` does) and time the end of the pipes against
    the process's own end."""
    p = subprocess.Popen([sys.executable, "-m", "jitctx", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    got: dict[str, bytes] = {}
    ended: dict[str, float] = {}

    def drain(name: str, f) -> None:
        got[name] = f.read()
        ended[name] = time.monotonic()

    readers = [threading.Thread(target=drain, args=(n, f), daemon=True) for n, f in (("out", p.stdout), ("err", p.stderr))]
    for r in readers:
        r.start()
    deadline = time.monotonic() + limit
    exited = None
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
            exited = time.monotonic()  # ended, not yet collected: the pipes may outlive it
            break
        time.sleep(0.005)
    for r in readers:
        r.join(max(0.0, deadline - time.monotonic()))
    held = any(r.is_alive() for r in readers)
    if exited is None or held:
        p.kill()
    code = p.wait()
    p.stdout.close()  # type: ignore[union-attr]
    p.stderr.close()  # type: ignore[union-attr]
    if exited is None or held:
        return Captured(args, None, got.get("out", b""), got.get("err", b""), float("inf"))
    return Captured(args, code, got["out"], got["err"], max(ended.values()) - exited)


def big_repo(make_repo, files: int = 1200, size: int = 4):
    """The basic fixture plus ``files`` modules of ``size`` functions, one the task's answer."""
    repo = make_repo("basic")
    rng = random.Random(30)
    words = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()
    for i in range(files):
        repo.write(f"pkg/m{i:04}.py", "\n".join(f"def f{i}_{j}(x):\n    return x + {rng.choice(words)!r}\n" for j in range(size)))
    repo.write("pkg/retry.py", "def retry_handshake(conn):\n    '''Retry the TLS handshake when it times out.'''\n    return conn.handshake(timeout=5)\n")
    repo.commit("many modules")
    return repo


def wait_for(predicate, limit: float = 60.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not come within {limit:g} s")
        time.sleep(0.02)


def server_status(root: Path, **env: str) -> dict | None:
    proc = subprocess.run(
        [sys.executable, "-m", "jitctx", "serve", "--status", "--json", "--root", str(root)], cwd=root, env=subprocess_env(**env), capture_output=True, timeout=60
    )
    status = json.loads(proc.stdout)
    return status if status.get("running") else None


def every_call_returns(root: Path, env: dict, first: tuple[str, ...], state: str) -> list[Captured]:
    """``first`` (the call that starts children), then every subcommand: each returns
    within GAP of its end and answers."""
    runs = [captured(*first, cwd=root, env=env)]
    runs += [captured(*args, cwd=root, env=env) for args in SUBCOMMANDS]
    late = [r for r in runs if r.gap > GAP or r.code not in (0, 1)]
    assert not late, f"{state}: " + "\n".join(map(repr, late))
    return runs


@pytest.mark.slow
def test_issue_30_every_call_returns_as_its_answer_is_written(make_repo):
    """Through a warm server, in each state that starts children: a first index build (a
    builder spawned by the server), calls while it runs, a refresh after a checkout of
    500 files (a builder again), one of 230 larger files (analysis workers inside the
    server), a listing rebuilt (a .gitignore written). Nothing holds the caller's pipes."""
    repo = big_repo(make_repo, size=10)  # a first build of a few seconds
    root = repo.root
    index = index_file(root)
    repo.git("checkout", "-q", "-b", "wide")
    for i in range(500):
        repo.write(f"pkg/m{i:04}.py", f"def wide_{i}(y):\n    return y * {i}\n")
    repo.commit("500 files")
    repo.git("checkout", "-q", "-b", "heavy", "wide")
    for i in range(230):
        repo.write(f"pkg/m{i:04}.py", "".join(f"def heavy_{i}_{j}(y):\n    return y + {j}  # {'x' * 40}\n\n" for j in range(60)))
    repo.commit("230 larger files")
    repo.checkout("main")
    env = subprocess_env(JITCTX_SERVER="wait")

    first = every_call_returns(root, env, ("locate", "--task", "retry the handshake when it times out"), "a first build")
    assert b"being built in the background" in first[0].out
    wait_for(lambda: build.progress(index) is None, what="the first build's end")

    repo.checkout("wide")
    every_call_returns(root, env, ("locate", "--task", "wide"), "a checkout of 500 files")
    wait_for(lambda: build.progress(index) is None, what="the second build's end")

    repo.checkout("heavy")
    runs = every_call_returns(root, env, ("locate", "--task", "heavy"), "a checkout of 230 larger files")
    assert b"background" not in runs[0].out  # brought up to date by the call itself, in workers

    repo.write(".gitignore", "*.log\nbuild/\n")
    every_call_returns(root, env, ("glob", "*.md"), "a listing rebuilt")
    status = server_status(root, JITCTX_SERVER="wait")
    assert status is not None and status["calls"] >= 4 * (len(SUBCOMMANDS) + 1)


def test_issue_30_a_started_server_keeps_none_of_the_callers_descriptors(make_repo):
    """A caller's extra descriptor (a harness's pipe on fd 3) reaches the client: the
    server it starts must not keep it (posix_spawn does not close it by itself)."""
    repo = make_repo("basic")
    r, w = os.pipe()
    env = subprocess_env()
    env.pop("JITCTX_SERVER")  # the default: answered here, the server started for the next calls
    for _ in range(3):  # the third call of a root starts its server
        subprocess.run([sys.executable, "-m", "jitctx", "glob", "*.md"], cwd=repo.root, env=env, pass_fds=(w,), capture_output=True, timeout=60, check=True)
    os.close(w)
    wait_for(lambda: server_status(repo.root) is not None, what="the started server")
    assert select.select([r], [], [], 10.0)[0] and os.read(r, 1) == b""  # end of file: nobody else holds it
    os.close(r)


def _workers_of(pid: int) -> list[int]:
    return [p.pid for p in procs.find() if p.role == "worker" and p.parent == pid]


@pytest.mark.slow
def test_issue_30_a_killed_builder_takes_its_workers_along(make_repo):
    """SIGKILL to a builder mid-build: its analysis workers end too (no orphan, no
    resource tracker left behind), and the next build resumes."""
    repo = big_repo(make_repo, files=600, size=60)  # ~1.4 MB: analysed in workers
    index = index_file(repo.root)
    env = subprocess_env()
    code = "import sys; from jitctx.code.build import build_here; sys.exit(build_here(sys.argv[1], sys.argv[2], nice=False))"
    p = subprocess.Popen([sys.executable, "-c", code, str(repo.root), index], env=env)
    try:
        wait_for(lambda: _workers_of(p.pid) or p.poll() is not None, what="the builder's workers")
        workers = _workers_of(p.pid)
        assert workers, "the build ended before it started workers"
        p.send_signal(signal.SIGKILL)
    finally:
        p.kill()
        p.wait()
    wait_for(lambda: not any(procs.alive(w) for w in workers), limit=5.0, what="the workers' end")
    assert build.build_here(str(repo.root), index, nice=False) == 0


@pytest.mark.slow
def test_issue_30_stopping_a_server_stops_its_builder(make_repo):
    repo = big_repo(make_repo)
    index = index_file(repo.root)
    env = subprocess_env(JITCTX_SERVER="wait")
    run = captured("locate", "--task", "retry the handshake", cwd=repo.root, env=env)
    assert b"being built in the background" in run.out
    got = build.progress(index)
    assert got is not None and got.pid > 0
    stopped = subprocess.run([sys.executable, "-m", "jitctx", "serve", "--stop", "--root", str(repo.root)], env=env, capture_output=True, timeout=60)
    assert stopped.returncode == 0
    wait_for(lambda: not procs.alive(got.pid), limit=10.0, what="the builder's end")
    assert build.progress(index) is None


@pytest.mark.slow
def test_issue_30_status_and_stop_all_see_every_server_whatever_its_environment(make_repo, tmp_path, request):
    """Two servers of one root under different environments (run and cache folders):
    ``serve --status`` from one sees only its own; ``--status --all`` lists both with
    what sets them apart; ``--stop --all`` stops both."""
    import shutil
    import tempfile

    from conftest import stop_servers

    repo = make_repo("basic")
    root = repo.root
    other_run = tempfile.mkdtemp(prefix="jx-", dir="/tmp")  # short: a socket path holds ~100 bytes
    request.addfinalizer(lambda: (stop_servers(other_run), shutil.rmtree(other_run, ignore_errors=True)))
    other = {"XDG_RUNTIME_DIR": other_run, "XDG_CACHE_HOME": str(tmp_path / "cache2")}
    for extra in ({}, other):
        assert captured("glob", "*.md", cwd=root, env=subprocess_env(JITCTX_SERVER="wait", **extra)).code == 0
    mine = server_status(root)
    theirs = server_status(root, **other)
    assert mine and theirs and mine["pid"] != theirs["pid"]
    listing = subprocess.run([sys.executable, "-m", "jitctx", "serve", "--status", "--all", "--json", "--root", str(root)], env=subprocess_env(), capture_output=True, timeout=60)
    rows = json.loads(listing.stdout)["processes"]
    servers = {r["pid"]: r for r in rows if r["role"] == "server"}
    assert set(servers) == {mine["pid"], theirs["pid"]}, rows
    apart = servers[mine["pid"]]["separate"][0]["differ"]
    assert "XDG_CACHE_HOME" in apart and "run folder" in apart
    text = subprocess.run([sys.executable, "-m", "jitctx", "serve", "--status", "--all", "--root", str(root)], env=subprocess_env(), capture_output=True, timeout=60)
    assert text.returncode == 0 and b"separate from pid" in text.stdout and b"2 jitctx processes (2 servers)" in text.stdout
    stop = subprocess.run([sys.executable, "-m", "jitctx", "serve", "--stop", "--all", "--root", str(root)], env=subprocess_env(), capture_output=True, timeout=60)
    assert stop.returncode == 0 and b"stopped 2 jitctx processes" in stop.stdout
    assert not procs.alive(mine["pid"]) and not procs.alive(theirs["pid"])
    none = subprocess.run([sys.executable, "-m", "jitctx", "serve", "--status", "--all", "--root", str(root)], env=subprocess_env(), capture_output=True, timeout=60)
    assert none.returncode == 1 and b"no jitctx process runs" in none.stdout


def test_issue_30_a_server_whose_socket_is_gone_leaves(make_repo):
    repo = make_repo("basic")
    assert captured("glob", "*.md", cwd=repo.root, env=subprocess_env(JITCTX_SERVER="wait")).code == 0
    status = server_status(repo.root)
    assert status is not None
    os.unlink(status["socket"])  # nobody can reach it now, nor see it with serve --status
    wait_for(lambda: not procs.alive(status["pid"]), limit=10.0, what="the unreachable server's end")


@pytest.mark.slow
def test_issue_30_the_least_recently_used_server_leaves_for_a_new_one(make_repo):
    """Past JITCTX_SERVER_MAX servers in one run folder, the least recently used leaves."""
    repos = [make_repo("basic") for _ in range(3)]
    env = subprocess_env(JITCTX_SERVER="wait", JITCTX_SERVER_MAX="2")
    pids = []
    for repo in repos:
        assert captured("glob", "*.md", cwd=repo.root, env=env).code == 0
        status = server_status(repo.root)
        assert status is not None
        pids.append(status["pid"])
    wait_for(lambda: not procs.alive(pids[0]), limit=10.0, what="the least recently used server's end")
    assert procs.alive(pids[1]) and procs.alive(pids[2])


def test_issue_30_a_root_called_once_or_twice_starts_no_server(make_repo):
    """The default mode: a root's first two calls are answered in process and leave only a
    mark; its third (within protocol.SEEN_WINDOW) starts the server for the calls after it."""
    repo = make_repo("basic")
    env = subprocess_env()
    env.pop("JITCTX_SERVER")

    def servers() -> list[int]:  # a started server shows at once (its command line is set at exec)
        return [p.pid for p in procs.find() if p.role == "server" and p.root == str(repo.root)]

    for _ in range(2):
        assert captured("glob", "*.md", cwd=repo.root, env=env).code == 0
        assert servers() == []
    assert Path(_socket_of(repo.root, env)[: -len(".sock")] + ".seen").stat().st_size == 2
    assert captured("glob", "*.md", cwd=repo.root, env=env).code == 0
    assert len(servers()) == 1
    wait_for(lambda: server_status(repo.root) is not None, what="the started server")


@pytest.mark.slow
def test_issue_30_servers_start_two_at_a_time(make_repo):
    """A run folder's start slots taken (two servers warming up): a server started now
    leaves at once, without a socket; once a slot is free, the next start serves."""
    import fcntl

    from jitctx.client import STARTING

    repo = make_repo("basic")
    env = subprocess_env()
    env.pop("JITCTX_SERVER")
    folder = Path(_socket_of(repo.root, env)).parent
    slots = [os.open(folder / f"start{i}.slot", os.O_RDWR | os.O_CREAT, 0o600) for i in range(STARTING)]
    try:
        for fd in slots:
            fcntl.flock(fd, fcntl.LOCK_EX)
        for _ in range(3):
            assert captured("glob", "*.md", cwd=repo.root, env=env).code == 0
        wait_for(lambda: not [p for p in procs.find() if p.role == "server" and p.root == str(repo.root)], limit=15.0, what="the started server's leaving")
        assert server_status(repo.root) is None
    finally:
        for fd in slots:
            os.close(fd)
    assert captured("glob", "*.md", cwd=repo.root, env=env).code == 0
    wait_for(lambda: server_status(repo.root) is not None, what="a server, once a slot is free")


def test_issue_30_a_root_used_once_leaves_early():
    from jitctx.server.serve import IDLE, IDLE_FIRST, Server

    s = Server("/nonexistent-root")
    assert s._idle_limit() == IDLE_FIRST < IDLE
    s.calls = 2
    assert s._idle_limit() == IDLE
    assert Server("/nonexistent-root", idle=5.0)._idle_limit() == 5.0  # asked for: from the first call


# -- a slow, stopped or broken peer ------------------------------------------------------------


def _socket_of(root: Path, env: dict) -> str:
    folder = protocol.run_dir(env)
    assert folder is not None
    path = protocol.socket_name(folder, str(root), protocol.fingerprint(env, protocol.PACKAGE, __version__))
    assert path is not None
    return path


@pytest.mark.slow
def test_issue_30_a_client_that_sends_half_a_request_costs_only_itself(make_repo):
    repo = make_repo("basic")
    env = subprocess_env(JITCTX_SERVER="wait")
    want = captured("glob", "*.md", cwd=repo.root, env=subprocess_env(JITCTX_SERVER="0"))
    assert captured("glob", "*.md", cwd=repo.root, env=env).out == want.out
    before = server_status(repo.root)["calls"]  # type: ignore[index]
    stuck = []
    for _ in range(5):  # suspended agents: half a frame each, then nothing
        s = socket.socket(socket.AF_UNIX)
        s.connect(_socket_of(repo.root, env))
        s.sendall((10_000).to_bytes(4, "big") + b"jitctx-serve/2\0")
        stuck.append(s)
    session = {**env, "JITCTX_SESSION": "waits-its-turn"}
    for e in (env, session):
        run = captured("glob", "*.md", cwd=repo.root, env=e)
        assert run.out == want.out and run.gap < GAP
    assert server_status(repo.root)["calls"] == before + 2  # type: ignore[index]  # the server answered them
    for s in stuck:
        s.close()


@pytest.mark.slow
def test_issue_30_a_stopped_server_costs_a_call_a_few_seconds_and_holds_nothing(make_repo):
    """SIGSTOP (a debugger): the client gets no reply and answers in process, the same
    answer, within its silence limit; the caller's pipes are not held by the stopped
    server (the descriptors go only to a call that starts). Continued, it serves again."""
    from jitctx.client import SILENCE

    repo = make_repo("basic")
    env = subprocess_env(JITCTX_SERVER="wait")
    here = captured("glob", "*.md", cwd=repo.root, env=subprocess_env(JITCTX_SERVER="0"))
    assert captured("glob", "*.md", cwd=repo.root, env=env).out == here.out
    status = server_status(repo.root)
    assert status is not None
    os.kill(status["pid"], signal.SIGSTOP)
    try:
        started = time.monotonic()
        run = captured("glob", "*.md", cwd=repo.root, env=env)
        took = time.monotonic() - started
    finally:
        os.kill(status["pid"], signal.SIGCONT)
    assert (run.code, run.out, run.err) == (here.code, here.out, here.err) and run.gap < GAP
    assert took < SILENCE + 3.0  # the silence limit, then an answer in process
    assert captured("glob", "*.md", cwd=repo.root, env=env).out == here.out
    assert server_status(repo.root)["calls"] == status["calls"] + 1  # type: ignore[index]


def _request(root: Path, env: dict, *, columns: str = "80", out: str = "utf-8:strict:0:0", err: str = "utf-8:backslashreplace:1:0", argv=("glob", "*.md")) -> bytes:
    digest = protocol.digest(protocol.fingerprint(env, protocol.PACKAGE, __version__))
    return protocol.encode_request([protocol.PROTOCOL, digest, str(root), "", columns, out, err, *argv])


def _exchange(path: str, request: bytes, fds: list[int] | None = None) -> bytes:
    """Send ``request``; on "go" send ``fds`` (if any); everything the server said until it closed."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10.0)
        s.connect(path)
        s.sendall(request)
        said = b""
        try:
            while chunk := s.recv(4096):
                said += chunk
                if b"go\n" in said and fds is not None:
                    socket.send_fds(s, [b"f"], fds)
                    fds = None
        except OSError:
            pass
    return said.replace(b".\n", b"")


@pytest.mark.slow
def test_issue_30_malformed_requests_are_refused_and_the_server_stays(make_repo, tmp_path):
    repo = make_repo("basic")
    env = subprocess_env(JITCTX_SERVER="wait")
    want = captured("glob", "*.md", cwd=repo.root, env=subprocess_env(JITCTX_SERVER="0")).out
    assert captured("glob", "*.md", cwd=repo.root, env=env).out == want
    path = _socket_of(repo.root, env)
    for bad in (
        _request(repo.root, env, columns="²"),
        _request(repo.root, env, columns="9" * 5000),
        _request(repo.root, env, out="nocolons"),
        _request(repo.root, env, out="bogus-encoding:strict:0:0"),
        _request(repo.root, env, err="utf-8:bogus-errors:0:0"),
        (50 << 20).to_bytes(4, "big") + b"x",
        b"\xff\xff",
        protocol.encode_request(["jitctx-serve/2"]),
    ):
        said = _exchange(path, bad)
        assert said in (b"", b"protocol\n"), said
    folder = os.open(tmp_path, os.O_RDONLY)
    assert _exchange(path, _request(repo.root, env), [folder, folder]) == b"go\nprotocol\n"  # a folder for stdout
    os.close(folder)
    assert captured("glob", "*.md", cwd=repo.root, env=env).out == want
    assert server_status(repo.root)["calls"] == 2  # type: ignore[index]


class FakeServer:
    """A socket at the root's server's place that speaks the protocol up to a point:
    ``script`` is what it does after reading the request ("silent", "close-after-fds",
    "close-after-confirm"). It records whether descriptors came with the request."""

    def __init__(self, path: str, script: str) -> None:
        self.script = script
        self.fds_with_request = False
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(path)
        self.listener.listen(4)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 4)
            self.fds_with_request = bool(fds)
            if self.script == "silent":
                conn.recv(1)  # until the client gives up
                return
            conn.sendall(b"go\n")
            _, fds, _, _ = socket.recv_fds(conn, 16, 4)
            for fd in fds:
                os.close(fd)
            if self.script == "close-after-fds":
                return
            conn.sendall(b"w\n")
            conn.recv(1)  # "y": the client is committed to this answer now

    def close(self) -> None:
        self.thread.join(30)
        self.listener.close()


@pytest.mark.slow
@pytest.mark.parametrize("script", ["silent", "close-after-fds", "close-after-confirm"])
def test_issue_30_a_server_that_falls_silent_or_dies_costs_no_hang(make_repo, script):
    """Before anything was written for it, the client answers in process (the same
    bytes); after it said it waits, it says the server stopped (exit 2). Never a hang."""
    repo = make_repo("basic")
    env = subprocess_env(JITCTX_SERVER="wait")
    here = captured("glob", "*.md", cwd=repo.root, env=subprocess_env(JITCTX_SERVER="0"))
    fake = FakeServer(_socket_of(repo.root, env), script)
    run = captured("glob", "*.md", cwd=repo.root, env=env)
    fake.close()
    assert not fake.fds_with_request and run.gap < GAP
    if script == "close-after-confirm":
        assert run.code == 2 and b"the jitctx server stopped during this call" in run.err and run.out == b""
    else:
        assert (run.code, run.out, run.err) == (here.code, here.out, here.err)
