"""The warm server: one process per user, root and environment behind the thin client.

Owns the server's life (a lock that makes it the only one, its Unix socket
in the private run folder, idle exit, ``--status`` and ``--stop``), taking a
call (the peer must be this user: ``SO_PEERCRED``; same protocol and
fingerprint; its own source unchanged since it started, else it is replaced)
and answering it by running the CLI itself (``adapters.cli.call``) on the
caller's stdout and stderr, its working directory and width, with warm
collaborators: the tokenizer, the imports, the watcher-fed listing
(``livelist``) and the sessions' Workspaces. One call runs at a time: a
call without a session that arrives meanwhile is sent back ("busy") and
its client runs it itself, one of a session waits its turn. Does not own
what an answer is (the CLI and the library) or the client's choices
(``client``).
"""

from __future__ import annotations

import errno
import io
import logging
import os
import select
import socket
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path

from . import __version__, endpoint
from .adapters import cli

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .livelist import LiveListing
    from .tokens import ContentCounts

__all__ = ["IDLE", "MAX_SESSIONS", "Server", "control", "main", "running", "serve"]

log = logging.getLogger("jitctx.server")

IDLE = 600.0  # seconds without a call before the server exits
MAX_SESSIONS = 32  # sessions kept (least recently used dropped first)


def _idle_default() -> float:
    try:
        value = float(os.environ.get("JITCTX_SERVER_IDLE", ""))
    except ValueError:
        return IDLE
    return value if value > 0 else IDLE


class _Switch:
    """``sys.stdout``/``sys.stderr`` while serving: each call's thread writes to its
    caller's stream, every other thread to the server's own (``/dev/null`` when spawned)."""

    def __init__(self, name: str, default) -> None:
        self._name = name
        self._default = default

    def _current(self):
        return getattr(_local, self._name, None) or self._default

    def write(self, s: str) -> int:
        return self._current().write(s)

    def flush(self) -> None:
        self._current().flush()

    def __getattr__(self, name: str):
        return getattr(self._current(), name)


_local = threading.local()


def _stream(fd: int, desc: str, *, stderr: bool):
    """A text stream on the caller's ``fd`` made as CPython makes its stdio: buffered
    unless the caller's is write-through (then a raw file), block size from the file,
    the caller's encoding, errors and line buffering."""
    encoding, errors, line_buffering, write_through = desc.rsplit(":", 3)
    unbuffered = write_through == "1"
    buf = open(fd, "wb", buffering=0 if unbuffered else -1, closefd=True)  # noqa: SIM115 - closed by _close
    return io.TextIOWrapper(buf, encoding=encoding, errors=errors, newline="\n", line_buffering=line_buffering == "1", write_through=unbuffered)


def _close(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError):
        pass
    try:
        stream.close()
    except (OSError, ValueError):
        pass


