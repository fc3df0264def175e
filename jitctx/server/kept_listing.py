"""The file universe of a work tree, kept in memory by the warm server: exact or not used.

Owns one root's listing between calls: the tracked paths (git's index, read
again when the index file is replaced) and the untracked-not-ignored ones
(git's answer, kept current by native events on every folder git walks:
``watcher.TreeWatch``). Each call asks :meth:`LiveListing.listing`, which
first takes every event queued before the call (a barrier), applies them
(what git says about the new paths and folders, deletions at once), and
answers only when nothing can be missing: a kernel queue overflow, a
changed ignore rule (any ``.gitignore``, ``info/exclude``, the excludes
file, a config file that could name one), a path git would block on, or a
barrier that did not come back send the call to git's own listing instead
(``repo``), and a rebuild starts in the background. A periodic check of
the folders' signatures catches what native events missed (a network file
system) with git's racy-timestamp rule: a folder changed in the tick it was
looked at is looked at again. Does not own what the universe is (``repo``
is the reference) or starting git (``gitcmd``).
"""

from __future__ import annotations

import bisect
import errno
import logging
import os
import stat
import threading
import time
from pathlib import Path

from ..errors import RepoError
from ..repo import gitcmd, ignore

TYPE_CHECKING = False  # as typing's (no typing import on the server's start)
if TYPE_CHECKING:
    from ..session.tree_watch import TreeWatch

__all__ = ["CHECK_EVERY", "MAX_CANDIDATES", "LiveListing"]

log = logging.getLogger(__name__)

LIMIT_RETRY = 60.0  # seconds before a listing that met the user's inotify limits is tried again
_LIMITS = {
    errno.EMFILE: "the user's inotify instances are used up (fs.inotify.max_user_instances)",
    errno.ENOSPC: "the user's inotify watches are used up (fs.inotify.max_user_watches)",
    errno.ENFILE: "the system's open files are used up",
    errno.ENOMEM: "the kernel refused inotify the memory it needs",
}
RACY_NS = 2_000_000_000  # a folder or rule file modified this close to being looked at is looked at again
CHECK_EVERY = 10.0  # seconds between checks of the folders' signatures (while calls come)
MAX_CANDIDATES = 1024  # new paths asked of git by name in one call; more: their folders, then a rebuild
_REMOTE = ("nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse", "sshfs", "afs", "ceph", "glusterfs", "lustre", "gpfs", "davfs")


