"""The context assembler: Gather, Select, Structure, Compress (DESIGN section 8).

Owns turning sources into one window that fits a token budget: which
sources are kept, cut or evicted and why, the fixed section layout with the
stable prefix first, exact token counts per section and the prefix hash.
Does not own what a source is or how history is grouped (``sources``), the
report values (``context``), provider shapes (``vendors``), nor how evidence
is found for a task (``for_task``).

Pipeline::

    gather     sources and providers -> priced items; a failing provider
               is a warning, the rest goes on
    select     protected first (error if they alone exceed the budget),
               then stable ones, then the rest ranked by
               relevance_weight*relevance + recency_weight*recency, filled
               greedily; history is kept newest first and stops at the
               first group that does not fit (oldest trimmed first)
    structure  [System] [Instructions] ... [Output] (stable prefix), then
               [Notes] [History] [Evidence] [Context], then [Task] last
    compress   a stable source that does not fit whole is cut on a line
               boundary with a marker as it is admitted, and charged the
               tokens it keeps; a cut that keeps under 50 tokens drops the
               source instead, its room left to the others
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from ..query import check_count
from ..tokens.tokenizer import fit_lines
from .context import Context, Cut, Eviction, Section
from .sources import Message, Source, item_text

__all__ = ["AssembleConfig", "Context", "Cut", "Eviction", "Section", "assemble", "check_budget"]

DEFAULT_OUTPUT = "Answer the task. Cite every file you rely on as path:line. If the context above is not enough, name the glob, grep, head or tail call you need next."
NO_TASK = "(no task given)"
MIN_KEEP = 50  # a cut that keeps fewer tokens than this drops the source instead

TITLES = {
    "system": "System",
    "preload": "Instructions",
    "notes": "Notes",
    "history": "History",
    "evidence": "Evidence",
    "context": "Context",
    "output": "Output",
    "task": "Task",
}
# Every section key appears in both regions, so no source is ever left out
# of the layout (a history or task source cannot be stable).
STABLE_ORDER = ("system", "preload", "notes", "evidence", "context", "output")
DYNAMIC_ORDER = ("system", "preload", "output", "notes", "history", "evidence", "context", "task")


def check_budget(budget: object) -> int:
    """The window budget: a positive whole number of tokens (the rule every count follows)."""
    return check_count("budget", budget, minimum=1)[0]


def _fraction(name: str, value: object, *, upper_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise QueryError(f"{name} must be a number, got {value!r}", hint=f"pass {name} between 0 and 1", field=name)
    if value < 0 or value > 1 or (upper_open and value == 1):
        top = "below 1" if upper_open else "at most 1"
        raise QueryError(f"{name} must be from 0 to {top.split()[-1]} ({top}), got {value}", hint=f"pass {name} between 0 and 1", field=name, value=value)
    return float(value)


@dataclass(frozen=True, slots=True)
class AssembleConfig:
    """How the assembler ranks and reserves; validated at construction.

    ``relevance_weight`` + ``recency_weight`` must sum to 1.
    ``reserve_ratio`` (0 <= r < 1) of the budget is held back for the
    model's answer. Non-protected sources with relevance below
    ``min_relevance`` are evicted before ranking. ``repair_history`` drops
    unmatched tool calls/results with a warning instead of failing.
    ``output`` is the text of the ``[Output]`` section (part of the stable
    prefix). ``compress`` lets a stable source be cut to fit instead of
    being evicted.
    """

    relevance_weight: float = 0.7
    recency_weight: float = 0.3
    reserve_ratio: float = 0.1
    min_relevance: float = 0.1
    repair_history: bool = False
    output: str = DEFAULT_OUTPUT
    compress: bool = True

    def __post_init__(self) -> None:
        rw = _fraction("relevance_weight", self.relevance_weight)
        cw = _fraction("recency_weight", self.recency_weight)
        if not math.isclose(rw + cw, 1.0, abs_tol=1e-9):
            raise QueryError(
                f"relevance_weight + recency_weight must sum to 1, got {rw} + {cw} = {rw + cw:g}",
                hint=f"e.g. relevance_weight={rw:g}, recency_weight={1 - rw:g}",
                field="weights",
            )
        _fraction("reserve_ratio", self.reserve_ratio, upper_open=True)
        _fraction("min_relevance", self.min_relevance)
        if not isinstance(self.output, str) or not self.output.strip():
            raise QueryError(f"output must be non-empty text, got {self.output!r}", hint="describe the answer you want, or keep the default", field="output")
        for name in ("repair_history", "compress"):
            if not isinstance(getattr(self, name), bool):
                raise QueryError(f"{name} must be true or false, got {getattr(self, name)!r}", field=name)

    def available(self, budget: int) -> int:
        """Tokens the window may use: the budget minus the reserve."""
        return budget - math.floor(budget * self.reserve_ratio)


# -- gather -----------------------------------------------------------------------

Provider = Source | Iterable[Source] | Callable[[], Any]


def gather(providers: Iterable[Provider]) -> tuple[list[Source], list[str]]:
    """Flatten sources and call providers; a failing provider is a warning.

    A provider is a Source, an iterable of Sources, or a no-argument
    callable returning either. A callable that raises (or returns something
    else) is skipped with a warning naming it; the rest goes on. A Source
    built with bad values fails where it is built (caller error).
    """
    out: list[Source] = []
    warnings: list[str] = []
    for p in providers:
        if callable(p) and not isinstance(p, Source):
            name = getattr(p, "__name__", type(p).__name__)
            try:
                got = p()
                got = [got] if isinstance(got, Source) else list(got or ())
                bad = [g for g in got if not isinstance(g, Source)]
                if bad:
                    raise TypeError(f"returned {type(bad[0]).__name__}, not Source")
            except Exception as exc:  # tolerated by design: one failing provider must not sink the window
                warnings.append(f"source {name} failed: {type(exc).__name__}: {exc}")
                continue
            out.extend(got)
        elif isinstance(p, Source):
            out.append(p)
        else:
            try:
                items = list(p)
            except TypeError:
                raise QueryError(
                    f"a source must be a Source, a list of Sources or a callable, got {type(p).__name__}", hint="wrap text in Source(name, kind, content)", field="sources"
                ) from None
            for it in items:
                if not isinstance(it, Source):
                    raise QueryError(f"a source must be a Source, got {type(it).__name__}", hint="wrap text in Source(name, kind, content)", field="sources")
            out.extend(items)
    return out, warnings


# -- select -----------------------------------------------------------------------


@dataclass(slots=True)
class _Item:
    source: Source
    text: str
    tokens: int
    order: int
    region: str  # "stable" | "dynamic"
    allowance: int | None = None  # admitted cut: the tokens its cut text keeps (marker included)
    cut_text: str | None = None  # the cut text, when admitted cut

    @property
    def key(self) -> str:
        return self.source.section


def _evict(item: _Item, reason: str) -> Eviction:
    s = item.source
    return Eviction(s.name, s.kind, s.priority, item.tokens, reason)


class _Selector:
    """Greedy fill against ``available``, charging each section's header once."""

    def __init__(self, available: int, overhead: Callable[[str, str], int]) -> None:
        self.remaining = available
        self.overhead = overhead
        self.opened: set[tuple[str, str]] = set()
        self.kept: list[_Item] = []

    def cost(self, item: _Item) -> int:
        sect = (item.region, item.key)
        return item.tokens + (0 if sect in self.opened else self.overhead(*sect))

    def header_cost(self, item: _Item) -> int:
        return 0 if (item.region, item.key) in self.opened else self.overhead(item.region, item.key)

    def take(self, item: _Item, cut: tuple[str, int] | None = None) -> None:
        """Admit ``item`` whole, or as ``cut`` (text, tokens): charged the tokens it keeps."""
        cost = self.cost(item) if cut is None else self.header_cost(item) + cut[1]
        self.opened.add((item.region, item.key))
        if cut is not None:
            item.cut_text, item.allowance = cut
        self.remaining -= cost
        self.kept.append(item)


