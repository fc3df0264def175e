"""The warm server: one process per user, root and environment behind the thin client.

Owns the server's life (a lock that makes it the only one, its Unix socket
in the private run folder, idle exit, leaving when its socket or lock is no
longer its own or when it is the least recently used of too many, answering
``--status`` and ``--stop``, which stops its index builder too), taking a
call (the peer must be this user: ``SO_PEERCRED``; a whole, well-formed
request within a deadline, read on a thread of its own so that a slow or
broken client costs only its own call; same protocol and fingerprint; its
own source unchanged since it started, else it is replaced), and the queue:
one call runs at a time, on the worker thread; a call without a session that
arrives meanwhile is sent back ("busy") and its client runs it itself, one
of a session waits its turn. ``main`` is ``jitctx serve``. Does not own
answering a call (``answer``: the CLI on the caller's streams), its
socket file and room in the run folder (``place``), the Workspaces (``sessions``), warming up (``warm``), the log (``logfile``), the
wire (``request``, ``protocol``), what an answer is (the CLI and the
library), the client's choices (``client``) or asking servers from outside
(``registry``: ``--status``, ``--stop``, ``--all``).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import select
import socket
import sys
import threading
import time

from .. import __version__, procs
from ..adapters.cli.parser import build_parser, subparser
from . import place, protocol, registry, request, warm
from .answer import answer
from .logfile import log_to
from .request import Call
from .sessions import Sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .kept_listing import LiveListing

__all__ = ["IDLE", "IDLE_FIRST", "Server", "main", "serve"]

log = logging.getLogger("jitctx.server.serve")

IDLE = 600.0  # seconds without a call before the server exits
IDLE_FIRST = 60.0  # ... while it has answered fewer than 2 calls (a root used once leaves early)
HEARTBEAT = 0.5  # seconds between the lines that tell a waiting client this server is alive
READERS = 32  # requests read at once; more are closed unread (their clients answer themselves)


def _idle_default() -> float | None:
    try:
        value = float(os.environ.get("JITCTX_SERVER_IDLE", ""))
    except ValueError:
        return None
    return value if value > 0 else None


class Server:
    """The server of ``root``: ``run()`` serves until idle or stopped."""

    def __init__(self, root: str, *, idle: float | None = None) -> None:
        self.root = root
        given = idle if idle and idle > 0 else _idle_default()
        self.idle = given or IDLE
        self._idle_given = given is not None  # an explicit idle time holds from the first call
        self.fingerprint = protocol.fingerprint(os.environ, protocol.PACKAGE, __version__)
        self.digest = protocol.digest(self.fingerprint)
        self.folder = protocol.run_dir(os.environ)
        self.path = protocol.socket_name(self.folder, root, self.fingerprint) if self.folder else None
        self.lock_path = self.path[: -len(".sock")] + ".lock" if self.path else None
        self.started = time.time()
        self.calls = 0
        self.refused = 0
        self.why_stopped = ""
        self.sessions = Sessions(root)
        self._source = _source_signature()
        self._busy = threading.Lock()  # held while a call runs
        self._queue: list[Call] = []
        self._cv = threading.Condition()
        self._stop = threading.Event()
        self._stop_builder = False
        self._last = time.monotonic()
        self._inflight: dict[socket.socket, Call] = {}
        self._readers = threading.BoundedSemaphore(READERS)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._socket_ino = 0
        self._lock_fd = -1
        self.slot: int | None = None  # a start slot (client._BOOT) held until warm
        self.live: LiveListing | None = None  # the listing kept in memory, once serving

    # -- life ---------------------------------------------------------------------

    def run(self, *, spawned: str | None = None) -> int:
        """Serve until idle for ``idle`` seconds or stopped. ``spawned``: started by a
        client expecting this fingerprint digest (quiet; exits if it differs or another
        server holds the lock)."""
        if self.path is None or self.folder is None or self.lock_path is None:
            return _say(spawned, "no usable private folder for the socket (see jitctx serve --help)", 2)
        if spawned is not None and spawned != self.digest:
            return 2  # this interpreter imports another jitctx than the client's
        if protocol.inside(os.path.realpath(self.folder), self.root):
            return _say(
                spawned,
                f"the run folder {self.folder} is inside {self.root}: jitctx writes nothing in a repository it serves; set XDG_RUNTIME_DIR or JITCTX_CACHE_DIR elsewhere",
                2,
            )
        import fcntl

        try:
            place.check_socket_path(self.path)
            lock = registry.private_file(self.lock_path, create=True)
        except registry.Unusable as exc:
            return _say(spawned, str(exc), 2)
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
        self._lock_fd = lock
        import signal

        if spawned is not None:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal of the call that started it may go
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda *_: self.stop(builder=True, why="SIGTERM"))
        os.ftruncate(lock, 0)
        os.write(lock, f"{os.getpid()}\n{self.root}\n{__version__}\n".encode())
        log_to(self.path[: -len(".sock")] + ".log", foreground=spawned is None)
        log.info("serving %s on %s", self.root, self.path)
        try:
            listener, self._socket_ino = place.listen(self.path)
        except (OSError, registry.Unusable) as exc:
            os.close(lock)
            return _say(spawned, str(exc), 2)
        place.make_room(self.folder)
        worker = threading.Thread(target=self._work, name="jitctx-serve", daemon=True)
        try:
            os.chdir("/")  # hold no working directory (the caller's comes with each call)
            worker.start()
            if spawned is None:
                sys.__stderr__.write(f"jitctx: serving {self.root} on {self.path} (idle exit after {self.idle:g} s)\n")  # type: ignore[union-attr]
            self._accept(listener)
        finally:
            self._stop.set()
            with self._cv:
                self._cv.notify_all()
                for call in self._queue:
                    call.gone()
            if worker.is_alive():
                worker.join(60.0)  # the call under way ends first
            try:
                if os.stat(self.path).st_ino == self._socket_ino:  # still ours, not a successor's
                    os.unlink(self.path)
            except OSError:
                pass
            listener.close()
            if self.live is not None:
                self.live.close()
            self.sessions.close()
            if self._stop_builder:
                self._stop_build()
            log.info("server of %s ends: %s", self.root, self.why_stopped or "stopped")
            for fd in (self._wake_r, self._wake_w):
                os.close(fd)
            os.close(lock)  # the lock goes last: a new server may start now
        return 0

    def stop(self, *, builder: bool, why: str) -> None:
        """End after the call under way; ``builder``: stop this root's index builder too."""
        self._stop_builder = self._stop_builder or builder
        self.why_stopped = self.why_stopped or why
        self._stop.set()
        self._wake()

    def _wake(self) -> None:
        """Wake the accept loop out of its wait (a new call to watch, or the end)."""
        try:
            os.write(self._wake_w, b"x")
        except OSError:  # full (it is awake already) or closed (it has ended)
            pass

    def _stop_build(self) -> None:
        from ..cache.folders import index_file
        from ..code.build import stop

        try:
            pid = stop(index_file(self.root))
        except OSError:
            pid = None
        if pid is not None:
            log.info("stopped the index builder %d of %s", pid, self.root)

    def _still_ours(self) -> bool:
        assert self.path is not None and self.lock_path is not None
        return place.still_ours(self.path, self.lock_path, self._socket_ino, self._lock_fd)

    def _idle_limit(self) -> float:
        return self.idle if self._idle_given or self.calls >= 2 else min(self.idle, IDLE_FIRST)

    def _accept(self, listener: socket.socket) -> None:
        beat = time.monotonic()
        while not self._stop.is_set():
            with self._cv:  # the worker drops the calls it ended
                calls = list(self._inflight.values())
            watched: list = [listener, self._wake_r, *(c.conn for c in calls)]
            try:
                readable, _, _ = select.select(watched, [], [], HEARTBEAT)
            except (OSError, ValueError):  # a call's socket closed meanwhile
                readable = []
            for r in readable:
                if r is self._wake_r:
                    try:
                        os.read(self._wake_r, 512)
                    except OSError:
                        pass
                    continue
                if r is listener:
                    try:
                        conn, _ = listener.accept()
                    except OSError:
                        continue
                    self._read_later(conn)
                    continue
                with self._cv:
                    call = self._inflight.get(r)
                if call is not None and not call.take():
                    with self._cv:
                        self._inflight.pop(call.conn, None)
            now = time.monotonic()
            if now - beat >= HEARTBEAT:
                beat = now
                for call in calls:
                    call.beat()
                procs.reap()
                if not self._still_ours():
                    self.stop(builder=False, why="its socket or lock file is no longer its own")
                    return
            if not self._busy.locked() and not self._queue and now - self._last > self._idle_limit():
                self.why_stopped = f"idle for {self._idle_limit():g} s"
                return

    def _read_later(self, conn: socket.socket) -> None:
        """Read the request on a thread of its own (a client that sends half of it and waits
        costs only itself); past ``READERS`` at once, close it: its client answers."""
        if not self._readers.acquire(blocking=False):
            conn.close()
            return

        def read() -> None:
            try:
                self._take(conn)
            except Exception as exc:  # noqa: BLE001 - one bad request never ends the server
                log.warning("a request failed: %s: %s", type(exc).__name__, exc)
                conn.close()
            finally:
                self._readers.release()

        threading.Thread(target=read, name="jitctx-request", daemon=True).start()

    def _take(self, conn: socket.socket) -> None:
        """Read and check one request; queue it, answer a control request, or send it back."""
        try:
            cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            if int.from_bytes(cred[4:8], sys.byteorder) != os.getuid():
                conn.close()  # another user: nothing is said
                return
            conn.setblocking(False)
            fields = request.receive(conn, time.monotonic() + request.FRAME_SECONDS)
        except (OSError, ValueError, UnicodeError) as exc:
            log.info("a request could not be read: %s", exc)
            conn.close()
            return
        if fields and fields[0] == protocol.CONTROL:
            self._control(conn, fields)
            return
        call = request.check(conn, fields)
        if call is None:
            log.info("refused a malformed request")
            request.refuse(conn, "protocol")
            return
        if call.digest != self.digest:
            log.info("refused a call: another fingerprint")
            self.refused += 1
            request.refuse(conn, "fingerprint")
            return
        if _source_signature() != self._source:
            log.info("jitctx's source changed since this server started: stepping aside")
            request.refuse(conn, "replaced")  # this server's code is not the caller's any more
            self.stop(builder=False, why="its source changed")
            return
        with self._cv:
            if self._stop.is_set() or (not call.session and (self._busy.locked() or self._queue)):
                self.refused += 1
                request.refuse(conn, "busy" if not self._stop.is_set() else "gone")  # its client answers it itself
                return
            self._last = time.monotonic()
            self._queue.append(call)
            self._inflight[conn] = call
            self._cv.notify()
        self._wake()  # the accept loop watches this call's socket from now on (its descriptors come there)
        try:
            os.utime(self._lock_fd)  # the last use, for the least-recently-used rule (place.make_room)
        except OSError:
            pass

    def _control(self, conn: socket.socket, fields: list[str]) -> None:
        what = fields[1] if len(fields) > 1 else ""
        if what == "stop":
            request.send(conn, b"stopping\n", 1.0)
            self.stop(builder=True, why="asked to stop")
        elif what == "leave":
            request.send(conn, b"leaving\n", 1.0)
            self.stop(builder=False, why=f"the least recently used of more than {place.max_servers()} servers")
        elif what == "status":
            request.send(conn, json.dumps(self.status()).encode() + b"\n", 1.0)
        conn.close()

    def status(self) -> dict:
        """What ``serve --status`` shows, as JSON."""
        return {
            "pid": os.getpid(),
            "root": self.root,
            "socket": self.path,
            "package": protocol.PACKAGE,
            "version": __version__,
            "interpreter": sys.executable,
            "up": round(time.time() - self.started, 1),
            "idle": round(time.monotonic() - self._last, 1),
            "idle_exit": self._idle_limit(),
            "calls": self.calls,
            "refused": self.refused,
            "sessions": len(self.sessions),
            "rss_mib": _rss_mib(),
            "listing": self.live.state if self.live is not None else "not kept (not a git work tree, or not Linux)",
            "environment": [f"{k}={os.environ[k]}" for k in protocol.answer_keys(os.environ)],
        }

    def _warm(self) -> None:
        assert self.folder is not None
        self.live = warm.quietly(self.root, self.folder)

    def _work(self) -> None:
        warm = threading.Thread(target=self._warm, name="jitctx-warm", daemon=True)
        warm.start()
        warm.join()  # one thread imports at a time: calls wait for it
        if self.slot is not None:
            try:
                os.close(self.slot)  # warm: another server of the folder may start now
            except OSError:
                pass
            self.slot = None
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
            except BaseException:  # noqa: BLE001 - the server outlives any one call
                log.exception("call %s failed", call.argv[:1])
            finally:
                with self._cv:
                    self._inflight.pop(call.conn, None)
                    call.close()
                self._busy.release()
                self._last = time.monotonic()

    def _answer(self, call: Call) -> None:
        session = call.session
        reply = answer(call, self.root, lambda record: self.sessions.workspace(session, record, self.live))
        if reply is not None:
            self.calls += 1
            call.send(reply)


