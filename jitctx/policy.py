"""What may be served: path confinement, the deny list, binary and text rules.

Owns turning a user-given path into a checked (real path, repo-relative path)
pair, the deny list, binary detection and text decoding (DESIGN section 2).
Does not own discovery (``repo``) or reading ranges of lines (``peek``).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from fnmatch import translate
from pathlib import Path, PurePosixPath

from .errors import PathError, QueryError

__all__ = [
    "BINARY_PROBE",
    "DEFAULT_ALLOW",
    "DEFAULT_DENY",
    "LONE_CR",
    "PathPolicy",
    "Target",
    "clean_line",
    "decode",
    "is_binary_bytes",
    "split_lines",
    "trim_partial",
]

DEFAULT_DENY = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "*.p12", ".netrc")
DEFAULT_ALLOW = ("*.example", "*.sample", "*.template")
BINARY_PROBE = 8192
_BOM = b"\xef\xbb\xbf"


def is_binary_bytes(head: bytes) -> bool:
    """Binary means a NUL byte in the first 8 KiB."""
    return b"\0" in head[:BINARY_PROBE]


def decode(data: bytes) -> tuple[str, bool]:
    """UTF-8 with replacement, BOM stripped; returns (text, replaced)."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True


LONE_CR = "\u240d"  # a carriage return inside a line is shown as this, never returned raw


def clean_line(line: str) -> str:
    """One line's text as returned: a trailing ``\\r`` dropped, any other shown as U+240D."""
    if line.endswith("\r"):
        line = line[:-1]
    return line.replace("\r", LONE_CR) if "\r" in line else line


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only; ``\\r\\n`` ends a line; no ``\\r`` is ever returned (see clean_line)."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [clean_line(ln) for ln in lines]


def trim_partial(raw: bytes) -> bytes:
    """Drop an incomplete UTF-8 sequence at the end of ``raw`` (a read that stopped mid-character)."""
    for k in range(1, min(4, len(raw)) + 1):
        b = raw[-k]
        if b & 0xC0 != 0x80:  # the lead byte (or ASCII) of the last sequence
            need = 1 if b < 0x80 else 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else 4 if b >> 3 == 0b11110 else 1
            return raw[:-k] if need > k else raw
    return raw


def _names_regex(globs: tuple[str, ...]) -> re.Pattern[str]:
    if not globs:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{translate(g)})" for g in globs))


@dataclass(frozen=True, slots=True)
class Target:
    """A checked path: ``real`` on disk, ``path`` repo-relative POSIX (``"."`` for the root)."""

    real: Path
    path: str
    is_dir: bool
    st: os.stat_result


class PathPolicy:
    """Confinement and deny rules for one root."""

    def __init__(self, root: Path, deny: tuple[str, ...] = DEFAULT_DENY, allow: tuple[str, ...] = DEFAULT_ALLOW) -> None:
        self.root = root
        self.deny = tuple(deny)
        self.allow = tuple(allow)
        # one regex each: this runs on every listed file
        self._deny = _names_regex(self.deny)
        self._allow = _names_regex(self.allow)

    def is_denied(self, path: str) -> bool:
        """Whether the file's content must never be shown (by its base name)."""
        name = path.rpartition("/")[2]
        return self._deny.match(name) is not None and self._allow.match(name) is None

    def relative(self, real: Path) -> str:
        rel = real.relative_to(self.root).as_posix()
        return rel if rel else "."

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
            if not self._inside(real):
                raise self._outside(given) from None
            raise PathError(
                f"path {given!r} does not exist",
                path=given,
                reason="not_found",
                hint="find it with glob, e.g. pattern='**/" + PurePosixPath(given).name + "'",
            ) from None
        if not self._inside(real):
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
            raise PathError(f"path {given!r} is a directory, not a file", path=given, reason="not_a_file", hint="list it with glob, e.g. pattern='*' path=" + repr(rel))
        if want == "file" and not stat.S_ISREG(st.st_mode):
            raise PathError(f"path {given!r} is not a regular file", path=given, reason="not_a_file")
        if want == "dir" and not is_dir:
            raise PathError(f"path {given!r} is a file, not a directory", path=given, reason="not_a_directory", hint="read it with head, or pass its directory as path")
        if want == "file" and (self.is_denied(rel) or self.is_denied(lexical.name)):
            raise PathError(f"path {given!r} is on the deny list; its content is never shown", path=rel, reason="denied", hint="secrets files (.env, keys) are withheld by policy")
        return Target(real, rel, is_dir, st)

    def _inside(self, real: Path) -> bool:
        return real == self.root or real.is_relative_to(self.root)

    def _outside(self, given: str) -> PathError:
        return PathError(
            f"path {given!r} is outside the root {str(self.root)!r}",
            path=given,
            reason="outside_root",
            hint="pass a path inside the root; relative paths are taken from the root (choose another root with --root)",
        )
