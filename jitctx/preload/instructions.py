"""Instruction files: which one governs a directory, and its text, loaded once.

Owns the per-directory pick (``AGENTS.override.md``, ``AGENTS.md``, then the
fallbacks; exact-case names; empty, special, binary, unreadable, broken and
outside-the-root files skipped with a reason) and reading a file's text
through the policy's opener (BOM stripped, CRLF normalised, invalid UTF-8
replaced, very large files read only as far as a budget can use). Does not
own the prefix (``preload``), cutting to a budget (``tokens.fit_lines``) or
the session (``nested``).

Everything here is deterministic: the same bytes give the same text, and no
absolute path or time ever enters a text or a warning.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import QueryError
from ..repo.policy import DeniedLink, Opener
from ..text.lines import decode, is_binary, split_lines
from ..text.redact import Finding, redact_lines

__all__ = [
    "DEFAULT_FALLBACKS",
    "FULL_READ",
    "INSTRUCTION_NAMES",
    "README_NAMES",
    "Candidate",
    "Loaded",
    "Pick",
    "check_fallbacks",
    "count_memo",
    "examine",
    "list_dir",
    "load",
    "pick_instruction",
    "pick_readme",
    "text_digest",
]

INSTRUCTION_NAMES = ("AGENTS.override.md", "AGENTS.md")
DEFAULT_FALLBACKS = ("CLAUDE.md", "GEMINI.md")
README_NAMES = ("README.md", "README.rst", "README.txt", "README")
FULL_READ = 4 * 1024 * 1024  # larger files are read only as far as a budget can use
_MIN_PARTIAL = 256 * 1024
_BYTES_PER_TOKEN = 64  # generous: no cl100k token is this long in practice
_CACHE_SIZE = 256


def check_fallbacks(value: object) -> tuple[str, ...]:
    """Fallback instruction-file names: a list of plain file names."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise QueryError(f"fallbacks must be a list of file names, got {value!r}", hint="pass e.g. ['CLAUDE.md', 'GEMINI.md'], or [] for none", field="fallbacks")
    for name in value:
        if not isinstance(name, str) or not name.strip() or "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
            raise QueryError(f"fallback {name!r} is not a plain file name", hint="pass names such as 'CLAUDE.md' (no directories)", field="fallbacks")
    return tuple(dict.fromkeys(value))


# -- reading ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Loaded:
    """A file's text as the prefix uses it.

    ``lines`` are whole lines (CRLF normalised, BOM stripped, trailing blank
    lines dropped); ``complete`` is false when only the first part of a very
    large file was read (its last, partial line is dropped). ``blob`` is the
    git blob id of the bytes (complete files only). ``redacted``: the secrets
    replaced in ``lines`` (``redact``). ``counts`` memoises what is derived
    from the text: token counts per (tokenizer name, key), digests.
    """

    size: int
    lines: tuple[str, ...]
    complete: bool
    replaced: bool
    binary: bool
    blob: str | None
    redacted: tuple[Finding, ...] = ()
    counts: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)

    @property
    def is_empty(self) -> bool:
        return self.complete and not any(line.strip() for line in self.lines)

    def digest(self, start: int = 0) -> str:
        """:func:`text_digest` of ``lines[start:]``, memoised (a warm preload hashes nothing)."""
        key = ("digest", start)
        hit = self.counts.get(key)
        if hit is None:
            hit = self.counts[key] = text_digest(self.lines[start:])
        return hit


def text_digest(lines: tuple[str, ...] | list[str]) -> str:
    """What "the same text" means across files and formats: sha256 of the lines,
    blank lines at either end left out."""
    import hashlib  # not at start-up

    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return hashlib.sha256("\n".join(lines[start:end]).encode("utf-8", "surrogatepass")).hexdigest()


def _read_bytes(opener: Opener, rel: str, limit: int) -> bytes:
    """Read at most ``limit`` bytes (tests replace this to simulate errors)."""
    return opener.read(rel, limit)[0]


_cache: OrderedDict[tuple, Loaded] = OrderedDict()
_cache_lock = threading.Lock()


