"""The warm server behind the thin client (issue 21): the same answers, sessions, trust.

Every call here is a real ``python -m jitctx`` process: with ``JITCTX_SERVER=0`` it
runs in process, with ``JITCTX_SERVER=wait`` through the root's server (started
on the first call and waited for), whose ``--status`` counts the calls it answered.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_support import subprocess_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the server's socket checks (SO_PEERCRED) are Linux's")


def jitctx(*argv: str, cwd: Path, server: bool, combined: bool = False, **env: str) -> tuple[int, bytes, bytes]:
    """One call as a shell runs it: (exit code, stdout, stderr); ``combined``: stderr into stdout."""
    e = subprocess_env(JITCTX_SERVER="wait" if server else "0", **env)
    proc = subprocess.run(
        [sys.executable, "-m", "jitctx", *argv],
        cwd=cwd,
        env=e,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if combined else subprocess.PIPE,
        timeout=120,
    )
    return proc.returncode, proc.stdout, proc.stderr or b""


def served_calls(root: Path) -> int:
    """How many calls the root's server answered (0 when none runs)."""
    code, out, _ = jitctx("serve", "--status", "--root", str(root), cwd=root, server=False)
    if code != 0:
        return 0
    line = next(ln for ln in out.decode().splitlines() if "calls answered" in ln)
    return int(line.split(" calls answered")[0].rsplit(" ", 1)[1].replace(",", ""))


def stop(root: Path) -> None:
    jitctx("serve", "--stop", "--root", str(root), cwd=root, server=False)


# every served subcommand and its modes, from the root unless a folder is given
CASES: list[tuple[str, ...]] = [
    ("glob", "**/*.py"),
    ("glob", "**", "--json"),
    ("glob", "*.md", "--sort", "path"),
    ("glob", "**/*.txt", "--limit", "2"),
    ("glob", "**", "--include-ignored", "--sort", "size"),
    ("glob", "nothing-*.zz"),
    ("glob", "src"),
    ("glob", "*.py", "--max-tokens", "200"),
    ("grep", "def "),
    ("grep", "def ", "--mode", "content", "-C", "1"),
    ("grep", "def ", "--mode", "count", "--json"),
    ("grep", "zzqqxx-nothing"),
    ("grep", "(unclosed"),
    ("grep", "greet", "-g", "*.py", "--mode", "content"),
    ("grep", "secret", "--include-ignored"),
    ("head", "src/app.py", "-n", "5"),
    ("head", "src/app.py", "--start", "3", "-n", "2", "--json"),
    ("head", "src/app.py", "--start", "9999"),
    ("head", "data/blob.bin"),
    ("head", ".env"),
    ("head", "missing.txt"),
    ("head", "../outside.txt"),
    ("head", "debug.log"),
    ("tail", "text/numbers.txt", "-n", "3"),
    ("tail", "text/crlf.txt", "--json"),
    ("outline", "src/app.py"),
    ("outline", "README.md"),
    ("symbols", "greet"),
    ("symbols", "nothing_named_so"),
    ("locate", "--task", "make greet shout"),
    ("locate", "--task", "the and of"),
    ("preload",),
    ("preload", "--json"),
    ("preload", "--budget", "0"),
    ("context", "--task", "make greet shout", "--budget", "4000"),
    ("tools", "--format", "anthropic"),
    ("glob", "--no-such-option"),
    ("grep", "--json", "--bad-option"),
    ("head",),
]


@pytest.mark.slow
def test_issue_21_every_subcommand_answers_the_same_through_the_server(make_repo):
    """Byte-identical stdout, stderr and exit code, in process and through the server,
    with stdout and stderr apart and together (the order of their writes kept)."""
    repo = make_repo("basic")
    root = repo.root
    for argv in CASES[:3]:  # settle the caches both sides share (the code index, counts)
        jitctx(*argv, cwd=root, server=False)
    jitctx("locate", "--task", "make greet shout", cwd=root, server=False)
    before = served_calls(root)
    differ = []
    for argv in CASES:
        here = jitctx(*argv, cwd=root, server=False)
        there = jitctx(*argv, cwd=root, server=True)
        if here != there:
            differ.append((argv, here, there))
    for argv in CASES[::4]:
        here = jitctx(*argv, cwd=root, server=False, combined=True)
        there = jitctx(*argv, cwd=root, server=True, combined=True)
        if here != there:
            differ.append((("combined", *argv), here, there))
    assert not differ, "\n".join(f"{a}:\n  in process {h!r}\n  server     {t!r}" for a, h, t in differ[:5])
    assert served_calls(root) - before >= len(CASES) + len(CASES[::4])  # they did go through it


