"""Staleness: a ledger of what was delivered, re-checked on every request.

Owns the record of delivered files (preload blocks, head/tail reads, just-in-
time instructions) with their content hash and HEAD, and deciding which went
stale. watchdog enters jitctx here (the observer comes with the watcher
issue). Uses only ``repo``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Delivery", "Ledger", "hash_file"]


HASH_LIMIT = 8 * 1024 * 1024  # larger files are judged by size and mtime only


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
class Delivery:
    """One file as it was when delivered to the agent."""

    path: str
    real: Path
    kind: str  # preload | read | instructions
    sha256: str | None
    size: int
    mtime_ns: int
    head: str | None


class Ledger:
    """Thread-safe record of delivered files; ``check`` lists the stale ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, Delivery] = {}

    def record(self, path: str, real: Path, kind: str, head: str | None) -> None:
        try:
            st = real.stat()
        except OSError:
            return
        d = Delivery(path, real, kind, hash_file(real), st.st_size, st.st_mtime_ns, head)
        with self._lock:
            self._items[path] = d

    def check(self, head: str | None) -> list[dict]:
        """Stale entries: delivered files whose content changed or vanished."""
        with self._lock:
            items = list(self._items.values())
        out = []
        for d in items:
            try:
                st = d.real.stat()
            except OSError:
                out.append(_entry(d, "deleted", head))
                continue
            if st.st_size == d.size and st.st_mtime_ns == d.mtime_ns:
                continue
            if d.sha256 is None or hash_file(d.real) != d.sha256:
                out.append(_entry(d, "changed", head))
        return out

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def _entry(d: Delivery, change: str, head: str | None) -> dict:
    return {"path": d.path, "kind": d.kind, "change": change, "old_head": d.head, "new_head": head}
