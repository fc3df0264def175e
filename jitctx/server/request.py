"""One call on the warm server's socket: the request, the caller's descriptors, the lines.

Owns what passes between the thin client and the server for one call: the
request read whole within a deadline and a size (``receive``), every field
checked (``check``: a malformed one is refused, never a crash), the
caller's stdout and stderr that arrive only when the call starts (close-on-exec,
a folder refused), the text streams made on them as CPython makes its stdio
(``stream``), whose first write asks the client whether it still waits
(``Call.confirm``), and the reply lines (``go``, ``w``, ``ok CODE``, a refusal,
and the heartbeat ``.``). Does not own running the call or the server's life
(``server``) or the client's side (``client``).
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import select
import socket
import stat
import sys
import threading
import time

from . import protocol

__all__ = ["CONFIRM_SECONDS", "FRAME_MAX", "FRAME_SECONDS", "Call", "check", "close_fds", "close_stream", "receive", "refuse", "send", "stream", "unusable_fd"]

FRAME_SECONDS = 2.0  # a request (and the caller's descriptors) must arrive whole within this
FRAME_MAX = 4 << 20  # bytes of a request (argv is at most ~2 MiB on Linux)
CONFIRM_SECONDS = 5.0  # the client's "still waiting" before anything is written for it
_ERRORS = frozenset({"strict", "ignore", "replace", "backslashreplace", "surrogateescape", "xmlcharrefreplace", "namereplace", "surrogatepass"})


class CallerFile(io.FileIO):
    """The caller's descriptor: its first write waits until the client says it still
    waits for this server's answer (else nothing is written, and the client answers)."""

    def __init__(self, fd: int, call: Call) -> None:
        super().__init__(fd, "wb", closefd=True)
        self._call = call

    def write(self, b) -> int:
        if not self._call.confirm():
            raise BrokenPipeError(errno.EPIPE, "the caller no longer waits for this answer")
        return super().write(b)


def stream(fd: int, desc: tuple[str, str, bool, bool], call: Call):
    """A text stream on the caller's ``fd`` made as CPython makes its stdio: buffered
    unless the caller's is write-through (then a raw file), block size from the file,
    the caller's encoding, errors and line buffering."""
    encoding, errors, line_buffering, write_through = desc
    raw = CallerFile(fd, call)
    buf: io.RawIOBase | io.BufferedWriter = raw if write_through else io.BufferedWriter(raw, _block_size(fd))
    return io.TextIOWrapper(buf, encoding=encoding, errors=errors, newline="\n", line_buffering=line_buffering, write_through=write_through)


def _block_size(fd: int) -> int:
    try:
        size = os.fstat(fd).st_blksize
    except OSError:
        size = 0
    return size if size > 1 else io.DEFAULT_BUFFER_SIZE


def close_stream(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError):
        pass
    try:
        stream.close()
    except (OSError, ValueError):
        pass


def desc_of(text: str) -> tuple[str, str, bool, bool] | None:
    """A stream description ``ENCODING:ERRORS:LINE:THROUGH`` checked, or ``None``."""
    parts = text.rsplit(":", 3)
    if len(parts) != 4 or parts[2] not in ("0", "1") or parts[3] not in ("0", "1") or parts[1] not in _ERRORS:
        return None
    try:
        if not codecs.lookup(parts[0])._is_text_encoding:
            return None
    except (LookupError, ValueError, TypeError):
        return None
    return parts[0], parts[1], parts[2] == "1", parts[3] == "1"


