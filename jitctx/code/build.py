"""The code index brought up to date in the background: one builder per index (issue 23).

Owns starting a build that no call waits for (a detached process at the
lowest priority, from the warm server too: a thread there would share the
interpreter lock with the calls it serves), making sure two never
build one index (an exclusive ``flock`` the builder holds for its life: a
killed builder leaves no lock behind), and telling how far it got (a small
status file the builder rewrites as it goes: ``done``/``total`` files).
A build is an ordinary incremental refresh: it commits a batch at a time,
so a killed one is resumed by the next (the rows it wrote are trusted,
the rest read again). Does not own what a refresh does (``code.refresh``)
or when a caller answers without waiting (``workspace``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable

from ..cache.folders import open_untrusted

__all__ = [
    "IN_MEMORY",
    "INLINE",
    "RETRY_SECONDS",
    "RUNNING_MAX",
    "Plan",
    "Progress",
    "build_here",
    "failed",
    "others_running",
    "plan",
    "progress",
    "start",
    "state",
    "stop",
    "waiting",
]

INLINE = 256  # files a call brings up to date itself (~0.2-0.4 s); more: the background builds them
SPARSE = 0.5  # share of the universe unindexed at which a call answers without the index
SMALL = 2_000  # files: at most this many (git's count), a tree without index is listed before the first pass
IN_MEMORY = 256  # files: an index that cannot be kept is still built in memory, each call (~1 s of CPU; 1,563 files took 9 s)
RUNNING_MAX = 2  # background builds of one cache folder at once: an agent touring repositories started one per tree
RETRY_SECONDS = 600  # a builder that could not write the store (full, read-only): not started again for this long
MERGE_MIN = 1000  # files a build's words part analysed, at least, for its lexical index to be merged before the definitions (issue 32)


class Progress:
    """A build under way: ``done`` of ``total`` files read (``total`` 0: still listing) in
    its ``phase``: ``words`` (paths and words, what ``locate`` needs), then ``definitions``
    (the files with a grammar parsed)."""

    __slots__ = ("done", "phase", "pid", "total")

    def __init__(self, done: int, total: int, pid: int, phase: str = "words") -> None:
        self.done, self.total, self.pid, self.phase = done, total, pid, phase

    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


class Plan:
    """How a call that needs the index answers: ``mode`` is ``current`` (nothing to do, or
    little enough to do now: ``work`` files to read, ``racy`` to hash again, done inline;
    an index that cannot be kept on a small tree: built in memory), ``partial`` (the
    index, with ``work`` changed and ``removed`` gone files not yet in it) or ``quick``
    (too little of the tree is indexed: a first pass without it). ``indexed``: how many of
    the ``listed`` files the index holds (``listed - len(work)`` when the files were compared);
    ``estimated``: ``listed`` is git's index count, the universe was not listed."""

    __slots__ = ("estimated", "indexed", "listed", "mode", "racy", "removed", "work")

    def __init__(self, mode: str, work: list[str], removed: list[str], listed: int, racy: list[str] | tuple[()] = (), indexed: int | None = None) -> None:
        self.mode, self.work, self.removed, self.listed, self.racy = mode, work, removed, listed, list(racy)
        self.indexed = listed - len(work) if indexed is None else indexed
        self.estimated = False

    def inline(self) -> bool:
        """Whether the call brings the index up to date itself."""
        return self.mode == "current" and bool(self.work or self.removed or self.racy)