def _recency(items: list[_Item]) -> dict[int, float]:
    stamps = [i.source.timestamp for i in items if i.source.timestamp is not None]
    if not stamps:
        return {i.order: 0.0 for i in items}
    lo, hi = min(stamps), max(stamps)
    out = {}
    for i in items:
        t = i.source.timestamp
        out[i.order] = 0.0 if t is None else (1.0 if hi == lo else (t - lo) / (hi - lo))
    return out


def _least(cost: int, cfg: AssembleConfig) -> int:
    """The smallest budget whose available part (the reserve held back) holds ``cost`` tokens."""
    least = math.ceil(cost / (1 - cfg.reserve_ratio))
    while least - math.floor(least * cfg.reserve_ratio) < cost:
        least += 1
    return least


def _select(items: list[_Item], available: int, budget: int, cfg: AssembleConfig, overhead: Callable[[str, str], int], tok) -> tuple[list[_Item], list[Eviction]]:
    sel = _Selector(available, overhead)
    evicted: list[Eviction] = []
    protected = [i for i in items if i.source.protected]
    for i in protected:
        sel.take(i)
    if sel.remaining < 0:
        cost = available - sel.remaining
        names = ", ".join(i.source.name for i in protected)
        raise QueryError(
            f"protected sources ({names}) need {cost:,} tokens but the budget allows {available:,} (budget {budget:,} minus reserve {budget - available:,})",
            hint=f"pass budget={_least(cost, cfg)} or more, or a shorter task; protected rules are never dropped",
            field="budget",
            protected_tokens=cost,
            budget=budget,
            available=available,
        )
    rest = []
    for i in items:
        if i.source.protected:
            continue
        if not i.text:
            evicted.append(_evict(i, "empty"))
        elif i.source.relevance < cfg.min_relevance:
            evicted.append(_evict(i, "below_min_relevance"))
        else:
            rest.append(i)

    # Stable sources next: evicting them for dynamic ones would change the
    # cached prefix every turn.
    for i in sorted((i for i in rest if i.region == "stable"), key=lambda i: (-i.source.priority, i.order)):
        if sel.cost(i) <= sel.remaining:
            sel.take(i)
            continue
        room = sel.remaining - sel.header_cost(i)
        if not cfg.compress or room < MIN_KEEP:
            evicted.append(_evict(i, "over_budget"))
            continue
        # Cut now, while admitting: the source is charged what it keeps, and
        # a cut keeping under MIN_KEEP tokens leaves the room to the others.
        cut = _cut(i, room, tok)
        if cut is None:
            evicted.append(_evict(i, "cut_below_min"))
        else:
            sel.take(i, cut=cut)

    dynamic = [i for i in rest if i.region == "dynamic"]
    rec = _recency(dynamic)
    rw, cw = cfg.relevance_weight, cfg.recency_weight
    ranked = sorted(dynamic, key=lambda i: (-(rw * i.source.relevance + cw * rec[i.order]), -i.source.priority, i.order))
    history = sorted((i for i in dynamic if i.key == "history"), key=lambda i: -i.order)  # newest first
    h_next, h_open = 0, True
    for i in ranked:
        if i.key == "history":
            # History is taken newest first whenever its turn comes in the
            # ranking; the first group that does not fit ends it.
            if not h_open:
                continue
            h = history[h_next]
            h_next += 1
            if sel.cost(h) <= sel.remaining:
                sel.take(h)
            else:
                h_open = False
                evicted.append(_evict(h, "over_budget"))
                evicted.extend(_evict(o, "history_trimmed") for o in history[h_next:])
            continue
        if sel.cost(i) <= sel.remaining:
            sel.take(i)
        else:
            evicted.append(_evict(i, "over_budget"))
    return sel.kept, evicted


