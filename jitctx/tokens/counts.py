"""Token counts remembered across processes, keyed by content.

Owns ``counts.sqlite`` beside the per-repository indexes: ``(key, encoding)
-> tokens`` for text counted before, so that a fresh ``jitctx head`` can
answer without loading the tokenizer (~150 ms) for content it has seen.
The caller hashes the exact text it counted (``key``, a few bytes); this
module never sees text. Bounded: beyond ``limit`` rows, the rows written
longest ago are evicted. Never fails its caller: a cache that cannot be
created is no cache, one that cannot be written is read-only, a busy one
drops the write (``notice`` says which and why); a corrupt one is rebuilt.
Does not own counting (``budget``) or hashing.

It sits in ``jitctx.code`` beside the index because the two share the store
plumbing (``store``); it imports nothing else from jitctx, so the token layer
may use it without pulling in code structure.
"""

from __future__ import annotations

import os
import sqlite3
import threading

from ..cache import store

TYPE_CHECKING = False  # as typing's: importing typing costs ~2 ms of a one-shot head
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["COUNTS_FILE", "LIMIT", "TokenCounts"]

COUNTS_FILE = "counts.sqlite"
LIMIT = 100_000  # rows (~60 bytes each with the index): a few MB at most
_VERSION = 1
_SCHEMA = (
    "CREATE TABLE counts(id INTEGER PRIMARY KEY, key BLOB NOT NULL, encoding TEXT NOT NULL, tokens INTEGER NOT NULL)",
    "CREATE UNIQUE INDEX counts_key ON counts(key, encoding)",
)
_TIMEOUT = 2.0  # a write waits this long for another process's, then is dropped
_GET = "SELECT tokens FROM counts WHERE key = ? AND encoding = ?"
# REPLACE gives a rewritten row a new, highest id: the id orders rows by when they were written.
_PUT = "INSERT OR REPLACE INTO counts(key, encoding, tokens) VALUES (?, ?, ?)"
_EVICT = "DELETE FROM counts WHERE id <= (SELECT max(id) FROM counts) - ?"
_IN_CHUNK = 500


class TokenCounts:
    """The cross-process cache of token counts; open with :meth:`open`. Thread-safe.

    ``path``: the cache file; ``notice``: None, or why the cache is off,
    read-only or was rebuilt; ``limit``: the most rows kept.
    """

    def __init__(self, path: str, *, limit: int = LIMIT, forbid_under: str | None = None) -> None:
        self.path = path
        self.limit = limit
        self._forbid = forbid_under
        self.notice: str | None = None
        self._lock = threading.Lock()
        self._writable = True
        self._conn: sqlite3.Connection | None = None
        self._connect()

    @classmethod
    def open(cls, cache_dir: str | None = None, *, limit: int = LIMIT, forbid_under: str | None = None) -> TokenCounts:
        """The cache in ``cache_dir`` (default :func:`store.cache_dir`); none
        (``notice`` says so) when that lies under ``forbid_under`` (the served
        repository: nothing is ever written there)."""
        return cls(os.path.join(cache_dir or store.cache_dir(), COUNTS_FILE), limit=limit, forbid_under=forbid_under)

    def _connect(self) -> None:
        try:
            self._conn, notice = store.connect(self.path, version=_VERSION, schema=_SCHEMA, timeout=_TIMEOUT, forbid_under=self._forbid)
        except store.StoreUnavailable as exc:
            self._conn = None
            self.notice = f"token counts are not cached: {exc.reason}"
            return
        if notice:
            self.notice = notice

    def _failed(self, exc: sqlite3.Error, *, writing: bool) -> bool:
        """Deal with ``exc``; True when the call may be tried once more."""
        if store.is_corrupt(exc) and self._conn is not None:
            try:
                store.reset(self.path, self._conn)
            except store.StoreUnavailable as failed:
                self._conn = None
                self.notice = f"token counts are not cached: {failed.reason}"
                return False
            self._connect()
            if self._conn is not None:
                self.notice = f"the token-count cache {self.path} was damaged ({exc}) and was rebuilt"
            return self._conn is not None
        if writing and store.is_busy(exc):
            self.notice = f"the token-count cache {self.path} was busy; some counts were not saved"
            return False
        if store.is_unusable(exc):
            if writing:
                self._writable = False
                self.notice = f"the token-count cache {self.path} is read-only here: {exc}"
            else:
                self._conn = None
                self.notice = f"token counts are not cached: cannot read {self.path}: {exc}"
            return False
        raise exc

    def get(self, key: bytes, encoding: str) -> int | None:
        """The count stored for ``key`` under ``encoding``, or None."""
        with self._lock:
            for _ in range(2):
                if self._conn is None:
                    return None
                try:
                    row = self._conn.execute(_GET, (key, encoding)).fetchone()
                    return None if row is None else row[0]
                except sqlite3.Error as exc:
                    if not self._failed(exc, writing=False):
                        return None
        return None

    def get_many(self, keys: Iterable[bytes], encoding: str) -> dict[bytes, int]:
        """The stored counts of those ``keys`` that have one."""
        wanted = list(dict.fromkeys(keys))
        out: dict[bytes, int] = {}
        with self._lock:
            for _ in range(2):
                if self._conn is None:
                    return out
                try:
                    for i in range(0, len(wanted), _IN_CHUNK):
                        part = wanted[i : i + _IN_CHUNK]
                        marks = ",".join("?" * len(part))
                        sql = f"SELECT key, tokens FROM counts WHERE encoding = ? AND key IN ({marks})"
                        out.update(self._conn.execute(sql, (encoding, *part)).fetchall())
                    return out
                except sqlite3.Error as exc:
                    if not self._failed(exc, writing=False):
                        return out
        return out

    def put(self, key: bytes, encoding: str, tokens: int) -> None:
        """Remember that the text hashed to ``key`` has ``tokens`` tokens."""
        self.put_many([(key, encoding, tokens)])

    def put_many(self, items: Iterable[tuple[bytes, str, int]]) -> None:
        """Remember several ``(key, encoding, tokens)`` at once (one transaction)."""
        rows = [(bytes(k), str(e), int(t)) for k, e, t in items]
        if not rows:
            return
        with self._lock:
            for _ in range(2):
                if self._conn is None or not self._writable:
                    return
                try:
                    with store.Transaction(self._conn) as conn:
                        conn.executemany(_PUT, rows)
                        conn.execute(_EVICT, (self.limit,))
                    return
                except sqlite3.Error as exc:
                    if not self._failed(exc, writing=True):
                        return

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
