"""The ``jitctx`` command: a thin client of the root's warm server, else the CLI itself.

Owns deciding, in a few milliseconds, whether a call goes to the root's
server (``jitctx.server.serve``) and sending it there: argv, the working
directory, the session, the terminal width, and the caller's own stdout and
stderr (passed as file descriptors when the call starts, so the server
writes exactly what this process would, with the same buffering). Starts the
server when none runs and the root was called twice before (a root called
once or twice gets none) and answers that call in this process meanwhile (a call of a
session, or with ``JITCTX_SERVER=wait``, starts and waits for the server
instead). Any failure to reach a
server runs the call here, with the same output (a debug line with
``JITCTX_LOG=debug``, nothing else). Imports ``os``, ``sys`` and the C
socket module only: ``socket``'s own import (enum, selectors) would cost
more than the whole call through a warm server.
"""

import os
import sys
import time

__all__ = ["main", "SERVED"]

# the subcommands a server answers; watch, mcp, serve and session always run here
SERVED = frozenset({"glob", "grep", "head", "tail", "outline", "symbols", "locate", "notes", "preload", "context", "tools"})
SPAWN_WAIT = 5.0  # seconds a session's first call waits for the server it started
SPAWN_AFTER = 2  # calls of a root without a server (within protocol.SEEN_WINDOW) before one starts


def main() -> None:
    """Console entry: through the server when one can answer, else in this process."""
    argv = sys.argv[1:]
    if argv and argv[0] == "serve":
        from .server.serve import main as serve

        _exit(serve(argv))
    try:
        code = _through_server(argv)
    except KeyboardInterrupt:
        code = 130
    if code is None:
        from .adapters.cli import entry

        entry()  # ends the process
        return
    _exit(code)


def _exit(code: int) -> None:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def _debug(message: str) -> None:
    if os.environ.get("JITCTX_LOG", "").lower() == "debug":
        try:
            os.write(2, f"jitctx: debug: server: {message}\n".encode("utf-8", "replace"))
        except OSError:
            pass


def _through_server(argv: list[str]) -> int | None:
    """The exit code of the call as the server ran it, or ``None``: run it here."""
    env = os.environ
    if env.get("JITCTX_SERVER") == "0" or not argv or argv[0] not in SERVED:
        return None
    if "--no-server" in argv or "-h" in argv or "--help" in argv or sys.stdout is None or sys.stderr is None:
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None  # a deleted working directory: the CLI says so
    root = guess_root(argv, cwd, env)
    if root is None:
        return None
    from . import __version__
    from .server import protocol

    folder = protocol.run_dir(env, root=root)
    if folder is None:
        _debug("no private folder for sockets (or it would be inside the root)")
        return None
    fp = protocol.fingerprint(env, protocol.PACKAGE, __version__)
    request = protocol.encode_request([protocol.PROTOCOL, protocol.digest(fp), cwd, env.get("JITCTX_SESSION", ""), str(_columns(env)), _desc(sys.stdout), _desc(sys.stderr), *argv])
    wait = bool(env.get("JITCTX_SESSION")) or env.get("JITCTX_SERVER") == "wait"
    for _ in range(3):  # again when the server names another root's, or went away as we called
        path = protocol.socket_name(folder, root, fp)
        if path is None:
            _debug(f"socket path too long under {folder}")
            return None
        sock = _connect(path)
        if isinstance(sock, str):
            _debug(sock)
            return None  # a server that does not take calls now, or a path no server can use
        if sock is None:
            if not wait:
                if _calls_before(path) >= SPAWN_AFTER:
                    _spawn(root, protocol.digest(fp), folder, after_us=True)  # it starts once this process is done
                return None  # answered here
            _spawn(root, protocol.digest(fp), folder)
            sock = _wait_for(path)
            if sock is None:
                _debug("the server did not start in time")
                return None
        answer = _call(sock, request)
        if isinstance(answer, int):
            return answer
        kind, _, rest = (answer or "gone").partition(" ")
        if kind == "elsewhere" and rest:
            root = rest
            continue
        _debug(f"the server said {kind!r}")
        if kind in ("gone", "replaced"):  # it stopped before taking the call: its successor will
            if not wait:
                _spawn(root, protocol.digest(fp), folder, after_us=True)
                return None
            time.sleep(0.05)
            continue
        return None
    return None


