"""The pure-Python search backend: ``re`` over whole files.

Owns translating ripgrep regex syntax (the common subset) to a Python bytes
regex and searching the Workspace's file universe with it, in the fast shape:
``git ls-files`` for the universe, one read and one bytes regex per whole
file, a line found only where a match starts, and a match that crosses a
line end re-checked on that line alone (ripgrep never matches across lines
without ``multiline``). Binary = a NUL in the first 8 KiB; symlinks are not
followed (like ``git grep`` and ``rg``). A catastrophic pattern is stopped by
the time cap: on the main thread a timer signal interrupts ``re`` itself;
elsewhere the cap is checked between files.

Does not own paging, context or notices (``search``).
"""

from __future__ import annotations

import bisect
import errno
import os
import re
import signal
import threading
import time

from ..errors import QueryError
from ..policy import BINARY_PROBE, decode
from ..refs import Skipped
from . import Match, Outcome, Spec, denied_among, in_scope

__all__ = ["PythonBackend", "compile_pattern"]

_BOM = b"\xef\xbb\xbf"
_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7F", "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F", "digit": "0-9", "graph": "!-~", "lower": "a-z",
    "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z", "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}


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
    """Ripgrep (Rust regex) syntax -> Python ``re`` syntax, for the common subset."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt.isdigit() and nxt != "0" and not in_class:
                raise _error(pattern, "backreferences are not supported (ripgrep syntax)", i)
            if nxt in "pP":
                raise _error(pattern, "Unicode classes (\\p{...}) are not supported by the python backend", i, "use the rg backend, or an explicit class such as [A-Za-z]")
            out.append("\\Z" if nxt == "z" else pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            m = re.match(r"\[:(\^?)([a-z]+):\]", pattern[i:])
            if m and m.group(2) in _POSIX and not m.group(1):
                out.append(_POSIX[m.group(2)])
                i += m.end()
                continue
            if c == "]":
                in_class = False
            elif c == "[":  # a literal '[' inside a class (Rust nests classes; keep it literal)
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
            if rest[:1] == "<" and rest[1:2].isalpha():  # (?<name>...) -> (?P<name>...)
                out.append("(?P<")
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def compile_pattern(pattern: str, *, fixed_strings: bool, ignore_case: bool) -> re.Pattern[bytes]:
    """A bytes regex with ripgrep's line semantics (``^``/``$`` at line ends)."""
    source = re.escape(pattern) if fixed_strings else _translate(pattern)
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        return re.compile(source.encode("utf-8", "surrogateescape"), flags)
    except re.error as exc:
        pos = exc.pos if exc.pos is not None and source == pattern else None
        raise _error(pattern, exc.msg, pos) from None
    except (OverflowError, RecursionError) as exc:  # pragma: no cover - absurd patterns
        raise _error(pattern, str(exc)) from None


class _TimeUp(Exception):
    pass