class Call:
    """One request: its connection, what it sent, and (once it starts) the caller's
    descriptors. The accept loop reads everything the client sends after the request
    (the descriptors, its "still waiting", its going away) and sends the heartbeats."""

    def __init__(self, conn: socket.socket, digest: str, cwd: str, session: str, columns: int, out, err, argv: list[str]) -> None:
        self.conn = conn
        self.digest, self.cwd, self.session, self.columns, self.out, self.err, self.argv = digest, cwd, session, columns, out, err, argv
        self.fds: list[int] = []
        self.token = threading.Event()  # set when the caller goes away
        self.got_fds = threading.Event()  # the descriptors came (or the caller went away)
        self.confirmed = threading.Event()  # the client still waits for this answer (or went away)
        self._said = False
        self._send_lock = threading.Lock()

    def send(self, line: str, *, wait: float = 2.0) -> bool:
        with self._send_lock:
            return send(self.conn, line.encode() + b"\n", wait)

    def beat(self) -> None:
        if self._send_lock.acquire(blocking=False):
            try:
                send(self.conn, b".\n", 0.0)
            finally:
                self._send_lock.release()

    def take(self) -> bool:
        """Read what the client sent (its socket is readable); False when it went away."""
        try:
            data, anc, _, _ = self.conn.recvmsg(16, socket.CMSG_SPACE(2 * 4), socket.MSG_CMSG_CLOEXEC)
        except BlockingIOError:
            return True
        except OSError:
            data, anc = b"", []
        fds = fds_of(anc)
        if data == b"f" and len(fds) == 2 and not self.fds and not self.got_fds.is_set():
            self.fds = fds
            self.got_fds.set()
            return True
        close_fds(fds)
        if data == b"y" and not self.confirmed.is_set():
            self.confirmed.set()
            return True
        self.gone()  # end of file, or something a client does not send
        return False

    def gone(self) -> None:
        self.token.set()
        self.got_fds.set()
        self.confirmed.set()

    def confirm(self) -> bool:
        """Before the first byte written for the caller: ask the client whether it still
        waits ("w"; it answers "y", or has gone and answers in process)."""
        if not self._said:
            self._said = True
            if not self.send("w"):
                self.gone()
            self.confirmed.wait(CONFIRM_SECONDS)
        return self.confirmed.is_set() and not self.token.is_set()

    def close(self) -> None:
        close_fds(self.fds)
        self.fds = []
        try:
            self.conn.close()
        except OSError:
            pass


def send(conn: socket.socket, data: bytes, wait: float) -> bool:
    """Send ``data`` on a non-blocking socket, waiting at most ``wait`` seconds for room."""
    view = memoryview(data)
    deadline = time.monotonic() + wait
    while view:
        try:
            view = view[conn.send(view) :]
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not _ready(conn, select.POLLOUT, left):
                return False
        except OSError:
            return False
    return True


def _ready(conn: socket.socket, event: int, timeout: float) -> bool:
    """Whether ``conn`` is ready for ``event`` within ``timeout`` seconds (``poll``: no
    descriptor-number limit as ``select`` has)."""
    poller = select.poll()
    try:
        poller.register(conn, event)
        return bool(poller.poll(max(0.0, timeout) * 1000))
    except (OSError, ValueError):
        return False


def fds_of(ancdata) -> list[int]:
    fds: list[int] = []
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i : i + 4], sys.byteorder, signed=True) for i in range(0, usable, 4)]
    return fds


def close_fds(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def unusable_fd(fd: int) -> bool:
    """A descriptor no stream can be written to (a folder), or not one at all."""
    try:
        return stat.S_ISDIR(os.fstat(fd).st_mode)
    except OSError:
        return True


def check(conn: socket.socket, fields: list[str]) -> Call | None:
    """The call a request describes, every field checked; ``None`` when one is malformed."""
    if len(fields) < 8 or fields[0] != protocol.PROTOCOL:
        return None
    digest, cwd, session, columns, out, err = fields[1:7]
    if len(digest) != 32 or not all(c in "0123456789abcdef" for c in digest):
        return None
    if not os.path.isabs(cwd) or len(session) > 1024 or not (columns.isascii() and columns.isdigit() and 0 < len(columns) <= 5):
        return None
    out_desc, err_desc = desc_of(out), desc_of(err)
    if out_desc is None or err_desc is None or int(columns) == 0:
        return None
    return Call(conn, digest, cwd, session, int(columns), out_desc, err_desc, fields[7:])


def refuse(conn: socket.socket, why: str) -> None:
    send(conn, why.encode() + b"\n", 1.0)
    conn.close()


def receive(conn: socket.socket, deadline: float) -> list[str]:
    """The request's fields (a 4-byte length, then NUL-separated fields), read whole before
    ``deadline`` and at most ``FRAME_MAX`` bytes; ``ValueError`` otherwise. A descriptor
    sent along is closed: they come when the call starts."""
    data = bytearray()
    size = None
    while size is None or len(data) < 4 + size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ValueError("the request did not come whole in time")
        if not _ready(conn, select.POLLIN, left):
            continue
        try:
            chunk, anc, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(8 * 4), socket.MSG_CMSG_CLOEXEC)
        except BlockingIOError:
            continue
        close_fds(fds_of(anc))
        if not chunk:
            raise ValueError("truncated request")
        data += chunk
        if size is None and len(data) >= 4:
            size = int.from_bytes(data[:4], "big")
            if size > FRAME_MAX:
                raise ValueError("request too large")
    if len(data) != 4 + size:
        raise ValueError("more than one request")
    return protocol.decode_request(bytes(data[4:]))
