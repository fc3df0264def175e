"""Bringing the index up to date with a listing: the incremental refresh.

Owns deciding, per listed file, whether its row can be trusted (stat
signature unchanged and not racy), reading and hashing the others, sending
only changed content to ``analyze``, removing paths that left a complete
listing's scope, and writing it all in batches: one transaction per batch,
each file's row, definitions and lexical document together, so an interrupt
(KeyboardInterrupt, SIGKILL) loses at most the batch in flight and the next
refresh goes on from there. A complete listing identical to the last one
is answered by ``unchanged`` without comparing rows. Does not own the queries
(``index``, ``lookup``), running ``analyze`` (``workers``) or reading
files (the caller's ``read``, its safe-open seam).

Two parts (issue 32): ``parts="words"`` writes each new or changed file's row
and words and leaves its definitions for later (``files.outlined`` 0 for a
file with a grammar); ``parts="all"`` (the default) also outlines, and treats
a row not outlined yet as work: its content, unchanged, is parsed for its
definitions alone. A build is a ``words`` refresh, then an ``all`` one.

Taking a file's words out of the contentless ``lexical`` needs the words it
was given. They are kept (``lexdocs``) only when they cannot be had again: a
file whose content git holds as the blob its row names (``keeps``, asked for
large refreshes: a tracked file as committed or staged) is told its words
again from git's copy (``recall``) and the analyzer. A blob git no longer has
(history rewritten and pruned) leaves its words behind, under an id no row
will have again (``files.id`` is never reused): counted in ``meta``
(``orphans``), they weigh in BM25's statistics only.

The racy rule (git's "racy git"): a signature is trusted only when the
file's mtime and ctime are more than 2 s older than the moment its bytes
were read; a file rewritten with the same size within its timestamp
granularity (1-2 s on some file systems) keeps its signature, so such a
row is hashed again at the next refresh, and trusted once it is old enough.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
import zlib
from dataclasses import replace
from typing import TYPE_CHECKING

from ..cache.store import Transaction
from . import unchanged
from .rows import CONTENT_SKIPS, RefreshStats
from .testpaths import is_test_path
from .words import path_terms

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

__all__ = [
    "BATCH",
    "pending",
    "MAX_BYTES",
    "POOL_MIN_BYTES",
    "RACY_NS",
    "Entry",
    "git_blob_sha1",
    "refresh",
]

#: (path, size, mtime_ns, inode, ctime_ns): one listed file, as the caller stats it.
Entry = tuple

RACY_NS = 2_000_000_000
MAX_BYTES = 2 * 1024 * 1024
BATCH = 256  # files per transaction
# A refresh of this many files or more writes the lexical index in bulk: transactions of up to
# ``BULK_BATCH`` files (still at least one a second, ``_FLUSH_SECONDS``), FTS5 merging 16 segments
# of a level at once instead of 4 and keeping 16 MiB of pending words in memory instead of 1
# (fewer, larger segments: less rewriting); restored after. Real tree: the inserts' CPU 15 s -> 11 s.
BULK = 4096
BULK_BATCH = 4096
_BULK_SETTINGS = (("automerge", 16, 4), ("hashsize", 16 * 1024 * 1024, 1024 * 1024))  # (FTS5 option, bulk, default)
_SET_LEXICAL = "INSERT INTO lexical(lexical, rank) VALUES (?, ?)"
KEEPS_MIN = 256  # files to write before ``keeps`` is asked (it lists git's index: ~0.15 s on 100k files)
# Less work than this is analysed here: starting worker processes costs more.
POOL_MIN_BYTES = 1024 * 1024
PARTIAL_SHORTCUT = 1000  # entries: a partial listing this large is worth a digest (a one-file refresh is not)
_FLUSH_SECONDS = 1.0  # a slow analyze still commits at least this often
_PROGRESS_SECONDS = 0.1
_IN_CHUNK = 500  # paths per ``IN (...)`` query

# ``state``: NULL for a row its signature vouches for (analysed, not racy), else
# 'racy' or the skip reason. Rows come back as tuples that compare equal to a
# listed entry plus (None,): the warm path is one set lookup per entry.
# 'outline': a row whose definitions are still to come, when the refresh outlines (parts="all").
_SELECT = (
    "SELECT path, size, mtime_ns, inode, ctime_ns, CASE WHEN max(mtime_ns, ctime_ns) > indexed_ns - ? THEN 'racy'"
    " WHEN outlined = 0 AND ? THEN 'outline' ELSE skipped END FROM files"
)
_PRIOR = "SELECT path, blob, skipped, size, mtime_ns, inode, ctime_ns, outlined FROM files WHERE path IN "
_TRUSTED = (None,)
_UPSERT = (
    "INSERT INTO files(path, size, mtime_ns, inode, ctime_ns, indexed_ns, blob, skipped, is_test, outlined)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET"
    " size = excluded.size, mtime_ns = excluded.mtime_ns, inode = excluded.inode,"
    " ctime_ns = excluded.ctime_ns, indexed_ns = excluded.indexed_ns,"
    " blob = excluded.blob, skipped = excluded.skipped, outlined = excluded.outlined"
)
_IDS = "SELECT path, id FROM files WHERE path IN "
_OLD = "SELECT path, id, blob, skipped FROM files WHERE path IN "
_SIGNATURE = "UPDATE files SET size = ?, mtime_ns = ?, inode = ?, ctime_ns = ?, indexed_ns = ? WHERE path = ?"
_OUTLINED = "UPDATE files SET size = ?, mtime_ns = ?, inode = ?, ctime_ns = ?, indexed_ns = ?, outlined = 1 WHERE path = ? RETURNING id"
_DROP_DEFINITIONS = "DELETE FROM definitions WHERE file_id = ?"
_LEXDOC = "DELETE FROM lexdocs WHERE id = ? RETURNING path_terms, content"
_FORGET_LEXICAL = "INSERT INTO lexical(lexical, rowid, path_terms, content_terms) VALUES ('delete', ?, ?, ?)"
_DROP_FILE = "DELETE FROM files WHERE path = ? RETURNING id, blob, skipped"
_DROP_ROW = "DELETE FROM files WHERE id = ?"
_ORPHANS = "INSERT INTO meta VALUES ('orphans', ?) ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + excluded.value"
# name is the store's own (generated from the qualname): every definition row but its name
_ADD_DEFINITION = "INSERT INTO definitions(file_id, seq, kind, qualname, start_line, end_line, signature, depth, parent, tokens, stub) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_ADD_LEXICAL = "INSERT INTO lexical(rowid, path_terms, content_terms) VALUES (?, ?, ?)"
_ADD_LEXDOC = "INSERT INTO lexdocs VALUES (?, ?, ?)"


def _forget(conn: sqlite3.Connection, rows: list[tuple[int, str, str | None, str | None]], recall, analyze) -> list[int]:
    """Take the words of ``rows`` (id, path, blob, skipped: rows on their way out) out of the
    contentless ``lexical``: told the words each was given, from ``lexdocs`` or, where none
    was kept, from git's copy of its blob (``recall``) through ``analyze``. Returns the ids
    whose words could not be had (their blob is gone): left behind, counted as orphans."""
    lost: list[int] = []
    wanted: list[tuple[int, str, str]] = []
    for file_id, path, blob, skipped in rows:
        row = conn.execute(_LEXDOC, (file_id,)).fetchone()
        if row is not None:
            content = zlib.decompress(row[1]).decode("utf-8", "surrogatepass") if row[1] else ""
            conn.execute(_FORGET_LEXICAL, (file_id, path_terms(path) if row[0] is None else row[0], content))
        elif skipped is None and blob is not None:  # analysed, its words not kept: git has them
            wanted.append((file_id, path, blob))
    if not wanted:
        return lost
    from .workers import analyze_one

    found = recall(sorted({blob for _, _, blob in wanted})) if recall is not None else {}
    for file_id, path, blob in wanted:
        data = found.get(blob)
        outcome = analyze_one(analyze, path, data, "words") if data is not None and analyze is not None else ("lost", None)
        if outcome[0] != "ok":
            lost.append(file_id)
            continue
        _defs, its_path_terms, content_terms = outcome[1]
        if its_path_terms or content_terms:
            conn.execute(_FORGET_LEXICAL, (file_id, its_path_terms, content_terms))
    if lost:
        conn.execute(_ORPHANS, (len(lost),))
    return lost


def _hex(blob: bytes | str | None) -> str | None:
    """A stored blob id as hex (the store keeps 20 bytes)."""
    return blob.hex() if isinstance(blob, bytes) else blob


def git_blob_sha1(data: bytes) -> str:
    """The id git gives these bytes as a blob (``git hash-object``)."""
    h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    h.update(data)
    return h.hexdigest()


class _Writer:
    """Pending writes, flushed as one transaction per batch."""

    def __init__(self, conn: sqlite3.Connection, batch: int, *, recall=None, analyze=None) -> None:
        self._conn = conn
        self._batch = self._default_batch = max(1, batch)
        self._removed: list[str] = []
        self._signatures: list[tuple] = []
        # (files row, (definitions or None, path_terms, content_terms) or None, keep the words)
        self._rows: list[tuple] = []
        self._outlines: list[tuple] = []  # (signature update, definitions): words unchanged, definitions now
        self._count = 0
        self._flushed = time.monotonic()
        self.generation = unchanged.generation(conn)  # the store's, as of our last write
        self.racy = False  # a row written now that its signature cannot vouch for yet
        self.recall = recall
        self.analyze = analyze
        self.keeps: Callable[[str, str], bool] | None = None  # set for a large refresh

    def bulk(self, batch: int | None) -> None:
        """Write the lexical index in bulk (``BULK``): ``batch`` files a transaction and FTS5's
        bulk settings; None: back to the defaults (a store that cannot be written keeps them:
        they only tune how its segments are merged)."""
        self._batch = max(1, batch or self._default_batch)
        try:
            with Transaction(self._conn):
                for option, bulk, default in _BULK_SETTINGS:
                    self._conn.execute(_SET_LEXICAL, (option, default if batch is None else bulk))
        except sqlite3.Error:
            if batch is not None:
                raise

    def remove(self, path: str) -> None:
        self._removed.append(path)
        self._added()

    def signature(self, entry: Entry, indexed_ns: int) -> None:
        self.racy = self.racy or max(entry[2], entry[4]) > indexed_ns - RACY_NS
        self._signatures.append((entry[1], entry[2], entry[3], entry[4], indexed_ns, entry[0]))
        self._added()

    def outline(self, entry: Entry, indexed_ns: int, definitions: tuple) -> None:
        self.racy = self.racy or max(entry[2], entry[4]) > indexed_ns - RACY_NS
        self._outlines.append(((entry[1], entry[2], entry[3], entry[4], indexed_ns, entry[0]), definitions))
        self._added()

    def file(
        self,
        entry: Entry,
        indexed_ns: int,
        blob: str | None,
        skipped: str | None,
        analysed: tuple | None = None,
    ) -> None:
        path = entry[0]
        self.racy = self.racy or max(entry[2], entry[4]) > indexed_ns - RACY_NS
        outlined = 0 if analysed is not None and analysed[0] is None else 1
        row = (
            path,
            entry[1],
            entry[2],
            entry[3],
            entry[4],
            indexed_ns,
            None if blob is None else bytes.fromhex(blob),  # 20 bytes, not 40 hex digits: 2 MB of a 100k-file store
            skipped,
            int(is_test_path(path)),
            outlined,
        )
        keep = analysed is not None and not (self.keeps is not None and blob is not None and self.keeps(path, blob))
        self._rows.append((row, analysed, keep))
        self._added()

    def _added(self) -> None:
        self._count += 1
        if self._count >= self._batch or time.monotonic() - self._flushed >= _FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self._count:
            conn = self._conn
            with Transaction(conn):
                self.generation = unchanged.bump(conn)
                gone: list[tuple] = []
                for path in self._removed:
                    for file_id, blob, skipped in conn.execute(_DROP_FILE, (path,)).fetchall():
                        conn.execute(_DROP_DEFINITIONS, (file_id,))
                        gone.append((file_id, path, _hex(blob), skipped))
                _forget(conn, gone, self.recall, self.analyze)
                if self._signatures:
                    conn.executemany(_SIGNATURE, self._signatures)
                if self._rows:
                    self._write_rows(conn)
                if self._outlines:
                    self._write_outlines(conn)
            self._removed.clear()
            self._signatures.clear()
            self._rows.clear()
            self._outlines.clear()
            self._count = 0
        self._flushed = time.monotonic()

    def _write_rows(self, conn: sqlite3.Connection) -> None:
        """The batch's files rows and what was found in them, a few statements for the
        whole batch: one call per row costs little in SQLite but, with the analysing
        workers' results coming in on other threads, each one waits for the
        interpreter lock again (a full build spent most of its writing time there)."""
        paths = [row[0] for row, _analysed, _keep in self._rows]
        old = _old(conn, paths)  # rows already there: their definitions and words go first
        if old:
            conn.executemany(_DROP_DEFINITIONS, [(r[0],) for r in old.values()])
            lost = _forget(conn, [(r[0], path, _hex(r[1]), r[2]) for path, r in old.items()], self.recall, self.analyze)
            if lost:  # their words stay behind: the path gets a row of a new id
                conn.executemany(_DROP_ROW, [(i,) for i in lost])
        conn.executemany(_UPSERT, [row for row, _analysed, _keep in self._rows])
        ids = _ids(conn, paths)
        definitions: list[tuple] = []
        lexical: list[tuple] = []
        docs: list[tuple] = []
        for row, analysed, keep in self._rows:
            if analysed is None:
                continue
            file_id = ids[row[0]]
            found, its_path_terms, content_terms = analysed
            if found:
                definitions += [(file_id, seq, d[0], *d[2:]) for seq, d in enumerate(found)]
            if its_path_terms or content_terms:
                lexical.append((file_id, its_path_terms, content_terms))
                if keep:
                    packed = zlib.compress(content_terms.encode("utf-8", "surrogatepass"), 1) if content_terms else b""
                    docs.append((file_id, None if its_path_terms == path_terms(row[0]) else its_path_terms, packed))
        if definitions:
            conn.executemany(_ADD_DEFINITION, definitions)
        if lexical:
            conn.executemany(_ADD_LEXICAL, lexical)
        if docs:
            conn.executemany(_ADD_LEXDOC, docs)

    def _write_outlines(self, conn: sqlite3.Connection) -> None:
        """Definitions for rows whose words are already there (the second part of a build)."""
        definitions: list[tuple] = []
        for signature, found in self._outlines:
            row = conn.execute(_OUTLINED, signature).fetchone()
            if row is None:
                continue  # removed meanwhile
            conn.execute(_DROP_DEFINITIONS, (row[0],))
            definitions += [(row[0], seq, d[0], *d[2:]) for seq, d in enumerate(found)]
        if definitions:
            conn.executemany(_ADD_DEFINITION, definitions)


def _stored(conn: sqlite3.Connection, bounds: tuple[str, str] | None, paths: list[str] | None, *, outline: bool) -> list[tuple]:
    """``(path, size, mtime_ns, inode, ctime_ns, state)`` of the rows in
    ``bounds`` (a path range; None: all), or only of ``paths``; ``outline``: a
    row whose definitions are still to come is work (state 'outline')."""
    flag = int(outline)
    if paths is not None:
        rows: list = []
        for i in range(0, len(paths), _IN_CHUNK):
            part = paths[i : i + _IN_CHUNK]
            marks = ",".join("?" * len(part))
            rows += conn.execute(f"{_SELECT} WHERE path IN ({marks})", (RACY_NS, flag, *part)).fetchall()
        return rows
    if bounds is None:
        return conn.execute(_SELECT, (RACY_NS, flag)).fetchall()
    return conn.execute(f"{_SELECT} WHERE path >= ? AND path < ?", (RACY_NS, flag, *bounds)).fetchall()


def _ids(conn: sqlite3.Connection, paths: list[str]) -> dict[str, int]:
    """path -> id of the stored rows among ``paths``."""
    out: dict[str, int] = {}
    for i in range(0, len(paths), _IN_CHUNK):
        part = paths[i : i + _IN_CHUNK]
        out.update(conn.execute(f"{_IDS}({','.join('?' * len(part))})", part).fetchall())
    return out


def _old(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple]:
    """path -> (id, blob, skipped) of the stored rows among ``paths``."""
    out: dict[str, tuple] = {}
    for i in range(0, len(paths), _IN_CHUNK):
        part = paths[i : i + _IN_CHUNK]
        for r in conn.execute(f"{_OLD}({','.join('?' * len(part))})", part).fetchall():
            out[r[0]] = r[1:]
    return out


def _prior(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple]:
    """path -> (blob, skipped, (size, mtime_ns, inode, ctime_ns), outlined) of stored rows."""
    out: dict[str, tuple] = {}
    for i in range(0, len(paths), _IN_CHUNK):
        part = paths[i : i + _IN_CHUNK]
        marks = ",".join("?" * len(part))
        for r in conn.execute(f"{_PRIOR}({marks})", part).fetchall():
            out[r[0]] = (_hex(r[1]), r[2], r[3:7], r[7])
    return out


class _Run:
    """One refresh: the counters, the pending writes, the progress clock."""

    def __init__(self, conn, read, analyze, *, max_bytes, workers, batch, progress, parts: str = "all", recall=None) -> None:
        self.conn = conn
        self.read = read
        self.analyze = analyze
        self.max_bytes = max_bytes
        self.workers = workers
        self.progress = progress
        self.parts = parts
        self.writer = _Writer(conn, batch, recall=recall, analyze=analyze)
        self.counts: dict[str, int] = {
            "unchanged": 0,
            "rehashed_same": 0,
            "analyzed": 0,
            "removed": 0,
            "racy": 0,
            "read": 0,
            "outlined": 0,
        }
        self.skipped: list[tuple[str, str]] = []
        self.unsettled = False  # a row no signature will vouch for (unreadable files)
        self.done = 0
        self.total = 0
        self._ticked = 0.0

    def skip(self, path: str, reason: str) -> None:
        self.skipped.append((path, reason))

    def tick(self) -> None:
        self.done += 1
        if self.progress is not None:
            now = time.monotonic()
            if now - self._ticked >= _PROGRESS_SECONDS:
                self._ticked = now
                self.progress(self.done, self.total)

    def classify(self, listed: dict, rows: list[tuple]) -> list[Entry]:
        """Count what the stored rows vouch for; return the entries to read."""
        vouched = set(rows)
        others = {r[0]: r for r in rows if r[5] is not None}
        work: list[Entry] = []
        max_bytes = self.max_bytes
        unchanged = 0
        for path, e in listed.items():
            if e + _TRUSTED in vouched:
                unchanged += 1
                continue
            r = others.get(path)
            if r is None or r[1:5] != e[1:5]:
                work.append(e)
            elif r[5] == "racy":
                self.counts["racy"] += 1
                work.append(e)
            elif r[5] == "outline":
                work.append(e)
            elif r[5] in CONTENT_SKIPS or (r[5] == "too_large" and e[1] > max_bytes):
                self.skip(path, r[5])
            else:  # unreadable (tried again), or too large under a larger cap
                work.append(e)
        self.counts["unchanged"] = unchanged
        return work

    def feed(self, work: list[Entry], waiting: dict) -> Iterator[tuple[str, bytes, str]]:
        """Read and hash each entry; yield the content that needs analysing, with the
        parts it needs (``definitions`` alone for a row whose words are current)."""
        prior = _prior(self.conn, [e[0] for e in work])
        for e in work:
            path = e[0]
            old = prior.get(path)
            indexed_ns = time.time_ns()
            if e[1] > self.max_bytes:
                self.skip(path, "too_large")
                self.writer.file(e, indexed_ns, None, "too_large")
                self.tick()
                continue
            data = self.read(path)
            if data is not None:
                self.counts["read"] += 1
            if data is None or len(data) > self.max_bytes:
                reason = "unreadable" if data is None else "too_large"
                self.skip(path, reason)
                # An unreadable file is asked again every time; its row is written
                # only when it changes, so that a warm refresh stays read-only.
                self.unsettled = self.unsettled or reason == "unreadable"
                if not (old is not None and old[1] == reason and old[2] == e[1:5]):
                    self.writer.file(e, indexed_ns, None, reason)
                self.tick()
                continue
            blob = git_blob_sha1(data)
            if old is not None and old[0] == blob and old[1] in (None, *CONTENT_SKIPS):
                if old[1] is None and not old[3] and self.parts == "all":  # its words are current; its definitions now
                    waiting[path] = (e, indexed_ns, blob, "definitions")
                    yield path, data, "definitions"
                    continue
                self.writer.signature(e, indexed_ns)
                if old[1] is None:
                    self.counts["rehashed_same"] += 1
                else:
                    self.skip(path, old[1])
                self.tick()
                continue
            waiting[path] = (e, indexed_ns, blob, self.parts)
            yield path, data, self.parts

    def analyse(self, work: list[Entry]) -> None:
        waiting: dict[str, tuple] = {}
        workers = self.workers
        if workers > 1 and sum(e[1] for e in work if e[1] <= self.max_bytes) >= POOL_MIN_BYTES:
            # Large files first: no long tail on one worker.
            work = sorted(work, key=lambda e: -e[1])
        else:
            workers = 1
        self.workers = workers
        from .workers import run as analyse_all  # only when something changed: it imports concurrent.futures.process (~12 ms)

        for path, (status, value) in analyse_all(self.analyze, self.feed(work, waiting), workers=workers):
            e, indexed_ns, blob, parts = waiting.pop(path)
            if parts == "definitions":  # the row's words stay; a parse that failed leaves it without definitions
                self.counts["outlined"] += 1
                self.writer.outline(e, indexed_ns, value[0] if status == "ok" and value[0] else ())
            elif status == "ok":
                self.counts["analyzed"] += 1
                self.writer.file(e, indexed_ns, blob, None, value)
            else:
                self.skip(path, status)
                self.writer.file(e, indexed_ns, blob, status)
            self.tick()


def pending(conn: sqlite3.Connection, entries: list[Entry], *, max_bytes: int, parts: str = "words", complete: bool = True) -> tuple[list[str], list[str], list[str]]:
    """What a refresh with ``entries`` would do, without doing it: the paths it would read
    and analyse (new or changed; with ``parts="all"``, also the rows whose definitions are
    still to come), those it would only hash again (racy: the row is there, its signature
    not yet trusted) and, ``complete``, those it would remove. Nothing is written."""
    key, digest = _key(None, max_bytes, parts, complete), unchanged.digest(list(entries))
    if digest and unchanged.unchanged(conn, key, digest, None, count_skips=complete):
        return [], [], []
    listed = {e[0]: tuple(e) for e in entries}
    rows = _stored(conn, None, None if complete or len(listed) > 4 * _IN_CHUNK else list(listed), outline=parts == "all")
    run = _Run(conn, None, None, max_bytes=max_bytes, workers=1, batch=BATCH, progress=None, parts=parts)
    racy = {r[0] for r in rows if r[5] == "racy" and listed.get(r[0], ())[1:5] == r[1:5]}
    work = [e[0] for e in run.classify(listed, rows)]
    removed = sorted({r[0] for r in rows} - listed.keys()) if complete else []
    return [p for p in work if p not in racy], sorted(racy & set(work)), removed


def _key(bounds: tuple[str, str] | None, max_bytes: int, parts: str, complete: bool) -> str:
    """The unchanged-listing shortcut's key: per scope, cap, parts and kind of listing."""
    return unchanged.key(bounds, max_bytes) + ("" if parts == "all" else ":" + parts) + ("" if complete else ":partial")


