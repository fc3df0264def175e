"""What may be served, and the one way a file's content is read.

Owns turning a user-given path into a checked (real path, repo-relative path)
pair, the deny list, and opening files: content under the root is opened
through :class:`Opener` only (component by component, never following a
symlink, so a link swapped in during a call cannot lead out of the root or
into a denied file; only regular files; the checks are made on the opened
file, not on the path), and small metadata files (git's ``HEAD``,
``.gitignore``) through :func:`read_small` (non-blocking, bounded). DESIGN
section 2. Does not own discovery (``repo``), text rules (``text``) or
reading ranges of lines (``headtail``).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ..errors import PathError, QueryError
from ..text.globs import DenyRules
from ..text.hints import call

__all__ = ["DEFAULT_ALLOW", "DEFAULT_DENY", "DeniedLink", "Opener", "PathPolicy", "Target", "read_small"]

DEFAULT_DENY = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "*.p12", ".netrc")
DEFAULT_ALLOW = ("*.example", "*.sample", "*.template")

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
_INODES_TTL = 2.0  # seconds the walk for denied files' inodes is trusted
_MAX_DIRS = 512  # folder descriptors an opener keeps (listings arrive sorted: nearby folders are reused)
# O_NONBLOCK: opening a FIFO never waits for a writer (it is then refused as not a regular file)
_FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC


class DeniedLink(PermissionError):
    """The file opened is a hard link to a file on the deny list."""


class Target:
    """A checked path: ``real`` on disk, ``path`` repo-relative POSIX (``"."`` for the root)."""

    __slots__ = ("is_dir", "path", "real", "st")

    def __init__(self, real: Path, path: str, is_dir: bool, st: os.stat_result) -> None:
        self.real = real
        self.path = path
        self.is_dir = is_dir
        self.st = st


def read_small(path: Path, limit: int = 1 << 20, *, strip: bool = True) -> str | None:
    """A small metadata file's text (``HEAD``, a ref, ``.gitignore``), stripped unless
    ``strip=False`` (a rule file's line numbers); ``None`` when missing, not a regular
    file (a FIFO never blocks) or unreadable. At most ``limit`` bytes are read."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            text = f.read(limit).decode("utf-8", "replace")
            return text.strip() if strip else text
    except OSError:
        return None
    finally:
        os.close(fd)


class Opener:
    """Opens files beneath one root without following any symlink.

    Each folder on the way is opened with ``O_NOFOLLOW`` from its parent's
    descriptor, so the file opened is the one named by the path as it is
    now, inside the root, whatever was swapped in since the path was
    listed or checked. Folder descriptors are kept while the opener lives
    (a backend reading thousands of files opens each folder once); use it as
    a context manager, or call :meth:`close`.
    """

    def __init__(self, root: Path, rules: DenyRules | None = None, denied_inode: Callable[[os.stat_result], bool] | None = None) -> None:
        self.root = root
        self.rules = rules
        self.denied_inode = denied_inode
        self._dirs: dict[str, int] = {}

    def __enter__(self) -> Opener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        dirs, self._dirs = self._dirs, {}
        for fd in dirs.values():
            os.close(fd)

    def _dir(self, rel_dir: str) -> int:
        fd = self._dirs.get(rel_dir)
        if fd is not None:
            return fd
        if rel_dir == "":
            fd = os.open(self.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        else:
            parent, _, name = rel_dir.rpartition("/")
            fd = os.open(name, _DIR_FLAGS, dir_fd=self._dir(parent))
        if len(self._dirs) >= _MAX_DIRS:  # a long walk: keep the descriptors bounded, the oldest go
            for old in list(self._dirs)[: _MAX_DIRS // 4]:
                os.close(self._dirs.pop(old))
        self._dirs[rel_dir] = fd
        return fd

    def lstat(self, rel: str) -> os.stat_result:
        """``lstat`` of ``rel`` with no symlink followed on the way: a path under
        a folder swapped for a symlink raises (``ELOOP``/``ENOTDIR``) instead of
        describing what the link leads to."""
        parent, _, name = rel.rpartition("/")
        return os.lstat(name, dir_fd=self._dir(parent))

    def open_fd(self, rel: str) -> tuple[int, os.stat_result]:
        """An open descriptor of the regular file ``rel`` (repo-relative) and its ``fstat``.

        Raises ``OSError`` (``ELOOP``/``ENOTDIR``: a symlink on the way;
        ``EINVAL``: not a regular file), the caller decides what it means.
        """
        parent, _, name = rel.rpartition("/")
        if not name or name in (".", "..") or ".." in parent.split("/"):
            raise OSError(errno.EINVAL, "not a plain repository path", rel)
        fd = os.open(name, _FILE_FLAGS, dir_fd=self._dir(parent))
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", rel)
            if st.st_nlink > 1 and self.denied_inode is not None and self.denied_inode(st):
                raise DeniedLink(errno.EACCES, "a hard link to a file on the deny list", rel)
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    def open(self, rel: str):
        """``rel`` opened for binary reading (see :meth:`open_fd`); returns (file, stat)."""
        fd, st = self.open_fd(rel)
        return os.fdopen(fd, "rb"), st

    def read(self, rel: str, limit: int) -> tuple[bytes, os.stat_result]:
        """At most ``limit`` bytes of ``rel`` from its start, and its ``fstat``."""
        f, st = self.open(rel)
        with f:
            return f.read(limit), st


class PathPolicy:
    """Confinement and deny rules for one root."""

    def __init__(self, root: Path, deny: tuple[str, ...] = DEFAULT_DENY, allow: tuple[str, ...] = DEFAULT_ALLOW) -> None:
        self.root = root
        self.rules = DenyRules(tuple(deny), tuple(allow))
        self.is_denied = self.rules.is_denied
        self._inodes: tuple[float, frozenset[tuple[int, int]]] | None = None

    @property
    def deny(self) -> tuple[str, ...]:
        return self.rules.deny

    @property
    def allow(self) -> tuple[str, ...]:
        return self.rules.allow

    def opener(self) -> Opener:
        """The way to read files' content under the root (see :class:`Opener`)."""
        return Opener(self.root, self.rules, self.is_denied_inode)

    def is_denied_inode(self, st: os.stat_result) -> bool:
        """Whether ``st`` (a file with more than one name) is a denied file under another name.

        The denied files under the root are found by one walk (names only,
        ``.git/`` skipped; a ``stat`` for each denied name), kept for
        ``_INODES_TTL`` seconds: a file with hard links is rare, and most
        calls never ask.
        """
        now = time.monotonic()
        if self._inodes is None or now - self._inodes[0] > _INODES_TTL:
            self._inodes = (now, self._denied_inodes())
        return (st.st_dev, st.st_ino) in self._inodes[1]

    def _denied_inodes(self) -> frozenset[tuple[int, int]]:
        found: set[tuple[int, int]] = set()
        stack = [("", str(self.root))]
        while stack:
            rel_dir, full = stack.pop()
            try:
                entries = list(os.scandir(full))
            except OSError:
                continue
            for e in entries:
                rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
                try:
                    if e.is_dir(follow_symlinks=False):
                        if e.name != ".git":
                            stack.append((rel, e.path))
                        continue
                    if self.is_denied(rel):
                        st = e.stat(follow_symlinks=False)
                        found.add((st.st_dev, st.st_ino))
                except OSError:
                    continue
        return frozenset(found)

    def relative(self, real: Path) -> str:
        rel = real.relative_to(self.root).as_posix()
        return rel if rel else "."

    def inside(self, real: Path | str) -> bool:
        """Whether a resolved path is the root or below it (by components, not by string prefix)."""
        real = Path(real)
        return real == self.root or real.is_relative_to(self.root)

    def resolve(self, given: str, *, want: str = "any") -> Target:
        """Check a user path: inside the root (symlinks resolved), exists, right kind.

        ``want`` is ``"file"``, ``"dir"`` or ``"any"``. Raises ``PathError``
        with ``reason`` one of ``empty``, ``outside_root``, ``git_internal``,
        ``not_found``, ``symlink_loop``, ``not_a_file``, ``not_a_directory``,
        ``denied`` (files only).
        """
        if not isinstance(given, str):
            raise QueryError(f"path must be a string, got {given!r}", hint="pass a repo-relative path such as 'src/app.py'")
        if not given.strip():
            raise PathError("path is empty", path=given, reason="empty", hint="pass a repo-relative path such as 'src/app.py', or '.' for the root")
        if "\0" in given:
            raise PathError(f"path {given!r} contains a NUL byte", path=given, reason="invalid")
        raw = Path(given)  # no ~ expansion: a repo may hold a file named "~"; shells expand ~ themselves
        lexical = raw if raw.is_absolute() else self.root / raw
        try:
            real = Path(os.path.realpath(lexical, strict=True))
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathError(f"path {given!r} is a symlink loop", path=given, reason="symlink_loop", hint="name the file the link should point to") from None
            real = Path(os.path.realpath(lexical))
            if not self.inside(real):
                raise self._outside(given) from None
            raise PathError(
                f"path {given!r} does not exist",
                path=given,
                reason="not_found",
                hint="find it with " + call("glob", pattern="**/" + PurePosixPath(given).name),
            ) from None
        if not self.inside(real):
            raise self._outside(given)
        rel = self.relative(real)
        parts = rel.split("/")
        lex_parts = PurePosixPath(os.path.normpath(str(lexical))).parts
        if ".git" in parts or ".git" in lex_parts:
            raise PathError(f"path {given!r} is inside git's internals", path=given, reason="git_internal", hint="jitctx serves the work tree, not .git/")
        try:
            st = os.stat(real)
        except OSError as exc:
            raise PathError(f"path {given!r} cannot be read: {exc.strerror}", path=given, reason="unreadable") from None
        is_dir = stat.S_ISDIR(st.st_mode)
        if want == "file" and is_dir:
            raise PathError(f"path {given!r} is a directory, not a file", path=given, reason="not_a_file", hint="list it with " + call("glob", pattern="*", path=rel))
        if want == "file" and not stat.S_ISREG(st.st_mode):
            raise PathError(f"path {given!r} is not a regular file", path=given, reason="not_a_file")
        if want == "dir" and not is_dir:
            raise PathError(
                f"path {given!r} is a file, not a directory",
                path=given,
                reason="not_a_directory",
                hint=f"read it with {call('head', path=rel)}, or list its folder with {call('glob', pattern='*', path=posixpath.dirname(rel) or '.')}",
            )
        if want == "file" and (self.is_denied(rel) or self.is_denied(lexical.name)):
            raise PathError(f"path {given!r} is on the deny list; its content is never shown", path=rel, reason="denied", hint="secrets files (.env, keys) are withheld by policy")
        return Target(real, rel, is_dir, st)

    def _outside(self, given: str) -> PathError:
        return PathError(
            f"path {given!r} is outside the root {str(self.root)!r}",
            path=given,
            reason="outside_root",
            hint="pass a path inside the root; for another repository, serve that repository's root",
        )