class _Alarm:
    """On the main thread, interrupt ``re`` itself when the cap is reached.

    Only when no other real-time timer is armed; otherwise (and off the main
    thread) the cap is checked between files.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.armed = False

    def __enter__(self) -> "_Alarm":
        if (
            threading.current_thread() is threading.main_thread()
            and hasattr(signal, "setitimer")
            and self.seconds != float("inf")
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0  # someone else's alarm (pytest-timeout...) is left alone
        ):
            def ring(signum, frame):
                raise _TimeUp

            self.old = signal.signal(signal.SIGALRM, ring)
            signal.setitimer(signal.ITIMER_REAL, max(self.seconds, 0.001))
            self.armed = True
        return self

    def __exit__(self, *exc) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)


def _read(full: str) -> bytes:
    # O_NOFOLLOW: symlinks are not followed; O_NONBLOCK: a FIFO never hangs the search
    fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _normalize(data: bytes) -> bytes:
    if data.startswith(_BOM):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    return data


def _line_starts(data: bytes, rx: re.Pattern[bytes], upto: int):
    """Yield (line_start, line_end) of matching lines, in order, at most ``upto``."""
    pos, n, found = 0, len(data), 0
    search = rx.search
    while found < upto and pos <= n:
        m = search(data, pos)
        if m is None:
            return
        start = m.start()
        ls = data.rfind(b"\n", 0, start) + 1
        le = data.find(b"\n", start)
        le = n if le < 0 else le
        if m.end() > le and search(data, ls, le) is None:  # crossed a line end: re-check the line alone
            pos = le + 1
            continue
        if ls == n:  # an empty match after the last newline (or in an empty file): no line there
            return
        yield ls, le
        found += 1
        pos = le + 1


def _multiline_lines(data: bytes, rx: re.Pattern[bytes]) -> list[int]:
    """Line indexes (0-based) covered by any match, for multiline mode."""
    covered: set[int] = set()
    line, last = 0, 0
    for m in rx.finditer(data):
        line += data.count(b"\n", last, m.start())
        last = m.start()
        end_line = line + data.count(b"\n", m.start(), max(m.end() - 1, m.start()))
        if m.start() == len(data) and (not data or data.endswith(b"\n")):
            continue
        covered.update(range(line, end_line + 1))
    return sorted(covered)


def _decode_line(raw: bytes) -> str:
    return decode(raw)[0]  # the policy's rule: UTF-8 with replacement, BOM stripped


def _char_span(raw: bytes, start: int, end: int) -> tuple[int, int]:
    return len(_decode_line(raw[:start])), len(_decode_line(raw[:end]))


class PythonBackend:
    """``re`` over whole files of the Workspace's universe."""

    name = "python"

    def count(self, ws, spec: Spec) -> Outcome:
        rx = compile_pattern(spec.pattern, fixed_strings=spec.fixed_strings, ignore_case=spec.ignore_case)
        out = Outcome(binary=0, denied=0)
        names = in_scope(ws, spec) if spec.file is None else [p for p in [spec.file] if spec.keep(p)]
        denied = denied_among(ws.policy, names) if spec.file is None else {p for p in names if spec.is_denied(p)}
        out.denied = len(denied)
        root = str(ws.root) + os.sep
        deadline = spec.deadline
        clock = time.monotonic
        try:
            with _Alarm(spec.remaining()):
                for path in names:
                    if path in denied:
                        continue
                    if clock() > deadline:
                        raise _TimeUp
                    try:
                        data = _read(root + path)
                    except FileNotFoundError:
                        out.skipped.append(Skipped(path, "vanished"))
                        continue
                    except IsADirectoryError:
                        continue  # a submodule or nested repository
                    except OSError as exc:
                        if exc.errno == errno.ELOOP:  # ELOOP: a symlink, not followed
                            continue
                        out.skipped.append(Skipped(path, "unreadable"))
                        continue
                    if b"\0" in data[:BINARY_PROBE]:
                        if rx.search(data) is not None:
                            out.binary += 1
                        continue
                    data = _normalize(data)
                    if spec.multiline:
                        k = len(_multiline_lines(data, rx))
                    else:
                        k = sum(1 for _ in _line_starts(data, rx, 1 << 62))
                    if k:
                        out.counts[path] = k
        except _TimeUp:
            out.timed_out = True
        return out

    def lines(self, ws, spec: Spec, paths: list[str], upto: int) -> tuple[dict[str, list[Match]], list[Skipped], bool]:
        rx = compile_pattern(spec.pattern, fixed_strings=spec.fixed_strings, ignore_case=spec.ignore_case)
        found: dict[str, list[Match]] = {}
        skipped: list[Skipped] = []
        root = str(ws.root) + os.sep
        try:
            with _Alarm(spec.remaining()):
                for path in paths:
                    try:
                        data = _normalize(_read(root + path))
                    except FileNotFoundError:
                        skipped.append(Skipped(path, "vanished"))
                        continue
                    except OSError:
                        skipped.append(Skipped(path, "unreadable"))
                        continue
                    found[path] = self._file_lines(data, rx, spec.multiline, upto)
        except _TimeUp:
            return found, skipped, True
        return found, skipped, False

    def _file_lines(self, data: bytes, rx: re.Pattern[bytes], multiline: bool, upto: int) -> list[Match]:
        matches: list[Match] = []
        if multiline:
            wanted = _multiline_lines(data, rx)[:upto]
            if not wanted:
                return matches
            lines = data.split(b"\n")
            spans_by_line: dict[int, list[tuple[int, int]]] = {}
            offsets = [0]
            for ln in lines:
                offsets.append(offsets[-1] + len(ln) + 1)
            for m in rx.finditer(data):
                first = bisect.bisect_right(offsets, m.start()) - 1
                last = bisect.bisect_right(offsets, max(m.end() - 1, m.start())) - 1
                for li in range(first, last + 1):
                    s = max(m.start(), offsets[li]) - offsets[li]
                    e = min(m.end(), offsets[li] + len(lines[li])) - offsets[li]
                    spans_by_line.setdefault(li, []).append((s, max(e, s)))
            for li in wanted:
                raw = lines[li]
                spans = tuple(_char_span(raw, s, e) for s, e in spans_by_line.get(li, [(0, 0)]))
                text, replaced = decode(raw)
                matches.append(Match(li + 1, text, spans, replaced))
            return matches
        line_no, last = 1, 0
        for ls, le in _line_starts(data, rx, upto):
            line_no += data.count(b"\n", last, ls)
            last = ls
            raw = data[ls:le]
            spans = tuple(_char_span(raw, m.start() - ls, m.end() - ls) for m in rx.finditer(data, ls, le))
            text, replaced = decode(raw)
            matches.append(Match(line_no, text, spans, replaced))
        return matches

    def binary_matches(self, ws, spec: Spec) -> int | None:
        return None  # count() already knows
