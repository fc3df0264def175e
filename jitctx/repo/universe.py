"""The repository: its root, git layout, HEAD and file universe.

Owns root resolution, reading HEAD cheaply from git's files, and the one
definition of the file universe (DESIGN section 2): what discovery may see
is tracked plus untracked-not-ignored files (``include_ignored`` adds the
ignored ones), hidden files in, ``.git/`` never; outside git, a walk that
applies every ``.gitignore``. Every other view of the universe (rg's own
walk, an empty grep's counts) is checked against this one. Does not own
what may be *read* (``policy``), starting git (``gitcmd``), how a git
listing is split (``listing``) or what an ignore rule decides (``ignore``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import RepoError
from . import gitcmd, listing
from .ignore import Decision, Ignores, Rules, ask_git
from .listing import Listing
from .policy import read_small

TYPE_CHECKING = False  # as typing's, without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Protocol

    class KeptListing(Protocol):
        """A listing kept up to date by someone else (the warm server's ``server.kept_listing``)."""

        def listing(self, under: str = "") -> tuple[list[str], list[str]] | None:
            """The tracked and untracked paths under ``under`` when exact now, else ``None``."""

        def is_listed(self, rel: str) -> bool | None:
            """Whether ``rel`` is in the universe; ``None`` when not exact now."""


__all__ = ["ROOT_ENV", "GitLayout", "Repo", "find_root", "working_directory"]

ROOT_ENV = "JITCTX_ROOT"


def working_directory() -> Path:
    """The process's working directory; ``RepoError`` when it was deleted."""
    try:
        return Path(os.getcwd())
    except OSError:
        raise RepoError("the working directory no longer exists", hint="cd to an existing directory, or pass root=DIR") from None


def _is_git_dir(path: Path) -> bool:
    """A bare repository or a work tree's git dir (``HEAD``, ``objects/``, ``refs/``)."""
    try:
        return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()
    except OSError:
        return False


def find_root(root: str | os.PathLike | None = None, *, cwd: str | os.PathLike | None = None) -> Path:
    """Resolve the served root: ``root`` > ``$JITCTX_ROOT`` > git top > cwd.

    A ``.git`` file (worktree, submodule) counts as a git top level. Refuses
    ``/``, the home directory itself, an empty root (``root=''``, a set but
    empty ``$JITCTX_ROOT``), and a git dir or bare repository (all git
    internals: its ``config`` may hold credentials).
    """
    start = Path(cwd) if cwd else working_directory()
    if root is not None:
        if str(root).strip() == "":
            raise RepoError("the root is empty (root='')", hint="pass a project directory as root=DIR, or no root for the git top level of the working directory")
        chosen, source, fix = str(root), "root", "pass an existing directory as root=DIR"
    elif ROOT_ENV in os.environ:
        chosen, source, fix = os.environ[ROOT_ENV], f"${ROOT_ENV}", f"set {ROOT_ENV} to an existing directory, or unset it"
        if not chosen.strip():
            raise RepoError(f"the root is empty: {ROOT_ENV} is set but empty", hint=f"set {ROOT_ENV} to a project directory, or unset it")
    else:
        chosen = None
    if chosen is not None:
        path = Path(os.path.expanduser(chosen))
        if not path.is_absolute():
            path = start / path
        try:
            exists, is_dir = path.exists(), path.is_dir()
        except OSError:  # a name too long, a loop
            exists = is_dir = False
        if not exists:
            raise RepoError(f"{source} {chosen!r} does not exist", hint=fix)
        if not is_dir:
            raise RepoError(f"{source} {chosen!r} is not a directory", hint=fix.replace("an existing directory", "a directory"))
        resolved = path.resolve()
        if not os.access(resolved, os.R_OK | os.X_OK):
            raise RepoError(f"{source} {chosen!r} cannot be read (permission denied)", hint="pass a directory you can read")
        if ".git" in resolved.parts or _is_git_dir(resolved):
            raise RepoError(f"{source} {chosen!r} is a git dir or a bare repository, not a work tree", hint="pass the work tree's top level (the folder holding .git)")
    else:
        resolved = start.resolve()
        for d in (resolved, *resolved.parents):
            if (d / ".git").exists():
                resolved = d
                break
    if resolved == Path(resolved.anchor):
        raise RepoError(f"refusing to serve the filesystem root {str(resolved)!r}", hint="pass a project directory as root=DIR")
    home = Path.home().resolve()
    if resolved == home:
        raise RepoError(f"refusing to serve the home directory {str(resolved)!r}", hint="pass a project directory as root=DIR")
    return resolved


class GitLayout:
    """Where git keeps its state for a work tree.

    ``top``: the work tree's top level; ``git_dir``: this work tree's git dir
    (HEAD lives here); ``common_dir``: shared refs and packed-refs (the same
    as ``git_dir`` unless a linked worktree).
    """

    __slots__ = ("common_dir", "git_dir", "top")

    def __init__(self, top: Path, git_dir: Path, common_dir: Path) -> None:
        self.top = top
        self.git_dir = git_dir
        self.common_dir = common_dir

    def __repr__(self) -> str:
        return f"GitLayout({str(self.top)!r}, {str(self.git_dir)!r}, {str(self.common_dir)!r})"


def _git_layout(root: Path) -> GitLayout | None:
    for d in (root, *root.parents):
        marker = d / ".git"
        if marker.is_dir():
            git_dir = marker
        elif marker.is_file():
            text = read_small(marker) or ""
            if not text.startswith("gitdir:"):
                continue
            git_dir = Path(text[len("gitdir:") :].strip())
            if not git_dir.is_absolute():
                git_dir = d / git_dir
        else:
            continue
        git_dir = git_dir.resolve()
        common = read_small(git_dir / "commondir")
        common_dir = (git_dir / common).resolve() if common else git_dir
        return GitLayout(d, git_dir, common_dir)
    return None


_SHA = re.compile(r"[0-9a-f]{40,64}")


class Repo:
    """A root directory and, when it is inside git, its git layout."""

    def __init__(self, root: Path, *, live: KeptListing | None = None) -> None:
        self.root = root
        self.git = _git_layout(root)  # without a git binary, listing falls back to a walk
        self.live = live  # the server's listing kept in memory (exact or not used), if any
        self._listing: Listing | None = None
        self.notice: str | None = None  # set when a listing could not use git (why, what was done instead)
        if self.git is not None and self.git.top != root:
            inside = root.relative_to(self.git.top).as_posix() + "/"
            if ask_git(self.git.top, [inside])[inside].ignored:
                # a root inside a directory git ignores (a tool's data dir, an
                # installed tree): git lists nothing there, so serve it as plain files
                self.git = None
        git = self.git
        self.ignores = Ignores(root, git.top if git else None, git.common_dir if git else None)  # the one place ignore rules decide

    @property
    def is_git(self) -> bool:
        return self.git is not None

    def prefetch(self, *, include_ignored: bool = False, suffix: str | None = None, under: str = "") -> None:
        """Start git's listing now, for the next ``file_chunks`` asking the same.

        The CLI's glob calls this right after parsing its arguments, before
        the rest of jitctx imports: git then walks meanwhile (it starts
        ~14 ms sooner). A ``file_chunks`` asking otherwise stops it and lists
        afresh; :meth:`close` stops one nobody took.
        """
        if self.git is not None:
            self.close()
            self._listing = Listing.start(self.root, include_ignored, suffix, balance=self.is_large(), under=under)

    def close(self) -> None:
        """Stop a listing started ahead that nobody took."""
        if self._listing is not None:
            self._listing.close()
            self._listing = None

    # -- HEAD ---------------------------------------------------------------

    def head(self) -> str | None:
        """HEAD as a sha, read from git's files (~50 µs); ``None`` if unborn or not git."""
        if self.git is None:
            return None
        text = read_small(self.git.git_dir / "HEAD")
        for _ in range(5):  # symbolic refs may chain
            if text is None:
                break
            if not text.startswith("ref:"):
                return text if _SHA.fullmatch(text) else gitcmd.rev_parse(self.root)
            ref = text[4:].strip()
            text = read_small(self.git.git_dir / ref) if (self.git.git_dir / ref).is_file() else read_small(self.git.common_dir / ref)
            if text is None:
                return self._packed_ref(ref)
        return gitcmd.rev_parse(self.root)  # a layout the files do not tell (reftable...)

    def _packed_ref(self, ref: str) -> str | None:
        packed = read_small(self.git.common_dir / "packed-refs", 64 << 20)  # type: ignore[union-attr]
        if packed:
            for line in packed.splitlines():
                parts = line.split(" ", 1)
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0]
        return None  # unborn branch

    def branch(self) -> str | None:
        """The checked-out branch name, ``None`` when detached or outside git."""
        if self.git is None:
            return None
        text = read_small(self.git.git_dir / "HEAD") or ""
        return text[len("ref: refs/heads/") :] if text.startswith("ref: refs/heads/") else None

    # -- file universe --------------------------------------------------------

    def files(self, *, include_ignored: bool = False) -> list[str]:
        """Repo-relative POSIX paths discovery may see.

        Tracked plus untracked files git does not ignore (``include_ignored``
        adds the ignored ones); hidden files in, ``.git/`` never. Tracked files
        deleted from the work tree are listed; callers ``stat`` and skip them.
        """
        return [p for chunk in self.file_chunks(include_ignored=include_ignored) for p in chunk]

    def file_chunks(self, *, include_ignored: bool = False, suffix: str | tuple[str, ...] | None = None, under: str = "") -> Iterator[list[str]]:
        """The same paths as ``files``, in chunks as soon as each is listed.

        In git, tracked files come first (from the index, fast) while the
        walk for untracked files still runs: a caller can work on them in the
        meantime. ``suffix`` (no glob characters; or several) and ``under`` (a
        root-relative folder, "" for all) are hints: git walks only ``under``
        and may leave out tracked paths not ending with ``suffix``; paths stay
        root-relative and callers still test every one.
        """
        if self.git is not None and not self.blocking_rules():
            kept = self.live.listing(under) if self.live is not None and not include_ignored else None
            if kept is not None:  # the server's, exact now: no git at all
                yield from kept
                return
            chunks = self._git_chunks(include_ignored, suffix, under)
            if chunks is not None:
                listed: list[list[str]] = []
                try:
                    for chunk in chunks:
                        listed.append(chunk)
                        yield chunk
                    return
                except gitcmd.GitTimeout as exc:  # git blocked (a FIFO .gitignore deeper down, a hung mount)
                    self.notice = f"{exc.message}; the rest was listed by walking the folders (tracked files an ignore rule matches may be missing)."
                    got = {p for c in listed for p in c}
                    yield [p for p in self._walk(include_ignored) if p not in got]
                    return
            # not really a work tree (bare, broken): fall back to a walk
        elif self.git is not None:
            self.notice = f"{self.blocking_rules()} is not a regular file (a FIFO?), so git would block on it: files were listed by walking the folders."
        yield list(self._walk(include_ignored))

    def _git_chunks(self, include_ignored: bool, suffix: str | tuple[str, ...] | None, under: str) -> Iterator[list[str]] | None:
        key = (str(self.root), include_ignored, suffix, under)
        started, self._listing = self._listing, None
        if started is not None and started.key != key:
            started.close()
            started = None
        if started is None:
            started = Listing.start(self.root, include_ignored, suffix, balance=self.is_large(), under=under)
        return started.chunks() if started is not None else None

    def configured_excludes(self) -> str | None:
        """``core.excludesFile`` when some config file sets it, else ``None`` (``Ignores``)."""
        return self.ignores.configured_excludes()

    def blocking_rules(self) -> str | None:
        """The ignore file git would block on (a FIFO), else ``None`` (``Ignores.blocking``)."""
        return self.ignores.blocking()

    def tracked_count(self) -> int | None:
        """How many entries git's index holds (its header's count: nothing listed), when the
        root is the work tree's top; None otherwise (a folder inside it, no git, an index
        git cannot have written). An estimate of the universe before listing it."""
        if self.git is None or self.git.top != self.root:
            return None
        try:
            with open(self.git.git_dir / "index", "rb") as f:
                head = f.read(12)
        except OSError:
            return None
        if len(head) < 12 or head[:4] != b"DIRC" or int.from_bytes(head[4:8], "big") not in (2, 3, 4):
            return None
        return int.from_bytes(head[8:12], "big")

    def is_large(self) -> bool:
        """Whether git's index holds tens of thousands of files (~100 bytes an
        entry): then a walk is worth balancing over the walkers."""
        if self.git is None:
            return False
        try:
            return os.stat(self.git.git_dir / "index").st_size >= listing.LARGE_INDEX
        except OSError:
            return False

    def _walk(self, include_ignored: bool) -> Iterator[str]:
        """The universe without git: every file, less what the ``.gitignore`` files
        ignore (``ignore.Rules``; a folder they ignore is not entered)."""
        root = self.root
        rules: dict[str, Rules] = {"": Rules()}  # folder -> the rules of its parent
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
            rel_dir = "" if rel_dir == "." else rel_dir
            here = rules.pop(rel_dir, Rules())
            if not include_ignored and ".gitignore" in filenames:
                here = here.below(root, rel_dir)
            prefix = f"{rel_dir}/" if rel_dir else ""
            keep = []
            for name in sorted(dirnames):
                if name == ".git":
                    continue
                rel = prefix + name
                if include_ignored or not here.ignores(rel + "/"):
                    keep.append(name)
                    rules[rel] = here
            dirnames[:] = keep
            for name in sorted(filenames):
                rel = prefix + name
                if include_ignored or not here.ignores(rel):
                    yield rel

    def is_ignored(self, rel: str) -> bool:
        """Whether discovery would leave ``rel`` out (git's rules, or ``.gitignore``)."""
        if self.live is not None and self.ignores.by_git and self.live.is_listed(rel):
            return False  # in the universe: not ignored (the server's listing, exact now)
        return self.ignore_decision(rel).ignored

    def ignore_decision(self, rel: str) -> Decision:
        """Whether discovery would leave ``rel`` out and the rule that decided
        (``ignore.Decision``: ``rule`` None when no rule matches, ``tracked`` when git
        tracks it)."""
        return self.ignores.decide([rel])[rel]

    def untracked(self, *, scope: str = ".", include_ignored: bool = False) -> list[str] | None:
        """Untracked files under ``scope`` (not ignored ones unless ``include_ignored``), as
        ``files`` lists them; ``None`` outside git, where git would block on a rule file
        (``files`` then walks) or when git fails."""
        if not self.ignores.by_git:
            return None
        return listing.untracked(self.root, scope=scope, include_ignored=include_ignored, balance=self.is_large())