def guess_root(argv: list[str], cwd: str, env) -> str | None:
    """The root the CLI would serve, found cheaply (``--root``, ``$JITCTX_ROOT``, the git
    top of ``cwd``): only to pick a server, which checks it. ``None``: let the CLI decide."""
    given = None
    for i in range(1, len(argv)):
        a = argv[i]
        if a == "--":
            break
        if a == "--root":
            if i + 1 >= len(argv):
                return None
            given = argv[i + 1]
        elif a.startswith("--root="):
            given = a[len("--root=") :]
    if given is None:
        given = env.get("JITCTX_ROOT")
    if given is not None:
        if not given.strip():
            return None
        real = os.path.realpath(os.path.join(cwd, os.path.expanduser(given)))
        return real if os.path.isdir(real) else None
    d = cwd
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return cwd
        d = parent


def _columns(env) -> int:
    """The width the CLI's help would take here (``call.terminal_columns``'s rule)."""
    try:
        columns = int(env.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ is not None else 0
        except (ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def _desc(stream) -> str:
    """How this process's stream encodes and buffers, so the server's copy does the same."""
    return f"{stream.encoding}:{stream.errors}:{int(stream.line_buffering)}:{int(stream.write_through)}"


SILENCE = 3.0  # seconds without a line from the server (it beats every 0.5 s): stopped or wedged


def _connect(path: str):
    """A connected socket; ``None`` when no server listens there (start one); a string
    saying why when one should not be started (it does not take calls, or the path is
    not a socket: a server could not start either)."""
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(SILENCE)
    try:
        sock.connect(path)
        # the server must be this user's (the folder is private; this is the second lock)
        cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        if int.from_bytes(cred[4:8], sys.byteorder) != os.getuid():
            sock.close()
            return "a socket owned by another user: not used"
    except OSError as exc:
        sock.close()
        if isinstance(exc, (BlockingIOError, TimeoutError)):
            return "the server takes no calls now (its queue is full, or it is stopped)"
        return _blocked(path)
    return sock


def _blocked(path: str) -> str | None:
    """Why no server can start at ``path`` (something else sits at its socket's or lock's
    place), or ``None``."""
    import stat

    for name, want in ((path, stat.S_ISSOCK), (path[: -len(".sock")] + ".lock", stat.S_ISREG)):
        try:
            st = os.lstat(name)
        except OSError:
            continue
        if not want(st.st_mode):
            return f"{name} is not jitctx's (remove it): no server can start"
    return None


def _calls_before(path: str) -> int:
    """How many calls this root (and environment) had without a server, the last less than
    ``protocol.SEEN_WINDOW`` seconds ago: its mark beside the socket's place (``.seen``, a
    byte per call), this one added. A server is started from the third on: a root called
    once or twice (a test suite's temporary repositories, a one-off look) never pays a
    server's start; one called again and again does, once."""
    from .server.protocol import SEEN_WINDOW

    mark = path[: -len(".sock")] + ".seen"
    try:
        st = os.lstat(mark)
        before = st.st_size if time.time() - st.st_mtime < SEEN_WINDOW else 0
    except OSError:
        before = 0
    try:
        fd = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_APPEND if before else os.O_TRUNC), 0o600)
        try:
            os.write(fd, b".")
        finally:
            os.close(fd)
    except OSError:
        return SPAWN_AFTER  # no mark can be kept: start the server as before
    return before


def _wait_for(path: str):
    deadline = time.monotonic() + SPAWN_WAIT
    while time.monotonic() < deadline:
        time.sleep(0.01)
        sock = _connect(path)
        if isinstance(sock, str):
            return None
        if sock is not None:
            return sock
    return None