@pytest.mark.slow
def test_issue_21_paths_from_a_subfolder_and_other_roots_answer_the_same(make_repo, tmp_path):
    """Paths taken and printed from the working directory; ``--root`` and ``$JITCTX_ROOT``
    naming the root from elsewhere; a call naming another root goes to that root's server."""
    repo, other = make_repo("basic"), make_repo("code")
    sub = repo.root / "src"
    cases = [
        (sub, ("glob", "*.py")),
        (sub, ("head", "app.py", "-n", "3")),
        (sub, ("grep", "def", "--mode", "content")),
        (sub, ("head", "../README.md", "-n", "2")),
        (tmp_path, ("glob", "**/*.py", "--root", str(repo.root))),
        (sub, ("glob", "*", "--root", str(other.root))),
    ]
    for cwd, argv in cases:
        assert jitctx(*argv, cwd=cwd, server=False) == jitctx(*argv, cwd=cwd, server=True), argv
    env_root = {"JITCTX_ROOT": str(other.root)}
    assert jitctx("glob", "*.py", cwd=tmp_path, server=False, **env_root) == jitctx("glob", "*.py", cwd=tmp_path, server=True, **env_root)
    assert served_calls(other.root) >= 1  # its own server answered it


def test_issue_21_a_session_is_shared_by_calls_and_sees_changes(make_repo):
    """With JITCTX_SESSION, a file read by one call and edited is reported by the next;
    a moved HEAD too. Without it, calls are independent, as before."""
    repo = make_repo("basic")
    root = repo.root
    session = jitctx("session", "new", cwd=root, server=False)[1].decode().strip()
    assert len(session) >= 16
    code, out, _ = jitctx("head", "src/app.py", "-n", "3", cwd=root, server=True, JITCTX_SESSION=session)
    assert code == 0 and b"src/app.py" in out
    repo.write("src/app.py", "def greet():\n    return 'HI'\n")
    _, out, _ = jitctx("glob", "*.md", cwd=root, server=True, JITCTX_SESSION=session)
    assert b"src/app.py" in out and b"changed since you read it" in out
    _, alone, _ = jitctx("glob", "*.md", cwd=root, server=True)
    assert b"changed since" not in alone
    _, other, _ = jitctx("glob", "*.md", cwd=root, server=True, JITCTX_SESSION="another-session")
    assert b"changed since" not in other
    # reading it again makes it current for the session
    jitctx("head", "src/app.py", cwd=root, server=True, JITCTX_SESSION=session)
    _, out, _ = jitctx("glob", "*.md", "--json", cwd=root, server=True, JITCTX_SESSION=session)
    assert b'"stale": []' in out


def test_issue_21_a_killed_server_leaves_nothing_in_the_way(make_repo):
    """kill -9: the socket file stays behind; the next call still answers (in process,
    the same answer) and a new server takes the socket over."""
    repo = make_repo("basic")
    root = repo.root
    want = jitctx("glob", "**/*.py", cwd=root, server=False)
    assert jitctx("glob", "**/*.py", cwd=root, server=True) == want
    pid = _server_pid(root)
    os.kill(pid, signal.SIGKILL)
    _wait_gone(pid)
    assert list((Path(os.environ["XDG_RUNTIME_DIR"]) / "jitctx").glob("*.sock"))  # stale
    assert jitctx("glob", "**/*.py", cwd=root, server=True) == want
    assert _server_pid(root) != pid


