"""What a session was shown of each file, and the short answer to reading it again.

Owns the session's record of shown lines (per file: the content they were
shown from, judged by its sha256, which line ranges at which turn and what
they cost) and the pure rules of a re-read (issue 22): lines shown from the
same content are not repeated (an unchanged note, or only the lines not yet
shown); a file changed since can be answered with a unified diff against
the text that was shown, after which the lines the caller can rebuild are
known again. Content decides, never mtime: a checkout that restores the same
bytes is unchanged, an edit that keeps the mtime is not. No I/O: the
Workspace reads, asks and records. Does not own staleness reports (the
ledger) or reading files (``peek``, ``policy``).
"""

from __future__ import annotations

import difflib
from collections import OrderedDict
from dataclasses import dataclass, field

__all__ = ["DIFF_LIMIT", "Seen", "Shown", "known_after_diff", "merge", "unified_diff", "uncovered"]

DIFF_LIMIT = 1 << 20  # bytes of a file whose shown text is kept for diffs
TEXT_BUDGET = 64 << 20  # bytes of shown text a session keeps (least recently shown dropped first)
MAX_FILES = 10_000


def merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, non-overlapping ranges (adjacent ones joined); inclusive, 1-based."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(r for r in ranges if r[0] <= r[1]):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def uncovered(shown: list[tuple[int, int]], a: int, b: int) -> list[tuple[int, int]]:
    """The parts of lines ``a``-``b`` that ``shown`` (merged) does not cover."""
    out = []
    at = a
    for s, e in shown:
        if e < at or s > b:
            continue
        if s > at:
            out.append((at, s - 1))
        at = max(at, e + 1)
        if at > b:
            break
    if at <= b:
        out.append((at, b))
    return out


def unified_diff(old: str, new: str, path: str, *, upto: int | None = None) -> tuple[str, int]:
    """``old`` -> ``new`` as a unified diff (3 lines of context), headed by ``path``; hunk
    headers carry the new text's line numbers. ``upto``: only the hunks that start at or
    before that line of the new text (what a read up to it needs). Returns the diff (empty
    when nothing is left) and how many hunks were left out after ``upto``."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    groups = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3))
    kept = [g for g in groups if upto is None or g[0][3] + 1 <= upto]
    if not kept:
        return "", len(groups)
    out = [f"--- a/{path} (as shown)\n", f"+++ b/{path} (now)\n"]
    for g in kept:
        i1, i2, j1, j2 = g[0][1], g[-1][2], g[0][3], g[-1][4]
        out.append(f"@@ -{_span(i1, i2)} +{_span(j1, j2)} @@\n")
        for tag, x1, x2, y1, y2 in g:
            if tag == "equal":
                out += [" " + ln for ln in a[x1:x2]]
                continue
            out += ["-" + ln for ln in a[x1:x2]]
            out += ["+" + ln for ln in b[y1:y2]]
    return "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in out), len(groups) - len(kept)


def _span(start: int, end: int) -> str:
    """A hunk's range as unified diffs write it (1-based start, length; an empty one at its line)."""
    length = end - start
    return f"{start + 1}" if length == 1 else f"{start if length == 0 else start + 1},{length}"


def known_after_diff(old: str, new: str, shown: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The new text's lines a caller can rebuild after a diff: unchanged lines it was
    shown before (mapped to their new numbers) and every line the diff's hunks show."""
    a, b = old.splitlines(), new.splitlines()
    known: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            for s, e in shown:  # old lines s..e (1-based) inside this block keep their text
                lo, hi = max(s - 1, i1), min(e, i2)
                if lo < hi:
                    known.append((j1 + (lo - i1) + 1, j1 + (hi - i1)))
        elif j2 > j1:
            known.append((j1 + 1, j2))  # shown in the diff as added lines
    return merge(known)


@dataclass(slots=True)
class Seen:
    """One file as a session was shown it: ``sha256`` of the bytes the lines came from,
    its ``text`` when small enough to diff against, the ``ranges`` shown (merged), and
    per delivery (start, end, turn, tokens) in ``deliveries``; ``outline``: (turn, count)
    of an outline shown from the same bytes, if any."""

    sha256: str
    text: str | None
    total: int | None
    ranges: list[tuple[int, int]] = field(default_factory=list)
    deliveries: list[tuple[int, int, int, int]] = field(default_factory=list)
    outline: tuple[int, int, int] | None = None

    def turns(self, a: int, b: int) -> tuple[list[int], int]:
        """The turns that showed lines ``a``-``b``, and the tokens those deliveries cost."""
        hit = [(t, tok) for s, e, t, tok in self.deliveries if s <= b and e >= a]
        return sorted({t for t, _ in hit}), sum(tok for _, tok in hit)


class Shown:
    """The session's record: path -> :class:`Seen`, bounded (the least recently shown
    files go first past ``TEXT_BUDGET`` bytes of kept text or ``MAX_FILES`` files)."""

    def __init__(self) -> None:
        self._files: OrderedDict[str, Seen] = OrderedDict()
        self._bytes = 0

    def get(self, path: str) -> Seen | None:
        return self._files.get(path)

    def forget(self, path: str) -> None:
        seen = self._files.pop(path, None)
        if seen is not None and seen.text is not None:
            self._bytes -= len(seen.text)

    def lines(self, path: str, sha256: str, text: str | None, total: int | None, a: int, b: int, turn: int, tokens: int) -> None:
        """Lines ``a``-``b`` of the content ``sha256`` were shown at ``turn``."""
        seen = self._files.get(path)
        if seen is None or seen.sha256 != sha256:
            self.forget(path)
            seen = Seen(sha256, text, total)
            self._keep(path, seen)
        elif seen.text is None and text is not None:  # an outline came first: keep the text now
            seen.text, seen.total = text, total
            self._bytes += len(text)
        self._files.move_to_end(path)
        if a <= b:
            seen.ranges = merge([*seen.ranges, (a, b)])
            seen.deliveries.append((a, b, turn, tokens))

    def replaced(self, path: str, sha256: str, text: str | None, total: int | None, known: list[tuple[int, int]], turn: int, tokens: int) -> None:
        """A diff at ``turn`` took the caller to the content ``sha256``: ``known`` lines of it."""
        self.forget(path)
        seen = Seen(sha256, text, total, merge(known), [(a, b, turn, tokens) for a, b in merge(known)])
        self._keep(path, seen)

    def outline(self, path: str, sha256: str, turn: int, count: int, limit: int) -> None:
        seen = self._files.get(path)
        if seen is None or seen.sha256 != sha256:
            self.forget(path)
            seen = Seen(sha256, None, None)
            self._keep(path, seen)
        seen.outline = (turn, count, limit)

    def _keep(self, path: str, seen: Seen) -> None:
        self._files[path] = seen
        if seen.text is not None:
            self._bytes += len(seen.text)
        while len(self._files) > MAX_FILES or self._bytes > TEXT_BUDGET:
            old, dropped = self._files.popitem(last=False)
            if dropped.text is not None:
                self._bytes -= len(dropped.text)
            if old == path:
                break
