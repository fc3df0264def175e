"""A server's place in the private run folder: its socket, whether it is still its own, room.

Owns the socket file of a server (refused when something else sits at its
path; bound under a temporary name, then renamed over it, so a client never
meets a socket that is not listening yet and a killed server's is replaced),
whether the socket and lock file at their paths are still the ones this
server made (a run folder removed or replaced leaves a server nobody can
reach), and making room among the folder's servers (past ``MAX_SERVERS``,
the least recently used are asked to leave; old marks of roots called
without a server are dropped). Does not own the lock's meaning or the
server's life (``serve``) or asking a server (``registry``).
"""

from __future__ import annotations

import os
import socket
import stat
import time
from pathlib import Path

from ..cache.folders import what_is_at
from . import protocol, registry

__all__ = ["MAX_SERVERS", "check_socket_path", "listen", "make_room", "max_servers", "still_ours"]

MAX_SERVERS = 8  # servers of one run folder; a new one asks the least recently used to leave


def max_servers() -> int:
    try:
        value = int(os.environ.get("JITCTX_SERVER_MAX", ""))
    except ValueError:
        return MAX_SERVERS
    return value if value > 0 else MAX_SERVERS


def check_socket_path(path: str) -> None:
    """Raise ``registry.Unusable`` when something other than a socket sits at ``path``."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise registry.Unusable(what_is_at(path, exc.strerror or str(exc))) from None
    if not stat.S_ISSOCK(st.st_mode):
        raise registry.Unusable(what_is_at(path, "not a socket"))


def listen(path: str) -> tuple[socket.socket, int]:
    """Bind under a temporary name, then rename over the socket's: a client never
    meets a socket that is not yet listening, and a stale one (a killed server's) is
    replaced, never in the way. The listening socket and the inode of its file."""
    check_socket_path(path)
    tmp = f"{path}.{os.getpid()}.tmp"
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
    try:
        os.rename(tmp, path)
    except OSError:
        listener.close()
        os.unlink(tmp)
        raise
    return listener, os.stat(path).st_ino


def make_room(folder: str) -> None:
    """Past ``MAX_SERVERS`` servers in this run folder, ask the least recently used
    ones to leave (each touches its lock file at every call); drop the marks of roots
    called without a server (``client._calls_before``) older than ``protocol.SEEN_WINDOW``."""
    now = time.time()
    for mark in Path(folder).glob("*.seen"):  # roots called once or twice, long ago
        try:
            if now - mark.lstat().st_mtime > protocol.SEEN_WINDOW:
                mark.unlink()
        except OSError:
            pass
    others = [(mtime, lock) for lock, pid, mtime in registry.held(folder) if pid != os.getpid()]
    for _, lock in sorted(others)[: max(0, len(others) + 1 - max_servers())]:
        registry.ask(lock[: -len(".lock")] + ".sock", "leave", timeout=1.0)


def still_ours(path: str, lock_path: str, socket_ino: int, lock_fd: int) -> bool:
    """Whether the socket and the lock file at their paths are still this server's
    (a run folder removed or replaced leaves a server nobody can reach or see):
    ``socket_ino`` is its socket's, ``lock_fd`` its lock file open."""
    try:
        sock, lock, held = os.lstat(path), os.lstat(lock_path), os.fstat(lock_fd)
    except OSError:
        return False
    return sock.st_ino == socket_ino and (lock.st_ino, lock.st_dev) == (held.st_ino, held.st_dev)
