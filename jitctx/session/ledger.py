"""Staleness: what was delivered to the agent, and whether it changed since.

Owns the ledger of delivered files (preload blocks, head/tail reads, just-in-
time instructions) with their content hash and HEAD, and judging staleness by
content (a pure function, :func:`judge`; a file rewritten with the same bytes
is not stale). Thread-safe. Does not own noticing changes as they happen
(``watcher``), which HEAD counts as "moved" for a session, or refreshing the
prefix (the Workspace). No third-party imports.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..refs import Delivered

__all__ = ["MISSING", "Delivery", "Ledger", "Seen", "hash_file", "judge", "observe", "stat_sig"]

HASH_LIMIT = 8 * 1024 * 1024  # larger files are judged by size, mtime, inode and ctime only
RACY_NS = 2_000_000_000  # a file written this close to when it was hashed is re-hashed (coarse clocks)


def hash_file(real: Path) -> str | None:
    """sha256 of a file's bytes; ``None`` if gone, unreadable or over 8 MiB."""
    try:
        if real.stat().st_size > HASH_LIMIT:
            return None
    except OSError:
        return None
    import hashlib  # not at start-up: ~3 ms

    h = hashlib.sha256()
    try:
        with open(real, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Seen:
    """A file as observed once: ``exists``; ``sig`` = (size, mtime_ns, inode,
    ctime_ns); ``sha256`` of its bytes (``None`` when missing or over 8 MiB);
    ``at_ns`` = when it was observed (wall clock, to spot racy mtimes)."""

    exists: bool
    sig: tuple[int, int, int, int] | None = None
    sha256: str | None = None
    at_ns: int = 0

    @property
    def racy(self) -> bool:
        """Written so close to the observation that a same-size rewrite could keep its mtime."""
        return self.sig is not None and self.at_ns - self.sig[1] < RACY_NS


MISSING = Seen(False)


@dataclass(frozen=True, slots=True)
class Delivery:
    """One file as it was when delivered to the agent.

    ``path``: repo-relative; ``real``: resolved absolute path; ``kind``:
    preload | read | instructions; ``head``: HEAD sha at delivery;
    ``seen``: its content then (``seen.exists`` is false for a candidate that
    did not exist, so its appearance can be reported); ``named``: the
    absolute path as named, when a symlink made it differ from ``real``
    (``AGENTS.md -> CLAUDE.md``): it is resolved again at every check, so a
    link pointed elsewhere, or replaced by a file, is judged by what it
    leads to now.
    """

    path: str
    real: Path
    kind: str
    head: str | None
    seen: Seen
    named: Path | None = None

    @property
    def sha256(self) -> str | None:
        return self.seen.sha256

    def real_now(self) -> Path:
        """Where the delivered name leads now."""
        return Path(os.path.realpath(self.named)) if self.named is not None else self.real

    @property
    def watch_paths(self) -> tuple[Path, ...]:
        """The paths whose changes can make this delivery stale: the file, and the link naming it."""
        return (self.real,) if self.named is None else (self.real, self.named)


def judge(d: Delivery, now: Seen, head: str | None) -> dict | None:
    """Pure staleness verdict: the stale entry for ``d`` given ``now``, or ``None``.

    Content decides: a file rewritten with the same bytes is not stale; a file
    over 8 MiB (no hash) is stale when its size, mtime, inode or ctime moved.
    """
    was = d.seen
    if not was.exists and not now.exists:
        return None
    if not now.exists:
        change = "deleted"
    elif not was.exists:
        change = "added"
    elif was.sha256 is not None and now.sha256 is not None:
        if was.sha256 == now.sha256:
            return None
        change = "changed"
    elif was.sig == now.sig:
        return None
    else:
        change = "changed"
    return {"path": d.path, "kind": d.kind, "change": change, "old_head": d.head, "new_head": head}


def stat_sig(real: Path) -> tuple[int, int, int, int] | None:
    try:
        st = real.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def observe(real: Path, last: Seen | None = None, *, full: bool = False) -> Seen:
    """Look at ``real`` now; reuse ``last``'s hash when its stat signature is
    unchanged and not racy (unless ``full``)."""
    sig = stat_sig(real)
    if sig is None:
        return MISSING
    if not full and last is not None and last.exists and last.sig == sig and not last.racy:
        return last
    at = time.time_ns()
    sha = hash_file(real) if sig[0] <= HASH_LIMIT else None
    if sha is None and sig[0] <= HASH_LIMIT and stat_sig(real) is None:
        return MISSING  # vanished while hashing
    return Seen(True, sig, sha, at)


class Ledger:
    """Thread-safe record of delivered files; ``check`` lists the stale ones.

    One delivery per path: the latest wins (re-reading a file the agent was
    told is stale makes it fresh again). ``listen`` registers a callback run on
    every ``record`` (the watcher uses it to watch the new file's directory).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, Delivery] = {}
        self._seen: dict[str, Seen] = {}  # path -> last observation (a hash cache)
        self._listeners: list[Callable[[Delivery], None]] = []

    def record_all(self, delivered: Iterable[Delivered], head: str | None) -> None:
        """Record each of ``delivered`` at ``head`` (see :meth:`record`)."""
        for d in delivered:
            self.record(d.path, d.real, d.kind, head, named=d.named)

    def record(self, path: str, real: Path, kind: str, head: str | None, *, named: Path | None = None, seen: Seen | None = None) -> None:
        """Note that ``path`` (resolved: ``real``) was delivered now, at ``head``.

        A path that does not exist is recorded as absent: if it appears later,
        it is reported as ``added`` (preload may record candidates it skipped).
        ``named``: the absolute path before resolving, kept when it differs
        from ``real`` (see :class:`Delivery`). ``seen``: the file as the read that
        delivered it found it (the hash of the bytes shown); else it is looked at
        now, which a writer between that read and this call would make wrong.
        """
        real = Path(real)
        named = Path(named) if named is not None and Path(named) != real else None
        d = Delivery(path, real, kind, head, seen if seen is not None else observe(real), named)
        with self._lock:
            self._items[path] = d
            self._seen[path] = d.seen
            listeners = list(self._listeners)
        for fn in listeners:
            fn(d)

    def check(self, head: str | None, *, full: bool = False) -> list[dict]:
        """Stale entries (sorted by path): delivered files whose content changed,
        vanished or appeared. ``full`` re-hashes every file (after HEAD moved)."""
        with self._lock:
            items = list(self._items.values())
            seen = dict(self._seen)
        out, fresh = [], {}
        for d in items:
            # the last observation is reused only on an identical stat
            # signature (inode included): a link's new target is hashed
            now = observe(d.real_now(), seen.get(d.path), full=full)
            fresh[d.path] = now
            entry = judge(d, now, head)
            if entry is not None:
                out.append(entry)
        with self._lock:
            for path, now in fresh.items():
                if path in self._items:
                    self._seen[path] = now
        out.sort(key=lambda e: e["path"])
        return out

    def deliveries(self) -> list[Delivery]:
        """Every tracked delivery, sorted by path."""
        with self._lock:
            return sorted(self._items.values(), key=lambda d: d.path)

    def forget(self, paths: Iterable[str] = (), *, kind: str | None = None) -> None:
        """Stop tracking ``paths``, and every delivery of ``kind`` if given."""
        drop = set(paths)
        with self._lock:
            if kind is not None:
                drop |= {p for p, d in self._items.items() if d.kind == kind}
            for p in drop:
                self._items.pop(p, None)
                self._seen.pop(p, None)

    def listen(self, fn: Callable[[Delivery], None]) -> None:
        with self._lock:
            self._listeners.append(fn)

    def unlisten(self, fn: Callable[[Delivery], None]) -> None:
        with self._lock:
            if fn in self._listeners:
                self._listeners.remove(fn)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
