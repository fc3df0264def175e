"""What a session was shown of each file, and the rules of reading it again.

Owns the session's record of what the caller holds of each file (per file:
the sha256 of the bytes of its latest delivery, the text it was shown as
(redacted, cut as head cuts), and which lines of that text the caller holds
and since which turn) and the pure rules of a re-read (issues 22 and 29):

- lines the caller holds that are still the file's lines at the same numbers
  are not repeated (an unchanged note, or only the lines it does not hold);
- a file changed since can be answered with a unified diff against the text
  the caller was shown, only when every line asked for can be rebuilt from
  what it holds and the diff (``diff_since``);
- after every answer the record follows what the caller can rebuild from the
  answers' text alone: lines shown, lines carried through a diff (renumbered),
  lines still equal at their numbers; never more.

Content decides, never mtime. No I/O: ``rereads`` reads, asks and records.
Does not own staleness reports (the ledger) or reading files (``headtail``).
"""

from __future__ import annotations

import difflib
from collections import OrderedDict
from dataclasses import dataclass, field

__all__ = [
    "DIFF_LIMIT",
    "Known",
    "Seen",
    "Shown",
    "add",
    "clip",
    "diff_since",
    "merge",
    "same_lines",
    "spans",
    "turns_in",
    "uncovered",
]

DIFF_LIMIT = 1 << 20  # bytes of a file whose shown text is kept for diffs and line-by-line judgement
TEXT_BUDGET = 64 << 20  # characters of shown text a session keeps (least recently shown dropped first)
MAX_FILES = 10_000

Known = list[tuple[int, int, int]]  # (start, end, turn), sorted and disjoint: lines held, and the turn that showed them


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


def spans(known: Known) -> list[tuple[int, int]]:
    """The lines of ``known``, merged, without their turns."""
    return merge([(s, e) for s, e, _ in known])


def _normal(segments: list[tuple[int, int, int]]) -> Known:
    """Sorted, adjacent segments of the same turn joined (segments must not overlap)."""
    out: Known = []
    for s, e, t in sorted(seg for seg in segments if seg[0] <= seg[1]):
        if out and out[-1][2] == t and s == out[-1][1] + 1:
            out[-1] = (out[-1][0], e, t)
        else:
            out.append((s, e, t))
    return out


def clip(known: Known, a: int, b: int) -> Known:
    """``known`` within lines ``a``-``b``."""
    return [(max(s, a), min(e, b), t) for s, e, t in known if e >= a and s <= b]


def _without(known: Known, a: int, b: int) -> Known:
    """``known`` outside lines ``a``-``b``."""
    out: Known = []
    for s, e, t in known:
        if e < a or s > b:
            out.append((s, e, t))
            continue
        if s < a:
            out.append((s, a - 1, t))
        if e > b:
            out.append((b + 1, e, t))
    return out


def add(known: Known, a: int, b: int, turn: int) -> Known:
    """``known`` with lines ``a``-``b`` shown at ``turn`` (what they held before is replaced)."""
    if a > b:
        return list(known)
    return _normal([*_without(known, a, b), (a, b, turn)])


def turns_in(known: Known, a: int, b: int) -> list[int]:
    """The turns that showed the held lines among ``a``-``b``."""
    return sorted({t for s, e, t in known if s <= b and e >= a})


def same_lines(known: Known, old: list[str], new: list[str]) -> Known:
    """The held lines whose text in ``new`` is the text at the same number in ``old``:
    what a caller holding ``old``'s lines still holds correctly of ``new``."""
    out: Known = []
    for s, e, t in known:
        run = None
        for k in range(s, min(e, len(new)) + 1):
            if k <= len(old) and old[k - 1] == new[k - 1]:
                run = k if run is None else run
                continue
            if run is not None:
                out.append((run, k - 1, t))
                run = None
        if run is not None:
            out.append((run, min(e, len(new)), t))
    return _normal(out)


