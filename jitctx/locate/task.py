"""Answering a ``locate`` call: with the code index, or with a quick pass while it is built.

Owns what a checked locate query goes through before it is an answer: how far
the index is from the tree (``build.plan``), bringing it up to date when that
is quick, else starting its background build and saying what the answer rests
on (``code.build_notice``); reading candidate files through the policy with
their secrets redacted (a secret is no term: its regions would confirm it);
ranking with the index (``rank``) or, when too little of the tree is indexed,
the quick pass without it (``quick``); and the answer, its regions'
signatures redacted. Does not own ranking, the quick pass, the index or the
session's record (the Workspace).
"""

from __future__ import annotations

import time
from dataclasses import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..code.structure import CodeIndex
    from ..query import LocateQuery
    from ..refs import Result
    from ..repo.policy import PathPolicy
    from ..tokens.tokenizer import Tokenizer

__all__ = ["QUICK_MIN", "answer"]

QUICK_MIN = 1.5  # the first pass's own seconds at least, however long the listing took: on a loaded machine a later answer, never an empty one


def answer(code: CodeIndex, policy: PathPolicy, q: LocateQuery, *, tokenizer: Callable[[], Tokenizer], file_tokens: bool, deadline: float) -> Result:
    """The files and regions ``q.task`` is about (``Workspace.locate``). ``deadline``: when
    the quick pass should have answered (``QUICK_MIN`` of its own at least)."""
    from ..code.build import plan
    from ..code.build_notice import for_locate
    from ..refs import mtime_of
    from ..text.redact import redact_bytes, redact_text
    from .answer import to_result
    from .rank import locate

    repo = code.repo
    how, entries = plan(code, repo.files, code.entries, stored=code.index.path is not None, estimate=repo.tracked_count())
    notices: list[str] = []
    if how.mode == "current":
        stats = code.refresh(entries=entries, complete=True) if how.inline() and entries is not None else None
        if stats is not None and stats.notice:
            notices.append(stats.notice + (" (slower: the index is rebuilt each time)" if code.index.path is None else ""))
    else:
        notices.append(for_locate(code, how))
    with policy.opener() as opener:

        def read(rel: str) -> tuple[bytes, float] | None:
            if policy.is_denied(rel):
                return None
            try:
                data, st = opener.read(rel, 2 * 1024 * 1024)
            except OSError:
                return None
            return redact_bytes(data), mtime_of(st)  # a secret is no term: its regions would confirm it

        if how.mode == "quick":
            from .quick import quick_locate

            found = quick_locate(
                repo,
                policy,
                q.task,
                read=read,
                repo_name=repo.root.name,
                limit=q.limit,
                count=tokenizer().count,
                file_tokens=file_tokens,
                deadline=max(deadline, time.monotonic() + QUICK_MIN),
                universe=None if how.estimated else how.listed,  # None: listed beside its grep
            )
        else:
            found = locate(code.index, q.task, read=read, repo_name=repo.root.name, limit=q.limit, count=tokenizer().count, file_tokens=file_tokens)
    res = to_result(found, notices=[*notices, *([q.notice] if q.notice else [])])
    gone = set(how.removed)
    res.results = [replace(f, regions=tuple(replace(r, signature=redact_text(r.signature)[0]) for r in f.regions)) for f in res.results if f.path not in gone]
    return res