class _Call:
    """One request: its connection, the caller's descriptors and what it sent."""

    def __init__(self, conn: socket.socket, fields: list[str], fds: list[int]) -> None:
        self.conn = conn
        self.fds = fds
        self.digest, self.cwd, self.session, columns, self.out, self.err = fields[1:7]
        self.columns = int(columns) if columns.isdigit() else None
        self.argv = fields[7:]
        self.token = threading.Event()  # set when the caller goes away

    def reply(self, line: str) -> None:
        try:
            self.conn.sendall(line.encode() + b"\n")
        except OSError:
            pass

    def close(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        try:
            self.conn.close()
        except OSError:
            pass


class _Caller(cli.Caller):
    """The CLI's view of the caller during one call."""

    def __init__(self, server: Server, call: _Call) -> None:
        self.server = server
        self.call = call
        self.columns = call.columns

    def workspace(self, root: str | None, record: bool):
        from .repo import find_root

        real = find_root(root)  # from the caller's working directory and this (same) environment
        if str(real) != self.server.root:
            raise cli.Elsewhere(str(real))
        return self.server.workspace(self.call.session, record)


class Server:
    """The server of ``root``: ``run()`` serves until idle or stopped."""

    def __init__(self, root: str, *, idle: float | None = None) -> None:
        self.root = root
        self.idle = idle if idle and idle > 0 else _idle_default()
        self.fingerprint = endpoint.fingerprint(os.environ, endpoint.PACKAGE, __version__)
        self.digest = endpoint.digest(self.fingerprint)
        self.folder = endpoint.run_dir(os.environ)
        self.path = endpoint.socket_name(self.folder, root, self.fingerprint) if self.folder else None
        self.started = time.time()
        self.calls = 0
        self.refused = 0
        self._sessions: OrderedDict[str, object] = OrderedDict()
        self._source = _source_signature()
        self._busy = threading.Lock()  # held while a call runs
        self._queue: list[_Call] = []
        self._cv = threading.Condition()
        self._stop = threading.Event()
        self._last = time.monotonic()
        self._inflight: dict[socket.socket, _Call] = {}
        self._socket_ino = 0
        self.live: LiveListing | None = None  # the listing kept in memory, once serving
        self._counts: ContentCounts | None = None  # one count cache for every call (its store opened once)

    # -- the call's collaborators -------------------------------------------------

    def workspace(self, session: str, record: bool):
        """A fresh Workspace per call (``record`` as the CLI asks), or the session's own,
        kept across its calls (it records: its ledger is the session)."""
        from .repo import Repo
        from .workspace import Workspace

        repo = Repo(Path(self.root), live=self.live)
        if self._counts is None:
            from .tokens import DEFAULT_ENCODING, ContentCounts, get_tokenizer

            self._counts = ContentCounts(DEFAULT_ENCODING, lambda: get_tokenizer(DEFAULT_ENCODING), root=self.root)
        if not session:
            return Workspace(repo=repo, record=record, content_counts=self._counts)
        ws = self._sessions.get(session)
        if ws is None:
            ws = Workspace(repo=repo, record=True, content_counts=self._counts)
            self._sessions[session] = ws
            while len(self._sessions) > MAX_SESSIONS:
                _, old = self._sessions.popitem(last=False)
                old.close()  # type: ignore[attr-defined]
        else:
            self._sessions.move_to_end(session)
            ws.use_repo(repo)  # type: ignore[attr-defined]
        return ws

    # -- life ---------------------------------------------------------------------

    def run(self, *, spawned: str | None = None) -> int:
        """Serve until idle for ``idle`` seconds or stopped. ``spawned``: started by a
        client expecting this fingerprint digest (quiet; exits if it differs or another
        server holds the lock)."""
        if self.path is None:
            return _say(spawned, "no usable private folder for the socket (see jitctx serve --help)", 2)
        if spawned is not None and spawned != self.digest:
            return 2  # this interpreter imports another jitctx than the client's
        import fcntl

        lock_path = self.path[: -len(".sock")] + ".lock"
        lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + (0.5 if spawned is not None else 0.0)  # a replaced server may still be leaving
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= deadline:
                    os.close(lock)
                    return _say(spawned, f"a server already runs for {self.root}", 1)
                time.sleep(0.05)  # a replaced server is on its way out
        if spawned is not None:
            import signal

            signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal of the call that started it may go
        os.ftruncate(lock, 0)
        os.write(lock, f"{os.getpid()}\n{self.root}\n{__version__}\n".encode())
        self._log_to(self.path[: -len(".sock")] + ".log", foreground=spawned is None)
        listener = self._listen()
        worker = threading.Thread(target=self._work, name="jitctx-serve", daemon=True)
        try:
            os.chdir("/")  # hold no working directory (the caller's comes with each call)
            self._install_streams(spawned is not None)
            worker.start()
            if spawned is None:
                sys.__stderr__.write(f"jitctx: serving {self.root} on {self.path} (idle exit after {self.idle:g} s)\n")  # type: ignore[union-attr]
            self._accept(listener)
        finally:
            self._stop.set()
            with self._cv:
                self._cv.notify_all()
            if worker.is_alive():
                worker.join(60.0)  # the call under way (and those of sessions queued) end first
            try:
                if os.stat(self.path).st_ino == self._socket_ino:  # still ours, not a successor's
                    os.unlink(self.path)
            except OSError:
                pass
            listener.close()
            if self.live is not None:
                self.live.close()
            for ws in self._sessions.values():
                ws.close()  # type: ignore[attr-defined]
            os.close(lock)  # the lock goes last: a new server may start now
        return 0

    def _log_to(self, path: str, *, foreground: bool) -> None:
        """The server's log: ``<socket>.log`` beside its socket (a started server has no
        terminal), and stderr too in the foreground. Level from ``JITCTX_LOG`` (warning)."""
        import logging

        level = getattr(logging, os.environ.get("JITCTX_LOG", "WARNING").upper(), logging.WARNING)
        root = logging.getLogger("jitctx")
        root.setLevel(level)
        fmt = logging.Formatter("%(asctime)s jitctx server %(process)d: %(levelname)s: %(message)s")
        try:
            if os.path.exists(path) and os.path.getsize(path) > 1 << 20:
                os.unlink(path)  # bounded: a new server starts a new log past 1 MiB
            handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
            os.chmod(path, 0o600)
        except OSError:
            handler = logging.NullHandler()
        handler.setFormatter(fmt)
        root.addHandler(handler)
        if foreground and sys.__stderr__ is not None:
            tty = logging.StreamHandler(sys.__stderr__)
            tty.setFormatter(fmt)
            root.addHandler(tty)
        log.info("serving %s on %s", self.root, self.path)

    def _keep_listing(self) -> None:
        """Start the listing kept in memory (a git work tree on Linux; else calls list afresh)."""
        from .livelist import LiveListing
        from .repo import Repo

        repo = Repo(Path(self.root))
        if repo.git is None or not sys.platform.startswith("linux") or os.environ.get("JITCTX_SERVER_LISTING") == "0":
            return
        assert self.folder is not None
        self.live = LiveListing(repo.root, repo.git.git_dir, repo.git.common_dir, self.folder, repo.configured_excludes())
        self.live.start()

    def _listen(self) -> socket.socket:
        """Bind under a temporary name, then rename over the socket's: a client never
        meets a socket that is not yet listening, and a stale one (a killed server's) is
        replaced, never in the way."""
        assert self.path is not None
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(tmp)
        finally:
            os.umask(old)
        listener.listen(64)
        os.rename(tmp, self.path)
        self._socket_ino = os.stat(self.path).st_ino
        return listener

    def _install_streams(self, quiet: bool) -> None:
        sys.stdout = _Switch("out", sys.stdout)
        sys.stderr = _Switch("err", sys.stderr)

    def _accept(self, listener: socket.socket) -> None:
        while not self._stop.is_set():
            with self._cv:  # the worker drops the calls it ended
                watched = [listener, *self._inflight]
            try:
                readable, _, _ = select.select(watched, [], [], 1.0)
            except (OSError, ValueError):  # a call's socket closed meanwhile
                readable = []
            for r in readable:
                if r is listener:
                    try:
                        conn, _ = listener.accept()
                    except OSError:
                        continue
                    self._take(conn)
                else:
                    with self._cv:
                        call = self._inflight.get(r)
                    if call is None:
                        continue
                    try:
                        gone = not r.recv(1, socket.MSG_DONTWAIT)
                    except BlockingIOError:
                        gone = False
                    except OSError:
                        gone = True
                    if gone:
                        call.token.set()  # the caller went away (Ctrl-C): stop its work
                        with self._cv:
                            self._inflight.pop(r, None)
            if not self._busy.locked() and not self._queue and time.monotonic() - self._last > self.idle:
                return

    def _take(self, conn: socket.socket) -> None:
        """Read and check one request; run it, queue it, or send it back."""
        try:
            cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            if int.from_bytes(cred[4:8], sys.byteorder) != os.getuid():
                conn.close()  # another user: nothing is said
                return
            conn.settimeout(2.0)
            fields, fds = _receive(conn)
            conn.settimeout(None)
        except (OSError, ValueError) as exc:
            log.info("a request could not be read: %s", exc)
            conn.close()
            return
        self._last = time.monotonic()
        if fields and fields[0] == endpoint.CONTROL:
            self._control(conn, fields, fds)
            return
        if len(fields) < 8 or fields[0] != endpoint.PROTOCOL or len(fds) != 2:
            _refuse(conn, fds, "protocol")
            return
        call = _Call(conn, fields, fds)
        if call.digest != self.digest:
            log.info("refused a call: another fingerprint")
            self.refused += 1
            call.reply("fingerprint")
            call.close()
            return
        if _source_signature() != self._source:
            log.info("jitctx's source changed since this server started: stepping aside")
            call.reply("replaced")  # this server's code is not the caller's any more
            call.close()
            self._stop.set()
            return
        with self._cv:
            if not call.session and (self._busy.locked() or self._queue):
                self.refused += 1
                call.reply("busy")  # its client answers it itself: the same answer, not slower than without us
                call.close()
                return
            self._queue.append(call)
            self._inflight[conn] = call
            self._cv.notify()

    def _control(self, conn: socket.socket, fields: list[str], fds: list[int]) -> None:
        for fd in fds:
            os.close(fd)
        what = fields[1] if len(fields) > 1 else ""
        try:
            if what == "stop":
                conn.sendall(b"stopping\n")
                self._stop.set()
            elif what == "status":
                conn.sendall(self.status().encode("utf-8", "replace") + b"\n")
        except OSError:
            pass
        conn.close()

    def status(self) -> str:
        up = time.time() - self.started
        rss = _rss_mib()
        lines = [
            f"pid {os.getpid()}, serving {self.root}",
            f"socket {self.path}",
            f"up {up:,.0f} s, {self.calls:,} calls answered, {self.refused:,} sent back, {len(self._sessions)} session(s), idle exit after {self.idle:g} s",
            f"memory {rss:,.1f} MiB resident" if rss is not None else "memory unknown",
            f"listing: {self.live.state}" if self.live is not None else "listing: not kept (not a git work tree, or not Linux)",
        ]
        return "\n".join(lines)

    def _warm(self) -> None:
        """Before the first call, on the worker thread: what calls import and load, then the
        listing. One thread imports at a time (imports racing on two threads can meet a
        module half made), and no call waits for the tokenizer (~150 ms) or tree-sitter."""
        from . import find, peek, preload, render, search, structure, workspace  # noqa: F401
        from .adapters import cliview  # noqa: F401
        from .code import outline, parse  # noqa: F401
        from .tokens import get_tokenizer

        parse.warm()
        get_tokenizer().count("warm")
        if sys.platform.startswith("linux"):
            from . import livelist, watcher  # noqa: F401

            watcher.warm()
        self._keep_listing()

    def _warm_quietly(self) -> None:
        """``_warm`` at the lowest priority (this thread, its listing thread and their git
        processes): the call that started the server is being answered in its own process
        meanwhile, and must not wait for the CPU this takes (~2 s on a 100k-file tree)."""
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass
        try:
            self._warm()
        except Exception as exc:  # noqa: BLE001 - calls load what they need themselves
            log.warning("warming up failed: %s: %s", type(exc).__name__, exc)

    def _work(self) -> None:
        warm = threading.Thread(target=self._warm_quietly, name="jitctx-warm", daemon=True)
        warm.start()
        warm.join()  # one thread imports at a time: calls wait for it
        while True:
            with self._cv:
                while not self._queue and not self._stop.is_set():
                    self._cv.wait(1.0)
                if self._stop.is_set() and not self._queue:
                    return
                call = self._queue.pop(0)
                self._busy.acquire()
            try:
                self._answer(call)
            finally:
                with self._cv:
                    self._inflight.pop(call.conn, None)
                    call.close()
                self._busy.release()
                self._last = time.monotonic()

    def _answer(self, call: _Call) -> None:
        from . import cancel
        from .repo import CALLER_CWD

        if call.token.is_set():
            return
        out = _stream(call.fds[0], call.out, stderr=False)
        err = _stream(call.fds[1], call.err, stderr=True)
        call.fds = []  # the streams own them now
        reset = CALLER_CWD.set(call.cwd)
        _local.out, _local.err = out, err
        code: int | str
        try:
            call.reply("go")
            with cancel.running(call.token):
                code = cli.call(call.argv, _Caller(self, call))
        except cli.Elsewhere as exc:  # nothing was written: the caller asks that root's server
            code = f"elsewhere {exc.root}"
        except BaseException as exc:  # noqa: BLE001 - the server outlives any one call
            log.exception("call %s failed", call.argv[:1])
            code = 2
            try:
                err.write(f"jitctx: error: internal error: {type(exc).__name__}: {exc}\n  hint: set JITCTX_DEBUG=1 for a traceback and report it\n")
            except (OSError, ValueError):
                pass
        finally:
            _local.out = _local.err = None
            CALLER_CWD.reset(reset)
            _close(out)
            _close(err)
        self.calls += 1
        call.reply(f"ok {code}" if isinstance(code, int) else code)


def running(folder: str) -> list[int]:
    """The pids of the servers whose sockets are in ``folder`` (a run folder's ``jitctx/``)
    and that run now: each holds its lock file's lock, which a new attempt cannot take."""
    import fcntl

    pids = []
    for lock in sorted(Path(folder).glob("*.lock")) if os.path.isdir(folder) else []:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            continue  # not held: that server has ended
        except OSError:
            pass
        finally:
            os.close(fd)
        try:
            pids.append(int(lock.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return pids


def _refuse(conn: socket.socket, fds: list[int], why: str) -> None:
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(why.encode() + b"\n")
    except OSError:
        pass
    conn.close()


def _receive(conn: socket.socket) -> tuple[list[str], list[int]]:
    """The request's fields and the descriptors that came with it."""
    data, ancdata, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(8 * 4))
    fds: list[int] = []
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i : i + 4], sys.byteorder, signed=True) for i in range(0, usable, 4)]
    try:
        if len(data) < 4:
            raise ValueError("short request")
        size = int.from_bytes(data[:4], "big")
        if size > 16 << 20:
            raise ValueError("request too large")
        body = data[4:]
        while len(body) < size:
            chunk = conn.recv(min(1 << 20, size - len(body)))
            if not chunk:
                raise ValueError("truncated request")
            body += chunk
    except (OSError, ValueError):
        for fd in fds:
            os.close(fd)
        raise
    return endpoint.decode_request(body[:size]), fds