def _call(sock, request: bytes) -> int | str | None:
    """Send the request; the exit code of the call as the server ran it, a refusal
    (``"busy"``, ``"elsewhere ROOT"``, ``"silent"`` when it said nothing for ``SILENCE``
    seconds, ...: run it here), ``None`` when the server went away before writing
    anything for us (ask its successor, or run it here), or, when it did write and
    then stopped, an error exit of our own.

    This process's stdout and stderr go to the server only when it starts the call
    ("go"): a queued or stopped server never holds them. Before its first write it asks
    whether we still wait ("w"); we say yes ("y") and are then committed to its answer."""
    import _socket

    committed = False
    try:
        sock.sendall(request)
        buf = b""
        while True:
            chunk = sock.recv(256)  # at most SILENCE seconds: the server beats while it works
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, _, buf = buf.partition(b"\n")
                if line == b".":
                    continue
                if line == b"go":
                    fds = (1).to_bytes(4, sys.byteorder) + (2).to_bytes(4, sys.byteorder)
                    sock.sendmsg([b"f"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
                elif line == b"w":
                    sock.sendall(b"y")
                    committed = True
                elif line.startswith(b"ok ") and line[3:].isdigit():
                    return int(line[3:])
                else:
                    return line.decode("utf-8", "replace")
    except TimeoutError:
        if not committed:
            return "silent"  # stopped (a debugger) or wedged: answered here, no retry
    except OSError as exc:
        _debug(f"{type(exc).__name__}: {exc}")
    finally:
        sock.close()
    if not committed:
        return None
    os.write(2, b"jitctx: error: the jitctx server stopped during this call\n  hint: run it again; JITCTX_SERVER=0 runs it without the server\n")
    return 2


# the server's first lines: with --after, wait (up to 10 s) until the client that started it
# has exited, so its start takes no CPU from the call that client answers itself; then take
# one of STARTING slots of its run folder (a lock file each) or leave at once: a start costs
# 1-2 s of CPU, and many at once (an agent touring repositories) starved the machine.
# The server lets its slot go when it is warm (``--slot``).
_BOOT = """import os, sys, time, fcntl
if sys.argv[1] == "--after":
    del sys.argv[1]
    parent, end = os.getppid(), time.monotonic() + 10
    while os.getppid() == parent and time.monotonic() < end:
        time.sleep(0.01)
for i in range(%d):
    try:
        slot = os.open(os.path.join(%r, "start%%d.slot" %% i), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError:
        continue
    try:
        fcntl.flock(slot, fcntl.LOCK_EX | fcntl.LOCK_NB)
        break
    except OSError:
        os.close(slot)
else:
    sys.exit(0)
sys.path.insert(0, %r)
from jitctx.server.serve import main
sys.exit(main([*sys.argv[1:], "--slot", str(slot)]))
"""
STARTING = 2  # servers of one run folder starting (importing, warming up) at once


def _spawn(root: str, digest: str, folder: str, *, after_us: bool = False) -> None:
    """Start the root's server in the background, quiet, in a process group of its own (a
    Ctrl-C at the terminal is not for it), with no descriptor of this process but
    ``/dev/null`` on its stdio; it exits at once if another one won the race, or if
    ``STARTING`` servers of the run ``folder`` are starting already.
    ``after_us``: it starts once this process has ended (this call is answered here).
    Not a session of its own: the kernel shares CPU between sessions (autogroups) before
    it looks at priorities, and the server's warm-up must yield to the calls it serves."""
    from . import procs

    parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = procs.MARK + "server\n" + _BOOT % (STARTING, folder, parent)
    try:
        procs.spawn([sys.executable, "-c", code, *(["--after"] if after_us else []), "serve", "--root", root, "--spawned", digest])
    except OSError as exc:
        _debug(f"cannot start the server: {exc}")
