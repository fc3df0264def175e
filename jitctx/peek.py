"""head and tail: a bounded run of lines from one file, as an Excerpt.

Owns reading line ranges cheaply: head reads forward only as far as it
needs, tail reads backwards from the end so its cost does not grow with the
file. Does not own path checks (``policy``) or token caps (``render``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import PathError
from .policy import BINARY_PROBE, clean_line, decode, is_binary_bytes, trim_partial
from .query import check_count

__all__ = ["MAX_LINE_CHARS", "MAX_LINES", "COUNT_LIMIT", "PeekQuery", "Span", "read_head", "read_tail"]

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
COUNT_LIMIT = 8 * 1024 * 1024  # above this, tail (and head) do not count every line
_CHUNK = 64 * 1024
_LINE_BYTES = MAX_LINE_CHARS * 4 + 4  # enough bytes for 2,000 chars of UTF-8


@dataclass(frozen=True, slots=True)
class PeekQuery:
    """Validated head/tail input. ``n`` above 2,000 is clamped with a notice."""

    path: str
    n: int = 100
    start: int = 1
    notice: str | None = None

    @classmethod
    def make(cls, path: str, n: object = 100, start: object = 1) -> "PeekQuery":
        count, notice = check_count("n", n, maximum=MAX_LINES, clamp=True)
        first, _ = check_count("start", start)
        return cls(path, count, first, notice)


@dataclass(frozen=True, slots=True)
class Span:
    """Lines read from a file; line numbers ``None`` when not counted."""

    lines: list[str]
    start_line: int | None
    total_lines: int | None
    replaced: bool
    cut_lines: int  # lines shortened to MAX_LINE_CHARS


def _clip(raw: bytes, skipped: int = 0) -> tuple[str, bool, bool]:
    """Decode one line (no newline); cut it at MAX_LINE_CHARS with a marker.

    ``skipped`` counts bytes of the line that were never read.
    """
    if skipped:  # the read stopped inside the line, maybe inside a character
        raw = trim_partial(raw)
    text, replaced = decode(raw)
    text = clean_line(text)
    if len(text) > MAX_LINE_CHARS or skipped:
        extra = max(len(text) - MAX_LINE_CHARS, 0)
        omitted = f"{extra:,} more chars" if not skipped else f"{extra + skipped:,}+ more bytes"
        return f"{text[:MAX_LINE_CHARS]} [… line cut: {omitted}]", replaced, True
    return text, replaced, False


def _check_binary(f, path: str) -> None:
    if is_binary_bytes(f.read(BINARY_PROBE)):
        raise PathError(f"path {path!r} is a binary file", path=path, reason="binary", hint="head and tail read text files only")
    f.seek(0)


def _count_lines(f, from_pos: int) -> int:
    """Newlines from ``from_pos`` to the end, plus one for a last line without one."""
    f.seek(from_pos)
    count = 0
    last = b""
    while chunk := f.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk
    if last and not last.endswith(b"\n"):
        count += 1
    return count


def read_head(real: os.PathLike, path: str, size: int, n: int, start: int) -> Span:
    """Lines ``start`` .. ``start+n-1``, reading forward only as far as needed."""
    lines: list[str] = []
    replaced = False
    cut = 0
    with open(real, "rb") as f:
        _check_binary(f, path)
        first = f.read(3)
        if first != b"\xef\xbb\xbf":
            f.seek(0)
        lineno = 0
        while lineno < start + n - 1:
            raw = f.readline(_LINE_BYTES)
            if not raw:
                break
            skipped = 0
            if not raw.endswith(b"\n") and len(raw) == _LINE_BYTES:
                # a very long line: skip the rest of it without holding it
                while more := f.readline(_CHUNK):
                    if more.endswith(b"\n"):
                        skipped += len(more) - 1
                        break
                    skipped += len(more)
            lineno += 1
            if lineno >= start:
                body = raw[:-1] if raw.endswith(b"\n") else raw
                text, rep, was_cut = _clip(body, skipped)
                lines.append(text)
                replaced |= rep
                cut += was_cut
        total: int | None
        if size > COUNT_LIMIT:
            total = None
        else:
            rest = _count_lines(f, f.tell())
            total = lineno + rest
    return Span(lines, start, total, replaced, cut)


def read_tail(real: os.PathLike, path: str, size: int, n: int) -> Span:
    """The last ``n`` lines, read backwards from the end in blocks."""
    with open(real, "rb") as f:
        _check_binary(f, path)
        if size == 0:
            return Span([], 1, 0, False, 0)
        budget = max(1 << 20, n * (_LINE_BYTES + 2))  # never read more than this
        pos = size
        f.seek(size - 1)
        trailing = f.read(1) == b"\n"
        need = n + 1 if trailing else n  # newlines before the first wanted line
        blocks: list[bytes] = []
        newlines = read = 0
        while pos > 0 and newlines < need and read < budget:
            step = min(_CHUNK, pos)
            pos -= step
            f.seek(pos)
            block = f.read(step)
            blocks.append(block)
            newlines += block.count(b"\n")
            read += step
        buf = b"".join(reversed(blocks))
        body = buf[:-1] if trailing else buf
        parts = body.split(b"\n")
        # parts[0] is whole only if the read reached the file start; else drop it
        partial = pos > 0 and len(parts) <= n  # byte budget ran out inside one long line
        if not partial and (pos > 0 or len(parts) > n):
            parts = parts[-n:]
        elif pos == 0 and parts[0].startswith(b"\xef\xbb\xbf"):
            parts[0] = parts[0][3:]
        lines: list[str] = []
        replaced = False
        cut = 0
        for i, raw in enumerate(parts):
            if i == 0 and partial:  # read from inside a character: drop its continuation bytes
                k = 0
                while k < 3 and k < len(raw) and raw[k] & 0xC0 == 0x80:
                    k += 1
                raw = raw[k:]
            text, rep, was_cut = _clip(raw)
            if i == 0 and partial:
                text = f"[… line start not read] {text[-MAX_LINE_CHARS:]}"
                was_cut = True
            lines.append(text)
            replaced |= rep
            cut += was_cut
        if size > COUNT_LIMIT:
            return Span(lines, None, None, replaced, cut)
        total = _count_lines(f, 0)
    return Span(lines, total - len(lines) + 1, total, replaced, cut)
