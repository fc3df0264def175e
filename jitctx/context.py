"""``context_for_task``: a window for a task, from the preload, evidence and the assembler.

Owns the simple relevance rule that turns a task into evidence (below) and
wiring the Workspace into the assembler's sources. Does not own selection or
layout (``assemble``) nor how grep/glob search (the primitives).

Relevance rule. The task's keywords are its identifier-like words
(``[A-Za-z_][A-Za-z0-9_]*``) of 3+ characters, lower-cased, stop words
removed, first 8 kept in order. One case-insensitive ``grep`` for any
keyword in count mode (up to 2,000 files) says which files match and how
often; one case-insensitive ``glob`` ``**/*{kw1,kw2,...}*`` (up to 20 files a
keyword) finds files by name. The matching files are ranked by how many
keywords their path holds, then by matching lines, and the first 24 are read
(one ``grep`` each, up to 20 matching lines). A file's relevance is the share
of keywords it hits, in its matching lines or its path: 3 of 4 keywords ->
0.75. Files read become line evidence (their matching lines, numbered);
files found by name, or matching but not read with a keyword in their path,
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
COUNT_LIMIT = 2000  # matching files ranked from one count search
READ_FILES = 24  # files whose matching lines are read
LINES_PER_FILE = 20
GLOB_LIMIT = 20  # file-name hits per keyword
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
    regex = "|".join(keywords)
    lines: dict[str, list[LineRef]] = {}
    hits: dict[str, set[str]] = {}
    refs: dict[str, FileRef] = {}
    nested: list[str] = []  # instruction files the searches met just in time
    failures: list[str] = []

    def path_hits(path: str) -> set[str]:
        low = path.lower()
        return {k for k in keywords if k in low}

    def search(what: str, call):
        try:
            res = call()
        except Exception as exc:  # tolerated: the window goes on without this evidence
            failures.append(f"{what} failed: {type(exc).__name__}: {exc}")
            return None
        nested.extend(i["path"] for i in getattr(res, "instructions", ()) or ())
        return res

    # 1. which files match, and how often: one search without content
    counted = search("grep", lambda: ws.grep(regex, ".", mode="count", ignore_case=True, limit=COUNT_LIMIT))
    matched = [r for r in (counted.results if counted else ()) if isinstance(r, FileRef)]
    if counted is not None and counted.truncated:
        warnings.append(f"evidence: ranked the first {len(matched):,} of {counted.total:,} matching files")
    # 2. which file names match: one listing for all keywords (a brace choice)
    names = keywords[0] if len(keywords) == 1 else "{" + ",".join(keywords) + "}"
    named = search(f"glob **/*{names}*", lambda: ws.glob(f"**/*{names}*", ignore_case=True, limit=GLOB_LIMIT * len(keywords)))
    for r in named.results if named else ():
        if isinstance(r, FileRef):
            refs.setdefault(r.path, r)
    # 3. read the matching lines of the most promising files: keywords in the path, then most matches
    ranked = sorted(matched, key=lambda r: (-len(path_hits(r.path)), -(r.matches or 0), r.path))
    for r in ranked[:READ_FILES]:
        res = search(f"grep in {r.path}", lambda r=r: ws.grep(regex, r.path, mode="content", ignore_case=True, limit=LINES_PER_FILE))
        for lr in res.results if res else ():
            if isinstance(lr, LineRef):
                lines.setdefault(lr.path, []).append(lr)
                low = lr.text.lower()
                hits.setdefault(lr.path, set()).update(k for k in keywords if k in low)
    for r in ranked[READ_FILES:]:  # not read: a reference when its path says why
        if path_hits(r.path):
            refs.setdefault(r.path, r)
    for path in [*lines, *refs]:
        hits.setdefault(path, set()).update(path_hits(path))
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
    cwd: str | None = None,
    tokenizer=None,
) -> Context:
    """Preload, gather evidence for ``task`` with grep/glob, assemble within ``budget``.

    ``history``: chat messages (``Message`` or OpenAI dicts); ``notes``:
    strings or Sources. The prefix is the workspace's last preload
    (``ws.last_preload``); ``ws.preload(cwd)`` runs only when there is none
    yet, and ``use_preload=False`` skips it. Preloaded files that went stale since
    are warnings (the prefix stays as rendered until ``ws.refresh()``). A
    failing preload or search is a warning in the report; the rest goes on.
    """
    check_budget(budget)
    cfg = config if config is not None else AssembleConfig()
    task_src = task_source(task)
    warnings: list[str] = []
    hist, hist_warnings = history_sources(history, repair=cfg.repair_history)
    warnings.extend(hist_warnings)

    def preload() -> list[Source]:
        # The session's current prefix: re-rendering it here would change the
        # prefix between refreshes (DESIGN section 7), settle stale reports
        # nobody saw and replace the arguments refresh() repeats.
        pre = ws.last_preload
        if pre is None:
            pre = ws.preload(cwd)
        warnings.extend(f"preload: {w}" for w in pre.warnings)
        try:
            stale = ws.stale()
        except Exception as exc:  # advisory: the prefix is still delivered
            warnings.append(f"preload: could not check for stale files: {type(exc).__name__}: {exc}")
            stale = ()
        for s in stale:
            if s.get("kind") == "preload":
                warnings.append(f"preload: {s['path']} {s.get('change', 'changed')} since the prefix was rendered; refresh to re-render it")
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
