"""head and tail: a bounded run of lines from one file, as an Excerpt.

Owns reading line ranges cheaply (head reads forward only as far as it
needs, tail reads backwards from the end so its cost does not grow with the
file), the excerpt and its notices, and the call that reads on. The file is
opened through the policy's opener and judged as opened. Does not own path
checks (``policy``), the session fields or token caps (``workspace``,
``render``).
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, replace

from ..errors import PathError
from ..query import MAX_LINES, HeadQuery, TailQuery
from ..refs import Delivered, Excerpt, Result, mtime_of
from ..render import View, clamp_to_rule, render_text, slim_instructions
from ..repo.policy import DeniedLink, PathPolicy
from ..repo.universe import Repo
from ..text.hints import call
from ..text.lines import BINARY_PROBE, BOM, clean_line, decode, is_binary, trim_partial
from ..text.redact import key_state, redact_lines, redaction_note
from ..tokens.tokenizer import fit_lines

TYPE_CHECKING = False  # as typing's: importing typing costs ~2 ms of a one-shot head
if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = [
    "COUNT_LIMIT",
    "MAX_LINE_CHARS",
    "MAX_LINES",
    "FileLines",
    "Span",
    "add_read_on",
    "cut_line",
    "excerpt_result",
    "file_lines",
    "fit_excerpt",
    "head_or_tail",
    "read_costs",
    "read_head",
    "read_tail",
]

MAX_LINE_CHARS = 2000
COUNT_LIMIT = 8 * 1024 * 1024  # above this, tail (and head) do not count every line
_CHUNK = 64 * 1024
_LINE_BYTES = MAX_LINE_CHARS * 4 + 4  # enough bytes for 2,000 chars of UTF-8
_CUT_MARK = " [… line cut: "


@dataclass(frozen=True, slots=True)
class Span:
    """Lines read from a file; line numbers ``None`` when not counted."""

    lines: list[str]
    start_line: int | None
    total_lines: int | None
    replaced: bool
    cut_lines: int  # lines shortened to MAX_LINE_CHARS
    inside_key: bool = False  # the first line is inside a private-key block that began before it


def _clip(raw: bytes, skipped: int = 0) -> tuple[str, bool, bool]:
    """Decode one line (no newline); cut it at MAX_LINE_CHARS with a marker.

    ``skipped`` counts bytes of the line that were never read.
    """
    if skipped:  # the read stopped inside the line, maybe inside a character
        raw = trim_partial(raw)
    text, replaced = decode(raw)
    shown, cut = cut_line(clean_line(text), skipped)
    return shown, replaced, cut


def cut_line(text: str, skipped: int = 0) -> tuple[str, bool]:
    """One decoded line as shown: cut at MAX_LINE_CHARS with a marker that says
    how much is left out (``skipped``: bytes never read); returns (text, cut)."""
    if len(text) > MAX_LINE_CHARS or skipped:
        extra = max(len(text) - MAX_LINE_CHARS, 0)
        omitted = f"{extra:,} more chars" if not skipped else f"{extra + skipped:,}+ more bytes"
        return f"{text[:MAX_LINE_CHARS]}{_CUT_MARK}{omitted}]", True
    return text, False


def _check_binary(f: BinaryIO, path: str) -> None:
    if is_binary(f.read(BINARY_PROBE)):
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


def read_head(f: BinaryIO, path: str, size: int, n: int, start: int) -> Span:
    """Lines ``start`` .. ``start+n-1`` of the open file ``f``, reading forward only as far as needed."""
    lines: list[str] = []
    replaced = False
    cut = 0
    _check_binary(f, path)
    first = f.read(len(BOM))
    if first != BOM:
        f.seek(0)
    lineno = 0
    inside = False  # in a private-key block begun before ``start`` (its body is redacted from the first line shown)
    while lineno < start + n - 1:
        raw = f.readline(_LINE_BYTES)
        if not raw:
            break
        if lineno + 1 < start and (inside or b"PRIVATE KEY" in raw):
            inside = key_state(raw.decode("utf-8", "replace"), inside)
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
    return Span(lines, start, total, replaced, cut, inside)


def read_tail(f: BinaryIO, path: str, size: int, n: int) -> Span:
    """The last ``n`` lines of the open file ``f``, read backwards from the end in blocks."""
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
    elif pos == 0 and parts[0].startswith(BOM):
        parts[0] = parts[0][len(BOM) :]
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


@dataclass(frozen=True, slots=True)
class FileLines:
    """A whole file's lines as head shows them (decoded, ``\\r`` cleaned, cut at
    ``MAX_LINE_CHARS`` with head's marker; not redacted): what a session compares and
    slices. ``replaced``/``cut``: the 1-based numbers of the lines that held invalid
    UTF-8 / were cut."""

    lines: list[str]
    replaced: frozenset[int] = frozenset()
    cut: frozenset[int] = frozenset()


def _line_as_read(raw: bytes, newline: bool) -> tuple[str, bool, bool]:
    """One line (``raw`` without its newline) exactly as :func:`read_head` shows it: the
    first ``_LINE_BYTES`` of a longer line, the rest counted as skipped bytes."""
    if len(raw) + newline <= _LINE_BYTES:
        return _clip(raw)
    return _clip(raw[:_LINE_BYTES], len(raw) - _LINE_BYTES)


def file_lines(data: bytes) -> FileLines:
    """Every line of ``data`` (a whole file) as :func:`read_head` would show it, in one
    pass: valid UTF-8 without ``\\r``, BOM characters or long lines is split at C speed;
    other lines go through head's own per-line rule."""
    body = data[len(BOM) :] if data.startswith(BOM) else data
    try:
        text: str | None = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and "\r" not in text and "\ufeff" not in text:
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        if not lines or max(map(len, lines)) <= MAX_LINE_CHARS:
            return FileLines(lines)
    raws = body.split(b"\n")
    last_newline = raws[-1] == b""
    if last_newline:
        raws.pop()
    out: list[str] = []
    replaced, cut = set(), set()
    for k, raw in enumerate(raws, 1):
        shown, rep, was_cut = _line_as_read(raw, k < len(raws) or last_newline)
        out.append(shown)
        if rep:
            replaced.add(k)
        if was_cut:
            cut.add(k)
    return FileLines(out, frozenset(replaced), frozenset(cut))