def plan(code, list_paths: Callable[[], list[str]], entries: Callable[[list[str]], list], *, stored: bool, estimate: int | None = None) -> tuple[Plan, list | None]:
    """Decide for ``code`` (a ``structure.CodeIndex``) and the universe (``list_paths()``),
    and return the plan with the universe's ``entries(paths)`` (stat signatures), or None
    when the plan needed none: an index holding at most ``1 - SPARSE`` rows a listed file
    is answered without it whatever the signatures say (no 100k stats before a first
    answer), and, given an ``estimate`` of the universe's size (git's index count) above
    ``SMALL``, without listing it either (the first pass lists it beside its grep).
    ``stored``: the index lives on disk (in memory, every process would build it whole).
    Racy rows (indexed, only to be hashed again) count as indexed: a few hashes, no
    analysis; they are checked whenever the call refreshes."""
    rows = code.index.rows() if stored else 0  # once: a count over the files rows, on every call
    if estimate is not None and estimate > SMALL and rows <= (1 - SPARSE) * estimate:
        quick = Plan("quick", [], [], estimate, indexed=rows)
        quick.estimated = True
        return quick, None
    paths = list_paths()
    n = len(paths)
    if not stored and n > IN_MEMORY:
        return Plan("quick", [], [], n, indexed=0), None
    if stored and n > INLINE and rows <= (1 - SPARSE) * n:
        return Plan("quick", [], [], n, indexed=min(rows, n)), None
    listed = entries(paths)
    work, racy, removed = code.pending(listed)
    n = len(listed)
    if not stored:
        return Plan("current", work, removed, n, racy), listed
    if len(work) + len(removed) <= INLINE:
        if code.index.outlined()[1] > INLINE and code.index.path is not None:  # words current, definitions not: their part of a build
            start(str(code.repo.root), code.index.path)
        return Plan("current", work, removed, n, racy), listed
    if len(work) >= SPARSE * max(1, n):
        return Plan("quick", work, removed, n, racy), listed
    return Plan("partial", work, removed, n, racy), listed


def _paths(index_path: str) -> tuple[str, str]:
    index_path = os.fspath(index_path)
    return index_path + ".build.lock", index_path + ".build.json"