def _source_signature() -> tuple:
    """Size and mtime of every module of the jitctx package: an edit or an upgrade
    makes a running server step aside, so an old server never answers for new code."""
    sig = []
    for folder, _, names in os.walk(endpoint.PACKAGE):
        for name in names:
            if name.endswith(".py"):
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                sig.append((folder, name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(sig))


def _rss_mib() -> float | None:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _say(quiet: object, message: str, code: int) -> int:
    if quiet is None:
        sys.stderr.write(f"jitctx: {message}\n")
    return code


def main(argv: list[str]) -> int:
    """``jitctx serve [--status | --stop] [--idle S] [--root DIR]``: the exit code."""
    from .errors import JitctxError

    parser = cli.build_parser("serve")
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # refused with serve's own usage, as every subcommand's
            cli.subparser(parser, "serve").error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    try:
        if args.status or args.stop:
            return control(args.root, "stop" if args.stop else "status")
        return serve(args.root, idle=args.idle, spawned=args.spawned)
    except JitctxError as exc:
        if args.spawned is None:
            sys.stderr.write(f"jitctx: error: {exc.message}\n" + (f"  hint: {exc.hint}\n" if exc.hint else ""))
        return 2
    except KeyboardInterrupt:
        return 130


def serve(root: str | None, *, idle: float | None = None, spawned: str | None = None) -> int:
    """``jitctx serve``: serve ``root`` (resolved as every subcommand resolves it)."""
    from .repo import find_root

    return Server(str(find_root(root)), idle=idle).run(spawned=spawned)


def control(root: str | None, what: str) -> int:
    """``jitctx serve --status`` / ``--stop``: ask the root's server; 1 when none runs."""
    from .repo import find_root

    real = str(find_root(root))
    folder = endpoint.run_dir(os.environ)
    fp = endpoint.fingerprint(os.environ, endpoint.PACKAGE, __version__)
    path = endpoint.socket_name(folder, real, fp) if folder else None
    answer = None
    if path is not None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(5.0)
                s.connect(path)
                s.sendall(endpoint.encode_request([endpoint.CONTROL, what]))
                chunks = []
                while chunk := s.recv(65536):
                    chunks.append(chunk)
                answer = b"".join(chunks).decode("utf-8", "replace").rstrip("\n")
        except OSError:
            answer = None
    if not answer:
        sys.stdout.write(f"no server runs for {real}\n")
        return 1
    if what == "stop":
        sys.stdout.write(f"stopped the server for {real}\n")
    else:
        sys.stdout.write(answer + "\n")
    return 0
