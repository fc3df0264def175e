"""Frozen result values: references, excerpts, skipped files, the envelope.

Owns the shapes every surface shares (DESIGN section 3) and their JSON form;
not how they are found (primitives) or shown as text (``render``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path

__all__ = ["Delivered", "Diff", "Excerpt", "FileRef", "LineRef", "Result", "Skipped", "Unchanged", "file_ref", "mtime_of"]


@dataclass(frozen=True, slots=True)
class FileRef:
    """A pointer to a file without its content.

    ``path`` is repo-relative POSIX, ``size`` bytes, ``mtime`` epoch seconds.
    ``ignored`` is set when the file is outside the discovery universe but was
    named explicitly; ``matches`` is the matching-line count (grep files and
    count modes); ``denied`` marks a file whose content is withheld.
    """

    path: str
    size: int
    mtime: float
    ignored: bool = False
    matches: int | None = None
    denied: bool = False

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {"path": self.path, "size": self.size, "mtime": self.mtime}
        if self.ignored:
            d["ignored"] = True
        if self.denied:
            d["denied"] = True
        if self.matches is not None:
            d["matches"] = self.matches
        return d


def mtime_of(st: os.stat_result) -> float:
    """A reference's ``mtime``: epoch seconds to the millisecond (one rule for every result)."""
    return round(st.st_mtime, 3)


def file_ref(path: str, st: os.stat_result, *, ignored: bool = False, matches: int | None = None, denied: bool = False) -> FileRef:
    """Build a FileRef from a repo-relative path and its ``stat``."""
    return FileRef(path, st.st_size, mtime_of(st), ignored, matches, denied)


@dataclass(frozen=True, slots=True)
class LineRef:
    """One matching line (grep content mode), 1-based ``line``.

    ``before``/``after`` are lists of ``{"line", "text"}`` context lines;
    ``symbol`` is the qualname of the innermost definition around the line,
    where the file has an outline; ``ignored``: the file was named explicitly
    though git ignores it.
    """

    path: str
    size: int
    mtime: float
    line: int
    text: str
    before: tuple[dict, ...] = ()
    after: tuple[dict, ...] = ()
    symbol: str | None = None
    ignored: bool = False

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "path": self.path,
            "size": self.size,
            "mtime": self.mtime,
            "line": self.line,
            "text": self.text,
            "before": list(self.before),
            "after": list(self.after),
        }
        if self.symbol is not None:
            d["symbol"] = self.symbol
        if self.ignored:
            d["ignored"] = True
        return d


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A run of lines from one file (head/tail).

    ``start_line``/``end_line`` are 1-based, inclusive; all three line fields
    are ``None`` when a tail of a very large file did not count lines.
    ``content`` holds the lines without numbers, ``tokens`` its exact count
    (``None`` until counted). ``replaced`` says invalid UTF-8 was replaced.
    """

    path: str
    size: int
    mtime: float
    start_line: int | None
    end_line: int | None
    total_lines: int | None
    content: str
    tokens: int | None = None
    ignored: bool = False
    replaced: bool = False

    @property
    def lines(self) -> list[str]:
        return self.content.split("\n")[:-1] if self.content else []

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "path": self.path,
            "size": self.size,
            "mtime": self.mtime,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "total_lines": self.total_lines,
            "content": self.content,
            "tokens": self.tokens,
        }
        if self.ignored:
            d["ignored"] = True
        if self.replaced:
            d["replaced"] = True
        return d


def _turns(turns: tuple[int, ...]) -> str:
    return f"turn {turns[0]}" if len(turns) == 1 else "turns " + ", ".join(map(str, turns))


@dataclass(frozen=True, slots=True)
class Unchanged:
    """A re-read answered by reference (issue 22): lines (or an outline) the session was
    shown from the same content, judged by its sha256. ``turns``: when they were shown;
    ``tokens``: what they cost then; ``what``: ``lines`` or ``outline`` (then
    ``start_line``/``end_line`` are ``None`` and ``count`` is its definitions)."""

    path: str
    size: int
    mtime: float
    start_line: int | None
    end_line: int | None
    total_lines: int | None
    turns: tuple[int, ...]
    tokens: int
    what: str = "lines"
    count: int = 0

    def summary(self) -> str:
        if self.what == "outline":
            return f"outline unchanged since shown at {_turns(self.turns)} ({self.count:,} definitions)"
        return f"lines {self.start_line:,}-{self.end_line:,} of {self.total_lines:,} unchanged since shown at {_turns(self.turns)} ({self.tokens:,} tokens)"

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {"path": self.path, "size": self.size, "mtime": self.mtime, "unchanged": self.what, "turns": list(self.turns)}
        if self.what == "outline":
            d["count"] = self.count
        else:
            d.update(start_line=self.start_line, end_line=self.end_line, total_lines=self.total_lines, tokens=self.tokens)
        return d


@dataclass(frozen=True, slots=True)
class Diff:
    """A file changed since the session was shown it, as a unified diff against what it
    was shown (issue 22); hunk headers carry the new text's line numbers. ``turns``:
    when the old text was shown; ``content`` the diff, ``tokens`` its exact count."""

    path: str
    size: int
    mtime: float
    total_lines: int
    turns: tuple[int, ...]
    content: str
    tokens: int | None = None

    def summary(self) -> str:
        return f"changed since shown at {_turns(self.turns)}: the diff against what was shown, now {self.total_lines:,} lines"

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "size": self.size,
            "mtime": self.mtime,
            "total_lines": self.total_lines,
            "since_turns": list(self.turns),
            "diff": self.content,
            "tokens": self.tokens,
        }


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out of a result, and why (``binary``, ``denied``...)."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "reason": self.reason}


@dataclass(slots=True)
class Result:
    """The one envelope every primitive returns (DESIGN section 3).

    ``extra`` holds tool-specific keys (``backend``, ``skipped``...) that go
    after the fixed ones in JSON.
    """

    tool: str
    results: list = field(default_factory=list)
    total: int = 0
    truncated: bool = False
    notice: str | None = None
    git_head: str | None = None
    stale: list = field(default_factory=list)
    instructions: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        """Nothing found: no items, or only excerpts without lines."""
        return not any(getattr(r, "content", True) for r in self.results)

    def add_notice(self, text: str) -> None:
        self.notice = f"{self.notice} {text}" if self.notice else text

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {}
        for f in fields(self):
            if f.name == "extra":
                continue
            v = getattr(self, f.name)
            if f.name == "results":
                v = [r.to_dict() if hasattr(r, "to_dict") else r for r in v]
            d[f.name] = v
        d.update(self.extra)
        return d


@dataclass(frozen=True, slots=True)
class Delivered:
    """What a primitive showed the agent, for the session to record.

    ``path``: repo-relative name as shown; ``real``: the file it resolved
    to; ``kind``: preload | read | instructions; ``named``: the absolute
    path as named when a symlink made it differ from ``real``.
    """

    path: str
    real: Path
    kind: str
    named: Path | None = None
