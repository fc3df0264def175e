"""The unchanged-listing shortcut: a warm refresh that compares no rows.

Owns remembering, per scope and size cap, the last listing a complete
refresh left with every row trusted (a digest of the entries as given, the
count, and the store's write generation then), and answering a refresh
whose listing has the same digest while no process has written since:
every row would be found unchanged, so none is read (100k entries: ~70 ms
instead of ~360 ms of turning rows into tuples). The write generation is a
counter in ``meta`` that every write transaction bumps (:func:`bump`), so a
write by anyone, this process or another, disables the shortcut until the
next complete refresh. Does not own the row-by-row refresh (``refresh``).
"""

from __future__ import annotations

import hashlib
import marshal
from typing import TYPE_CHECKING

from ..cache.store import Transaction
from .rows import RefreshStats

if TYPE_CHECKING:
    import sqlite3

__all__ = ["bump", "digest", "generation", "key", "remember", "unchanged"]

_SKIPPED = "SELECT path, skipped FROM files WHERE skipped IS NOT NULL"
_BUMP = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation' RETURNING CAST(value AS INTEGER)"
_GENERATION = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'"


def bump(conn: sqlite3.Connection) -> int:
    """Count one more write; call inside every write transaction. Returns the new count."""
    return conn.execute(_BUMP).fetchone()[0]


def generation(conn: sqlite3.Connection) -> int:
    """How many write transactions the store has seen (any process's)."""
    row = conn.execute(_GENERATION).fetchone()
    return 0 if row is None else row[0]


def key(bounds: tuple[str, str] | None, max_bytes: int) -> str:
    return f"listing:{bounds[0] if bounds else ''}:{max_bytes}"


def digest(entries: list) -> str | None:
    """A digest of the listing exactly as given (order included); None when
    it holds values marshal cannot write (then the shortcut is not taken)."""
    try:
        # Version 2: no back-references, so the same entries give the same bytes every run.
        data = marshal.dumps(entries, 2)
    except ValueError:
        return None
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def unchanged(conn: sqlite3.Connection, key: str, digest: str, bounds: tuple[str, str] | None, *, count_skips: bool = True) -> RefreshStats | None:
    """The stats of a listing identical to the last one a refresh of this
    scope finished with, every row then trusted, with no write since.
    ``count_skips`` False (a partial listing: the store's skipped rows are not
    all its own): every listed path is counted unchanged."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    known, at, listed = row[0].split()
    if known != digest or int(at) != generation(conn):
        return None
    if not count_skips:
        skipped = []
    elif bounds is None:
        skipped = conn.execute(_SKIPPED).fetchall()
    else:
        skipped = conn.execute(f"{_SKIPPED} AND path >= ? AND path < ?", bounds).fetchall()
    counts: dict[str, int] = {}
    for _path, reason in skipped:
        counts[reason] = counts.get(reason, 0) + 1
    return RefreshStats(
        listed=int(listed),
        unchanged=int(listed) - len(skipped),
        skipped=dict(sorted(counts.items())),
        skipped_paths=tuple(sorted(skipped)),
        listing_unchanged=True,
    )


def remember(conn: sqlite3.Connection, key: str, digest: str, at: int, listed: int) -> None:
    """Record the listing a refresh left fully trusted, unless another
    process wrote since our last write (``at``)."""
    with Transaction(conn):
        if generation(conn) == at:
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                (key, f"{digest} {at} {listed}"),
            )