def load(opener: Opener, rel: str, st: os.stat_result, budget_tokens: int) -> Loaded:
    """Read and decode the regular file ``rel`` (repo-relative, no symlink on the way),
    cached by its identity and ``stat``.

    Files up to 4 MiB are read whole; larger ones only as far as
    ``budget_tokens`` could possibly use. Raises ``OSError`` if unreadable.
    """
    size = st.st_size
    limit = size if size <= FULL_READ else min(FULL_READ, max(_MIN_PARTIAL, budget_tokens * _BYTES_PER_TOKEN))
    key = (str(opener.root), rel, st.st_dev, st.st_ino, size, st.st_mtime_ns, st.st_ctime_ns, limit)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    data = _read_bytes(opener, rel, limit)
    complete = len(data) >= size
    binary = is_binary(data)
    blob = None
    if complete:
        import hashlib  # not at start-up

        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    elif b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]  # whole lines only, never a cut character
    else:
        data = b""
    if binary:
        loaded = Loaded(size, (), complete, False, True, blob)
    else:
        text, replaced = decode(data)
        lines = split_lines(text)
        while lines and not lines[-1].strip():
            lines.pop()
        shown, findings, _ = redact_lines(lines)
        loaded = Loaded(size, tuple(shown), complete, replaced, False, blob, tuple(findings))
    with _cache_lock:
        _cache[key] = loaded
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return loaded


def count_memo(tok, loaded: Loaded, key: str, text_fn) -> int:
    """A token count of text derived from ``loaded``, memoised on it."""
    k = (getattr(tok, "name", type(tok).__name__), key)
    hit = loaded.counts.get(k)
    if hit is None:
        hit = loaded.counts[k] = tok.count(text_fn())
    return hit