def head_or_tail(repo: Repo, policy: PathPolicy, q: HeadQuery | TailQuery) -> tuple[Result, Delivered]:
    """Run head or tail: the excerpt with its notices, and the file it delivered.

    The file is opened through the policy's opener after the path is checked:
    what is read is the file that was checked (a symlink swapped in since is
    refused), and its size and mtime are the opened file's. Secrets are redacted
    here, with the state of a private-key block begun above the first line shown.
    """
    target = policy.resolve(q.path, want="file")
    try:
        with policy.opener() as opener:
            f, st = opener.open(target.path)
    except OSError as exc:
        raise open_error(q.path, exc) from None
    size = st.st_size
    with f:
        span = read_head(f, target.path, size, q.n, q.start) if isinstance(q, HeadQuery) else read_tail(f, target.path, size, q.n)
    shown, findings, _ = redact_lines(span.lines, inside_key=span.inside_key)
    res = excerpt_result(q, target.path, size, mtime_of(st), replace(span, lines=shown), ignored=repo.is_ignored(target.path))
    if findings:
        first = span.start_line if span.start_line is not None else 1
        res.add_notice(redaction_note(target.path, findings, first))
    return res, Delivered(target.path, target.real, "read")


def open_error(path: str, exc: OSError) -> PathError:
    """The error for a file that could not be opened for head or tail."""
    if isinstance(exc, DeniedLink):
        return PathError(
            f"path {path!r} is a hard link to a file on the deny list; its content is never shown",
            path=path,
            reason="denied",
            hint="secrets files (.env, keys) are withheld by policy",
        )
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
        return PathError(f"path {path!r} changed while it was being read", path=path, reason="changed", hint="read it again")
    if exc.errno == errno.EINVAL:
        return PathError(f"path {path!r} is not a regular file", path=path, reason="not_a_file")
    return PathError(f"path {path!r} cannot be read: {exc.strerror}", path=path, reason="unreadable")


def excerpt_result(q: HeadQuery | TailQuery, path: str, size: int, mtime: float, span: Span, *, ignored: bool) -> Result:
    """A head or tail Result holding ``span`` as its excerpt, with head's notices (an
    empty file, a start past the end, lines not counted, replaced or cut lines)."""
    tool = "head" if isinstance(q, HeadQuery) else "tail"
    content = "".join(line + "\n" for line in span.lines)
    end = span.start_line + len(span.lines) - 1 if span.start_line is not None else None
    excerpt = Excerpt(path, size, mtime, span.start_line, end, span.total_lines, content, ignored=ignored, replaced=span.replaced)
    res = Result(tool, [excerpt], total=1)
    if q.notice:
        res.add_notice(q.notice)
    if not span.lines and span.total_lines == 0:
        res.add_notice(f"{path} is empty: nothing to read.")
    elif isinstance(q, HeadQuery) and not span.lines and span.total_lines is not None and q.start > span.total_lines:
        res.add_notice(f"start={q.start:,} is past the end: {path} has {span.total_lines:,} lines; read the end with {call('tail', path=path)}.")
    elif isinstance(q, HeadQuery) and not span.lines and span.total_lines is None:
        res.add_notice(f"start={q.start:,} is past the end of {path}; read the end with {call('tail', path=path)}.")
    if span.total_lines is None and span.lines:
        if tool == "tail":
            res.add_notice(f"{path} is over 8 MiB, so lines were not counted: numbers run from the end (-{len(span.lines)} is the first shown).")
        else:
            res.add_notice(f"{path} is over 8 MiB, so total_lines was not counted.")
    if span.replaced:
        res.add_notice("invalid UTF-8 was replaced with U+FFFD.")
    if span.cut_lines:
        res.add_notice(f"{span.cut_lines:,} line(s) over 2,000 chars were cut with a marker.")
    return res