def diff_since(old: list[str], new: list[str], path: str, known: Known, turn: int, *, upto: int | None = None) -> tuple[str, int, Known, bool]:
    """``old`` -> ``new`` (lines without ends) as a unified diff headed by ``path`` (3 lines
    of context; hunk headers carry the new text's line numbers), and what a caller holding
    ``known`` of ``old`` can rebuild of ``new`` after reading it.

    ``upto``: only the hunks that start at or before that line of the new text (what a
    read up to it needs). Returns the diff (empty when no hunk is kept), how many hunks were
    left out after ``upto``, the lines known after: held lines in unchanged blocks at
    their new numbers (with the turns that showed them) and every line a kept hunk shows
    (context and added lines, at ``turn``), up to the line before the first change left
    out (a reader cannot place lines past it); and whether every old line the kept hunks
    show (context and removed) is held: a diff says "as shown", so one over lines the
    caller was not shown (or holds from an older version) must not be given."""
    sm = difflib.SequenceMatcher(None, old, new, autojunk=False)
    ops = list(sm.get_opcodes())  # before grouping: get_grouped_opcodes trims the cached list in place
    groups = list(sm.get_grouped_opcodes(3))
    kept = [g for g in groups if upto is None or g[0][3] + 1 <= upto]
    left = groups[len(kept) :]
    out: Known = []
    for op, i1, i2, j1, _ in ops:
        if op == "equal":
            for s, e, t in known:  # old lines s..e (1-based) inside this block keep their text
                lo, hi = max(s - 1, i1), min(e, i2)
                if lo < hi:
                    out.append((j1 + (lo - i1) + 1, j1 + (hi - i1), t))
    for s, e in merge([(g[0][3] + 1, g[-1][4]) for g in kept]):  # a hunk shows its new side
        out = [*_without(out, s, e), (s, e, turn)]
    out = _normal(out)
    if left:
        out = clip(out, 1, next(op[3] for op in left[0] if op[0] != "equal"))
    if not kept:
        return "", len(left), out, True
    held = spans(known)
    shown = all(not uncovered(held, g[0][1] + 1, g[-1][2]) for g in kept if g[-1][2] > g[0][1])
    text = [f"--- a/{path} (as shown)\n", f"+++ b/{path} (now)\n"]
    for g in kept:
        i1, i2, j1, j2 = g[0][1], g[-1][2], g[0][3], g[-1][4]
        text.append(f"@@ -{_span(i1, i2)} +{_span(j1, j2)} @@\n")
        for tag, x1, x2, y1, y2 in g:
            if tag == "equal":
                text += [f" {ln}\n" for ln in old[x1:x2]]
                continue
            text += [f"-{ln}\n" for ln in old[x1:x2]]
            text += [f"+{ln}\n" for ln in new[y1:y2]]
    return "".join(text), len(left), out, shown


def _span(start: int, end: int) -> str:
    """A hunk's range as unified diffs write it (1-based start, length; an empty one at its line)."""
    length = end - start
    return f"{start + 1}" if length == 1 else f"{start if length == 0 else start + 1},{length}"


@dataclass(slots=True)
class Seen:
    """One file as the session's caller holds it: ``sha256`` of the bytes of its latest
    delivery; ``text``: those bytes as shown (lines joined by ``\\n``: redacted, cut as
    head cuts), kept when the file is at most ``DIFF_LIMIT`` bytes; ``total``: its lines;
    ``known``: the lines held as they are in that text, with the turns that showed them;
    ``last_turn``: the latest turn that showed or confirmed any of it; ``outline``:
    (turn, count, limit, sha256) of the latest outline shown whole."""

    sha256: str
    text: str | None
    total: int
    known: Known = field(default_factory=list)
    last_turn: int = 0
    outline: tuple[int, int, int, str] | None = None

    def lines(self) -> list[str] | None:
        if self.text is None:
            return None
        return self.text.split("\n") if self.total else []


class Shown:
    """The session's record: path -> :class:`Seen`, bounded (the least recently shown
    files go first past ``TEXT_BUDGET`` characters of kept text or ``MAX_FILES`` files)."""

    def __init__(self) -> None:
        self._files: OrderedDict[str, Seen] = OrderedDict()
        self._chars = 0

    def get(self, path: str) -> Seen | None:
        return self._files.get(path)

    def forget(self, path: str) -> None:
        seen = self._files.pop(path, None)
        if seen is not None and seen.text is not None:
            self._chars -= len(seen.text)

    def put(self, path: str, seen: Seen) -> None:
        """``seen`` is now what the caller holds of ``path``."""
        self.forget(path)
        self._files[path] = seen
        if seen.text is not None:
            self._chars += len(seen.text)
        while len(self._files) > MAX_FILES or self._chars > TEXT_BUDGET:
            old, dropped = self._files.popitem(last=False)
            if dropped.text is not None:
                self._chars -= len(dropped.text)
            if old == path:
                break
