"""Folder entry events for the server's kept listing, through watchdog's inotify reader.

Owns :class:`TreeWatch` (one native watch per chosen folder, events read in
the order the kernel queued them, a barrier that makes a drain return every
event queued before it) and ``warm`` (the native observer imported ahead of
its first use). watchdog enters jitctx here and in ``watcher`` (its
observers), imported lazily. Does not own which folders are watched or what
an event means for the listing (``server.kept_listing``).
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["TreeWatch", "warm"]


def warm() -> None:
    """Import the native observer ahead of its first use (the server, before it takes calls)."""
    from watchdog.observers import inotify_c  # noqa: F401


class TreeWatch:
    """Entry events (created, deleted, moved) of chosen folders, one native watch each,
    read in the order the kernel queued them, with a barrier.

    Linux inotify through watchdog's ``InotifyFD`` (an instance of its own: its
    thread reads one queue for every folder, so events keep their order). The
    callbacks only collect; :meth:`drain` makes a barrier event in a private
    folder and waits until the reader got to it, so it returns every event queued
    before the call (a file created by the caller just before it asked is never
    missed).
    ``overflowed`` turns true when the kernel dropped events. Raises ``OSError``
    where inotify cannot be used (``add`` raises ``ENOSPC`` past the user's watch limit).
    """

    def __init__(self, private_dir: str) -> None:
        from watchdog.observers.inotify_c import InotifyConstants as C
        from watchdog.observers.inotify_c import InotifyFD

        self._C = C
        entries = C.IN_CREATE | C.IN_DELETE | C.IN_MOVED_FROM | C.IN_MOVED_TO | C.IN_DELETE_SELF | C.IN_MOVE_SELF
        # writes too (modify, close after writing): the listing must hear of a changed .gitignore
        self.mask = entries | C.IN_MODIFY | C.IN_CLOSE_WRITE | C.IN_ONLYDIR | C.IN_DONT_FOLLOW | C.IN_EXCL_UNLINK
        self.overflowed = False
        self._events: list[tuple[int, int, bytes]] = []
        self._cv = threading.Condition()
        self._asked = 0
        self._reached = 0
        self._fd = InotifyFD()
        self._fd.start()
        import tempfile

        self._barrier_dir = tempfile.mkdtemp(prefix="barrier-", dir=private_dir)
        try:
            self._barrier = self._fd.add_callback(os.fsencode(self._barrier_dir), C.IN_CREATE | C.IN_ONLYDIR, self, "barrier")  # type: ignore[arg-type]
        except OSError:
            self.close()
            raise

    def add(self, path: str, key: str) -> int:
        """Watch the folder ``path`` (``key`` names it for :meth:`remove`); its watch descriptor."""
        return self._fd.add_callback(os.fsencode(path), self.mask, self, key)  # type: ignore[arg-type]

    def remove(self, wd: int, key: str) -> None:
        self._fd.remove_callbacks([(wd, key)])  # type: ignore[list-item]

    def drain(self, timeout: float = 1.0) -> list[tuple[int, int, bytes]] | None:
        """Every event queued before this call, as (wd, mask, name); ``None`` when the
        barrier did not come back within ``timeout`` (then nothing was taken)."""
        with self._cv:
            self._asked += 1
            k = self._asked
        name = os.path.join(self._barrier_dir, f"b{k}")
        os.close(os.open(name, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        os.unlink(name)
        deadline = time.monotonic() + timeout
        with self._cv:
            while self._reached < k:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cv.wait(left)
            events, self._events = self._events, []
            return events

    # watchdog's callbacks, on its reader thread
    def on_event(self, event) -> None:
        with self._cv:
            if event.wd == self._barrier:
                if event.name.startswith(b"b") and event.name[1:].isdigit():
                    self._reached = max(self._reached, int(event.name[1:]))
                    self._cv.notify_all()
                return
            self._events.append((event.wd, event.mask, event.name))

    def on_watch_deleted(self, wd: int) -> None:
        with self._cv:
            self._events.append((wd, self._C.IN_IGNORED, b""))

    def on_queue_overflow(self) -> None:
        with self._cv:
            self.overflowed = True
            self._cv.notify_all()

    def close(self) -> None:
        """Stop the reader thread and drop every watch."""
        self._fd.stop()
        self._fd.join(2.0)
        try:
            os.rmdir(self._barrier_dir)
        except (OSError, AttributeError):
            pass