def _sig(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _lsig(path: str) -> tuple[int, int, int, int] | None:
    try:
        return _sig(os.lstat(path))
    except OSError:
        return None


_IN_CREATE, _IN_DELETE, _IN_MOVED_FROM, _IN_MOVED_TO = 0x100, 0x200, 0x40, 0x80  # inotify(7)
_ENTRY = _IN_CREATE | _IN_DELETE | _IN_MOVED_FROM | _IN_MOVED_TO


def _within(path: str, tops: set[str]) -> bool:
    """Whether ``path`` is one of ``tops`` or lies below one of them."""
    if path in tops:
        return True
    i = path.find("/")
    while i != -1:
        if path[:i] in tops:
            return True
        i = path.find("/", i + 1)
    return False


def _read(path: str) -> bytes | None:
    """A rule file's first MiB; ``None`` when it cannot be read now, or is not a regular file
    (a FIFO: opening one to read blocks until a writer comes, and git blocks on it too)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(1 << 20)
    except OSError:
        return None
    finally:
        os.close(fd)


def _rule_look(path: str) -> tuple:
    """A rule file's signature, with its bytes when it was written within the racy window."""
    sig = _lsig(path)
    return (sig, _read(path) if sig is not None and time.time_ns() - sig[2] < RACY_NS else None)


def remote_fs(root: str, mountinfo: str | None = None) -> str | None:
    """The file system type of ``root`` when native events may not see every change
    there (a network or FUSE mount), else ``None`` (from ``/proc/self/mountinfo``)."""
    if mountinfo is None:
        try:
            with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
                mountinfo = f.read()
        except OSError:
            return None
    mounts = mountinfo.splitlines()
    best, kind = "", None
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) < 5 or not right:
            continue
        point = fields[4].replace("\\040", " ")
        if (root == point or root.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
            best, kind = point, right.split()[0]
    if kind and (kind in _REMOTE or kind.split(".")[0] in _REMOTE):
        return kind
    return None


class LiveListing:
    """The universe of ``root`` (a git work tree) for the server's calls.

    ``start()`` builds it on a thread (git's listings, a watch per folder);
    ``listing(under)`` is ``(tracked, untracked)`` when it is exact now, else
    ``None``; ``is_listed(path)`` whether a path is in the universe (``None``:
    not known now). ``state`` says which, for ``jitctx serve --status``.
    """

    def __init__(self, root: Path, git_dir: Path, common_dir: Path, private_dir: str, excludes: str | None) -> None:
        self.root = root
        self._root = str(root)
        self._index = str(git_dir / "index")
        self._common = common_dir
        self._private = private_dir
        self._excludes = excludes
        self._lock = threading.RLock()
        self._watch: TreeWatch | None = None
        self._state = "not built"
        self.missed = 0  # folder changes the signature check found without an event
        self._ready = False
        self._building = False
        self._closed = False
        self._index_sig: tuple | None = None
        self._tracked: list[str] = []
        self._tracked_set: frozenset[str] = frozenset()
        self._sorted_tracked: list[str] = []
        self._untracked: set[str] = set()
        self._sorted_untracked: list[str] | None = None
        self._dirs: dict[str, int] = {}  # watched folder ("" is the root) -> watch descriptor
        self._wd: dict[int, str] = {}
        self._looks: dict[str, tuple] = {}  # folder -> (signature, its names when the signature was racy)
        self._rules: dict[str, tuple] = {}  # ignore-rule and config file -> (signature or None, bytes if racy)
        self._checked = time.monotonic()
        self._retry_at: float | None = None  # a build that met a machine limit: when to try again

    @property
    def state(self) -> str:
        """What the listing is now, in words (``jitctx serve --status``)."""
        if self._ready:
            return f"ready: {len(self._tracked):,} tracked, {len(self._untracked):,} untracked, {len(self._dirs):,} folders watched, {self.missed} changes found without an event"
        return self._state

    @state.setter
    def state(self, value: str) -> None:
        self._state = value

    # -- answers ------------------------------------------------------------------

    def listing(self, under: str = "") -> tuple[list[str], list[str]] | None:
        """The tracked paths (index order) and the untracked ones (sorted), under the folder
        ``under`` ("" for all), when the listing is exact now; else ``None``."""
        with self._lock:
            if not self._current():
                return None
            if self._sorted_untracked is None:
                self._sorted_untracked = sorted(self._untracked)
            if not under:
                return self._tracked, self._sorted_untracked
            return self._range(self._sorted_tracked, under), self._range(self._sorted_untracked, under)

    def is_listed(self, rel: str) -> bool | None:
        """Whether ``rel`` is in the universe; ``None`` when the listing is not exact now."""
        with self._lock:
            if not self._current():
                return None
            return rel in self._tracked_set or rel in self._untracked

    @staticmethod
    def _range(sorted_paths: list[str], under: str) -> list[str]:
        lo = bisect.bisect_left(sorted_paths, under + "/")
        hi = bisect.bisect_left(sorted_paths, under + "0")  # '0' follows '/'
        return sorted_paths[lo:hi]

    # -- life ---------------------------------------------------------------------

    def start(self) -> None:
        """Build in the background (a call meanwhile is answered by git's own listing)."""
        with self._lock:
            if self._building or self._closed:
                return
            self._building = True
            self._ready = False
        threading.Thread(target=self._build_safely, name="jitctx-listing", daemon=True).start()

    def wait(self, timeout: float) -> bool:
        """Wait until a build under way ends (tests, benchmarks); whether it is ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not self._building:
                    return self._ready
            time.sleep(0.01)
        return False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._ready = False
            watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()

    def _give_up(self, why: str) -> None:
        """Not exact any more: answer from git until a rebuild is done."""
        self._ready = False
        self.state = f"rebuilding ({why})"
        log.info("listing of %s: %s", self._root, why)
        self.start()

    def _build_safely(self) -> None:
        try:
            self._build()
        except Exception as exc:  # noqa: BLE001 - the server goes on with git's listings
            limit = _LIMITS.get(exc.errno or 0) if isinstance(exc, OSError) else None
            with self._lock:
                self._ready = False
                if limit is not None:  # a machine limit: slower calls, never failed ones; tried again later
                    self.state = f"not kept: {limit}; calls list with git (tried again {LIMIT_RETRY:g} s later)"
                    self._retry_at = time.monotonic() + LIMIT_RETRY
                else:
                    self.state = f"not used ({type(exc).__name__}: {exc})"
            log.warning("listing of %s: %s", self._root, self.state)
        finally:
            with self._lock:
                self._building = False

    def _build(self) -> None:
        from ..session.tree_watch import TreeWatch

        kind = remote_fs(self._root)
        if kind is not None:
            with self._lock:
                self.state = f"not used ({kind} file system: native events may miss changes)"
            return
        with self._lock:
            old, self._watch = self._watch, None
            self._dirs, self._wd, self._looks = {}, {}, {}
        if old is not None:
            old.close()
        self.state = "building"
        watch = TreeWatch(self._private)
        try:
            # the watches first: what changes while git lists comes as events
            dirs: dict[str, int] = {}
            self._watch_tree(watch, [""], dirs)
            rules = self._rule_sigs()
            looks = {d: self._look(d) for d in dirs}
            index_sig = _lsig(self._index)
            tracked = self._ls_tracked()
            untracked = self._ls_untracked([])
        except BaseException:
            watch.close()
            raise
        with self._lock:
            if self._closed:
                watch.close()
                return
            self._watch = watch
            self._dirs = dirs
            self._wd = {wd: d for d, wd in dirs.items()}
            self._looks = looks
            self._rules = rules
            self._index_sig = index_sig
            self._set_tracked(tracked)
            self._untracked = set(untracked)
            self._sorted_untracked = None
            self._ready = True
            self._checked = time.monotonic()
            self._building = False
            self._current()  # what changed while it was built
        log.info("listing of %s: %s", self._root, self.state)

    # -- git ----------------------------------------------------------------------

    def _git(self, args: list[str]) -> list[str]:
        proc = gitcmd.run(["--literal-pathspecs", *args], self._root)
        if proc.returncode != 0:
            raise RepoError(f"git {' '.join(args[:2])} failed (exit {proc.returncode})")
        return gitcmd.split_z(proc.stdout)

    def _ls_tracked(self) -> list[str]:
        return self._git(["ls-files", "-z", "--cached", "--deduplicate"])

    def _ls_untracked(self, specs: list[str]) -> list[str]:
        """git's untracked-not-ignored paths under ``specs`` (all of them when empty)."""
        from ..repo import listing

        if specs:
            return self._git(["ls-files", "-z", "--others", "--exclude-standard", "--", *specs])
        names = listing.untracked(self.root, balance=True)
        if names is None:
            raise RepoError("git ls-files --others failed")
        return names

    def _set_tracked(self, tracked: list[str]) -> None:
        self._tracked = tracked
        self._tracked_set = frozenset(tracked)
        self._sorted_tracked = sorted(tracked)

    # -- watching -----------------------------------------------------------------

    def _abs(self, d: str) -> str:
        return os.path.join(self._root, d) if d else self._root

    def _look(self, d: str) -> tuple:
        """A folder's signature, with its names when it was modified within the racy window
        (then a same-tick change keeps the signature: the names tell)."""
        path = self._abs(d)
        sig = _lsig(path)
        names = None
        if sig is not None and time.time_ns() - sig[2] < RACY_NS:
            try:
                names = frozenset(os.listdir(path))
            except OSError:
                names = frozenset()
        return sig, names

    def _watch_tree(self, watch, tops: list[str], dirs: dict[str, int]) -> None:
        """A watch on each of ``tops`` (when git walks it) and on every folder below that git walks:
        not ``.git``, not a folder an ignore rule matches (git never looks inside one: asked
        of ``git check-ignore``, a level at a time), not inside a nested repository or
        submodule (git lists it as one entry)."""
        skip = self._ignored([t for t in tops if t])
        level = [t for t in tops if t not in skip]
        taken = set(self._wd)
        while level:
            below: list[str] = []
            for rel in level:
                absdir = self._abs(rel)
                try:
                    if not stat.S_ISDIR(os.lstat(absdir).st_mode):
                        continue
                    wd = watch.add(absdir, rel or ".")
                except (FileNotFoundError, NotADirectoryError):
                    continue  # gone meanwhile: its parent's event says so
                if wd in taken:
                    raise RepoError(f"the folder {rel or '.'!r} is reachable under two names (a bind mount?)")
                taken.add(wd)
                dirs[rel] = wd
                try:
                    with os.scandir(absdir) as it:
                        entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
                except (FileNotFoundError, NotADirectoryError):
                    continue
                if rel and any(n == ".git" for n, _ in entries):
                    continue
                below += [f"{rel}/{name}" if rel else name for name, is_dir in entries if is_dir and name != ".git"]
            skip = self._ignored(below)
            level = [d for d in below if d not in skip]

    def _ignored(self, folders: list[str]) -> set[str]:
        """Which of ``folders`` an ignore rule matches (``check-ignore --no-index``, the
        rules alone: a tracked file below needs no watch, the index lists it)."""
        if not folders:
            return set()
        return {p.rstrip("/") for p in ignore.matched(Path(self._root), [f + "/" for f in folders])}

    def _unwatch(self, tops: set[str]) -> None:
        """Drop the watches of ``tops`` and every folder below them."""
        for d in [d for d in self._dirs if _within(d, tops)] if tops else []:
            wd = self._dirs.pop(d)
            self._wd.pop(wd, None)
            self._looks.pop(d, None)
            if self._watch is not None:
                try:
                    self._watch.remove(wd, d or ".")
                except OSError:
                    pass

    def _rule_sigs(self) -> dict[str, tuple]:
        """How every file outside the tree whose change can change what git ignores looks
        now (a ``.gitignore`` in the tree tells by its own events)."""
        home = os.path.expanduser("~")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files = {
            str(self._common / "info" / "exclude"),
            str(self._common / "config"),
            os.path.join(home, ".gitconfig"),
            os.path.join(xdg, "git", "config"),
            str(ignore.excludes_file(None)),  # git's default excludes file, read unless one is configured
            "/etc/gitconfig",
        }
        if os.environ.get("GIT_CONFIG_GLOBAL"):
            files.add(os.environ["GIT_CONFIG_GLOBAL"])
        if self._excludes:
            files.add(self._excludes)
        return {f: _rule_look(f) for f in files}

    def _rules_changed(self) -> bool:
        """Whether a rule file changed since it was looked at: its signature, or (written in
        the tick it was looked at, when a same-size rewrite keeps the signature) its bytes."""
        for f, (sig, data) in self._rules.items():
            if _lsig(f) != sig:
                return True
            if data is not None:
                if _read(f) != data:
                    return True
                if time.time_ns() - sig[2] > RACY_NS:
                    self._rules[f] = (sig, None)  # equal and out of the window: a later write shows in the signature
        return False

    # -- keeping current ------------------------------------------------------------

    def _current(self) -> bool:
        """Take every event queued until now and apply it; whether the listing is exact."""
        if not self._ready or self._watch is None:
            if self._retry_at is not None and time.monotonic() > self._retry_at and not self._building:
                self._retry_at = None
                self.start()  # the limits may have room again
            return False
        watch = self._watch
        events = watch.drain()
        if events is None:
            return False  # the barrier did not come back in time: not trusted for this call
        if watch.overflowed:
            self._give_up("the kernel's event queue overflowed")
            return False
        try:
            if events and not self._apply(events):
                return False
            if self._rules_changed():
                self._give_up("an ignore rule or git config file changed")
                return False
            self._sync_index()
            if time.monotonic() - self._checked > CHECK_EVERY:
                self._check_folders()
        except (OSError, RepoError) as exc:
            self._give_up(f"{type(exc).__name__}: {exc}")
            return False
        return self._ready

    def _apply(self, events: list[tuple[int, int, bytes]]) -> bool:
        """Deletions at once; new paths and folders as git lists them now."""
        from watchdog.observers.inotify_c import InotifyConstants as C  # loaded by the watch already

        removed: set[str] = set()
        files: set[str] = set()
        folders: set[str] = set()
        changed: set[str] = set()
        for wd, mask, raw in events:
            d = self._wd.get(wd)
            if d is None or mask & C.IN_IGNORED:
                continue  # a folder no longer watched; a watch gone with its folder (the parent's event says)
            if mask & (C.IN_DELETE_SELF | C.IN_MOVE_SELF):
                if not d:
                    self._give_up("the root itself was moved or deleted")
                    return False
                continue
            name = os.fsdecode(raw)
            rel = f"{d}/{name}" if d else name
            if name == ".gitignore":
                self._give_up(f"{rel} changed, came or went")
                return False
            if not mask & _ENTRY:
                continue  # a write to a file: the listing is the same
            changed.add(d)
            if name == ".git":
                if not d:
                    self._give_up(".git came or went at the root")
                    return False
                folders.add(d)  # a repository appeared or vanished inside: git lists that folder otherwise
                continue
            if mask & (C.IN_DELETE | C.IN_MOVED_FROM):
                removed.add(rel)
                files.discard(rel)
            if mask & (C.IN_CREATE | C.IN_MOVED_TO):
                (folders if mask & C.IN_ISDIR else files).add(rel)
        self._sorted_untracked = None
        if removed:
            self._untracked = {p for p in self._untracked if not _within(p, removed)}
            self._unwatch(removed)
        ok = self._relist(folders, files) if folders or files else True
        for d in changed:
            if d in self._dirs:
                self._looks[d] = self._look(d)
        return ok

    def _relist(self, folders: set[str], files: set[str]) -> bool:
        """Ask git about new paths: the untracked ones it lists under each new folder and
        each new name; watch the new folders it walks."""
        tops = {f for f in folders if not _within(os.path.dirname(f), folders)}  # the outermost new folders
        files = {f for f in files if not _within(f, tops)}
        if len(tops) + len(files) > MAX_CANDIDATES:
            tops |= {os.path.dirname(f) for f in files}
            files = set()
            if "" in tops or len(tops) > MAX_CANDIDATES:
                self._give_up(f"{len(tops):,} folders changed at once")
                return False
        watch = self._watch
        if tops and watch is not None:
            self._unwatch(tops)
            dirs: dict[str, int] = {}
            self._watch_tree(watch, sorted(tops), dirs)
            self._dirs.update(dirs)
            self._wd.update({wd: d for d, wd in dirs.items()})
            self._looks.update({d: self._look(d) for d in dirs})  # a new .gitignore below is git's: it listed them so
        listed = self._ls_untracked(sorted(tops) + sorted(files))
        self._sorted_untracked = None
        if tops:
            self._untracked = {p for p in self._untracked if not _within(p, tops)}
        self._untracked.difference_update(files)
        self._untracked.update(listed)
        return True

    def _sync_index(self) -> None:
        """A replaced index (git writes a new file and renames it over the old): read the
        tracked paths again; paths it no longer holds are untracked now if git lists them so."""
        sig = _lsig(self._index)
        if sig == self._index_sig:
            return
        tracked = self._ls_tracked()
        gone = self._tracked_set - frozenset(tracked)
        self._index_sig = sig
        self._set_tracked(tracked)
        self._sorted_untracked = None
        self._untracked.difference_update(self._tracked_set)
        if gone:
            if len(gone) > MAX_CANDIDATES:
                self._untracked = set(self._ls_untracked([]))
            else:
                self._untracked.update(self._ls_untracked(sorted(gone)))

    def _check_folders(self) -> None:
        """The missed-event check: a watched folder whose signature moved (or, looked at in
        its own mtime tick, whose names changed) without an event is listed by git again."""
        self._checked = time.monotonic()
        suspects = [d for d, look in self._looks.items() if self._moved(d, look)]
        if not suspects:
            return
        events = self._watch.drain() if self._watch is not None else None
        if events is None:
            self._give_up("the missed-event check's barrier did not come back")
            return
        if events and not self._apply(events):
            return
        missed = {d for d in suspects if d in self._looks and self._moved(d, self._looks[d])}
        if missed:
            self.missed += len(missed)
            log.warning("listing of %s: %d folder(s) changed without an event: listed again", self._root, len(missed))
            if "" in missed:
                self._give_up("the root changed without an event")
                return
            self._relist(missed, set())
            for d in missed:
                if d in self._dirs:
                    self._looks[d] = self._look(d)

    def _moved(self, d: str, look: tuple) -> bool:
        sig, names = look
        if _lsig(self._abs(d)) != sig:
            return True
        if names is not None:
            try:
                return frozenset(os.listdir(self._abs(d))) != names
            except OSError:
                return True
        return False
