"""What a model knows of each file from a session's answer texts alone (issue 29).

An independent reading of head and tail answers as text (``render_text``): an
excerpt's numbered lines replace what was known at those numbers (lines past the
file's end are dropped), a unified diff moves what was known to its new numbers
and adds the lines its hunks show, an unchanged note changes nothing. Greps,
outlines and notes are read by a model too, but a session makes no promise
about them as a record of lines, so they are not taken here. Used by
``test_session_props.py`` and ``test_session_truth.py``; the benchmark
(``benchmarks/bench_session.py``) has its own copy.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^==> (.+?) \((.*)\) <==$")
_LINES = re.compile(r"^lines ([\d,]+)-([\d,]+) of ([\d,]+)|^0 lines shown of ([\d,]+)")
_DIFF = re.compile(r"^changed since shown at turns? [\d, ]+: the diff against what was shown, now ([\d,]+) lines")
_NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _int(text: str) -> int:
    return int(text.replace(",", ""))


class Memory:
    """path -> {line number: text} as a model reading the answers would hold it."""

    def __init__(self) -> None:
        self.files: dict[str, dict[int, str]] = {}
        self.contradictions = 0  # a diff's old side ("as shown") that is not what was shown

    def take(self, text: str) -> None:
        rows = text.split("\n")
        i = 0
        while i < len(rows):
            m = _HEADER.match(rows[i])
            i += 1
            if m is None:
                continue
            path, what = m.group(1), m.group(2)
            body = []
            while i < len(rows) and not _HEADER.match(rows[i]) and not rows[i].startswith(("[note]", "[truncated]", "[stale]", "[instructions]")):
                body.append(rows[i])
                i += 1
            diff = _DIFF.match(what)
            if diff is not None:
                new, bad = _apply(self.files.get(path, {}), body)
                self.files[path] = new
                self.contradictions += bad
                self._end(path, _int(diff.group(1)))
                continue
            if "unchanged since shown" in what:
                continue
            lines = _LINES.match(what)
            if lines is None:
                continue
            known = self.files.setdefault(path, {})
            for row in body:
                got = _NUMBERED.match(row)
                if got is None:
                    break
                known[int(got.group(1))] = got.group(2)
            self._end(path, _int(lines.group(3) or lines.group(4)))

    def forget(self, text: str) -> None:
        """An answer was cleared from the window (compaction): the lines it showed, where what
        is known is still its text, are known no more."""
        shown = Memory()
        shown.take(text)
        for path, lines in shown.files.items():
            known = self.files.get(path, {})
            for k, line in lines.items():
                if known.get(k) == line:
                    del known[k]

    def _end(self, path: str, total: int) -> None:
        known = self.files.get(path, {})
        for k in [k for k in known if k > total]:
            del known[k]

    def check(self, path: str, a: int, b: int, truth: list[str]) -> tuple[int, int]:
        """(lines known wrong, lines not known) of ``a``-``b`` against ``truth`` (the file now)."""
        known = self.files.get(path, {})
        wrong = missing = 0
        for k in range(a, min(b, len(truth)) + 1):
            if k not in known:
                missing += 1
            elif known[k] != truth[k - 1]:
                wrong += 1
        return wrong, missing


def _apply(known: dict[int, str], rows: list[str]) -> tuple[dict[int, str], int]:
    """What is known after reading a diff's hunks (old numbering -> new), and how many of
    its old lines (context and removed) contradict what was known at their number."""
    new: dict[int, str] = {}
    bad = 0
    i = 0
    old_done, offset = 0, 0
    while i < len(rows):
        m = _HUNK.match(rows[i])
        i += 1
        if not m:
            continue
        a, c = int(m.group(1)), int(m.group(3))
        a_len = int(m.group(2)) if m.group(2) is not None else 1
        c_len = int(m.group(4)) if m.group(4) is not None else 1
        start_old = a if a_len else a + 1  # "-5,0": the hunk sits after old line 5
        for k, text in known.items():
            if old_done < k < start_old:
                new[k + offset] = text
        oi, nj = start_old, c if c_len else c + 1
        while i < len(rows) and not rows[i].startswith("@@"):
            row = rows[i]
            if row[:1] in (" ", "-") and oi in known and known[oi] != row[1:]:
                bad += 1
            if row.startswith(" "):
                new[nj] = row[1:]
                oi, nj = oi + 1, nj + 1
            elif row.startswith("-"):
                oi += 1
            elif row.startswith("+"):
                new[nj] = row[1:]
                nj += 1
            i += 1
        old_done, offset = oi - 1, nj - oi
    for k, text in known.items():
        if k > old_done:
            new[k + offset] = text
    return new, bad
