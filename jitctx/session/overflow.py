"""The overflow tap: watchdog's log line about a kernel queue overflow, turned into a re-check.

watchdog reports that the kernel dropped events (inotify's queue overflowed)
only in its log. Owns a handler on watchdog's loggers, there while any watcher
listens, that tells each listening watcher ``signal("overflow")`` (it then
re-checks everything). Attaches by logger name: imports no watchdog. Does not
own watching (``watcher``).
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Protocol

__all__ = ["Signalled", "tap"]


class Signalled(Protocol):
    """What the tap tells: a watcher's ``signal(reason)``."""

    def signal(self, reason: str) -> None: ...


class _OverflowTap(logging.Handler):
    """watchdog reports a kernel queue overflow only in its log; turn that into a full re-check."""

    watchers: weakref.WeakSet[Signalled] = weakref.WeakSet()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a malformed record is not ours to fix
            return
        if "overflow" in text.lower():
            for w in list(self.watchers):
                w.signal("overflow")


_TAP = _OverflowTap(logging.WARNING)
_TAP_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")
_tap_lock = threading.Lock()


def tap(watcher: Signalled, on: bool) -> None:
    """Hear watchdog's overflow reports for ``watcher`` (``on``), or no longer; the tap is
    on watchdog's loggers while any watcher listens."""
    with _tap_lock:
        if on:
            _OverflowTap.watchers.add(watcher)
        else:
            _OverflowTap.watchers.discard(watcher)
        for name in _TAP_LOGGERS:
            lg = logging.getLogger(name)
            if _OverflowTap.watchers and _TAP not in lg.handlers:
                lg.addHandler(_TAP)
            elif not _OverflowTap.watchers and _TAP in lg.handlers:
                lg.removeHandler(_TAP)
