"""The watcher: notice HEAD moves and delivered-file changes as they happen.

Owns :class:`HeadWatcher`, which listens with watchdog's observers to the
git dir and the delivered files' directories (never the whole tree, write
events only), sorts each event (``event_kinds.classify``), debounces, and calls
back once things settle. watchdog enters jitctx here (its observers) and in
``tree_watch`` (the server's folder events), imported lazily (the CLI
start-up never pays for it). Does not sort events (``event_kinds``), hear
watchdog's overflow reports (``overflow``), judge staleness (``ledger``) or
decide what to tell the agent (the Workspace).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .event_kinds import GitPaths, classify
from .ledger import Delivery, Ledger, stat_sig
from .overflow import tap

__all__ = ["BUSY_CAP", "DEBOUNCE", "HeadWatcher", "MAX_WATCHED_DIRS", "POLL_INTERVAL"]

DEBOUNCE = 0.15  # seconds of quiet before a burst of events is judged
BUSY_CAP = 2.0  # seconds of quiet after which a git operation that holds its lock is judged anyway
POLL_INTERVAL = 0.5  # seconds between scans of the polling observer (and stat polls of delivered files)
MAX_WATCHED_DIRS = 256  # native watches on delivered files' directories; files beyond are polled by stat

log = logging.getLogger(__name__)


def _event_filter():
    from watchdog.events import (
        DirCreatedEvent,
        DirDeletedEvent,
        DirMovedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )

    # Write events only: no opens or closes (one grep over 19k files made 12,756 of them).
    return [FileModifiedEvent, FileCreatedEvent, FileDeletedEvent, FileMovedEvent, DirCreatedEvent, DirDeletedEvent, DirMovedEvent]


@dataclass
class _Armed:
    watch: Any  # watchdog's ObservedWatch
    ino: int


@dataclass
class _State:
    pending: set = field(default_factory=set)
    last: float = 0.0
    stopping: bool = False


class HeadWatcher:
    """Watches what can move HEAD or change a delivered file; calls back when settled.

    Watched, never the whole tree: the git dir (HEAD), the common dir
    (``packed-refs``), ``refs/heads/`` (recursively: branch names nest) and
    the directory of every file in ``ledger`` (each non-recursively; a
    directory that is gone is replaced by its closest existing ancestor until
    it is back). Events are write events only; after :data:`DEBOUNCE`
    seconds of quiet (longer while git holds ``HEAD.lock``/``index.lock`` or a
    rebase runs, up to :data:`BUSY_CAP`), ``on_settle(reasons)`` runs on the
    watcher's own thread with ``reasons`` a subset of ``{"head", "file",
    "overflow"}``; the callback judges what really changed.

    ``poll=True`` uses watchdog's polling observer; it is also used when
    native events are unavailable (``observer_kind`` says which runs).
    """

    def __init__(
        self,
        root: Path,
        git: GitPaths | None,
        ledger: Ledger,
        on_settle: Callable[[frozenset[str]], None],
        *,
        poll: bool = False,
        debounce: float = DEBOUNCE,
        busy_cap: float = BUSY_CAP,
        poll_interval: float = POLL_INTERVAL,
    ) -> None:
        self.root = Path(root)
        self.git = git
        self.ledger = ledger
        self.on_settle = on_settle
        self.poll = poll
        self.debounce = debounce
        self.busy_cap = busy_cap
        self.poll_interval = poll_interval
        self.observer_kind: str | None = None
        self._cond = threading.Condition()
        self._state = _State()
        self._observer: Any = None  # a watchdog observer, once started
        self._worker: threading.Thread | None = None
        self._armed: dict[str, _Armed] = {}
        self._arm_lock = threading.Lock()
        self._delivered: dict[str, str] = {}  # real path -> repo path
        self._polled: frozenset[str] = frozenset()  # delivered files polled by stat, not watched
        self._sigs: dict[str, tuple | None] = {}  # polled real path -> last stat signature

    # -- lifecycle ----------------------------------------------------------

    def start(self) -> HeadWatcher:
        if self._worker is not None:
            return self
        self._observer = self._make_observer(self.poll)
        self._observer.start()
        try:
            self._rearm()
        except OSError as exc:
            if self.observer_kind != "native":
                raise
            # inotify limits reached (instances or watches): poll instead, slower but exact
            log.warning("native file events unavailable (%s): polling every %g s instead", exc, self.poll_interval)
            self._stop_observer()
            self._armed.clear()
            self._observer = self._make_observer(True)
            self._observer.start()
            self._rearm()
        self.ledger.listen(self._on_record)
        tap(self, True)
        self._worker = threading.Thread(target=self._run, name="jitctx-watch", daemon=True)
        self._worker.start()
        return self

    def stop(self) -> None:
        """Stop and join every thread this watcher started; safe to call twice."""
        tap(self, False)
        self.ledger.unlisten(self._on_record)
        with self._cond:
            self._state.stopping = True
            self._cond.notify_all()
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join()
        self._worker = None
        self._stop_observer()

    def _stop_observer(self) -> None:
        obs, self._observer = self._observer, None
        if obs is not None:
            obs.stop()
            if obs.is_alive():
                obs.join()
            for emitter in list(getattr(obs, "emitters", ())):
                if emitter.is_alive():
                    emitter.join()

    def _make_observer(self, poll: bool):
        if not poll:
            try:
                from watchdog.observers import Observer

                obs = Observer()
                if type(obs).__name__ != "PollingObserver":
                    self.observer_kind = "native"
                    return obs
            except Exception as exc:  # no native backend on this platform or libc
                log.info("native file events unavailable (%s); polling", exc)
        from watchdog.observers.polling import PollingObserver

        self.observer_kind = "polling"
        return PollingObserver(timeout=self.poll_interval)

    # -- what to watch --------------------------------------------------------

    def _wanted(self) -> tuple[dict[str, bool], frozenset[str]]:
        """(directory -> recursive?, delivered files to poll by stat instead).

        The polling observer scans each watched directory on its own thread,
        so in polling mode delivered files are all polled by ``stat`` from the
        worker (one thread); natively, directories past
        :data:`MAX_WATCHED_DIRS` are polled the same way.
        """
        want: dict[str, bool] = {}
        if self.git is not None:
            want[self.git.git_dir] = False
            want[self.git.common_dir] = False
            if os.path.isdir(self.git.heads):
                want[self.git.heads] = True
        if self.observer_kind == "polling":
            return want, frozenset(self._delivered)
        root = str(self.root)
        polled = set()
        dirs = 0
        for real in sorted(self._delivered):
            d = os.path.dirname(real)
            while not os.path.isdir(d) and d != root and os.path.dirname(d) != d:
                d = os.path.dirname(d)  # gone for now: watch where it would come back
            if d not in want:
                if dirs >= MAX_WATCHED_DIRS:
                    polled.add(real)
                    continue
                dirs += 1
                want[d] = False
        return want, frozenset(polled)

    def _rearm(self) -> None:
        """Bring the scheduled watches in line with what should be watched."""
        obs = self._observer
        if obs is None:
            return
        deliveries = self.ledger.deliveries()
        self._delivered = {str(p): d.path for d in deliveries for p in d.watch_paths}
        with self._arm_lock:
            want, polled = self._wanted()
            if polled != self._polled:
                sig_at_delivery = {str(p): d.seen.sig for d in deliveries for p in d.watch_paths}
                with self._cond:
                    self._sigs = {r: self._sigs[r] if r in self._sigs else sig_at_delivery.get(r) for r in polled}
                    self._polled = polled
                    self._cond.notify_all()  # the worker switches between blocking and timed waits
            alive = {id(e.watch): e.is_alive() for e in list(obs.emitters)}
            for path in [p for p in self._armed if p not in want]:
                self._unschedule(obs, path)
            for path, recursive in want.items():
                try:
                    ino = os.stat(path).st_ino
                except OSError:
                    self._unschedule(obs, path)
                    continue
                armed = self._armed.get(path)
                if armed is not None and armed.ino == ino and alive.get(id(armed.watch), False):
                    continue
                self._unschedule(obs, path)
                watch = obs.schedule(_Handler(self), path, recursive=recursive, event_filter=_event_filter())
                self._armed[path] = _Armed(watch, ino)

    def _unschedule(self, obs, path: str) -> None:
        armed = self._armed.pop(path, None)
        if armed is not None:
            try:
                obs.unschedule(armed.watch)
            except (KeyError, OSError):
                pass

    def watched(self) -> dict[str, bool]:
        """The directories watched now (path -> recursive)."""
        with self._arm_lock:
            return {p: bool(a.watch.is_recursive) for p, a in self._armed.items()}

    def _on_record(self, d: Delivery) -> None:
        paths = [str(p) for p in d.watch_paths]
        if any(self._delivered.get(p) != d.path for p in paths):
            # copy on write: the observer thread reads it
            self._delivered = {**self._delivered, **{p: d.path for p in paths}}
        if any(p not in self._polled and os.path.dirname(p) not in self._armed for p in paths):
            try:
                self._rearm()
            except OSError as exc:
                log.warning("cannot watch %s: %s", os.path.dirname(paths[-1]), exc)

    # -- events -------------------------------------------------------------

    def on_event(self, event) -> None:
        """Feed one watchdog event (the observer's thread calls this; tests may too)."""
        paths = (os.fsdecode(event.src_path), os.fsdecode(getattr(event, "dest_path", "") or ""))
        kind = classify(paths, self.git, self._delivered)
        if kind is None:
            return
        if kind == "file" and event.is_directory:
            kind = "dir"  # a directory came or went: re-arm before judging
        self.signal(kind)

    def signal(self, reason: str) -> None:
        """Note that something may have changed; the worker judges once quiet."""
        with self._cond:
            self._state.pending.add(reason)
            self._state.last = time.monotonic()
            self._cond.notify_all()

    def _poll_files(self) -> None:
        """A stat of each polled delivered file; a changed signature is an event.

        Called with the condition held; cheap (a ``stat`` per file, no hashing).
        """
        sigs = {real: stat_sig(Path(real)) for real in self._polled}
        last, self._sigs = self._sigs, sigs
        if any(last.get(r, sig) != sig for r, sig in sigs.items()):
            self._state.pending.add("file")
            self._state.last = time.monotonic()

    def _run(self) -> None:
        st = self._state
        while True:
            with self._cond:
                while True:
                    if st.stopping:
                        return
                    if not st.pending:
                        if self._polled:
                            if not self._cond.wait(self.poll_interval):
                                self._poll_files()
                        else:
                            self._cond.wait()  # idle: no wake-ups at all
                        continue
                    quiet = time.monotonic() - st.last
                    if quiet < self.debounce:
                        self._cond.wait(self.debounce - quiet)
                        continue
                    if self.git is not None and quiet < self.busy_cap and self.git.busy():
                        self._cond.wait(min(0.05, self.busy_cap - quiet))
                        continue
                    reasons = frozenset(st.pending)
                    st.pending.clear()
                    break
            if reasons & {"dir", "overflow", "head"}:
                try:
                    self._rearm()
                except OSError as exc:
                    log.warning("cannot re-arm watches: %s", exc)
            try:
                self.on_settle(frozenset(r if r != "dir" else "file" for r in reasons))
            except Exception:  # a failing callback must not kill the watcher
                log.exception("jitctx watcher callback failed")


class _Handler:
    """Forwards watchdog events to the watcher (duck-typed: watchdog only calls ``dispatch``)."""

    def __init__(self, watcher: HeadWatcher) -> None:
        self.watcher = watcher

    def dispatch(self, event) -> None:
        self.watcher.on_event(event)
