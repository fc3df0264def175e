"""The regions of a file worth reading for a task: definitions, or line windows.

Owns scoring the parts of one file for a task's terms: every definition (and
every line window of ``WINDOW`` lines outside definitions) is scored by the
task terms its lines hold (weighted by IDF, saturating in frequency,
normalised by length) plus a bonus when its name carries task words (far
more when it defines a name the task gives); the best ``REGIONS`` that do not
overlap are the file's regions, each with its lines, exact tokens and why.
Does not own ranking files (``locate``) nor reading them (the caller's).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from ..code import words as W
from .terms import TaskTerms

__all__ = ["REGIONS", "SCORE_DIGITS", "WINDOW", "Region", "regions"]

WINDOW = 30  # lines of a window region
REGIONS = 3  # regions per file
SCORE_DIGITS = 9  # scores are compared rounded: sums over sets differ in their last bits from one process to the next


@dataclass(frozen=True, slots=True)
class Region:
    """A part of a file worth reading: a definition or a window of lines.

    ``start_line``/``end_line``: 1-based, inclusive. ``symbol``: the
    definition's qualname (None for a window); ``kind``: the definition's
    kind, or ``lines``. ``signature``: its first line, trimmed. ``tokens``:
    the exact cost of reading it (None without a tokenizer). ``why``: the
    task terms and names it matched, strongest first.
    """

    path: str
    start_line: int
    end_line: int
    kind: str
    symbol: str | None
    signature: str
    tokens: int | None
    score: float
    why: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "start_line": self.start_line,
            "end_line": self.end_line,
            "kind": self.kind,
            "symbol": self.symbol,
            "signature": self.signature,
            "tokens": self.tokens,
            "score": round(self.score, 4),
            "why": list(self.why),
        }

    def read_call(self) -> str:
        """The call that reads exactly this region, in tool-argument syntax (``hints.call``)."""
        from ..text.hints import call

        if self.symbol:
            return call("head", path=self.path, symbol=self.symbol)
        return call("head", path=self.path, start=self.start_line, n=self.end_line - self.start_line + 1)


def _line_terms(lines: list[str], wanted: dict[str, float]) -> list[set[str]]:
    """The task terms each line holds. Only lines where some term occurs as a
    substring (case folded) are split into words: a term is always a
    substring of the line that holds it, and most lines hold none."""
    out: list[set[str]] = [set() for _ in lines]
    if not lines or not wanted:
        return out
    text = "\n".join(lines).lower()
    starts = list(accumulate(map((1).__add__, map(len, lines[:-1])), initial=0))  # each line's offset, summed in C
    candidates: set[int] = set()
    for term in wanted:
        at = text.find(term)
        while at != -1:
            row = bisect.bisect_right(starts, at) - 1
            candidates.add(row)
            at = text.find(term, starts[row + 1] if row + 1 < len(starts) else len(text))
    keys = wanted.keys()
    for row in candidates:
        out[row] = set(W.words(lines[row])) & keys
    return out


def _span_score(per_line: list[set[str]], start: int, end: int, weight: Callable[[str], float]) -> tuple[float, dict[str, int]]:
    tf: dict[str, int] = {}
    for i in range(start - 1, min(end, len(per_line))):
        for t in per_line[i]:
            tf[t] = tf.get(t, 0) + 1
    raw = sum(weight(t) * (1.0 + math.log(n)) for t, n in tf.items())
    length = end - start + 1
    return raw / (1.0 + math.log1p(length / 40.0)), tf


def _why(tf: dict[str, int], weight: Callable[[str], float], extra: Iterable[str] = (), named: set[str] | frozenset[str] = frozenset()) -> tuple[str, ...]:
    ranked = sorted((t for t in tf if t not in named), key=lambda t: (-weight(t) * (1.0 + math.log(tf[t])), t))
    return tuple(dict.fromkeys([*extra, *ranked[:6]]))


def regions(
    path: str,
    text: str,
    definitions: Iterable,
    terms: TaskTerms,
    idf: dict[str, float],
    *,
    named: Iterable[tuple[object, str]] = (),
    count: Callable[[str], int] | None = None,
    limit: int = REGIONS,
    present: set[str] | None = None,
    pointed: Iterable[tuple[int, str]] = (),
) -> list[Region]:
    """The best ``limit`` non-overlapping regions of one file (see the module
    docstring); ``present``, when given, receives the task terms the file holds;
    ``pointed``: lines the report points at (a traceback frame's, a message's) and
    why: the innermost definition holding one (else a window around it) comes first."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    weights = {t: terms.weights[t] * idf.get(t, 1.0) for t in terms.weights}

    def weight(t: str) -> float:
        return weights.get(t, 0.0)

    per_line = _line_terms(lines, weights)
    if present is not None:
        present.update(*per_line)
    named_at = {(getattr(d, "start_line", 0), getattr(d, "qualname", "")): name for d, name in named}
    cands: list[tuple[float, int, int, Any, dict[str, int], tuple[str, ...], frozenset[str]]] = []
    covered = [False] * len(lines)
    defs = list(definitions)
    strong = 3.0 * max(weights.values(), default=1.0) + 5.0  # as a definition of a name the task gives
    at_line: dict[int, list[str]] = {}  # a definition's start line -> why the report points into it
    loose: dict[int, str] = {}  # pointed lines no definition holds
    order: dict[int, int] = {}  # a definition's or a loose line's place among the pointed lines: the first (innermost) frame first
    for line, why in pointed:
        if not 1 <= line <= len(lines):
            continue
        holding = [d for d in defs if d.start_line <= line <= d.end_line]
        if holding:
            inner = max(holding, key=lambda d: (d.start_line, -d.end_line))
            at_line.setdefault(inner.start_line, []).append(why)
            order.setdefault(inner.start_line, len(order))
        else:
            loose.setdefault(line, why)
            order.setdefault(line, len(order))
    for d in defs:
        start, end = max(1, d.start_line), min(d.end_line, len(lines))
        if end < start:
            continue
        for i in range(start - 1, end):
            covered[i] = True
        score, tf = _span_score(per_line, start, end, weight)
        reasons: list[str] = []
        name_terms = set(W.split(d.name)) & weights.keys()
        if name_terms:
            score += 1.5 * sum(weight(t) for t in name_terms)
            reasons.append(f"name: {d.name}")
        exact = named_at.get((d.start_line, d.qualname))
        if exact:
            score += 3.0 * max(weights.values(), default=1.0) + 5.0
            reasons.insert(0, f"defines {exact}")
        if end - start + 1 > 400:
            score *= 400 / (end - start + 1)  # a huge definition: its parts are better regions
        if d.start_line in at_line:
            score += strong * (3.0 if order[d.start_line] == 0 else 2.0)  # a frame's line says more than a name: the innermost definition holding it
            reasons[:0] = at_line.pop(d.start_line)[:1]
        if score > 0:
            cands.append((score, start, end, d, tf, tuple(reasons), frozenset(name_terms)))
    # windows where terms concentrate, over the lines no definition covers
    hit_lines = [i for i, ts in enumerate(per_line) if ts and not covered[i]]
    hit_lines.sort(key=lambda i: -sum(weight(t) for t in per_line[i]))
    taken: list[tuple[int, int]] = []
    for line, why in sorted(loose.items()):
        start = max(1, line - 5)
        end = min(len(lines), start + WINDOW - 1)
        taken.append((start, end))
        score, tf = _span_score(per_line, start, end, weight)
        cands.append((score + strong * (3.0 if order[line] == 0 else 2.0), start, end, None, tf, (why,), frozenset()))
    for i in hit_lines[:200]:
        line = i + 1
        if any(a <= line <= b for a, b in taken):
            continue
        start = max(1, line - 5)
        end = min(len(lines), start + WINDOW - 1)
        taken.append((start, end))
        score, tf = _span_score(per_line, start, end, weight)
        cands.append((score, start, end, None, tf, (), frozenset()))
        if len(taken) >= 4 * limit:
            break
    cands.sort(key=lambda c: (-round(c[0], SCORE_DIGITS), c[1]))
    chosen: list[Region] = []
    for score, start, end, d, tf, extra, in_name in cands:
        if any(not (end < r.start_line or start > r.end_line) for r in chosen):
            continue
        body = "\n".join(lines[start - 1 : end]) + "\n"
        tokens = getattr(d, "tokens", None)
        if tokens is None and count is not None:
            tokens = count(body)
        if d is not None:
            chosen.append(Region(path, start, end, d.kind, d.qualname, d.signature, tokens, score, _why(tf, weight, extra, in_name)))
        else:
            first = next((ln.strip() for ln in lines[start - 1 : end] if ln.strip()), "")
            chosen.append(Region(path, start, end, "lines", None, first[:120], tokens, score, _why(tf, weight, extra)))
        if len(chosen) >= limit:
            break
    return chosen
