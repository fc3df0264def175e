"""The assembled window and its report: sections, evictions, cuts, prefix hash.

Owns the values ``assemble`` returns and their JSON and provider forms
(through ``chat``). Does not own how they are computed (``assemble``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .sources import Message

__all__ = ["Context", "Cut", "Eviction", "Section"]


@dataclass(frozen=True, slots=True)
class Section:
    """One ``[Title]`` block of the window: its exact ``text`` and ``tokens``."""

    name: str
    title: str
    text: str
    tokens: int
    stable: bool
    sources: tuple[str, ...]
    cut: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "tokens": self.tokens, "stable": self.stable, "sources": list(self.sources), "cut": self.cut}


@dataclass(frozen=True, slots=True)
class Eviction:
    """A source left out: ``reason`` is ``below_min_relevance``, ``over_budget``,
    ``history_trimmed``, ``cut_below_min`` or ``empty``; ``tokens`` its full cost."""

    source: str
    kind: str
    priority: int
    tokens: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "kind": self.kind, "priority": self.priority, "tokens": self.tokens, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Cut:
    """A source kept in part: ``tokens`` before, ``kept_tokens`` after (marker included)."""

    source: str
    kind: str
    tokens: int
    kept_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "kind": self.kind, "tokens": self.tokens, "kept_tokens": self.kept_tokens}


@dataclass(frozen=True, slots=True)
class Context:
    """The assembled window and its report.

    ``text`` is the window; ``tokens`` its exact count (the sum of the
    sections'); ``available`` = ``budget`` minus the reserve;
    ``prefix_hash`` is the sha256 of the stable sections' text.
    ``messages`` are the kept history messages, oldest first.
    ``located``: how many files matched the task (``context_for_task``).
    ``stale``: the files the session delivered that changed since, as every
    result's ``stale`` (``context_for_task``; the window says so too).
    """

    text: str
    sections: tuple[Section, ...]
    tokens: int
    budget: int
    available: int
    evicted: tuple[Eviction, ...]
    cuts: tuple[Cut, ...]
    warnings: tuple[str, ...]
    prefix_hash: str
    messages: tuple[Message, ...] = field(default=())
    located: int | None = None  # files task retrieval found (context_for_task); None: none ran
    stale: tuple[dict, ...] | None = None  # the session's stale files when the window was made (context_for_task); None: not asked

    @property
    def stable_text(self) -> str:
        return "".join(s.text for s in self.sections if s.stable)

    @property
    def stable_tokens(self) -> int:
        return sum(s.tokens for s in self.sections if s.stable)

    def _turn_text(self) -> str:
        """The dynamic sections except history (history goes out as messages)."""
        return "".join(s.text for s in self.sections if not s.stable and s.name != "history").rstrip("\n")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "context",
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "reserve": self.budget - self.available,
            "available": self.available,
            "stable_tokens": self.stable_tokens,
            "prefix_hash": self.prefix_hash,
            "sections": [s.to_dict() for s in self.sections],
            "evicted": [e.to_dict() for e in self.evicted],
            "cut": [c.to_dict() for c in self.cuts],
            "warnings": list(self.warnings),
            **({} if self.located is None else {"located": self.located}),
            **({} if self.stale is None else {"stale": list(self.stale)}),
        }

    def to_openai(self) -> list[dict[str, Any]]:
        """OpenAI chat messages: system = stable prefix, the kept history, then one user turn."""
        from .vendors import openai_messages

        return openai_messages(self.stable_text, self.messages, self._turn_text())

    def to_anthropic(self) -> dict[str, Any]:
        """Anthropic ``system`` + ``messages``, a ``cache_control`` breakpoint ending the stable prefix."""
        from .vendors import anthropic_request

        return anthropic_request(self.stable_text, self.messages, self._turn_text())
