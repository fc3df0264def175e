"""Several line ranges of one file read at once: the regions a window for a task shows.

Owns reading a file once for the regions ``context_for_task`` shows of it (one
open per file instead of a ``head`` per region): each range an ``Excerpt`` of
head's shape with exact tokens, secrets redacted with the whole file as
context, a redaction notice per range that hid one. Does not own recording
what was read (the Workspace's ``read_regions``) or reading one range
(``primitives.headtail``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..refs import Excerpt, Result
from ..text.redact import Finding, redaction_note
from .rereads import READ_LIMIT, Now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..repo.policy import PathPolicy

__all__ = ["Spans", "read_spans"]


@dataclass(frozen=True, slots=True)
class Spans:
    """What ``read_spans`` read: ``result`` (a head result, one excerpt per range),
    ``now`` (the file as read: its path, hash and lines), ``whole`` (it was read whole,
    at most ``READ_LIMIT`` bytes: a session can record it by content)."""

    result: Result
    now: Now
    whole: bool


def read_spans(policy: PathPolicy, path: str, spans: list[tuple[int, int]], count: Callable[[str], int]) -> Spans:
    """The ``spans`` (1-based, inclusive line ranges) of the file ``path`` names, read
    through ``policy`` at once; ``count`` prices each excerpt's content."""
    at = time.time_ns()
    target = policy.resolve(path, want="file")
    with policy.opener() as opener:
        data, st = opener.read(target.path, READ_LIMIT + 1)
    whole = len(data) <= READ_LIMIT
    now = Now(target.path, target.real, data[:READ_LIMIT], st, at)
    lines = now.lines()
    out, notes = [], []
    for start, end in spans:
        shown = lines[start - 1 : end]
        content = "".join(ln + "\n" for ln in shown)
        last = start + len(shown) - 1
        replaced = any(start <= k <= last for k in now.replaced)
        out.append(Excerpt(target.path, now.size, now.mtime, start, last, len(lines) if whole else None, content, replaced=replaced, tokens=count(content)))
        found = [Finding(k, what) for k in range(start, last + 1) for what in now.findings.get(k, ())]
        if found:
            notes.append(redaction_note(target.path, found))
    res = Result("head", out, total=len(out))
    for note in notes:
        res.add_notice(note)
    return Spans(res, now, whole)
