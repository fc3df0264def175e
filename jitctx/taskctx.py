"""A window for a task: preload, evidence from the primitives, then assemble.

Owns the simple relevance rule that turns a task into evidence (below) and
wiring the Workspace into the assembler's sources. Does not own selection or
layout (``assemble``) nor how grep/glob search (the primitives).

Relevance rule. The task's keywords are its identifier-like words
(``[A-Za-z_][A-Za-z0-9_]*``) of 3+ characters, lower-cased, stop words
removed, first 8 kept in order. One case-insensitive ``grep`` for any
keyword (content mode, up to 200 lines) and one case-insensitive ``glob``
``**/*{kw1,kw2,...}*`` (up to 20 files a keyword, newest first) find candidate files. A
file's relevance is the share of keywords it hits, in its matching lines or
its path: 3 of 4 keywords -> 0.75. Files with matching lines become
line evidence (their matching lines, numbered); files hit only by path
become references. Their mtime is their timestamp (recency). Nested
instruction files that the searches met just in time (``instructions`` of
their results) are read with ``head`` and come first, with relevance 1.
"""

from __future__ import annotations

import re
from typing import Any

from .assemble import AssembleConfig, Context, assemble, check_budget
from .refs import FileRef, LineRef
from .sources import Source, evidence_sources, history_sources, note_source, preload_source, system_source, task_source

__all__ = ["DEFAULT_SYSTEM", "STOP_WORDS", "context_for_task", "task_keywords"]

DEFAULT_SYSTEM = (
    "You are a coding agent working in a git repository. The repository's instruction files "
    "come first and take precedence. Evidence below is references and excerpts, not whole "
    "files: read more with the glob, grep, head and tail tools before you change code."
)
STOP_WORDS = frozenset(
    "the and for with that this from into onto then than when what where which while who why how "
    "are was were been being has have had not but can could should would will shall may might must "
    "all any each every some more most other such only own same too very just also about after "
    "before again once here there our out over under use using used make makes made add fix get "
    "set new old its it's you your they them their please file files code".split()
)
MAX_KEYWORDS = 8
GREP_LIMIT = 200
GLOB_LIMIT = 20
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def task_keywords(task: str) -> list[str]:
    """The task's search keywords (see the module docstring)."""
    out: list[str] = []
    for w in _WORD.findall(task):
        w = w.lower()
        if len(w) >= 3 and w not in STOP_WORDS and w not in out:
            out.append(w)
    return out[:MAX_KEYWORDS]


def _evidence(ws, keywords: list[str], warnings: list[str]) -> list[Source]:
    """Line evidence and path references for ``keywords``, most relevant first."""
    lines: dict[str, list[LineRef]] = {}
    hits: dict[str, set[str]] = {}
    refs: dict[str, FileRef] = {}
    nested: list[str] = []  # instruction files the searches met just in time
    failures = []
    try:
        res = ws.grep("|".join(keywords), ".", mode="content", ignore_case=True, limit=GREP_LIMIT)
    except Exception as exc:  # tolerated: the window goes on without line evidence
        failures.append(f"grep failed: {type(exc).__name__}: {exc}")
    else:
        nested += [i["path"] for i in getattr(res, "instructions", ()) or ()]
        if res.truncated:
            warnings.append(f"evidence: grep {res.notice or 'was truncated'}")
        for r in res.results:
            if isinstance(r, LineRef):
                lines.setdefault(r.path, []).append(r)
                low = r.text.lower()
                hits.setdefault(r.path, set()).update(k for k in keywords if k in low)
    # one listing for all keywords (a brace choice), not one per keyword: the listing is the cost
    names = keywords[0] if len(keywords) == 1 else "{" + ",".join(keywords) + "}"
    pattern = f"**/*{names}*"
    try:
        res = ws.glob(pattern, ignore_case=True, limit=GLOB_LIMIT * len(keywords))
    except Exception as exc:  # tolerated, as above
        failures.append(f"glob {pattern} failed: {type(exc).__name__}: {exc}")
    else:
        nested += [i["path"] for i in getattr(res, "instructions", ()) or ()]
        for r in res.results:
            if isinstance(r, FileRef):
                refs.setdefault(r.path, r)
    for path in [*lines, *refs]:
        low = path.lower()
        hits.setdefault(path, set()).update(k for k in keywords if k in low)
    warnings.extend(f"evidence: {f}" for f in failures)

    def relevance(path: str) -> float:
        return round(len(hits.get(path, ())) / len(keywords), 6)

    ordered = sorted(set(lines) | set(refs), key=lambda p: (-relevance(p), p))
    items: list[object] = []
    for p in ordered:
        items.extend(lines[p] if p in lines else [refs[p]])
    return _nested_instructions(ws, nested, warnings) + evidence_sources(items, relevance=relevance)


def _nested_instructions(ws, paths: list[str], warnings: list[str]) -> list[Source]:
    """The nested instruction files governing the evidence, read whole (relevance 1).

    They are dynamic sources, never part of the stable prefix (DESIGN section 6).
    """
    out: list[Source] = []
    for path in dict.fromkeys(paths):
        try:
            res = ws.head(path, 200)
        except Exception as exc:  # tolerated, as the searches are
            warnings.append(f"evidence: reading {path} failed: {type(exc).__name__}: {exc}")
            continue
        out += evidence_sources([e for e in res.results if getattr(e, "content", "")], relevance=1.0)
    return out


def context_for_task(
    ws,
    task: str,
    budget: int = 16000,
    *,
    config: AssembleConfig | None = None,
    system: str = DEFAULT_SYSTEM,
    history: Any = (),
    notes: Any = (),
    use_preload: bool = True,
    tokenizer=None,
) -> Context:
    """Preload, gather evidence for ``task`` with grep/glob, assemble within ``budget``.

    ``history``: chat messages (``Message`` or OpenAI dicts); ``notes``:
    strings or Sources. ``use_preload=False`` skips ``ws.preload()``. A
    failing preload or search is a warning in the report; the rest goes on.
    """
    check_budget(budget)
    cfg = config if config is not None else AssembleConfig()
    task_src = task_source(task)
    warnings: list[str] = []
    hist, hist_warnings = history_sources(history, repair=cfg.repair_history)
    warnings.extend(hist_warnings)

    def preload() -> list[Source]:
        pre = ws.preload()
        warnings.extend(f"preload: {w}" for w in getattr(pre, "warnings", ()) or ())
        return preload_source(pre)

    def evidence() -> list[Source]:
        keywords = task_keywords(task)
        if not keywords:
            warnings.append("evidence: the task has no keywords to search for (words of 3+ letters)")
            return []
        return _evidence(ws, keywords, warnings)

    note_sources = [n if isinstance(n, Source) else note_source(n, name=f"notes:{k}") for k, n in enumerate(notes)]
    providers: list[Any] = [system_source(system)] if system else []
    if use_preload:
        providers.append(preload)
    providers += [*note_sources, *hist, evidence, task_src]
    # ``warnings`` is filled while assemble runs the providers; it is read after.
    return assemble(providers, budget, config=cfg, tokenizer=tokenizer if tokenizer is not None else ws.tokenizer, warnings=warnings)