def refresh(
    conn: sqlite3.Connection,
    entries: Iterable[Entry],
    read: Callable[[str], bytes | None],
    analyze: Callable,
    *,
    bounds: tuple[str, str] | None,
    complete: bool,
    max_bytes: int,
    workers: int,
    batch: int,
    progress: Callable[[int, int], None] | None,
    parts: str = "all",
    recall: Callable[[list[str]], dict[str, bytes]] | None = None,
    keeps: Callable[[], Callable[[str, str], bool] | None] | None = None,
    outline_limit: int | None = None,
) -> RefreshStats:
    """Bring the rows for ``entries`` up to date (see the module docstring);
    with ``complete``, also drop the stored paths in ``bounds`` (a path range,
    None: the whole repository) that ``entries`` does not list. ``parts``:
    ``all``, or ``words`` (definitions left for a later ``all``). ``recall(blobs)``:
    git's copies of blobs by id (the words of rows kept without them); ``keeps()``:
    asked once when at least ``KEEPS_MIN`` files are to be read, a test of
    ``(path, blob)``, true when git holds that blob for that path (its words are
    then not kept: ``recall`` has them). ``outline_limit``: with ``parts="all"``,
    the most rows whose definitions are still to come that this refresh parses;
    more, and it leaves them all to the build (a call does not parse a tree)."""
    started = time.perf_counter()
    entries = entries if isinstance(entries, list) else list(entries)
    key = digest = None
    if complete:
        key, digest = _key(bounds, max_bytes, parts, True), unchanged.digest(list(entries))
        same = digest and unchanged.unchanged(conn, key, digest, bounds)
        if same:
            return replace(same, seconds=time.perf_counter() - started)
    elif len(entries) >= PARTIAL_SHORTCUT:
        # a large partial listing (a lookup's files that can define): the same shortcut,
        # remembered under a key of its own; no row outside it is looked at or removed
        key, digest = _key(None, max_bytes, parts, False), unchanged.digest(list(entries))
        same = digest and unchanged.unchanged(conn, key, digest, None, count_skips=False)
        if same:
            return replace(same, seconds=time.perf_counter() - started)
    listed = {e[0]: tuple(e) for e in entries}
    run = _Run(conn, read, analyze, max_bytes=max_bytes, workers=workers, batch=batch, progress=progress, parts=parts, recall=recall)
    outline = parts == "all"
    if complete:
        rows = _stored(conn, bounds, None, outline=outline)
        known = {r[0] for r in rows}
        for path in known - listed.keys():
            run.counts["removed"] += 1
            run.writer.remove(path)
        if bounds is not None:
            outside = [p for p in listed if not bounds[0] <= p < bounds[1]]
            if outside:
                rows += _stored(conn, None, outside, outline=outline)
                # The listing strays outside its scope: not worth remembering.
                digest = None
    else:  # a few paths are looked up by name; many, in one scan of all rows
        few = len(listed) <= 4 * _IN_CHUNK
        rows = _stored(conn, None, list(listed) if few else None, outline=outline)
    if outline and outline_limit is not None and sum(r[5] == "outline" for r in rows) > outline_limit:
        rows = [r[:5] + (None,) if r[5] == "outline" else r for r in rows]  # trusted as words-only rows
        run.parts = "words"
        if key is not None:  # a words refresh, in effect: remembered as one (an "all" refresh must not trust it)
            key = _key(bounds, max_bytes, "words", complete)
    work = run.classify(listed, rows)
    run.total = len(work)
    if keeps is not None and len(work) >= KEEPS_MIN:
        run.writer.keeps = keeps()
    if progress is not None and work:
        progress(0, run.total)
    bulk = len(work) >= BULK and run.parts == "words"
    if bulk:
        run.writer.bulk(BULK_BATCH)
    try:
        if work:
            run.analyse(work)
        run.writer.flush()
    finally:
        if bulk:
            run.writer.bulk(None)  # the defaults again, for the small refreshes after
    if key and digest and not run.writer.racy and not run.unsettled:
        unchanged.remember(conn, key, digest, run.writer.generation, len(listed))
    if progress is not None and work:
        progress(run.total, run.total)
    skipped: dict[str, int] = {}
    for _path, reason in run.skipped:
        skipped[reason] = skipped.get(reason, 0) + 1
    return RefreshStats(
        listed=len(listed),
        skipped=dict(sorted(skipped.items())),
        skipped_paths=tuple(sorted(run.skipped)),
        workers=run.workers,
        seconds=time.perf_counter() - started,
        **run.counts,  # type: ignore[arg-type]  # the int fields, by name
    )