def progress(index_path: str) -> Progress | None:
    """The build of the index at ``index_path`` under way now, or ``None`` when none runs
    (its lock is free)."""
    import fcntl

    lock, status = _paths(index_path)
    try:
        fd = open_untrusted(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return None  # nobody holds it
    except OSError:
        pass
    finally:
        os.close(fd)
    try:
        d = _read(status)
        return Progress(int(d.get("done", 0)), int(d.get("total", 0)), int(d.get("pid", 0)), str(d.get("phase", "words")))
    except (OSError, ValueError, TypeError):
        return Progress(0, 0, 0)


def failed(index_path: str) -> str | None:
    """Why the last builder of the index at ``index_path`` could not write it, when that
    was less than ``RETRY_SECONDS`` ago (it left its reason in the status file); else None."""
    try:
        d = _read(_paths(index_path)[1])
        if "failed" in d and time.time() - float(d.get("updated", 0)) < RETRY_SECONDS:
            return str(d["failed"])
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return None


def start(root: str, index_path: str) -> bool:
    """Start a detached builder of ``root``'s index unless one runs; whether one runs now.
    The builder is this interpreter and this jitctx, in a process group of its own, stdio
    on ``/dev/null``, at the lowest priority (it must not slow the calls it serves). The
    lock is taken here and handed to it, so a call right after this one sees the build."""
    import fcntl

    try:
        lock_path, status = _paths(index_path)
        os.makedirs(os.path.dirname(lock_path), mode=0o700, exist_ok=True)
        fd = open_untrusted(lock_path, os.O_RDWR | os.O_CREAT)
    except OSError:
        return False  # something else at the lock's place (a folder, a link): no builder
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True  # a builder holds it
        if failed(index_path) is not None:
            return False  # it could not write the store a moment ago: calls answer without it for a while
        if waiting(index_path) is not None:
            return False  # a later call starts it, once one of those has ended
        _write(status, {"pid": 0, "done": 0, "total": 0, "updated": time.time()})
        from .. import procs

        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        code = procs.MARK + f"builder\nimport sys; sys.path.insert(0, {package_parent!r}); from jitctx.code.build import _main; sys.exit(_main(sys.argv[1:]))"
        try:  # the lock's descriptor and nothing else: not a caller's pipe the server holds during a call
            pid = procs.spawn([sys.executable, "-c", code, root, os.fspath(index_path), str(fd)], keep=(fd,))
        except OSError:
            return False
        _write(status, {"pid": pid, "done": 0, "total": 0, "updated": time.time()})
        return True
    finally:
        os.close(fd)  # the builder's copy holds the lock now


def build_here(root: str, index_path: str, *, nice: bool = True, locked: int | None = None, progress: Callable[[str, int, int], None] | None = None) -> int:
    """Build in this process (the detached builder's body, and ``jitctx index``): the words
    of every file first (paths, words, the facts ``locate`` needs), then the definitions of
    the files with a grammar (issue 32: the parse is two thirds of a build), each part an
    incremental refresh that commits as it goes. 0 when it ran to the end, 1 when another
    builder holds the lock, 2 when it failed, 3 when the store cannot be written (full,
    read-only: the reason is left in the status file for ``failed``, and no builder is
    started again for ``RETRY_SECONDS``). ``locked``: a descriptor of the lock already held
    (``start`` took it); ``progress(phase, done, total)``: told as files are done."""
    import fcntl

    lock_path, status = _paths(index_path)
    unwritable: str | None = None
    if locked is not None:
        fd = locked
    else:
        try:
            os.makedirs(os.path.dirname(lock_path), mode=0o700, exist_ok=True)
            fd = open_untrusted(lock_path, os.O_RDWR | os.O_CREAT)
        except OSError:
            return 2
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return 1
    try:
        if nice:
            import threading

            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # this thread and what it starts
            except (AttributeError, OSError):
                pass
        last = [0.0]

        def ticker(phase: str) -> Callable[[int, int], None]:
            def tick(done: int, total: int) -> None:
                if progress is not None:
                    progress(phase, done, total)
                now = time.monotonic()
                if now - last[0] >= 0.5 or done == total:
                    last[0] = now
                    _write(status, {"pid": os.getpid(), "phase": phase, "done": done, "total": total, "updated": time.time()})

            return tick

        _write(status, {"pid": os.getpid(), "phase": "words", "done": 0, "total": 0, "updated": time.time()})
        from ..cache.store import StoreUnavailable
        from ..repo.policy import DEFAULT_ALLOW, DEFAULT_DENY, PathPolicy
        from ..repo.universe import Repo, find_root
        from .structure import CodeIndex

        repo = Repo(find_root(root))  # as a Workspace of ``root`` finds it: the same index
        code = CodeIndex(repo, PathPolicy(repo.root, DEFAULT_DENY, DEFAULT_ALLOW))
        try:
            index = code.index
            if index.path is None:  # it could not even be opened for writing
                raise StoreUnavailable(index.notice or "the store cannot be opened")
            index.on_disk_only = True
            entries = code.entries()  # one listing for both parts
            code.refresh(entries=entries, complete=True, progress=ticker("words"), parts="words")
            if code.last is not None and code.last.analyzed >= MERGE_MIN:  # one segment before the definitions take its free pages
                index.merge_lexical()
            code.refresh(entries=entries, complete=True, progress=ticker("definitions"), outline_limit=None)
            if code.last is not None and code.last.analyzed + code.last.outlined > 1000:  # a build, not a few files brought up to date
                index.compact()
        except StoreUnavailable as exc:
            unwritable = exc.reason
            return 3
        finally:
            code.close()
            repo.close()
        return 0
    except Exception:  # noqa: BLE001 - a builder that fails leaves the index as it was; calls go on
        return 2
    finally:
        if unwritable is not None:  # kept, for the calls to read (``failed``); a full disk may refuse even that
            _write(status, {"pid": os.getpid(), "failed": unwritable, "updated": time.time()})
        else:
            try:
                os.unlink(status)
            except OSError:
                pass
        os.close(fd)  # the lock goes last


def stop(index_path: str, *, wait: float = 10.0) -> int | None:
    """Stop the background build of the index at ``index_path``: its process group (the
    builder and its workers) is sent SIGTERM, then SIGKILL if its lock is still held after
    ``wait`` seconds. The pid of the builder stopped, or None when none ran. What it
    committed stays: the next build goes on from there."""
    import signal

    got = progress(index_path)
    if got is None or got.pid <= 0 or not _is_builder(got.pid):
        return None
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(got.pid, sig)  # its own group (``start``): the workers go with it
        except ProcessLookupError:
            return got.pid
        except PermissionError:
            return None
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.waitpid(got.pid, os.WNOHANG)  # reaped, when this process started it
            except ChildProcessError:
                pass
            if progress(index_path) is None:
                _unlink(_paths(index_path)[1])
                return got.pid
            time.sleep(0.05)
    return got.pid


def waiting(index_path: str) -> str | None:
    """Why a build of the index at ``index_path`` waits for a later call ("2 other indexes
    are being built (at most 2 at once)"), or None when it may start."""
    others = others_running(index_path)
    return f"{others} other indexes are being built (at most {RUNNING_MAX} at once)" if others >= RUNNING_MAX else None


def others_running(index_path: str) -> int:
    """How many other indexes of the same cache folder are being built now: their status
    files name a builder that runs (read, not locked: probing another index's lock would
    make its own start see it held). Seven trees touched within a minute had seven builders,
    each with its workers, at once."""
    mine = _paths(index_path)[1]
    folder = os.path.dirname(mine)
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    count = 0
    for name in names:
        path = os.path.join(folder, name)
        if not name.endswith(".build.json") or path == mine:
            continue
        try:
            pid = int(_read(path).get("pid", 0))
        except (OSError, ValueError, TypeError, AttributeError):
            continue
        count += pid > 0 and _is_builder(pid)
    return count


def _is_builder(pid: int) -> bool:
    """Whether ``pid`` runs this module's builder (not a pid the system gave to another)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"jitctx.code.build import _main" in f.read()
    except OSError:
        return os.path.isdir("/proc") is False  # no /proc to ask: trust the lock


def state(code) -> dict:
    """How the index of ``code`` (a ``structure.CodeIndex``) stands, for ``jitctx index
    --status``: ``built`` (the store exists and holds rows), ``behind`` (files new, changed
    or still to be parsed, plus files gone), ``building`` (the background build's phase,
    done and total, or None), ``failed`` (why the last builder could not write), ``bytes``
    (the store on disk), ``path``."""
    index = code.index
    path = index.path
    out: dict = {"path": path, "built": False, "behind": None, "building": None, "failed": None, "bytes": 0}
    if path is None:
        out["failed"] = index.notice
        return out
    out["bytes"] = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    rows, waiting = index.outlined()
    out["built"] = rows > 0
    got = progress(path)
    if got is not None:
        out["building"] = {"phase": got.phase, "done": got.done, "total": got.total, "pid": got.pid}
    out["failed"] = failed(path)
    work, _racy, removed = code.pending(code.entries(), parts="all")
    out["behind"] = len(work) + len(removed)
    out["files"], out["to_parse"] = rows, waiting
    return out


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _write(path: str, data: dict) -> None:
    """The status file, replaced whole (a new file of our own, never a link followed)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        try:
            os.unlink(tmp)  # a killed builder's with the same pid (the name, not what it may point to)
        except FileNotFoundError:
            pass
        fd = open_untrusted(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        pass


def _read(path: str) -> dict:
    """The status file's data (``OSError``/``ValueError`` when it cannot be had)."""
    with os.fdopen(open_untrusted(path, os.O_RDONLY), encoding="utf-8") as f:
        data = json.loads(f.read(1 << 16))
    if not isinstance(data, dict):
        raise ValueError("not a status")
    return data


def _main(argv: list[str]) -> int:
    """The detached builder: ``ROOT INDEX_PATH LOCK_FD``."""
    if len(argv) != 3 or not argv[2].isdigit():
        return 2
    return build_here(argv[0], argv[1], locked=int(argv[2]))