# -- compress ---------------------------------------------------------------------


def _cut(item: _Item, allowance: int, tok) -> tuple[str, int] | None:
    """``item.text`` cut on a line boundary to ``allowance`` tokens, marker included.

    ``None`` when what would be kept is under ``MIN_KEEP`` tokens.
    """
    lines = item.text.split("\n")[:-1]
    total = len(lines)

    def render(k: int) -> str:
        return "".join(line + "\n" for line in lines[:k]) + f"[... cut to fit the budget: kept {k:,} of {total:,} lines, {item.tokens:,} tokens in full]\n"

    k = fit_lines(tok.count, lines, allowance, render)
    if not k or tok.count("".join(line + "\n" for line in lines[:k])) < MIN_KEEP:
        return None
    text = render(k)
    return text, tok.count(text)


# -- structure --------------------------------------------------------------------


def _header(key: str) -> str:
    return f"[{TITLES[key]}]\n"


def _structure(kept: list[_Item], texts: dict[int, str], tok) -> list[Section]:
    sections: list[Section] = []
    for region, order in (("stable", STABLE_ORDER), ("dynamic", DYNAMIC_ORDER)):
        for key in order:
            members = sorted((i for i in kept if i.region == region and i.key == key), key=lambda i: i.order)
            if not members:
                continue
            body = "".join(texts[i.order] for i in members)
            text = _header(key) + body + ("" if key == "task" else "\n")
            sections.append(
                Section(key, TITLES[key], text, tok.count(text), region == "stable", tuple(i.source.name for i in members), any(i.allowance is not None for i in members))
            )
    return sections


