"""The pure-Python search backend: the ``regex`` module over the universe's files.

Owns searching a scope's files without ripgrep: the universe from
``Scope.files``, each file opened through the policy's opener (no symlink
followed, anywhere on the path) and streamed in blocks of whole lines, so a
huge file costs bounded memory; lines matched as text (UTF-8, undecodable
bytes kept as themselves), with ripgrep's line semantics (``^``/``$`` at line
ends, a match never crosses a line end without ``multiline``). Binary = a
NUL in the first 8 KiB.

The ``regex`` module (a tiktoken dependency) reads ripgrep's syntax for the
common subset natively (``\\p{L}``, ``[[:alpha:]]``, ``(?<name>...)``);
what Rust's engine refuses (look-around, backreferences) is refused here
too. Every match runs with ``timeout=`` and ``concurrent=True``: a
catastrophic pattern stops at the time cap and never holds the GIL, so a
long-lived server keeps answering. Does not own paging, context or notices
(``search``).
"""

from __future__ import annotations

import bisect
import errno

from ...errors import QueryError
from ...refs import Skipped
from ...text.lines import BINARY_PROBE, decode, is_binary, strip_bom
from . import Match, Outcome, Spec, unclosed_group
from .scope import Scope, SearchBackend

__all__ = ["BLOCK", "MULTILINE_LIMIT", "PythonBackend", "compile_pattern", "covered_lines"]

BLOCK = 8 << 20  # bytes read at a time (whole lines; a longer line is read on to its end)
MULTILINE_LIMIT = 256 << 20  # a multiline search needs the whole file: larger ones are skipped


class _TimeUp(Exception):
    pass


def _error(pattern: str, message: str, pos: int | None = None, hint: str | None = None) -> QueryError:
    where = f" at position {pos}" if pos is not None else ""
    return QueryError(
        f"invalid regex {pattern!r}{where} (python backend): {message}",
        hint=hint or "fix the pattern (ripgrep regex syntax), or pass fixed_strings=true to search for it literally",
        pattern=pattern,
        position=pos,
        backend="python",
    )


def _translate(pattern: str) -> str:
    """Ripgrep (Rust regex) syntax -> the ``regex`` module's, for what differs.

    Refuses what Rust's engine refuses (look-around, backreferences); ``\\z``
    becomes ``\\Z``; a ``[`` inside a class is literal (Rust would nest a
    class; the ``regex`` module in its default version keeps it literal too,
    but says so with a warning).
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt.isdigit() and nxt != "0" and not in_class:
                raise _error(pattern, "backreferences are not supported (ripgrep syntax)", i)
            if nxt == "k" and not in_class:
                raise _error(pattern, "backreferences are not supported (ripgrep syntax)", i)
            out.append("\\Z" if nxt == "z" else pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i) and (end := pattern.find(":]", i + 2)) > 0:
                out.append(pattern[i : end + 2])  # a POSIX class, read natively
                i = end + 2
                continue
            if c == "]":
                in_class = False
            elif c == "[":
                out.append("\\[")
                i += 1
                continue
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":  # a leading ']' is literal
                out.append("\\]")
                i += 1
            continue
        if pattern.startswith("(?", i):
            rest = pattern[i + 2 : i + 4]
            if rest[:1] in ("=", "!") or rest in ("<=", "<!"):
                raise _error(pattern, "look-around is not supported (ripgrep syntax)", i)
        out.append(c)
        i += 1
    return "".join(out)


def compile_pattern(pattern: str, *, fixed_strings: bool, ignore_case: bool):
    """A text regex with ripgrep's line semantics (``^``/``$`` at line ends)."""
    import regex

    source = regex.escape(pattern) if fixed_strings else _translate(pattern)
    flags = regex.MULTILINE | (regex.IGNORECASE if ignore_case else 0)
    try:
        return regex.compile(source, flags)
    except regex.error as exc:
        pos = exc.pos if exc.pos is not None and source == pattern else None
        if exc.msg == "missing )":  # name the group left open, as rg does
            pos = unclosed_group(pattern)
        raise _error(pattern, exc.msg, pos) from None
    except (OverflowError, RecursionError, ValueError) as exc:  # pragma: no cover - absurd patterns
        raise _error(pattern, str(exc)) from None


