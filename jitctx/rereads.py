"""A session's answers to reading the same file again (issue 22), for the Workspace.

Owns the I/O side of re-reads: the named file as it is now (read whole
through the policy's opener, its sha256 and text), asking the rules of
``reread`` whether a head, tail or outline can be answered shortly (an
unchanged note, only the lines not shown yet, the diff since shown), building
those answers, and recording what each answer showed. Does not own the rules
(``reread``, pure), reading lines (``peek``) or the session's other fields
(the Workspace fills ``stale``, ``instructions`` and ``git_head``).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .query import HeadQuery, TailQuery
from .refs import Result
from .reread import Shown

__all__ = ["Now", "Rereads"]

Now = tuple  # (path, sha256, text or None, line count): the file as a re-read finds it


class Rereads:
    """The re-reads of one session: ``shown`` is what it was shown (:class:`reread.Shown`);
    ``counts`` gives the token counter of its contents (the Workspace's)."""

    def __init__(self, policy, counts: Callable[[], object]) -> None:
        self.policy = policy
        self.counts = counts
        self.shown = Shown()

    def now(self, path: str) -> Now | None:
        """(path, sha256, text or None, line count or None) of the file a re-read names, or
        ``None`` when it cannot be judged here (the read itself then says why). A file the
        session was shown and that is gone since is an error that says so."""
        import hashlib

        from .errors import JitctxError, PathError
        from .reread import DIFF_LIMIT
        from .text import decode, split_lines

        try:
            target = self.policy.resolve(path, want="file")
        except PathError as exc:
            seen = self.shown.get(path) if exc.reason == "not_found" else None
            if seen is not None and seen.deliveries:
                turns = sorted({t for _, _, t, _ in seen.deliveries})
                raise PathError(
                    f"path {path!r} does not exist: deleted since it was shown at {_turns(turns)}",
                    path=path,
                    reason="not_found",
                    hint=exc.hint,
                ) from None
            return None
        except JitctxError:
            return None
        try:
            with self.policy.opener() as opener:
                data, _ = opener.read(target.path, 8 * 1024 * 1024 + 1)
        except (OSError, JitctxError):
            return None
        if len(data) > 8 * 1024 * 1024 or b"\0" in data[:8192]:
            return None  # judged by the ledger's signature rule, and read as usual
        text, _ = decode(data)
        lines = split_lines(text)
        keep = "".join(ln + "\n" for ln in lines) if len(data) <= DIFF_LIMIT else None
        return target.path, hashlib.sha256(data).hexdigest(), keep, len(lines)

    def before(self, q: HeadQuery | TailQuery, now: Now, fill: Callable[[Result, list[str]], None]):
        """An unchanged note (a Result), a narrower query for the lines not shown yet with
        the notice that says so, or ``None`` (read as asked)."""
        from .refs import Unchanged, mtime_of
        from .reread import uncovered

        rel, sha, _text, total = now
        seen = self.shown.get(rel)
        if seen is None or seen.sha256 != sha or not total:
            return None
        a, b = _span(q, total)
        if a > b:
            return None
        missing = uncovered(seen.ranges, a, b)
        if missing == [(a, b)]:
            return None
        turns, tokens = seen.turns(a, b)
        if not missing:
            st = os.stat(self.policy.root / rel)
            res = Result(tool_of(q), [Unchanged(rel, st.st_size, mtime_of(st), a, b, total, tuple(turns), tokens)], total=1)
            again = f"head path={rel} start={a} n={b - a + 1} force=true" if isinstance(q, HeadQuery) else f"tail path={rel} n={q.n} force=true"
            res.add_notice(f"not repeated (same content); read it again with {again}.")
            fill(res, [rel])  # the session's fields; instructions met just now come whole, as with a read
            return res
        if len(missing) > 1:
            return None  # holes on both sides: read as asked
        (s, e) = missing[0]
        shown = f"lines {max(a, 1):,}-{b:,} except {s:,}-{e:,}" if s > a and e < b else f"lines {a:,}-{s - 1:,}" if s > a else f"lines {e + 1:,}-{b:,}"
        said = f"{shown} were shown at {_turns(turns)} and are unchanged: only lines {s:,}-{e:,} are shown (force=true shows all)."
        return HeadQuery.make(path=rel, n=e - s + 1, start=s), said  # a tail's lines have numbers here: read as a head

    def after(self, q: HeadQuery | TailQuery, res: Result, now: Now | None, cap: int | None, turn: int) -> Result:
        """Record the lines shown; for a changed file, the diff instead when it is asked for
        or smaller than the lines (and they were all shown before)."""
        from .refs import Excerpt

        if now is None or not res.results or not isinstance(res.results[0], Excerpt):
            return res
        rel, sha, text, total = now
        e = res.results[0]
        if e.start_line is None or e.end_line is None or e.total_lines != total:
            return res  # the file moved on between the two reads: nothing recorded
        seen = self.shown.get(rel)
        if seen is not None and seen.sha256 != sha and not q.force and seen.text is not None and text is not None:
            swapped = self._diff_instead(q, res, e, seen, text, sha, total, cap, turn)
            if swapped is not None:
                return swapped
        self.shown.lines(rel, sha, text, total, e.start_line, e.end_line, turn, e.tokens or 0)
        return res

    def _diff_instead(self, q, res: Result, e, seen, text: str, sha: str, total: int, cap: int | None, turn: int) -> Result | None:
        """The answer for a file changed since shown, when it is not the lines themselves: the
        diff against what was shown (its hunks up to the last line asked for, all of them with
        ``diff``), or, when every change lies after the lines asked for, a note. Only when the
        caller can rebuild every line asked for from it, and it is smaller (unless asked for)."""
        from .refs import Diff, Unchanged
        from .reread import known_after_diff, merge, uncovered, unified_diff

        a, b = _span(q, total)
        rel = e.path
        turns = sorted({t for _, _, t, _ in seen.deliveries}) or [0]
        again = f"head path={rel} start={a} n={b - a + 1} force=true" if isinstance(q, HeadQuery) else f"tail path={rel} n={q.n} force=true"
        diff, after = unified_diff(seen.text, text, rel, upto=None if q.diff else b)
        known = known_after_diff(seen.text, text, seen.ranges)
        if not q.diff:
            known = merge([(s, min(t, b)) for s, t in known if s <= b])  # past the last line asked for, hunks were left out
            if uncovered(known, a, b):
                return None  # some line asked for was never shown: the lines, as asked
        if not diff:
            if q.diff:
                return None
            res_note = Result(
                res.tool,
                [Unchanged(rel, e.size, e.mtime, a, b, total, tuple(turns), e.tokens or 0)],
                total=1,
                git_head=res.git_head,
                stale=res.stale,
                instructions=res.instructions,
            )
            res_note.add_notice(
                f"{rel} changed since shown at {_turns(turns)}, but only after line {b:,}: lines {a:,}-{b:,} are as shown; read the change with {again.replace('force=true', 'diff=true')}, or the lines with {again}."
            )
            self.shown.replaced(rel, sha, text, total, known, turn, 0)
            return res_note
        tokens = self.counts().count(diff)  # type: ignore[attr-defined]
        if not q.diff and tokens >= (e.tokens or 0):
            return None
        if cap is not None and tokens > cap:
            return None  # the lines fit the cap, the diff does not: the lines, as asked
        out = Result(res.tool, [Diff(rel, e.size, e.mtime, total, tuple(turns), diff, tokens)], total=1, git_head=res.git_head, stale=res.stale, instructions=res.instructions)
        more = f"; {after:,} more changed hunk{'s' if after != 1 else ''} after line {b:,} (diff=true shows them)" if after else ""
        out.add_notice(
            f"{rel} changed since shown at {_turns(turns)}: this is the diff against what was shown ({tokens:,} tokens, the lines asked for are {e.tokens or 0:,}){more}; read the text with {again}."
        )
        self.shown.replaced(rel, sha, text, total, known, turn, tokens)
        return out

    def outline_note(self, rel: str, now: Now, limit: int) -> Result | None:
        """The note for an outline of unchanged content shown whole before, or ``None``."""
        from .refs import Unchanged, mtime_of

        seen = self.shown.get(rel)
        if seen is None or seen.sha256 != now[1] or seen.outline is None or seen.outline[2] < limit:
            return None
        turn, count, _ = seen.outline
        st = os.stat(self.policy.root / rel)
        res = Result("outline", [Unchanged(rel, st.st_size, mtime_of(st), None, None, None, (turn,), 0, "outline", count)], total=1)
        res.add_notice(f"{rel} is unchanged since its outline was shown at turn {turn} (by content): not repeated; list it again with outline path={rel} force=true.")
        return res


def _span(q: HeadQuery | TailQuery, total: int) -> tuple[int, int]:
    """The lines a head or tail asks for, in a file of ``total`` lines."""
    if isinstance(q, HeadQuery):
        return q.start, min(q.start + q.n - 1, total)
    return max(1, total - q.n + 1), total


def _turns(turns) -> str:
    turns = list(turns)
    return f"turn {turns[0]}" if len(turns) == 1 else "turns " + ", ".join(map(str, turns))


def tool_of(q: HeadQuery | TailQuery) -> str:
    return "head" if isinstance(q, HeadQuery) else "tail"
