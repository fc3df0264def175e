"""Search backends: the seam between ``search`` and a regex engine.

Owns the values a backend receives (``Spec``) and returns (``Outcome``,
``Match``) and the one regex-syntax fact both need (where a group is left
open); the engine interface over a request's files is ``scope.SearchBackend``. Does
not own picking a backend (``search``), paging, context lines, long-line
windows or notices (those are ``search``'s, shared by every backend so both
give the same results), nor the file universe (``repo``) or the deny list
(``policy``).

Two backends implement the protocol: ``rg`` (the ripgrep binary, the only
place it is run) and ``python`` (the ``regex`` module over the files, the
fallback).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ...refs import Skipped

__all__ = ["Match", "Outcome", "Spec", "unclosed_group"]


@dataclass(frozen=True, slots=True)
class Spec:
    """What to search, already validated and resolved.

    ``scope`` is ``"."`` or a repo-relative directory; ``file`` a single
    repo-relative file to search instead (then ``scope`` is unused).
    ``keep(path)`` applies the caller's glob filters; ``is_denied`` is the
    policy's rule. ``deadline`` is a ``time.monotonic()`` value; ``cancel``,
    when set, ends the search as the deadline would (the caller gave up).
    ``beside``: the caller's own work, run on a thread while the count pass's
    rg runs (its result and errors are dropped); a backend may run it anywhere.
    """

    pattern: str
    scope: str = "."
    file: str | None = None
    fixed_strings: bool = False
    ignore_case: bool = False
    multiline: bool = False
    include_ignored: bool = False
    keep: Callable[[str], bool] = lambda p: True
    has_filters: bool = False  # whether ``keep`` can say no (glob filters were given)
    is_denied: Callable[[str], bool] = lambda p: False
    deadline: float = float("inf")
    cancel: threading.Event | None = field(default=None, compare=False)
    beside: Callable[[], object] | None = field(default=None, compare=False)

    @property
    def prefix(self) -> str:
        return "" if self.scope == "." else self.scope + "/"

    def remaining(self) -> float:
        if self.cancel is not None and self.cancel.is_set():
            return 0.0
        return self.deadline - time.monotonic()


@dataclass(frozen=True, slots=True)
class Match:
    """One matching line: 1-based ``line``, decoded ``text`` (no line end),
    ``spans`` as (start, end) char offsets of the matches within ``text``;
    ``replaced``: the line held invalid UTF-8, replaced with U+FFFD."""

    line: int
    text: str
    spans: tuple[tuple[int, int], ...] = ()
    replaced: bool = False


@dataclass(slots=True)
class Outcome:
    """A counting pass over the scope.

    ``counts``: path -> matching lines, for searchable (text, not denied,
    kept by the glob filters) files with at least one match. ``binary``:
    binary files in scope that contain a match (``None`` when not known).
    ``denied``: denied files in scope that were not searched (``None`` when
    not known; only the tracked ones when ``denied_tracked_only``).
    ``files_searched``: how many files the pass searched, when it knows (``None``:
    rg walks the tree itself and does not say). ``skipped``: files that
    vanished or could not be read.
    ``timed_out``: the time cap stopped the pass; ``counts`` is partial.
    """

    counts: dict[str, int] = field(default_factory=dict)
    binary: int | None = None
    denied: int | None = None
    denied_tracked_only: bool = False
    files_searched: int | None = None
    skipped: list[Skipped] = field(default_factory=list)
    timed_out: bool = False


def unclosed_group(pattern: str) -> int | None:
    """Index of the last ``(`` left open (escapes and ``[...]`` classes skipped)."""
    stack: list[int] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":
                i += 1  # a literal ] first in the class
        elif c == "(":
            stack.append(i)
        elif c == ")" and stack:
            stack.pop()
        i += 1
    return stack[-1] if stack else None