def _source_signature() -> tuple:
    """Size and mtime of every module of the jitctx package: an edit or an upgrade
    makes a running server step aside, so an old server never answers for new code."""
    sig = []
    for folder, _, names in os.walk(protocol.PACKAGE):
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
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _say(quiet: object, message: str, code: int) -> int:
    if quiet is None:
        sys.stderr.write(f"jitctx: {message}\n")
    else:
        log.warning("%s", message)
    return code


def main(argv: list[str]) -> int:
    """``jitctx serve [--status | --stop] [--all] [--json] [--idle S] [--root DIR]``: the exit code."""
    from ..errors import JitctxError

    parser = build_parser("serve")
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # refused with serve's own usage, as every subcommand's
            subparser(parser, "serve").error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    if args.all and not (args.status or args.stop):
        parser.print_usage(sys.stderr)
        sys.stderr.write("jitctx serve: error: --all goes with --status or --stop\n")
        return 2
    try:
        if args.all:
            return registry.stop_all(args.root, as_json=args.json) if args.stop else registry.status_all(args.root, as_json=args.json)
        if args.status or args.stop:
            return registry.control(args.root, "stop" if args.stop else "status", as_json=args.json)
        return serve(args.root, idle=args.idle, spawned=args.spawned, slot=args.slot)
    except JitctxError as exc:
        if args.spawned is None:
            sys.stderr.write(f"jitctx: error: {exc.message}\n" + (f"  hint: {exc.hint}\n" if exc.hint else ""))
        return 2
    except KeyboardInterrupt:
        return 130


def serve(root: str | None, *, idle: float | None = None, spawned: str | None = None, slot: int | None = None) -> int:
    """``jitctx serve``: serve ``root`` (resolved as every subcommand resolves it).
    ``slot``: a start slot's locked descriptor (``client._BOOT``), closed once warm."""
    from ..repo.universe import find_root

    server = Server(str(find_root(root)), idle=idle)
    server.slot = slot
    return server.run(spawned=spawned)