def read_costs(path: str, data: bytes, mtime: float, reads: list[tuple[int, int, str | None]], count) -> list[int | None]:
    """What each ``head --symbol`` read of lines ``(start, end)`` of the file ``data``
    (whole: at most 2 MiB, as the code index reads it) costs as a caller receives it: the
    excerpt's header, its numbered lines and the notices that read carries (``note``: one
    more, the caller's, such as where a declaration is defined), counted with ``count``;
    no session lines (stale files, instructions met). A definition's price (DESIGN 9): the
    same ``_result`` and ``add_read_on`` as the read. None where the file is not text."""
    import io

    try:
        whole = read_head(io.BytesIO(data), path, len(data), 1 << 40, 1)  # every line, clipped as head clips it
    except PathError:
        return [None] * len(reads)
    out: list[int | None] = []
    for start, end, note in reads:
        q = HeadQuery.make(path=path, n=end - start + 1, start=start)
        lines = whole.lines[start - 1 : start - 1 + q.n]
        shown = "".join(lines)
        span = Span(lines, start, whole.total_lines, "\ufffd" in shown, sum(_CUT_MARK in line for line in lines))  # "\ufffd": as decoding marks a replacement
        res = excerpt_result(q, path, len(data), mtime, span, ignored=False)
        e = res.results[0]
        res.results = [replace(e, tokens=count(e.content))]
        add_read_on(res, until=end)
        if note:
            res.add_notice(note)
        text = render_text(res)
        header, _, body = text.partition("\n")  # the header's last pre-token takes the newline: counted apart, the numbered body is cached by content
        out.append(count(header + "\n") + count(body) if body else count(text))
    return out


def fit_excerpt(result: Result, max_tokens: int, tokenizer, view: View | None = None, *, asked: tuple[int, int] | None = None, until: int | None = None) -> Result:
    """Keep whole lines (the first ones for head, the last ones for tail) so that
    the whole rendered result, read-on call included, fits ``max_tokens``
    (``asked``, ``until``: see :func:`add_read_on`).

    The rendered text is what is priced, so the cap holds exactly (a result
    whose fixed parts alone exceed it keeps no line, and says so).
    """
    max_tokens = clamp_to_rule(result, max_tokens)
    result = slim_instructions(result, max_tokens, tokenizer, view)
    e = result.results[0]
    lines = e.lines
    from_end = result.tool == "tail"

    def cut(k: int) -> Result:
        if k == len(lines):
            out = replace(result, results=[replace(e, tokens=tokenizer.count(e.content))])
        else:
            kept = lines[len(lines) - k :] if from_end else lines[:k]
            start, end = e.start_line, e.end_line
            if start is not None and end is not None:
                start, end = (end - k + 1, end) if from_end else (start, start + k - 1)
            content = "".join(t + "\n" for t in kept)
            out = replace(result, results=[replace(e, content=content, start_line=start, end_line=end, tokens=tokenizer.count(content))], truncated=True)
            which = "the last " if from_end else ""
            out.add_notice(f"cut to {which}{k:,} of {len(lines):,} lines to fit max_tokens; raise max_tokens or ask for fewer lines.")
        add_read_on(out, asked, until=until)
        return out

    def priced(k: int) -> str:
        # exactly the text the caller receives, its header's token count included
        return render_text(cut(k), view=view)

    whole = cut(len(lines))
    if tokenizer.count(render_text(whole, view=view)) <= max_tokens:
        return whole  # checked first: a cut's notice can cost more than the lines it drops
    return cut(fit_lines(tokenizer.count, lines, max_tokens, priced) or 0)


def add_read_on(res: Result, asked: tuple[int, int] | None = None, *, until: int | None = None) -> None:
    """The call that reads past a head/tail excerpt, from the lines it shows
    (after any token cut: it names the lines actually shown). ``asked``: the lines
    the read asked for, when the excerpt shows only part of them because the caller
    holds the rest (a session's re-read): reading on starts past them, unless cut.
    ``until``: the excerpt is a unit that ends at that line (``head --symbol``'s
    definition): no call when it is shown to its end."""
    e = res.results[0]
    if until is not None and e.end_line is not None and e.end_line >= until and not res.truncated:
        return
    whole = asked is not None and not res.truncated
    if res.tool == "head" and e.end_line is not None and e.content:
        end = max(e.end_line, asked[1]) if whole and asked is not None else e.end_line
        if e.total_lines is not None and end < e.total_lines:
            res.add_notice(f"{e.total_lines - end:,} more lines; read on with {call('head', path=e.path, start=end + 1)}.")
        elif e.total_lines is None and res.truncated:
            res.add_notice(f"read on with {call('head', path=e.path, start=end + 1)}.")
    elif res.tool == "tail" and e.start_line is not None:
        start = min(e.start_line, asked[0]) if whole and asked is not None else e.start_line
        if start > 1:
            res.add_notice(f"{start - 1:,} earlier lines; read them with {call('head', path=e.path, start=1)} (or a later start).")
