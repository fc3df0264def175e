"""SQLite files in the user's cache directory: where they live, how they open.

Owns the cache directory (:func:`cache_dir`), opening one store file (WAL, a
busy timeout, the schema version in ``PRAGMA user_version``), telling
SQLite's errors apart (corrupt, unusable, busy), and what happens to a file
that cannot be trusted: a corrupt file, or one of another schema version, is
deleted and created again, never read. A directory that cannot be created or
written, or that lies where the caller forbids (inside the repository),
raises :class:`StoreUnavailable` so that the caller can fall back (the index
to memory, the token-count cache to none). Does not own any schema (callers
pass theirs) nor what a store holds.

Imported by a fresh ``jitctx head`` (through the count cache): stdlib only,
and nothing heavier than ``sqlite3``.
"""

from __future__ import annotations

import os
import sqlite3

from .folders import cache_dir

TYPE_CHECKING = False  # as typing's: importing typing costs ~2 ms of a one-shot head
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "StoreUnavailable",
    "Transaction",
    "cache_dir",
    "connect",
    "connect_memory",
    "is_busy",
    "is_corrupt",
    "is_unusable",
    "reset",
]

# Primary result codes (the low byte of an extended code).
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
# SQLITE_PERM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_PROTOCOL
_UNUSABLE_CODES = {3, 8, 10, 13, 14, 15}
# Python 3.10 has no ``sqlite_errorcode``: the messages SQLite gives those codes.
_CORRUPT_TEXT = ("malformed", "not a database")
_BUSY_TEXT = ("database is locked", "database table is locked")
_UNUSABLE_TEXT = (
    "readonly",
    "read-only",
    "disk is full",
    "disk i/o error",
    "unable to open",
    "access permission",
)


class StoreUnavailable(Exception):
    """A store file cannot be used here; ``reason`` says why, for a notice.

    Internal to ``jitctx.code``: callers catch it and fall back, it never
    reaches a user as an error.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def _matches(exc: BaseException, codes: set[int], texts: tuple[str, ...]) -> bool:
    code = _code(exc)
    if code is not None:
        return code in codes
    text = str(exc).lower()
    return any(t in text for t in texts)


def is_corrupt(exc: BaseException) -> bool:
    """SQLite says the file is damaged or is not a database at all."""
    return isinstance(exc, sqlite3.DatabaseError) and _matches(exc, _CORRUPT_CODES, _CORRUPT_TEXT)


def is_busy(exc: BaseException) -> bool:
    """Another connection held the lock for longer than the busy timeout."""
    return isinstance(exc, sqlite3.OperationalError) and _matches(exc, _BUSY_CODES, _BUSY_TEXT)


def is_unusable(exc: BaseException) -> bool:
    """The file or its directory cannot be written (read-only, full, I/O
    error, cannot be opened), or stays locked: fall back, do not retry."""
    return isinstance(exc, sqlite3.OperationalError) and (_matches(exc, _UNUSABLE_CODES, _UNUSABLE_TEXT) or is_busy(exc))


class Transaction:
    """``with Transaction(conn):`` runs a write transaction (``BEGIN
    IMMEDIATE``: the write lock is taken up front, so a second writer waits
    in the busy handler instead of failing on a stale read snapshot);
    committed on success, rolled back on any exception, interrupts
    included."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self._conn.execute("BEGIN IMMEDIATE")
        return self._conn

    def __exit__(self, kind, exc, tb) -> None:
        if kind is None:
            self._conn.execute("COMMIT")
        elif self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the original error says more; SQLite rolls back on close anyway


def _within(path: str, top: str) -> bool:
    path, top = os.path.realpath(path), os.path.realpath(top)
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _remove(path: str, inode: int | None) -> None:
    """Delete a store file and its WAL companions, unless another process
    already replaced it (a different inode) with a fresh one."""
    try:
        if inode is not None and os.stat(path).st_ino != inode:
            return
    except FileNotFoundError:
        return
    for name in (path, path + "-wal", path + "-shm"):
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _create(conn: sqlite3.Connection, schema: Sequence[str], version: int) -> int:
    """Create the schema in an empty file; returns the version found under
    the write lock (another process may have created it meanwhile)."""
    with Transaction(conn):
        found = conn.execute("PRAGMA user_version").fetchone()[0]
        if found == 0 and not conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            for statement in schema:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {int(version)}")
            return version
    return found


def _open(path: str, version: int, schema: Sequence[str], timeout: float) -> tuple[sqlite3.Connection, int]:
    """Connect and bring the file to ``version``; returns the connection and
    the version it holds (not ``version``: a foreign file)."""
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    try:
        # Reads the header: a file of garbage fails here.
        found = conn.execute("PRAGMA user_version").fetchone()[0]
        if found == 0:
            # WAL is persistent: set once, when the file is new.
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            found = _create(conn, schema, version)
        # WAL keeps commits atomic; NORMAL skips an fsync per commit.
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn, found
    except BaseException:
        conn.close()
        raise


def connect(
    path: str,
    *,
    version: int,
    schema: Sequence[str],
    timeout: float,
    forbid_under: str | None = None,
) -> tuple[sqlite3.Connection, str | None]:
    """Open (creating as needed) the store at ``path`` with ``schema`` at
    ``version``; returns the connection (autocommit; use
    :class:`Transaction` to write) and a notice when the file had to be
    rebuilt. Raises :class:`StoreUnavailable` when the file cannot be used:
    its directory is under ``forbid_under`` or cannot be created, the file
    cannot be opened or written, or it stays locked past ``timeout``."""
    folder = os.path.dirname(path)
    if forbid_under is not None and _within(folder, forbid_under):
        raise StoreUnavailable(f"the cache directory {folder} is inside the repository {forbid_under}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(f"cannot create the cache directory {folder}: {exc.strerror or exc}") from None
    notice = None
    for _ in range(3):
        inode = _inode(path)
        try:
            conn, found = _open(path, version, schema, timeout)
        except sqlite3.Error as exc:
            if not is_corrupt(exc):
                raise StoreUnavailable(f"cannot use {path}: {exc}") from None
            notice = f"the store {path} was unreadable ({exc}) and was rebuilt"
            _remove_or_raise(path, inode)
            continue
        if found == version:
            return conn, notice
        conn.close()
        notice = f"the store {path} had schema version {found} (this jitctx uses {version}) and was rebuilt"
        _remove_or_raise(path, inode)
    raise StoreUnavailable(f"cannot rebuild {path}: another process keeps replacing it")


def _remove_or_raise(path: str, inode: int | None) -> None:
    try:
        _remove(path, inode)
    except OSError as exc:
        raise StoreUnavailable(f"cannot delete the damaged store {path}: {exc.strerror or exc}") from None


def reset(path: str, conn: sqlite3.Connection) -> None:
    """Close ``conn`` and delete the file it had open (found corrupt while
    in use), unless another process already replaced the file."""
    inode = _inode(path)
    conn.close()
    _remove_or_raise(path, inode)


def connect_memory(schema: Sequence[str]) -> sqlite3.Connection:
    """A private in-memory store with ``schema``: the fallback for one process."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    for statement in schema:
        conn.execute(statement)
    return conn
