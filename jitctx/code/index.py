"""The on-disk index of one repository's definitions and lexical documents.

Owns :class:`Index`: one SQLite store per repository root under the user's
cache directory (never inside the repository), kept current by
:meth:`Index.refresh` with the extraction injected (``analyze``), and the
queries the primitives read: a file's definitions, definitions by name
across the repository, and BM25 ranking of lexical documents. Does not own
extraction (``code.parse``), what the lexical words are (the caller's
``analyze`` makes them), listing or statting the repository, or reading
files (the caller passes ``read``, its safe-open seam).

Never fails a call for the store's sake: a store that cannot be created,
written or kept (unwritable or missing cache directory, full disk, a lock
held too long, a location inside the repository) is replaced by an
in-memory one for this process, and ``notice`` says so and why; a corrupt
store, one of another schema version or one built by another analyzer is
deleted and built again (``notice`` says that too).

Location: ``<cache_dir>/index/<folder>-<hash>.sqlite``, ``<folder>`` the
root's name (characters outside ``[A-Za-z0-9._-]`` as ``_``), ``<hash>``
the first 16 hex digits of the sha256 of its real path, so two checkouts
with one name get two stores and a symlinked root shares its target's.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from dataclasses import replace
from typing import TYPE_CHECKING

from ..cache import store
from ..cache.folders import index_file
from ..errors import QueryError
from . import lookup, refresh
from .rows import SCHEMA, SCHEMA_VERSION, Definition, FileState, Lookup, RefreshStats

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["Index", "index_file"]  # index_file: the location rule, in jitctx.cache.folders

_TIMEOUT = 30.0  # seconds a writer waits for another one (a batch holds the lock for well under one)
_DEFINITION = "d.kind, d.name, d.qualname, d.start_line, d.end_line, d.signature, d.depth, d.parent, d.tokens, d.stub"


def _bounds(under: str) -> tuple[str, str] | None:
    """The path range of a folder (``src`` or ``src/``); None for the root."""
    folder = under.strip()
    while folder.startswith("./"):
        folder = folder[2:]
    if folder.startswith("/") or ".." in folder.split("/"):
        raise QueryError(
            f"under={under!r} is not a repo-relative folder",
            hint="pass a folder relative to the root, like 'src/'",
            field="under",
        )
    folder = folder.rstrip("/")
    if folder in ("", "."):
        return None
    return lookup.prefix_range(folder + "/")


_MAX_BYTES = refresh.MAX_BYTES
_pending = refresh.pending  # the module's name is also a method's, below


class Index:
    """The index of one repository; open with :meth:`open`. Thread-safe.

    ``path``: the store's file, None when in memory; ``notice``: why the
    store is in memory or was rebuilt, else None; ``analyzer``: identity of
    the extraction the rows came from (a different one rebuilds the store).
    """

    def __init__(self, root: str, path: str, analyzer: str, timeout: float) -> None:
        self.root = root
        self.analyzer = analyzer
        self.path: str | None = path
        self.notice: str | None = None
        # True: a store that cannot be written raises ``StoreUnavailable`` instead of going to
        # memory (the background builder: an index in memory would be thrown away with it)
        self.on_disk_only = False
        self._timeout = timeout
        self._lock = threading.RLock()
        self._conn = self._connect(path)

    @classmethod
    def open(
        cls,
        root: str | os.PathLike,
        *,
        analyzer: str = "",
        cache_dir: str | None = None,
        timeout: float = _TIMEOUT,
    ) -> Index:
        """The index of ``root`` (a directory), in ``cache_dir`` (default
        :func:`store.cache_dir`). ``analyzer`` names the extraction (e.g.
        ``"jitctx.code.parse/3"``): rows built by another are not trusted.
        Never fails for the store's sake: see ``notice``."""
        real = os.path.realpath(root)
        return cls(real, index_file(real, cache_dir), analyzer, timeout)

    # -- the store ---------------------------------------------------------

    def _connect(self, path: str) -> sqlite3.Connection:
        for attempt in range(2):
            try:
                conn, notice = store.connect(
                    path,
                    version=SCHEMA_VERSION,
                    schema=SCHEMA,
                    timeout=self._timeout,
                    forbid_under=self.root,
                )
            except store.StoreUnavailable as exc:
                return self._memory(exc.reason)
            self.notice = notice or self.notice
            try:
                return self._claim(conn, path)
            except sqlite3.Error as exc:
                if not store.is_corrupt(exc) or attempt:
                    conn.close()
                    return self._memory(f"cannot use {path}: {exc}")
                self.notice = f"the store {path} was unreadable ({exc}) and was rebuilt"
                try:  # damaged past its header: once more from nothing
                    store.reset(path, conn)
                except store.StoreUnavailable as failed:
                    return self._memory(failed.reason)
        raise AssertionError("unreachable")

    def _claim(self, conn: sqlite3.Connection, path: str) -> sqlite3.Connection:
        """Make the store ours: built by this analyzer, or emptied for it."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'analyzer'").fetchone()
        if row is not None and row[0] == self.analyzer:
            return conn
        with store.Transaction(conn):
            row = conn.execute("SELECT value FROM meta WHERE key = 'analyzer'").fetchone()
            if row is not None and row[0] != self.analyzer:
                for table in ("definitions", "lexdocs", "files"):
                    conn.execute(f"DELETE FROM {table}")
                conn.execute("INSERT INTO lexical(lexical) VALUES ('delete-all')")  # contentless: emptied whole
                conn.execute("DELETE FROM meta WHERE key LIKE 'listing:%'")
                conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
                self.notice = f"the store {path} was built by analyzer {row[0]!r}; rebuilt for {self.analyzer!r}"
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('analyzer', ?)", (self.analyzer,))
        return conn

    def _memory(self, reason: str) -> sqlite3.Connection:
        self.path = None
        self.notice = f"the index is kept in memory for this process only: {reason}"
        conn = store.connect_memory(SCHEMA)
        conn.execute("INSERT INTO meta VALUES ('analyzer', ?)", (self.analyzer,))
        return conn

    def _recover(self, exc: sqlite3.Error) -> bool:
        """After ``exc`` from the store: switch to a fresh store (rebuilt, or
        in memory) and say whether the call may be tried once more on it."""
        if self.path is None or not (store.is_corrupt(exc) or store.is_unusable(exc)):
            return False
        path = self.path
        if store.is_corrupt(exc):
            try:
                store.reset(path, self._conn)
            except store.StoreUnavailable as failed:
                self._conn = self._memory(failed.reason)
                return True
            self._conn = self._connect(path)
            if self.path is not None:
                self.notice = f"the store {path} was found damaged ({exc}) and was rebuilt"
        else:
            if self.on_disk_only:
                raise store.StoreUnavailable(f"cannot write {path}: {exc}") from exc
            self._conn.close()
            self._conn = self._memory(f"cannot write {path}: {exc}")
        return True

    def _run(self, fn: Callable, *args, **kwargs):
        with self._lock:
            try:
                return fn(self._conn, *args, **kwargs)
            except sqlite3.Error as exc:
                if not self._recover(exc):
                    raise
            return fn(self._conn, *args, **kwargs)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- keeping it current ------------------------------------------------

    def refresh(
        self,
        entries: Iterable[tuple[str, int, int, int, int]],
        read: Callable[[str], bytes | None],
        analyze: Callable,
        *,
        under: str = "",
        complete: bool = True,
        max_bytes: int = refresh.MAX_BYTES,
        workers: int = 1,
        batch: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        parts: str = "all",
        recall: Callable[[list[str]], dict[str, bytes]] | None = None,
        keeps: Callable[[], Callable[[str, str], bool] | None] | None = None,
        outline_limit: int | None = None,
    ) -> RefreshStats:
        """Bring the index up to date with ``entries``.

        ``entries``: ``(path, size, mtime_ns, inode, ctime_ns)`` of files that
        exist now. ``complete``: the listing holds every file under ``under``
        (a folder; "" the whole repository), so stored paths there that it
        does not list are removed; others are never touched. An entry whose
        signature is unchanged (and not racy, see ``refresh``) is trusted
        unread; others are read with ``read(path) -> bytes | None`` (None:
        skipped as ``unreadable``) and hashed; content already stored only
        updates the signature, other content goes to ``analyze(path, data)
        -> (definitions, path_terms, content_terms) | None`` (None: skipped
        as ``declined``; an exception: ``failed``). Files over ``max_bytes``
        are skipped as ``too_large`` unread. ``workers`` > 1 runs ``analyze``
        in that many processes when there is at least ``refresh.POOL_MIN_BYTES``
        to analyse (``analyze`` must then be a module-level function, and the
        program's main module safe to import: workers are spawned); reads
        stay in this process. Writes are committed every ``batch`` files
        (None: ``refresh.BATCH``).
        ``progress(done, total)`` is called as files needing work are done.
        A complete listing identical to the last one this scope was
        refreshed with, when nothing was written since, is answered without
        comparing rows (``listing_unchanged``). ``parts``, ``recall``,
        ``keeps``, ``outline_limit``: the words first and the definitions after,
        and the words told again from git's blobs (``refresh.refresh``). Never raises for
        the store's sake (see ``notice``); ``QueryError`` for a bad ``under``.
        """
        bounds = _bounds(under)
        listing = entries if isinstance(entries, (list, tuple)) else list(entries)
        stats = self._run(
            refresh.refresh,
            listing,
            read,
            analyze,
            bounds=bounds,
            complete=complete,
            max_bytes=max_bytes,
            workers=workers,
            batch=refresh.BATCH if batch is None else batch,
            progress=progress,
            parts=parts,
            recall=recall,
            keeps=keeps,
            outline_limit=outline_limit,
        )
        return stats if self.notice is None else replace(stats, notice=self.notice)

    def pending(
        self, entries: list[tuple[str, int, int, int, int]], *, max_bytes: int = _MAX_BYTES, parts: str = "words", complete: bool = True
    ) -> tuple[list[str], list[str], list[str]]:
        """What a refresh with ``entries`` would read, hash again and remove
        (``refresh.pending``), unwritten: how far the index is from the tree, before
        deciding to bring it up to date now. ``parts="all"``: files whose definitions
        are still to come count as work too."""
        return self._run(_pending, entries, max_bytes=max_bytes, parts=parts, complete=complete)

    def merge_lexical(self) -> None:
        """The lexical index merged into one segment (FTS5's ``optimize``: its segments repeat
        the terms they share; a query reads one): after a build's words, so that the
        definitions written after it take the pages the merged segments leave free."""
        with self._lock:
            try:
                with store.Transaction(self._conn):
                    self._conn.execute("INSERT INTO lexical(lexical) VALUES ('optimize')")
            except sqlite3.Error:
                pass  # a smaller store, not a correct one: another time

    def compact(self) -> None:
        """After a complete build: the lexical index merged into one segment (FTS5's
        ``optimize``: its segments repeat the terms they share) and, when a tenth of the file
        is free pages (merged segments leave them), the file rewritten without them. ~5 s
        and ~8 MB of a 100k-file store."""

        with self._lock:
            conn = self._conn
            try:
                with store.Transaction(conn):
                    conn.execute("INSERT INTO lexical(lexical) VALUES ('optimize')")
                free, pages = conn.execute("PRAGMA freelist_count").fetchone()[0], conn.execute("PRAGMA page_count").fetchone()[0]
                if pages and free > pages // 10:
                    conn.execute("VACUUM")
            except sqlite3.Error:
                pass  # a smaller store, not a correct one: another time

    def unoutlined(self) -> set[str]:
        """The paths whose definitions are still to come (a build's second part)."""
        return {r[0] for r in self._run(lambda conn: conn.execute("SELECT path FROM files WHERE outlined = 0").fetchall())}

    def outlined(self) -> tuple[int, int]:
        """``(rows, rows whose definitions are still to come)``: how far a build's second part is."""
        rows, waiting = self._run(lambda conn: conn.execute("SELECT count(*), count(*) - total(outlined) FROM files").fetchone())
        return int(rows), int(waiting)

    # -- queries -----------------------------------------------------------

    def definitions(self, path: str) -> tuple[Definition, ...]:
        """The stored definitions of ``path``, in the order ``analyze`` gave them."""
        sql = f"SELECT {_DEFINITION} FROM files f CROSS JOIN definitions d ON d.file_id = f.id WHERE f.path = ? ORDER BY d.seq"
        rows = self._run(lambda conn: conn.execute(sql, (path,)).fetchall())
        return tuple(Definition(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], bool(r[9])) for r in rows)

    def enclosing(self, path: str, line: int) -> Definition | None:
        """The innermost stored definition of ``path`` whose lines hold ``line``."""
        best = None
        for d in self.definitions(path):
            if d.start_line <= line <= d.end_line and (best is None or d.depth >= best.depth):
                best = d
        return best

    def find(self, query: str, *, kind: str | None = None, under: str = "", limit: int = 50) -> Lookup:
        """Definitions by name across the repository, ranked in tiers (exact,
        qualified, prefix; see ``lookup``); ``total`` counts all matches."""
        text = query.strip()
        if not text:
            raise QueryError(
                "the symbol query is empty",
                hint="pass a name like 'parse' or 'Rational.__add__'",
                field="query",
            )
        if limit < 0:
            raise QueryError(
                f"limit={limit} is negative",
                hint="pass a limit of 0 or more",
                field="limit",
            )
        bounds = _bounds(under)
        return self._run(lookup.find, text, kind=kind, bounds=bounds, limit=limit)

    def lexical(
        self,
        terms: Iterable[str],
        *,
        limit: int = 20,
        weights: tuple[float, float] = (1.0, 1.0),
        under: str = "",
    ) -> list[tuple[str, float]]:
        """Paths whose lexical documents match any of ``terms``, best first,
        as ``(path, score)``: score = -bm25 with ``weights`` = (path terms,
        content terms), higher is better. Terms are matched as FTS5's
        ``ascii`` tokenizer splits them: ASCII letters and digits (case
        folded) and any non-ASCII character make words, other ASCII
        characters separate them; a term without a letter or digit is
        dropped."""
        words = list(dict.fromkeys(t for t in terms if any(c.isalnum() for c in t)))
        if not words or limit <= 0:
            return []
        path_w, content_w = (float(w) for w in weights)
        if path_w < 0 or content_w < 0:
            raise QueryError(
                f"weights={weights!r} has a negative weight",
                hint="pass two weights of 0 or more",
                field="weights",
            )
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        bounds = _bounds(under)
        where = " AND f.path >= ? AND f.path < ?" if bounds else ""
        sql = f"SELECT f.path, bm25(lexical, ?, ?) AS score FROM lexical CROSS JOIN files f ON f.id = lexical.rowid WHERE lexical MATCH ?{where} ORDER BY score LIMIT ?"
        params = (path_w, content_w, expr, *(bounds or ()), int(limit))
        rows = self._run(lambda conn: conn.execute(sql, params).fetchall())
        return [(path, -score) for path, score in rows]

    def search(self, expression: str, *, weights: tuple[float, float] = (1.0, 1.0), limit: int = 20) -> list[tuple[str, float, int, bool]]:
        """Paths matching an FTS5 query ``expression`` (the caller builds it:
        quoted terms, ``OR``, repeats as weights, ``content_terms :`` column
        filters), best first, as ``(path, score, size, is_test)``; score =
        -bm25 with ``weights`` = (path terms, content terms)."""
        if not expression or limit <= 0:
            return []
        path_w, content_w = (float(w) for w in weights)
        sql = "SELECT f.path, bm25(lexical, ?, ?) AS score, f.size, f.is_test FROM lexical CROSS JOIN files f ON f.id = lexical.rowid WHERE lexical MATCH ? ORDER BY score LIMIT ?"
        rows = self._run(lambda conn: conn.execute(sql, (path_w, content_w, expression, int(limit))).fetchall())
        return [(path, -score, size, bool(is_test)) for path, score, size, is_test in rows]

    def term_counts(self, terms: Iterable[str]) -> tuple[int, dict[str, tuple[int, int]]]:
        """How many lexical documents there are, and for each of ``terms``
        (as stored: folded words) how many hold it in their path and in their
        content: ``(documents, {term: (path_docs, content_docs)})``; a term
        no document holds is left out."""
        words = list(dict.fromkeys(terms))

        def run(conn: sqlite3.Connection) -> tuple[int, dict[str, tuple[int, int]]]:
            conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lexical_vocab USING fts5vocab(main, 'lexical', 'col')")
            total = conn.execute("SELECT count(*) FROM lexical_docsize").fetchone()[0]
            out: dict[str, list[int]] = {}
            for i in range(0, len(words), 200):
                chunk = words[i : i + 200]
                marks = ",".join("?" * len(chunk))
                for term, col, docs in conn.execute(f"SELECT term, col, doc FROM temp.lexical_vocab WHERE term IN ({marks})", chunk):
                    out.setdefault(term, [0, 0])[col == "content_terms"] = docs
            return total, {t: (v[0], v[1]) for t, v in out.items()}

        return self._run(run)

    def rows(self) -> int:
        """How many files the index has a row for (skipped ones too)."""
        return self._run(lambda conn: conn.execute("SELECT count(*) FROM files").fetchone()[0])

    def state(self, path: str) -> FileState | None:
        """What the index holds about ``path`` (its signature, blob, skip), or None."""
        sql = "SELECT path, size, mtime_ns, inode, ctime_ns, indexed_ns, blob, skipped, is_test, outlined FROM files WHERE path = ?"
        row = self._run(lambda conn: conn.execute(sql, (path,)).fetchone())
        if row is None:
            return None
        path_, size, mtime_ns, inode, ctime_ns, indexed_ns, blob, skipped, is_test, outlined = row
        return FileState(path_, size, mtime_ns, inode, ctime_ns, indexed_ns, blob.hex() if isinstance(blob, bytes) else blob, skipped, bool(is_test), bool(outlined))

    def paths(self, under: str = "") -> list[str]:
        """Every path the index has a row for (skipped ones too), sorted."""
        bounds = _bounds(under)
        params: tuple[str, ...] = ()
        if bounds is None:
            sql = "SELECT path FROM files ORDER BY path"
        else:
            sql, params = (
                "SELECT path FROM files WHERE path >= ? AND path < ? ORDER BY path",
                bounds,
            )
        return [r[0] for r in self._run(lambda conn: conn.execute(sql, params).fetchall())]
