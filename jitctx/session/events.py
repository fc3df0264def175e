"""A session's event streams: what ``watch`` yields as HEAD moves and files go stale.

Owns the one watcher a session runs while someone listens (started by the
first stream or by ``start_watching``, stopped by the stream that started it
or by ``close``), the subscribers' queues, and the news last announced (HEAD
and the stale set), so that a settled burst of file events becomes at most
one ``head_moved`` and one ``stale`` event. Does not own deciding what is
stale (``ledger``), watching the file system (``watcher``) or refreshing the
prefix (the ``Workspace``, called back).
"""

from __future__ import annotations

import math
import queue
import threading
import time

from ..errors import QueryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ..repo.universe import Repo
    from .ledger import Ledger
    from .watcher import HeadWatcher

__all__ = ["Events"]


class Events:
    """The watcher and the ``watch`` streams of one session, under its ``lock``.

    What it asks of the session: its ``root``, its ``repo`` and ``ledger`` (as
    they are now: a session may change them), the ``stale`` entries at a HEAD
    (``full``: re-hash every file), the first event of a stream that refreshes
    (``begin``) and the event of a refresh (``refreshed``)."""

    def __init__(
        self,
        lock: threading.RLock,
        *,
        root: Path,
        repo: Callable[[], Repo],
        ledger: Callable[[], Ledger],
        stale: Callable[[str | None, bool], list[dict]],
        begin: Callable[[], dict],
        refreshed: Callable[[], dict],
    ) -> None:
        self._lock, self._root, self._repo, self._ledger = lock, root, repo, ledger
        self._stale, self._begin, self._refreshed = stale, begin, refreshed
        self.watcher: HeadWatcher | None = None  # running while someone listens
        self.announced: tuple = (None, ())  # (HEAD, stale keys) last announced to subscribers
        self.subscribers: tuple = ()  # queues of running watch generators

    def start(self, poll: bool = False):
        """Start the watcher (idempotent) and return it."""
        from .event_kinds import GitPaths
        from .watcher import HeadWatcher

        with self._lock:
            if self.watcher is None:
                repo = self._repo()
                layout = repo.git
                git = GitPaths(str(layout.git_dir), str(layout.common_dir)) if layout is not None else None
                head = repo.head()
                self.announced = (head, stale_keys(self._stale(head, False)))
                watcher = HeadWatcher(self._root, git, self._ledger(), self.on_settle, poll=poll)
                watcher.start()
                self.watcher = watcher
            return self.watcher

    def close(self) -> None:
        """Stop the watcher and end every stream (their threads return)."""
        with self._lock:
            watcher, self.watcher = self.watcher, None
            subscribers = self.subscribers
        for q in subscribers:
            q.put(None)
        if watcher is not None:
            watcher.stop()  # outside the lock: its thread may be waiting for it

    def on_settle(self, reasons: frozenset) -> None:
        """The watcher's callback: turn a settled burst of events into stream events."""
        events = []
        with self._lock:
            repo = self._repo()
            head = repo.head()
            old_head, old_keys = self.announced
            if head != old_head:
                events.append({"event": "head_moved", "old_head": old_head, "new_head": head, "branch": repo.branch()})
            stale = self._stale(head, "overflow" in reasons)
            keys = stale_keys(stale)
            if keys != old_keys:
                events.append({"event": "stale", "git_head": head, "stale": stale})
            self.announced = (head, keys)
            subscribers = self.subscribers
        for event in events:
            for q in subscribers:
                q.put(event)

    def stream(self, timeout: float | None = None, poll: bool = False, *, refresh: bool = True):
        """The events of :meth:`Workspace.watch` (its docstring says what they are)."""
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or math.isnan(timeout) or timeout < 0):
            raise QueryError(f"timeout must be a number of seconds >= 0, got {timeout!r}", hint="pass e.g. timeout=30, or None to watch until interrupted", timeout=timeout)
        if timeout is not None and math.isinf(timeout):
            timeout = None  # no time cap
        deadline = None if timeout is None else time.monotonic() + timeout
        q: queue.Queue = queue.Queue()
        with self._lock:
            started = self.watcher is None
            first = self._begin() if refresh else None
            self.start(poll=poll)
            self.subscribers = (*self.subscribers, q)  # subscribed now: nothing from here on is missed
        return self._events(q, first, deadline, refresh, started)

    def _events(self, q, first: dict | None, deadline: float | None, refresh: bool, started: bool):
        try:
            if first is not None:
                yield first
            while True:
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    return
                try:
                    # a far deadline is waited for in steps: Queue.get refuses waits past TIMEOUT_MAX
                    event = q.get(timeout=None if wait is None else min(wait, threading.TIMEOUT_MAX))
                except queue.Empty:
                    continue  # the deadline check above ends the stream
                if event is None:  # close()
                    return
                yield event
                if refresh and event["event"] == "stale" and event["stale"]:
                    yield self._refreshed()
        finally:
            with self._lock:
                self.subscribers = tuple(s for s in self.subscribers if s is not q)
                watcher = self.watcher if started and not self.subscribers else None
                if watcher is not None:
                    self.watcher = None
            if watcher is not None:
                watcher.stop()


def stale_keys(stale: list[dict]) -> tuple:
    """What makes two stale lists "the same news": paths and what happened to them."""
    return tuple((s["path"], s["change"]) for s in stale)
