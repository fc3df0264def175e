"""A session's answers to reading a file again (issues 22 and 29), for the Workspace.

Owns the I/O side of re-reads: the named file as it is now, read once (its
sha256, and its lines as head shows them, redacted with the whole file as
context: the lines an answer shows, the hash recorded and the text later diffs
start from all come from that one read); choosing and building the answer (an
unchanged note, only the lines not held, the diff since shown, or the lines,
each saying so when the file changed since any earlier delivery); recording
what the caller holds after it; and judging whether an earlier answer's own
content is still current (compaction's placeholders). Does not own the rules
(``shown``, pure), reading lines (``primitives.headtail``) or the session's other fields (the
Workspace fills ``stale``, ``instructions`` and ``git_head``).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..query import HeadQuery, TailQuery
from ..refs import Result
from ..text.hints import call
from .shown import Known, Seen, Shown

__all__ = ["Answer", "Now", "Rereads", "tool_of"]

READ_LIMIT = 8 * 1024 * 1024  # larger files are read as usual (head reads only what it shows) and not recorded


class Now:
    """A file as one read found it: ``path`` (repo-relative), ``real``, ``sha256`` of the
    bytes read, ``size`` (bytes read), ``mtime``, ``sig`` (size, mtime_ns, inode,
    ctime_ns of the opened file) and ``at_ns`` (wall clock before the read: the ledger's
    racy-timestamp rule). ``lines()``: its lines as head shows them, secrets redacted
    with the whole file as context (computed once, on first use)."""

    __slots__ = ("_data", "_lines", "at_ns", "findings", "mtime", "path", "real", "replaced", "cut", "sha256", "sig", "size")

    def __init__(self, path: str, real: Path, data: bytes, st: os.stat_result, at_ns: int) -> None:
        import hashlib

        from ..refs import mtime_of

        self.path, self.real, self._data = path, real, data
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.size, self.mtime = len(data), mtime_of(st)
        self.sig = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
        self.at_ns = at_ns
        self._lines: list[str] | None = None
        self.findings: dict[int, list[str]] = {}
        self.replaced: frozenset[int] = frozenset()
        self.cut: frozenset[int] = frozenset()

    @property
    def keep(self) -> bool:
        """Small enough for its shown text to be kept (for diffs and line-by-line judgement)."""
        from .shown import DIFF_LIMIT

        return self.size <= DIFF_LIMIT

    def lines(self) -> list[str]:
        if self._lines is None:
            from ..primitives.headtail import file_lines
            from ..text.redact import redact_lines

            got = file_lines(self._data)
            shown, _, _ = redact_lines(got.lines)
            self.findings = {k: _MARK.findall(new) for k, (old, new) in enumerate(zip(got.lines, shown), 1) if old is not new and old != new}
            self._lines, self.replaced, self.cut = shown, got.replaced, got.cut
            self._data = b""  # the lines stand for it now
        return self._lines

    def text(self) -> str | None:
        return "\n".join(self.lines()) if self.keep else None


_MARK = re.compile(r"\[redacted: ([^\]]+)\]")


@dataclass(slots=True)
class Answer:
    """What a read will show: ``kind`` note | diff | lines; ``result``; ``known``: what
    the caller holds after it (for lines, before the lines it shows are added: they are
    added as finally shown, after any token cut); ``asked``: the lines asked for, when
    the excerpt shows only those of them the caller does not hold."""

    kind: str
    result: Result
    known: Known
    asked: tuple[int, int] | None = None


class Rereads:
    """The re-reads of one session: ``shown`` is what its caller holds (:class:`reread.Shown`);
    ``counts`` gives the token counter of contents (the Workspace's)."""

    def __init__(self, policy, counts: Callable[[], object]) -> None:
        self.policy = policy
        self.counts = counts
        self.shown = Shown()
        self.outlines: dict[str, tuple[int, int, int, str]] = {}  # path -> (turn, count, limit, sha256) of the last outline shown whole

    def _count(self, text: str) -> int:
        return self.counts().count(text)  # type: ignore[attr-defined]

    # -- the file now -----------------------------------------------------------------

    def now(self, path: str) -> Now | None:
        """The file a read names, read once, or ``None`` when it cannot be judged here (the
        read itself then says why, or reads it as usual: binary, over 8 MiB). A file the
        session was shown and that is gone since is an error that says so."""
        from ..errors import JitctxError, PathError
        from ..text.lines import is_binary

        at = time.time_ns()
        try:
            target = self.policy.resolve(path, want="file")
        except PathError as exc:
            self.gone(path, exc)
            return None
        except JitctxError:
            return None
        try:
            with self.policy.opener() as opener:
                data, st = opener.read(target.path, READ_LIMIT + 1)
        except (OSError, JitctxError):
            return None
        if len(data) > READ_LIMIT or is_binary(data):
            self.shown.forget(target.path)  # shown as usual from here: what the caller holds is not followed
            return None
        return Now(target.path, target.real, data, st, at)

    def gone(self, path: str, exc) -> None:
        """Raise ``exc`` (a PathError) again saying when the file was shown, if it was and it is
        not found now; else return."""
        from ..errors import PathError

        seen = self.shown.get(path) if exc.reason == "not_found" else None
        if seen is not None and seen.last_turn:
            raise PathError(f"path {path!r} does not exist: deleted since it was shown at turn {seen.last_turn}", path=path, reason="not_found", hint=exc.hint) from None

    # -- the answer ---------------------------------------------------------------------

    def answer(self, q: HeadQuery | TailQuery, now: Now, turn: int, cap: int | None, ignored: bool) -> Answer:
        """The answer to ``q`` from ``now``: an unchanged note, only the lines not held, the diff
        since shown, or the lines as asked (``force``: the lines); a file changed since any
        earlier delivery says so, whatever the lines asked for."""
        from ..refs import Diff, Unchanged
        from .shown import diff_since, same_lines, spans, turns_in, uncovered

        rel, new = now.path, now.lines()
        total = len(new)
        a, b = _span(q, total)
        seen = self.shown.get(rel)
        changed = seen is not None and seen.sha256 != now.sha256
        old = seen.lines() if seen is not None else None
        if seen is None:
            carry: Known = []
        elif not changed:
            carry = [(s, min(e, total), t) for s, e, t in seen.known if s <= total]
        else:
            carry = same_lines(seen.known, old, new) if old is not None else []
        again = call("head", path=rel, start=a, n=b - a + 1, force=True) if isinstance(q, HeadQuery) else call("tail", path=rel, n=q.n, force=True)
        if a > b or q.force:
            return self._lines(q, now, a, b, carry, seen, changed, ignored)
        held = spans(carry)
        missing = uncovered(held, a, b)
        text = lambda s, e: "".join(ln + "\n" for ln in new[s - 1 : e])  # noqa: E731
        if not missing:
            res = Result(tool_of(q), [Unchanged(rel, now.size, now.mtime, a, b, total, tuple(turns_in(carry, a, b)), self._count(text(a, b)))], total=1)
            res.add_notice(f"not repeated (same content); read it again with {again}.")
            if changed and seen is not None:
                res.add_notice(self._changed(rel, seen, carry, (a, b)))
            return Answer("note", res, carry)
        lines_cost = self._count(text(a, b))
        part = missing[0] if len(missing) == 1 and missing[0] != (a, b) else None
        part_cost = self._count(text(*part)) if part is not None else lines_cost
        if changed and old is not None and seen is not None:
            diff, later, after, over_shown = diff_since(old, new, rel, seen.known, turn, upto=None if q.diff else b)
            whole = bool(diff) and over_shown and not uncovered(spans(after), a, b)
            cost = self._count(diff) if whole else 0
            if whole and (q.diff or cost < part_cost) and (cap is None or cost <= cap):
                turns = tuple(sorted({t for _, _, t in seen.known})) or (seen.last_turn,)
                res = Result(tool_of(q), [Diff(rel, now.size, now.mtime, total, turns, diff, cost)], total=1)
                more = f"; {later:,} more changed hunk{'s' if later != 1 else ''} after line {b:,} (diff=true shows them)" if later else ""
                res.add_notice(
                    f"{rel} changed since shown at {_turns(turns)}: this is the diff against what was shown ({cost:,} tokens, the lines asked for are {lines_cost:,}){more}; read the text with {again}."
                )
                return Answer("diff", res, after)
            if q.diff and not whole:
                never = uncovered(spans(after), a, b)
                said = ", ".join(_range(s, e) for s, e in never[:5])
                if diff and never:
                    note = f"no diff can rebuild lines {said} (not shown before, or past the hunks): the lines, as asked."
                elif diff:
                    note = "the diff would cover lines you were not shown as they were: the lines, as asked."
                else:
                    note = "the lines, as asked."
                return self._lines(q, now, a, b, carry, seen, changed, ignored, note)
        if part is not None:
            s, e = part
            shown = f"lines {a:,}-{b:,} except {_range(s, e)}" if s > a and e < b else _span_text(a, s - 1) if s > a else _span_text(e + 1, b)
            was, are = ("were", "are") if shown.startswith("lines") else ("was", "is")
            said = f"{shown} {was} shown at {_turns(turns_in(carry, a, b))} and {are} unchanged: only {_lines(s, e)} shown (force=true shows all)."
            ans = self._lines(HeadQuery.make(path=rel, n=e - s + 1, start=s), now, s, e, carry, seen, changed, ignored, said, tool=tool_of(q))
            ans.asked = (a, b)
            return ans
        return self._lines(q, now, a, b, carry, seen, changed, ignored)

    def _lines(self, q, now: Now, a: int, b: int, carry: Known, seen: Seen | None, changed: bool, ignored: bool, said: str | None = None, *, tool: str | None = None) -> Answer:
        """Lines ``a``-``b`` of ``now`` as an excerpt with head's notices and the redactions in them."""
        from ..primitives.headtail import Span, excerpt_result
        from ..text.redact import Finding, redaction_note

        new = now.lines()
        lines = new[a - 1 : b] if a <= b else []
        span = Span(lines, a, len(new), any(a <= k <= b for k in now.replaced), sum(1 for k in now.cut if a <= k <= b))
        res = excerpt_result(q, now.path, now.size, now.mtime, span, ignored=ignored)
        if tool is not None:
            res.tool = tool
        found = [Finding(k, what) for k in range(a, b + 1) for what in now.findings.get(k, ())]
        if found:
            res.add_notice(redaction_note(now.path, found))
        if said:
            res.add_notice(said)
        if changed and seen is not None:
            res.add_notice(self._changed(now.path, seen, carry, (a, b)))
        return Answer("lines", res, carry)

    def _changed(self, rel: str, seen: Seen, carry: Known, shown: tuple[int, int]) -> str:
        """The notice of a file changed since the caller was last shown any of it: which of the
        lines it holds differ now (outside those this answer shows), or that none do."""
        from .shown import merge, spans, uncovered

        held = []
        for s, e in spans(seen.known):
            held += uncovered(spans(carry), s, e)
        differ = [p for s, e in merge(held) for p in uncovered([shown], s, e)] if shown[0] <= shown[1] else merge(held)
        if not held:
            return f"{rel} changed since shown at turn {seen.last_turn}, elsewhere: the lines you were shown are as they were."
        if not differ:
            return f"{rel} changed since shown at turn {seen.last_turn}: of the lines you were shown, those that differ now are shown here."
        said = ", ".join(_range(s, e) for s, e in differ[:6]) + (", …" if len(differ) > 6 else "")
        which = "line" if len(differ) == 1 and differ[0][0] == differ[0][1] else "lines"
        return f"{rel} changed since shown at turn {seen.last_turn}: {which} {said} as you were shown them differ now (read them again)."

    def record(self, ans: Answer, res: Result, now: Now, turn: int) -> None:
        """What the caller holds after ``res`` (the answer as finally shown, after any cut)."""
        from ..refs import Excerpt
        from .shown import add

        known = ans.known
        e = res.results[0] if res.results else None
        if ans.kind == "lines" and isinstance(e, Excerpt) and e.start_line is not None and e.end_line is not None and e.content:
            known = add(known, e.start_line, e.end_line, turn)
        self.shown.put(now.path, Seen(now.sha256, now.text(), len(now.lines()), known, turn))

    def read_lines(self, now: Now, a: int, b: int, turn: int) -> None:
        """Lines ``a``-``b`` of ``now`` were shown outside a head (``context --task``'s regions)."""
        from .shown import add, same_lines

        seen = self.shown.get(now.path)
        carry: Known = []
        if seen is not None:
            old = seen.lines()
            carry = seen.known if seen.sha256 == now.sha256 else same_lines(seen.known, old, now.lines()) if old is not None else []
        self.shown.put(now.path, Seen(now.sha256, now.text(), len(now.lines()), add(carry, a, b, turn), turn))

    # -- outlines ----------------------------------------------------------------------

    def outline_note(self, rel: str, now: Now, limit: int) -> Result | None:
        """The note for an outline of unchanged content shown whole before, or ``None``."""
        from ..refs import Unchanged

        got = self.outlines.get(rel)
        if got is None or got[3] != now.sha256 or got[2] < limit:
            return None
        turn, count, _, _ = got
        res = Result("outline", [Unchanged(rel, now.size, now.mtime, None, None, None, (turn,), 0, "outline", count)], total=1)
        res.add_notice(f"{rel} is unchanged since its outline was shown at turn {turn} (by content): not repeated; list it again with {call('outline', path=rel, force=True)}.")
        return res

    def outline_shown(self, rel: str, now: Now, turn: int, count: int, limit: int) -> None:
        self.outlines.pop(rel, None)
        self.outlines[rel] = (turn, count, limit, now.sha256)
        if len(self.outlines) > 10_000:
            self.outlines.pop(next(iter(self.outlines)))

    # -- is an earlier answer still current? ------------------------------------------

    def current(self, rel: str, content: str) -> bool | None:
        """Whether what an earlier head or tail answer about ``rel`` holds (``content``: its
        text or JSON as the caller kept it) is still true of the file: every numbered line
        it shows (an excerpt's, a diff's new side) is the file's line now, and the lines an
        unchanged note vouched for are held as they are now (else ``None``: a note holds no
        text to compare). ``None``: nothing in it to judge, or the file cannot be judged here
        (binary, over 8 MiB).

        The answer is being cleared from the caller's window (compaction asks only about
        those): the lines it showed are no longer counted as held, so a later read shows
        them again rather than a note pointing at text the caller no longer has."""
        from ..errors import PathError
        from .shown import same_lines, spans, uncovered

        held, claims = _held(content)
        if not held and not claims:
            return None
        self._let_go(rel, held)
        try:
            now = self.now(rel)
        except PathError:
            return False  # gone since
        if now is None:
            return None
        lines = now.lines()
        if any(k < 1 or k > len(lines) or lines[k - 1] != text for k, text in held.items()):
            return False
        if claims:
            seen = self.shown.get(rel)
            if seen is None:
                return None
            old = seen.lines()
            if seen.sha256 == now.sha256:
                carry = seen.known
            elif old is None:
                return None
            else:
                carry = same_lines(seen.known, old, lines)
            if any(uncovered(spans(carry), a, b) for a, b in claims):
                return None  # no longer held as they are (changed since, or let go): the note's own words cannot be judged
        return True

    def _let_go(self, rel: str, held: dict[int, str]) -> None:
        """Lines ``held`` (number -> text as shown) are gone from the caller's window: those it
        holds as recorded are held no more (a line shown again by a later answer still in its
        window is let go too: it is shown once more, never claimed without being there)."""
        seen = self.shown.get(rel)
        if seen is None or not held:
            return
        lines = seen.lines()
        drop = {k for k, text in held.items() if lines is None or (k <= len(lines) and lines[k - 1] == text)}
        kept: Known = []
        for s, e, t in seen.known:
            run = None
            for k in range(s, e + 1):
                if k in drop:
                    if run is not None:
                        kept.append((run, k - 1, t))
                        run = None
                elif run is None:
                    run = k
            if run is not None:
                kept.append((run, e, t))
        seen.known = kept

    def forget(self, rel: str) -> None:
        self.shown.forget(rel)
        self.outlines.pop(rel, None)


# -- reading an answer back (compaction) -----------------------------------------------

_HEADER = re.compile(r"^==> .* \((.*)\) <==$")
_NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_NOTE = re.compile(r"^lines ([\d,]+)-([\d,]+) of [\d,]+ unchanged since shown")


def _held(content: str) -> tuple[dict[int, str], list[tuple[int, int]]]:
    """What an answer's text or JSON shows of its file: numbered lines (excerpts, and the new
    side of diffs), and the line ranges its unchanged notes vouch for."""
    import json

    held: dict[int, str] = {}
    claims: list[tuple[int, int]] = []
    if content.lstrip().startswith("{"):
        try:
            data = json.loads(content)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for r in data.get("results") or ():
                if not isinstance(r, dict):
                    continue
                if isinstance(r.get("content"), str) and isinstance(r.get("start_line"), int):
                    held.update(enumerate(r["content"].split("\n")[:-1], r["start_line"]))
                elif isinstance(r.get("diff"), str):
                    _diff_lines(r["diff"].split("\n"), held)
                elif r.get("unchanged") == "lines" and isinstance(r.get("start_line"), int) and isinstance(r.get("end_line"), int):
                    claims.append((r["start_line"], r["end_line"]))
            return held, claims
    rows = content.split("\n")
    i = 0
    while i < len(rows):
        m = _HEADER.match(rows[i])
        i += 1
        if m is None:
            continue
        what = m.group(1)
        note = _NOTE.match(what)
        if note is not None:
            claims.append((int(note.group(1).replace(",", "")), int(note.group(2).replace(",", ""))))
            continue
        body = []
        while i < len(rows) and not _HEADER.match(rows[i]) and not rows[i].startswith(("[note]", "[truncated]", "[stale]", "[instructions]")):
            body.append(rows[i])
            i += 1
        if what.startswith("changed since shown at"):
            _diff_lines(body, held)
        else:
            for row in body:
                got = _NUMBERED.match(row)
                if got is None:
                    break
                held[int(got.group(1))] = got.group(2)
    return held, claims


def _diff_lines(rows: list[str], held: dict[int, str]) -> None:
    """The new side of a unified diff's hunks: context and added lines at their new numbers."""
    at = None
    for row in rows:
        m = _HUNK.match(row)
        if m is not None:
            at = int(m.group(1)) if m.group(2) != "0" else None
            continue
        if at is None or not row or row[0] not in " +":
            continue
        held[at] = row[1:]
        at += 1


def _span(q: HeadQuery | TailQuery, total: int) -> tuple[int, int]:
    """The lines a head or tail asks for, in a file of ``total`` lines."""
    if isinstance(q, HeadQuery):
        return q.start, min(q.start + q.n - 1, total)
    return max(1, total - q.n + 1), total


def _range(s: int, e: int) -> str:
    return f"{s:,}-{e:,}" if s != e else f"{s:,}"


def _span_text(s: int, e: int) -> str:
    return f"lines {s:,}-{e:,}" if s != e else f"line {s:,}"


def _lines(s: int, e: int) -> str:
    """``lines 3-9 are`` / ``line 4 is``, for a notice."""
    return f"lines {s:,}-{e:,} are" if s != e else f"line {s:,} is"


def _turns(turns) -> str:
    turns = list(turns)
    return f"turn {turns[0]}" if len(turns) == 1 else "turns " + ", ".join(map(str, turns))


def tool_of(q: HeadQuery | TailQuery) -> str:
    return "head" if isinstance(q, HeadQuery) else "tail"