class _Searcher:
    """One compiled pattern, searched with the request's time cap."""

    def __init__(self, rx, spec: Spec) -> None:
        self.rx = rx
        self.spec = spec

    def _left(self, step: bool = False) -> float:
        left = self.spec.remaining()
        if left <= 0:
            raise _TimeUp
        # with a cancel token, a search waits at most a second, then looks again
        return min(left, 1.0) if step and self.spec.cancel is not None else min(left, 1e6)

    def search(self, text: str, pos: int = 0, endpos: int | None = None):
        end = len(text) if endpos is None else endpos
        while True:
            try:
                return self.rx.search(text, pos, end, timeout=self._left(step=True), concurrent=True)
            except TimeoutError:
                continue  # the cap, or a cancel, ends it in _left

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None):
        try:
            yield from self.rx.finditer(text, pos, len(text) if endpos is None else endpos, timeout=self._left(), concurrent=True)
        except TimeoutError:
            raise _TimeUp from None


def _as_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _line_starts(text: str, s: _Searcher, upto: int):
    """Yield (line_start, line_end) of matching lines, in order, at most ``upto``."""
    pos, n, found = 0, len(text), 0
    while found < upto and pos <= n:
        m = s.search(text, pos)
        if m is None:
            return
        start = m.start()
        ls = text.rfind("\n", 0, start) + 1
        le = text.find("\n", start)
        le = n if le < 0 else le
        if m.end() > le and s.search(text, ls, le) is None:  # crossed a line end: re-check the line alone
            pos = le + 1
            continue
        if ls == n:  # an empty match after the last newline (or in an empty file): no line there
            return
        yield ls, le
        found += 1
        pos = le + 1


def _multiline_lines(text: str, s: _Searcher) -> list[int]:
    """Line indexes (0-based) covered by any match, for multiline mode."""
    covered: set[int] = set()
    line, last = 0, 0
    for m in s.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        end_line = line + text.count("\n", m.start(), max(m.end() - 1, m.start()))
        if m.start() == len(text) and (not text or text.endswith("\n")):
            continue
        covered.update(range(line, end_line + 1))
    return sorted(covered)


def covered_lines(text: str, rx, spec: Spec) -> set[int] | None:
    """0-based indexes of the lines of ``text`` that a multiline match of ``rx`` covers
    (the count pass's rule); ``None`` when the time cap cut the search."""
    try:
        return set(_multiline_lines(text, _Searcher(rx, spec)))
    except _TimeUp:
        return None


def _shown(raw: str) -> tuple[str, bool]:
    """A line as results show it: undecodable bytes replaced with U+FFFD."""
    if raw.isascii():
        return raw, False
    try:
        raw.encode("utf-8")
        return raw, False
    except UnicodeEncodeError:
        return decode(raw.encode("utf-8", "surrogateescape"))


def _span(raw: str, start: int, end: int, replaced: bool) -> tuple[int, int]:
    if not replaced:
        return start, end
    return len(_shown(raw[:start])[0]), len(_shown(raw[:end])[0])


def _blocks(f, first: bytes):
    """The file's text in blocks of whole lines (BOM stripped, ``\\r\\n`` as ``\\n``), with
    the number of lines before each block."""
    carry = strip_bom(first)
    lines_before = 0
    while True:
        more = f.read(BLOCK)
        data = carry + more
        if more:
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # one line longer than a block: read on
                carry = data
                continue
            block, carry = data[:cut], data[cut:]
        else:
            block, carry = data, b""
        if b"\r" in block:
            block = block.replace(b"\r\n", b"\n")
        text = _as_text(block)
        yield lines_before, text
        lines_before += text.count("\n")
        if not more:
            return