# -- picking ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """One file examined for a directory: the pick or a skipped one, and why.

    ``reason`` is ``None`` for the pick, else ``empty``, ``not_a_file``,
    ``broken_link``, ``outside_root``, ``denied``, ``unreadable``,
    ``binary`` or ``too_large``.
    """

    path: str  # repo-relative (the name as found, not the link target)
    real: Path
    st: os.stat_result | None
    loaded: Loaded | None
    reason: str | None = None

    @property
    def identity(self) -> tuple[int, int] | None:
        return (self.st.st_dev, self.st.st_ino) if self.st is not None else None


@dataclass(frozen=True, slots=True)
class Pick:
    """The instruction file governing ``dir`` (or ``None``), what was skipped, warnings."""

    dir: str
    chosen: Candidate | None
    skipped: tuple[Candidate, ...] = ()
    warnings: tuple[str, ...] = ()


def _join(rel_dir: str, name: str) -> str:
    return name if rel_dir in ("", ".") else f"{rel_dir}/{name}"


def examine(
    opener: Opener, rel_dir: str, name: str, budget_tokens: int, listing: set[str] | None, denied=None, *, max_bytes: int | None = None
) -> tuple[Candidate | None, str | None]:
    """Look at one candidate name: (candidate or None if absent, warning or None).

    ``denied`` is the deny-list test (``PathPolicy.is_denied``): a candidate
    that is, or links to, a denied file is skipped unread; so is one that
    links out of the root (as ``head`` refuses it), and one larger than
    ``max_bytes`` (``too_large``, unread).
    """
    root = opener.root
    d = root if rel_dir in ("", ".") else root / rel_dir
    p = d / name
    rel = _join(rel_dir, name)
    try:
        lst = os.lstat(p)
    except OSError:
        return None, None
    if listing is None:
        try:
            listing = set(os.listdir(d))
        except OSError:
            listing = set()
    if name not in listing:  # a case-insensitive file system matched another case
        return None, None
    real, target = p, rel
    if stat.S_ISLNK(lst.st_mode):
        try:
            real = Path(os.path.realpath(p, strict=True))
            os.stat(real)
        except OSError:
            return Candidate(rel, p, None, None, "broken_link"), f"{rel} is a broken or looping symlink; skipped"
        if not (real == root or real.is_relative_to(root)):
            return Candidate(rel, p, None, None, "outside_root"), f"{rel} is a symlink to a file outside the root; skipped, as head refuses it"
        target = real.relative_to(root).as_posix()
    if denied is not None and (denied(rel) or denied(real.name)):
        return Candidate(rel, p, None, None, "denied"), f"{rel} is, or links to, a file on the deny list ({real.name}); skipped, its content is never shown"
    try:
        fd, st = opener.open_fd(target)
    except OSError as exc:
        if exc.errno == errno.EINVAL:  # not a regular file
            try:
                seen: os.stat_result | None = os.stat(real)
            except OSError:
                seen = None
            kind = "a directory" if seen is not None and stat.S_ISDIR(seen.st_mode) else "not a regular file"
            return Candidate(rel, real, seen, None, "not_a_file"), f"{rel} is {kind}; skipped"
        if isinstance(exc, DeniedLink):
            return Candidate(rel, real, None, None, "denied"), f"{rel} is a hard link to a file on the deny list; skipped, its content is never shown"
        return Candidate(rel, real, None, None, "unreadable"), f"{rel} cannot be read ({exc.strerror or type(exc).__name__}); skipped"
    os.close(fd)
    if max_bytes is not None and st.st_size > max_bytes:
        return Candidate(rel, real, st, None, "too_large"), f"{rel} is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit for this kind of file; skipped unread"
    try:
        loaded = load(opener, target, st, budget_tokens)
    except OSError as exc:
        return Candidate(rel, real, st, None, "unreadable"), f"{rel} cannot be read ({exc.strerror or type(exc).__name__}); skipped"
    if loaded.binary:
        return Candidate(rel, real, st, loaded, "binary"), f"{rel} is binary (a NUL byte in its first 8 KiB); skipped"
    if loaded.is_empty:
        return Candidate(rel, real, st, loaded, "empty"), None
    return Candidate(rel, real, st, loaded, None), None


def _near_misses(rel_dir: str, listing: set[str], names: tuple[str, ...]) -> list[str]:
    wanted = {n.lower(): n for n in names}
    out = []
    for entry in sorted(listing):
        exact = wanted.get(entry.lower())
        if exact is not None and entry != exact:
            out.append(f"{_join(rel_dir, entry)} is not read: instruction file names are case-sensitive (rename it to {exact})")
    return out


def pick_instruction(
    opener: Opener,
    rel_dir: str,
    fallbacks: tuple[str, ...],
    budget_tokens: int,
    *,
    near_misses: bool = False,
    denied=None,
    agents: bool = True,
    listing: set[str] | None = None,
) -> Pick:
    """The first non-empty regular file among the names, in precedence order.

    ``near_misses`` lists the directory to warn about names that differ only
    in case (``agents.md``); without it only existing names cost a listing.
    ``listing``: the directory's names, when the caller listed it already.
    ``agents=False`` leaves ``AGENTS.override.md`` and ``AGENTS.md`` out (the
    formats setting turned them off): only the fallbacks are looked for.
    """
    names = (*(INSTRUCTION_NAMES if agents else ()), *fallbacks)
    warnings: list[str] = []
    if near_misses:
        if listing is None:
            listing = list_dir(opener, rel_dir)
        warnings += _near_misses(rel_dir, listing, names)
    skipped: list[Candidate] = []
    chosen = None
    for name in names:
        cand, warning = examine(opener, rel_dir, name, budget_tokens, listing, denied)
        if warning:
            warnings.append(warning)
        if cand is None:
            continue
        if cand.reason is None:
            chosen = cand
            break
        skipped.append(cand)
    if chosen is not None:
        for s in skipped:
            if s.reason == "empty":
                warnings.append(f"{s.path} is empty, so it was skipped and {chosen.path} loads instead (delete it, or give it content to replace {chosen.path})")
    return Pick(rel_dir or ".", chosen, tuple(skipped), tuple(warnings))


def list_dir(opener: Opener, rel_dir: str) -> set[str]:
    """The names in a directory of the root (none if it cannot be listed)."""
    try:
        return set(os.listdir(opener.root if rel_dir in ("", ".") else opener.root / rel_dir))
    except OSError:
        return set()


def pick_readme(opener: Opener, budget_tokens: int, *, denied=None, listing: set[str] | None = None) -> Pick:
    """The root README: README.md, .rst, .txt or bare; exact case first, then any case
    (``listing``: the root's names, when the caller listed it already)."""
    if listing is None:
        listing = list_dir(opener, ".")
    order = list(README_NAMES)
    lower = {n.lower() for n in README_NAMES}
    order += sorted(e for e in listing if e.lower() in lower and e not in README_NAMES)
    skipped: list[Candidate] = []
    warnings: list[str] = []
    for name in order:
        cand, warning = examine(opener, ".", name, budget_tokens, listing, denied)
        if warning:
            warnings.append(warning)
        if cand is None:
            continue
        if cand.reason is None:
            return Pick(".", cand, tuple(skipped), tuple(warnings))
        skipped.append(cand)
    return Pick(".", None, tuple(skipped), tuple(warnings))