# -- assemble ---------------------------------------------------------------------


def assemble(
    sources: Iterable[Provider],
    budget: int,
    *,
    config: AssembleConfig | None = None,
    tokenizer=None,
    warnings: Iterable[str] = (),
) -> Context:
    """Assemble a window from ``sources`` within ``budget`` tokens.

    ``sources``: Sources, lists of Sources, or providers (callables) that
    return them. ``tokenizer``: any ``Tokenizer`` (default: the shared
    cl100k tokenizer). ``warnings``: carried into the report as is.
    Raises ``QueryError`` for a bad budget, or when the protected sources
    alone exceed it.
    """
    cfg = config if config is not None else AssembleConfig()
    if not isinstance(cfg, AssembleConfig):
        raise QueryError(f"config must be an AssembleConfig, got {type(cfg).__name__}", field="config")
    budget = check_budget(budget)
    available = cfg.available(budget)
    if tokenizer is None:
        from ..tokens.tokenizer import get_tokenizer

        tokenizer = get_tokenizer()
    tok = tokenizer
    got, gather_warnings = gather(sources)
    got.append(Source("output", "output", cfg.output, protected=True, stable=True))
    if not any(s.kind == "task" for s in got):
        got.append(Source("task", "task", NO_TASK))  # [Task] is always present, and paid for

    seen: set[str] = set()
    for s in got:
        if s.name in seen:
            gather_warnings.append(f"two sources are named {s.name!r}: the report cannot tell them apart")
        seen.add(s.name)
    items = []
    for n, s in enumerate(got):
        text = item_text(s)
        items.append(_Item(s, text, tok.count(text) if text else 0, n, "stable" if s.stable else "dynamic"))

    head_cost: dict[tuple[str, str], int] = {}

    def overhead(region: str, key: str) -> int:
        if (region, key) not in head_cost:
            head_cost[(region, key)] = tok.count(_header(key)) + (0 if key == "task" else tok.count("\n"))
        return head_cost[(region, key)]

    kept, evicted = _select(items, available, budget, cfg, overhead, tok)

    texts: dict[int, str] = {}
    cuts: list[Cut] = []
    final: list[_Item] = list(kept)
    for i in kept:
        if i.cut_text is None:
            texts[i.order] = i.text
        else:
            texts[i.order] = i.cut_text
            cuts.append(Cut(i.source.name, i.source.kind, i.tokens, i.allowance or 0))

    sections = _structure(final, texts, tok)
    total = sum(s.tokens for s in sections)
    # Counts are additive by construction (each item starts on a non-blank
    # line and ends with a newline); should a tokenizer merge across a
    # boundary anyway, drop the lowest-value dynamic items until it fits.
    while total > available:
        victim = _fallback_victim(final)
        if victim is None:
            raise QueryError(
                f"protected sources need {total:,} tokens but the budget allows {available:,}",
                hint=f"pass budget={_least(total, cfg)} or more",
                field="budget",
                protected_tokens=total,
                budget=budget,
                available=available,
            )
        final.remove(victim)
        evicted.append(_evict(victim, "over_budget"))
        sections = _structure(final, texts, tok)
        total = sum(s.tokens for s in sections)

    text = "".join(s.text for s in sections)
    stable = "".join(s.text for s in sections if s.stable)
    history = tuple(m for i in sorted(final, key=lambda i: i.order) if i.key == "history" for m in (i.source.messages or (Message("user", i.source.content),)))
    return Context(
        text=text,
        sections=tuple(sections),
        tokens=total,
        budget=budget,
        available=available,
        evicted=tuple(evicted),
        cuts=tuple(cuts),
        warnings=tuple([*warnings, *gather_warnings]),
        prefix_hash=hashlib.sha256(stable.encode("utf-8")).hexdigest(),
        messages=history,
    )


def _fallback_victim(final: list[_Item]) -> _Item | None:
    """The item to drop when exact counts overflow: lowest-scored dynamic
    non-history item, else the oldest history group, else a stable one."""
    others = [i for i in final if not i.source.protected and i.region == "dynamic" and i.key != "history"]
    if others:
        return min(others, key=lambda i: (i.source.relevance, i.source.priority, -i.order))
    history = [i for i in final if i.key == "history"]
    if history:
        return min(history, key=lambda i: i.order)
    stable = [i for i in final if not i.source.protected]
    return min(stable, key=lambda i: (i.source.priority, -i.order)) if stable else None