class PythonBackend(SearchBackend):
    """The ``regex`` module over the files of the scope's universe."""

    name = "python"

    def count(self, scope: Scope) -> Outcome:
        spec = scope.spec
        s = _Searcher(compile_pattern(spec.pattern, fixed_strings=spec.fixed_strings, ignore_case=spec.ignore_case), spec)
        out = Outcome(binary=0, denied=0)
        names = scope.files() if spec.file is None else [p for p in [spec.file] if spec.keep(p)]
        denied = scope.denied_among(names) if spec.file is None else {p for p in names if spec.is_denied(p)}
        out.denied = len(denied)
        out.files_searched = len(names) - len(denied)
        try:
            with scope.policy.opener() as opener:
                for path in names:
                    if path in denied:
                        continue
                    if spec.remaining() <= 0:
                        raise _TimeUp
                    k = self._count_file(opener, path, s, spec.multiline, out)
                    if k:
                        out.counts[path] = k
        except _TimeUp:
            out.timed_out = True
        return out

    def _open(self, opener, path: str, skipped: list[Skipped]):
        try:
            return opener.open(path)
        except FileNotFoundError:
            skipped.append(Skipped(path, "vanished"))
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EINVAL):  # a symlink, under one, or not a regular file: not searched
                skipped.append(Skipped(path, "unreadable"))
        return None, None

    def _count_file(self, opener, path: str, s: _Searcher, multiline: bool, out: Outcome) -> int:
        f, st = self._open(opener, path, out.skipped)
        if f is None:
            return 0
        with f:
            first = f.read(BINARY_PROBE)
            if is_binary(first):
                if self._binary_match(f, first, s):
                    out.binary = (out.binary or 0) + 1
                return 0
            if multiline:
                if st.st_size > MULTILINE_LIMIT:
                    out.skipped.append(Skipped(path, "too_large"))
                    return 0
                text = "".join(t for _, t in _blocks(f, first))
                return len(_multiline_lines(text, s))
            return sum(sum(1 for _ in _line_starts(text, s, 1 << 62)) for _, text in _blocks(f, first))

    @staticmethod
    def _binary_match(f, first: bytes, s: _Searcher) -> bool:
        data = first
        while True:
            if s.search(_as_text(data)) is not None:
                return True
            more = f.read(BLOCK)
            if not more:
                return False
            data = data[-4096:] + more  # a small overlap: a match across blocks is still found

    def lines(self, scope: Scope, paths: list[str], upto: int) -> tuple[dict[str, list[Match]], list[Skipped], bool]:
        spec = scope.spec
        s = _Searcher(compile_pattern(spec.pattern, fixed_strings=spec.fixed_strings, ignore_case=spec.ignore_case), spec)
        found: dict[str, list[Match]] = {}
        skipped: list[Skipped] = []
        try:
            with scope.policy.opener() as opener:
                for path in paths:
                    f, st = self._open(opener, path, skipped)
                    if f is None:
                        continue
                    with f:
                        first = f.read(BINARY_PROBE)
                        if is_binary(first):
                            continue
                        found[path] = self._file_lines(f, first, s, spec.multiline, upto)
        except _TimeUp:
            return found, skipped, True
        return found, skipped, False

    def _file_lines(self, f, first: bytes, s: _Searcher, multiline: bool, upto: int) -> list[Match]:
        matches: list[Match] = []
        if multiline:
            text = "".join(t for _, t in _blocks(f, first))
            wanted = _multiline_lines(text, s)[:upto]
            if not wanted:
                return matches
            lines = text.split("\n")
            offsets = [0]
            for ln in lines:
                offsets.append(offsets[-1] + len(ln) + 1)
            spans_by_line: dict[int, list[tuple[int, int]]] = {}
            for m in s.finditer(text):
                first_line = bisect.bisect_right(offsets, m.start()) - 1
                last_line = bisect.bisect_right(offsets, max(m.end() - 1, m.start())) - 1
                for li in range(first_line, last_line + 1):
                    a = max(m.start(), offsets[li]) - offsets[li]
                    b = min(m.end(), offsets[li] + len(lines[li])) - offsets[li]
                    spans_by_line.setdefault(li, []).append((a, max(a, b)))
            for li in wanted:
                raw = lines[li]
                shown, replaced = _shown(raw)
                spans = tuple(_span(raw, a, b, replaced) for a, b in spans_by_line.get(li, [(0, 0)]))
                matches.append(Match(li + 1, shown, spans, replaced))
            return matches
        for before, text in _blocks(f, first):
            line_no, last = before + 1, 0
            for ls, le in _line_starts(text, s, upto - len(matches)):
                line_no += text.count("\n", last, ls)
                last = ls
                raw = text[ls:le]
                shown, replaced = _shown(raw)
                spans = tuple(_span(raw, m.start() - ls, m.end() - ls, replaced) for m in s.finditer(text, ls, le))
                matches.append(Match(line_no, shown, spans, replaced))
            if len(matches) >= upto:
                break
        return matches