def test_issue_21_racing_starts_make_one_server(make_repo):
    repo = make_repo("basic")
    root = repo.root
    env = subprocess_env(JITCTX_SERVER="wait")
    procs = [subprocess.Popen([sys.executable, "-m", "jitctx", "glob", "*.md"], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs) and len({o for o, _ in outs}) == 1
    deadline = time.monotonic() + 5  # the others found the lock taken and left (within 0.5 s)
    while time.monotonic() < deadline:
        servers = [p for p in _processes() if "--spawned" in p and str(root) in p]
        if len(servers) == 1:
            break
        time.sleep(0.05)
    assert len(servers) == 1, servers
    assert len(list((Path(os.environ["XDG_RUNTIME_DIR"]) / "jitctx").glob("*.sock"))) == 1


def test_issue_21_a_call_for_another_fingerprint_is_refused_and_answered_in_process(make_repo):
    """A client of another version or environment never talks to this server: it says
    so before reading anything, and that client answers the call itself."""
    repo = make_repo("basic")
    root = repo.root
    jitctx("glob", "*.md", cwd=root, server=True)
    path = next((Path(os.environ["XDG_RUNTIME_DIR"]) / "jitctx").glob("*.sock"))
    from jitctx.server import protocol as endpoint

    request = endpoint.encode_request([endpoint.PROTOCOL, "0" * 32, str(root), "", "80", "utf-8:strict:0:0", "utf-8:backslashreplace:1:0", "glob", "*.md"])
    r, w = os.pipe()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(str(path))
        socket.send_fds(s, [request], [w, w])
        assert s.recv(100) == b"fingerprint\n"
    os.close(w)
    assert os.read(r, 100) == b""  # nothing was written for it
    os.close(r)
    # a different environment value that reaches answers gets a server of its own
    jitctx("glob", "*.md", cwd=root, server=True, GIT_CONFIG_COUNT="0")
    assert len(list(path.parent.glob("*.sock"))) == 2


def test_issue_21_an_open_private_folder_is_not_used(make_repo):
    """The socket folder must be the user's alone: mode 0755 sends every call in process."""
    repo = make_repo("basic")
    folder = Path(os.environ["XDG_RUNTIME_DIR"]) / "jitctx"
    folder.mkdir(mode=0o700)
    folder.chmod(0o755)
    want = jitctx("glob", "*.md", cwd=repo.root, server=False)
    assert jitctx("glob", "*.md", cwd=repo.root, server=True) == want
    assert not list(folder.iterdir())


def test_issue_21_a_changed_source_replaces_the_server(make_repo, tmp_path):
    """A server whose jitctx source changed since it started never answers: it steps
    aside, the call is answered in process, and the next one by a new server."""
    import shutil

    copy = tmp_path / "pkg"
    shutil.copytree(Path(__file__).resolve().parents[2] / "jitctx", copy / "jitctx", ignore=shutil.ignore_patterns("__pycache__"))
    repo = make_repo("basic")
    root = repo.root
    env = {"PYTHONPATH": str(copy)}
    want = jitctx("glob", "*.md", cwd=root, server=False, **env)
    assert jitctx("glob", "*.md", cwd=root, server=True, **env) == want
    first = _server_pid(root, **env)
    module = copy / "jitctx" / "render.py"
    module.write_text(module.read_text() + "\n# edited\n")
    assert jitctx("glob", "*.md", cwd=root, server=True, **env) == want
    _wait_gone(first)
    assert jitctx("glob", "*.md", cwd=root, server=True, **env) == want
    assert _server_pid(root, **env) != first


def test_issue_21_ctrl_c_stops_the_call_in_the_server(make_repo):
    """The client interrupted mid-call: it exits 130 and the server stops writing for it."""
    repo = make_repo("basic")
    root = repo.root
    for i in range(300):
        repo.write(f"slow/f{i}.txt", ("a" * 30 + "\n") * 200)
    jitctx("glob", "*.md", cwd=root, server=True)
    server = _server_pid(root)
    env = subprocess_env(JITCTX_SERVER="wait")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jitctx", "grep", "(a|aa)+$", "--backend", "python", "--mode", "content", "--limit", "10000"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _wait_holding(server, proc.stdout.fileno())  # the call runs in the server: it holds the caller's stdout
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    # the server is free again at once
    t = time.monotonic()
    assert jitctx("glob", "*.md", cwd=root, server=True)[0] == 0
    assert time.monotonic() - t < 10


def test_issue_21_serve_status_and_stop(make_repo):
    repo = make_repo("basic")
    root = repo.root
    code, out, _ = jitctx("serve", "--status", "--root", str(root), cwd=root, server=False)
    assert code == 1 and b"no server runs" in out
    jitctx("glob", "*.md", cwd=root, server=True)
    code, out, _ = jitctx("serve", "--status", cwd=root, server=False)
    text = out.decode()
    assert code == 0 and f"serving {root}" in text and "MiB resident" in text and "listing:" in text
    code, out, _ = jitctx("serve", "--stop", cwd=root, server=False)
    assert code == 0 and b"stopped" in out
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and served_calls(root):
        time.sleep(0.05)
    assert jitctx("serve", "--status", cwd=root, server=False)[0] == 1
    assert not list((Path(os.environ["XDG_RUNTIME_DIR"]) / "jitctx").glob("*.sock"))  # a server that ends takes its socket along


def test_issue_21_idle_server_exits(make_repo):
    repo = make_repo("basic")
    root = repo.root
    jitctx("glob", "*.md", cwd=root, server=True, JITCTX_SERVER_IDLE="1")
    pid = _server_pid(root)
    _wait_gone(pid, 15)


# -- helpers ----------------------------------------------------------------------------------


def _server_pid(root: Path, **env: str) -> int:
    deadline = time.monotonic() + 10  # a server started by the last call may still be coming up
    while True:
        code, out, _ = jitctx("serve", "--status", "--root", str(root), cwd=root, server=False, **env)
        if code == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert code == 0, out
    return int(out.decode().split()[1].rstrip(","))


def _wait_holding(pid: int, fd: int, limit: float = 15.0) -> None:
    """Wait until process ``pid`` holds the pipe whose other end is this process's ``fd``
    (a server running a call holds the caller's stdout)."""
    pipe = os.readlink(f"/proc/self/fd/{fd}")
    deadline = time.monotonic() + limit
    while True:
        try:
            held = {os.readlink(f"/proc/{pid}/fd/{n}") for n in os.listdir(f"/proc/{pid}/fd")}
        except OSError:  # a descriptor closed while listed
            held = set()
        if pipe in held:
            return
        assert time.monotonic() < deadline, f"process {pid} did not take the call within {limit:g} s"
        time.sleep(0.01)


def _wait_gone(pid: int, limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
            return  # ended; only its parent (a finished client) has not reaped it
        time.sleep(0.05)
    raise AssertionError(f"process {pid} still runs")


def _processes() -> list[str]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                out.append((d / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace"))
            except OSError:
                pass
    return out


@pytest.mark.slow
def test_issue_21_files_made_and_removed_between_calls_are_never_missed(make_repo):
    """Through the server's kept listing, against a fresh in-process answer each time
    (the listing itself is checked 1,000 times over in tests/test_livelist.py)."""
    import random

    repo = make_repo("basic")
    root = repo.root
    jitctx("glob", "*.md", cwd=root, server=True)
    deadline = time.monotonic() + 30
    while "listing: ready" not in jitctx("serve", "--status", cwd=root, server=False)[1].decode() and time.monotonic() < deadline:
        time.sleep(0.05)
    rng = random.Random(2121)
    made: list[Path] = []
    for i in range(60):
        op = rng.random()
        if op < 0.5 or not made:
            p = root / rng.choice(["", "src/", "new/", "new/deeper/"]) / f"f{i}.{rng.choice(['py', 'txt', 'log'])}"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("x\n")
            made.append(p)
        elif op < 0.8:
            made.pop(rng.randrange(len(made))).unlink()
        else:
            src = made.pop(rng.randrange(len(made)))
            dest = src.with_name(f"renamed{i}{src.suffix}")
            src.rename(dest)
            made.append(dest)
        argv = ("glob", "**", "--sort", "path", "--limit", "1000", "--json")  # ages in text ("just now", "1m ago") move with the clock
        there, here = jitctx(*argv, cwd=root, server=True), jitctx(*argv, cwd=root, server=False)
        if there != here:
            a, b = set(there[1].decode().splitlines()), set(here[1].decode().splitlines())
            raise AssertionError(f"step {i}: only through the server {sorted(a - b)}, only in process {sorted(b - a)}")


def test_issue_22_a_cli_session_rereads_through_the_server(make_repo):
    """In a CLI session (JITCTX_SESSION), the second head of unchanged lines is a note;
    a changed file a diff; --force the text again. Without the session, the text each time."""
    repo = make_repo("basic")
    root = repo.root
    repo.write("notes.txt", "".join(f"line {i}\n" for i in range(1, 61)))
    s = {"JITCTX_SESSION": "reread-session"}
    first = jitctx("head", "notes.txt", "-n", "40", cwd=root, server=True, **s)[1].decode()
    again = jitctx("head", "notes.txt", "-n", "40", cwd=root, server=True, **s)[1].decode()
    assert "line 7" in first and "line 7" not in again and "unchanged since shown at turn 1" in again and "--force" in again
    repo.write("notes.txt", "".join(f"line {i}\n" for i in range(1, 61)).replace("line 7\n", "line SEVEN\nline 7b\n"))  # lines move: a diff
    diff = jitctx("head", "notes.txt", "-n", "40", cwd=root, server=True, **s)[1].decode()
    assert "-line 7" in diff and "+line SEVEN" in diff
    assert "line 9" in jitctx("head", "notes.txt", "-n", "40", "--force", cwd=root, server=True, **s)[1].decode()
    alone = [jitctx("head", "notes.txt", "-n", "40", cwd=root, server=True)[1].decode() for _ in range(2)]
    assert alone[0] == alone[1] and "line 9" in alone[0]
