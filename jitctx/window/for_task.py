"""``context_for_task``: a window for a task, from the preload, located regions and the assembler.

Owns turning a task into evidence through ``Workspace.locate`` (the ranking
lives in ``locate``), reading the chosen regions, and saying in the window
itself what did not fit; wiring it all into the assembler's sources. Does
not own selection or layout (``assemble``) nor the ranking (``locate``).

Evidence. ``ws.locate(task, limit=FILES)`` ranks files and picks up to
three regions in each (definitions, or line windows where the task's terms
concentrate). Each file's regions are read at once (``ws.read_regions``:
recorded as read, secrets redacted as in any read) and becomes one evidence item
labelled with its path, lines and why it was chosen. Items are laid out
file by file in rank order; the assembler admits them by relevance, which
is the file's score times ``REGION_DECAY`` per earlier region of the same
file, so the best region of the next files comes before the third region
of the first. Nested instruction files that governs the located files lead
the evidence, read whole, with relevance 1. A region that alone would take
over ``REGION_SHARE`` of the window (a 400-line function) is shown in part:
its lines where the task's terms concentrate, within that share, labelled
as a part, its whole read call listed to read next.

What did not fit. After the window is assembled, a ``read next`` block (in
``[Context]``) lists the best candidates left out, each with the call that
reads it, in tool-argument syntax, and its cost (``head path=src/x.py
symbol=Foo.bar  # 340 tokens``; the CLI shows it as a command line:
``View.calls``), and one line counts what was left out (regions, files,
tokens; the preload's cut) with the ``locate`` call that lists the files not
ranked. The block is priced in before the evidence is chosen
(room for ``NEXT_LINES`` lines is held), so the window stays within its
budget. No file matching the task: the window says so and ``located`` is 0.

The preload. When the budget is tight (the prefix would take over
``PRELOAD_SHARE`` of it), image-only README lines (badges) are dropped and
the prefix is cut from its end (the README comes last), with a marker
naming what was kept and the call that prints it whole.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from ..text.hints import call
from .assemble import AssembleConfig, Context, assemble, check_budget
from .sources import Source, evidence_sources, history_sources, note_source, preload_source, system_source, task_source

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["DEFAULT_SYSTEM", "FILES", "context_for_task"]

DEFAULT_SYSTEM = (
    "You are a coding agent working in a git repository. The repository's instruction files "
    "come first and take precedence. Evidence below is the regions most likely to matter, not whole "
    "files: read more with the head, grep, glob and locate tools before you change code."
)
FILES = 15  # files located for a window (their regions are read and scored: the cost grows with it)
REGION_DECAY = 0.55
NEXT_LINES = 8  # candidates listed as references when they do not fit
PRELOAD_SHARE = 0.35
REGION_SHARE = 0.25  # a region costing more than this share of the window's room is shown in part...
PART_LINES = 60  # ... when it spans more lines than this (a line window is whole or nothing)
_BADGE = re.compile(r"^\s*(?:\[?!\[[^\]]*\]\([^)]*\)\]?(?:\([^)]*\))?\s*)+$|^\s*(?:<a [^>]*>\s*)?<img [^>]*>(?:\s*</a>)?\s*$", re.IGNORECASE)


def _slim_preload(text: str, room: int, count) -> tuple[str, str | None]:
    """The prefix within ``room`` tokens: badge lines out, then cut from the end."""
    if count(text) <= room:
        return text, None
    lines = text.rstrip("\n").split("\n")
    badges = sum(1 for ln in lines if _BADGE.match(ln))
    kept = [ln for ln in lines if not _BADGE.match(ln)]
    note = f"{badges} badge line{'s' if badges != 1 else ''} left out" if badges else None
    body = "\n".join(kept) + "\n"
    if count(body) <= room:
        return body, f"preload: {note} to fit the budget"
    total = len(kept)
    marker = "[... preload cut to fit the budget: kept {k:,} of {n:,} lines; print it whole with jitctx preload]\n"
    lo, hi = 0, total
    while lo < hi:  # the most whole lines that fit with the marker
        mid = (lo + hi + 1) // 2
        if count("\n".join(kept[:mid]) + "\n" + marker.format(k=mid, n=total)) <= room:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return "", f"preload: left out ({count(text):,} tokens) to make room for evidence; print it with jitctx preload"
    cut = "\n".join(kept[:lo]) + "\n" + marker.format(k=lo, n=total)
    return cut, f"preload: cut to {lo:,} of {len(lines):,} lines" + (f", {note}" if note else "") + "; print it whole with jitctx preload"


def _part(e, weights: dict[str, int], cap: int, count):
    """The lines of the excerpt ``e`` where the task's terms (``weights``) concentrate,
    as an excerpt of at most ``cap`` tokens (None: not one line fits)."""
    from dataclasses import replace

    from ..code import words as W

    lines = e.content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    score = [sum(weights.get(w, 0) for w in set(W.words(ln))) for ln in lines]
    keep = max(1, int(len(lines) * cap / max(e.tokens or 1, 1) * 0.9))
    while keep >= 1:
        sums = [sum(score[:keep])]
        for i in range(keep, len(lines)):
            sums.append(sums[-1] + score[i] - score[i - keep])
        at = max(range(len(sums)), key=lambda i: (sums[i], -i))
        content = "".join(ln + "\n" for ln in lines[at : at + keep])
        tokens = count(content)
        if tokens <= cap:
            return replace(e, start_line=e.start_line + at, end_line=e.start_line + at + keep - 1, content=content, tokens=tokens)
        keep = min(keep - 1, int(keep * 0.85))
    return None


def _region_sources(ws, found, warnings: list[str], cap: int | None = None, count=None) -> tuple[list[Source], list[tuple[str, str, int | None, str]]]:
    """One evidence source per region (read with head), and every candidate as
    (source name, read call, tokens, path) in rank order, for the read-next block.
    A region over ``cap`` tokens and ``PART_LINES`` lines is shown in part (``_part``,
    priced with ``count``), its whole read call listed among the candidates."""
    weights = dict(found.extra.get("terms", {})) if cap else {}
    sources: list[Source] = []
    candidates: list[tuple[str, str, int | None, str]] = []
    files = [f for f in found.results if hasattr(f, "regions")]
    top = max((f.score for f in files), default=1.0) or 1.0
    for f in files:
        base = max(0.01, min(1.0, f.score / top))
        if not f.regions:
            candidates.append((f"ref:{f.path}", call("head", path=f.path), f.tokens, f.path))
            continue
        try:
            res = ws.read_regions(f.path, [(r.start_line, r.end_line) for r in f.regions])
        except Exception as exc:  # tolerated: the window goes on without this file's regions
            warnings.append(f"evidence: reading {f.path} failed: {type(exc).__name__}: {exc}")
            continue
        for k, (r, e) in enumerate(zip(f.regions, res.results)):
            if not getattr(e, "content", ""):
                continue
            name = f"evidence:{f.path}:{r.start_line}-{r.end_line}"
            what = f"{r.symbol} ({r.kind})" if r.symbol else "lines"
            big = r.end_line - r.start_line + 1 > PART_LINES and (getattr(e, "tokens", None) or 0) > (cap or 0)
            if big and cap and count is not None and (part := _part(e, weights, cap, count)) is not None:
                candidates.append((f"ref:{name}", r.read_call(), e.tokens, f.path))  # the whole, always listed
                what = f"part of {what}: lines {r.start_line}-{r.end_line} are {e.tokens:,} tokens"
                e = part
            why = ", ".join(r.why[:5])
            for s in evidence_sources([e], relevance=round(base * REGION_DECAY**k, 6)):
                label = f"{s.label} {what}; {why}" if why else f"{s.label} {what}"
                sources.append(Source(name, "evidence", s.content, relevance=s.relevance, label=label))
                candidates.append((name, r.read_call(), r.tokens, f.path))
    return sources, candidates


def _next_text(left: list[tuple[str, str, int | None, str]], summary: str, most: int = NEXT_LINES) -> str:
    lines = [f"{call}  # {tokens:,} tokens" if tokens is not None else call for _, call, tokens, _ in left[:most]]
    if len(left) > most and most:
        lines.append(f"... and {len(left) - most:,} more regions")
    body = [*lines, summary] if summary else lines
    return "\n".join(body) + "\n" if body else ""


def _nested(ws, paths: list[str], warnings: list[str]) -> list[Source]:
    """The nested instruction files governing the evidence, read whole (relevance 1).

    They are dynamic sources, never part of the stable prefix (DESIGN section 6).
    """
    out: list[Source] = []
    for path in dict.fromkeys(paths):
        try:
            res = ws.head(path, 200)
        except Exception as exc:  # tolerated, as the reads are
            warnings.append(f"evidence: reading {path} failed: {type(exc).__name__}: {exc}")
            continue
        out += evidence_sources([e for e in res.results if getattr(e, "content", "")], relevance=1.0)
    return out


def _in_one_call(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn(ws, ...)`` as one call of ``ws``'s session (``Workspace.call``): the locates,
    reads and notes it makes are part of that call, not turns of their own."""

    @functools.wraps(fn)
    def in_one_call(*args: P.args, **kwargs: P.kwargs) -> R:
        ws = args[0]
        with ws.call() if hasattr(ws, "call") else contextlib.nullcontext():
            return fn(*args, **kwargs)

    return in_one_call


@_in_one_call
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
    use_notes: bool = True,
    cwd: str | None = None,
    tokenizer=None,
) -> Context:
    """Preload, locate the regions ``task`` is about, assemble within ``budget``.

    ``history``: chat messages (``Message`` or OpenAI dicts); ``notes``:
    strings or Sources; with ``use_notes``, the repository's kept notes
    (``ws.notes``) that share words with the task join them, stale ones said so. The prefix is the workspace's last preload
    (``ws.last_preload``); ``ws.preload(cwd)`` runs only when there is none
    yet, and ``use_preload=False`` skips it. Preloaded files that went stale since
    are warnings (the prefix stays as rendered until ``ws.refresh()``). A
    failing preload or search is a warning in the report; the rest goes on.
    The report's ``located`` is the number of files that matched the task
    (0: nothing did; the window says so). Files the session delivered that
    changed since are in the window (``[Context]``) and the report's ``stale``.
    """
    budget = check_budget(budget)
    cfg = config if config is not None else AssembleConfig()
    task_src = task_source(task)
    tok = tokenizer if tokenizer is not None else ws.tokenizer
    warnings: list[str] = []
    hist, hist_warnings = history_sources(history, repair=cfg.repair_history)
    warnings.extend(hist_warnings)
    said: list[str] = []  # what the read-next line reports besides the evidence

    try:
        stale = ws.stale()  # before this call reads anything: what changed since the caller was shown it
    except Exception as exc:  # advisory: the window is still delivered
        warnings.append(f"could not check for stale files: {type(exc).__name__}: {exc}")
        stale = []
    pre_sources: list[Source] = []
    if use_preload:
        try:
            pre = ws.last_preload
            if pre is None:
                pre = ws.preload(cwd)
            warnings.extend(f"preload: {w}" for w in pre.warnings)
            pre_sources = preload_source(pre)
        except Exception as exc:  # tolerated: the window goes on without the prefix
            warnings.append(f"source preload failed: {type(exc).__name__}: {exc}")
        for s in stale:
            if s.get("kind") == "preload":
                warnings.append(f"preload: {s['path']} {s.get('change', 'changed')} since the prefix was rendered; refresh to re-render it")
        if pre_sources:
            room = int(cfg.available(budget) * PRELOAD_SHARE)
            text, note = _slim_preload(pre_sources[0].content, room, tok.count)
            if note:
                said.append(note)
                pre_sources = [Source(pre_sources[0].name, "preload", text)] if text.strip() else []

    found = None
    located = 0
    evidence: list[Source] = []
    candidates: list[tuple[str, str, int | None, str]] = []
    try:
        found = ws.locate(task, limit=FILES, file_tokens=False)
    except Exception as exc:
        from ..errors import QueryError

        if isinstance(exc, QueryError) and exc.fields.get("field") == "task":
            raise
        warnings.append(f"evidence: locate failed: {type(exc).__name__}: {exc}")
    if found is not None:
        located = found.total
        warnings.extend(f"evidence: {n}" for n in found.extra.get("notes", ()))
        nested = [i["path"] for i in getattr(found, "instructions", ()) or ()]
        evidence, candidates = _region_sources(ws, found, warnings, int(cfg.available(budget) * REGION_SHARE), tok.count)
        evidence = _nested(ws, nested, warnings) + evidence

    note_sources = [n if isinstance(n, Source) else note_source(n, name=f"notes:{k}") for k, n in enumerate(notes)]
    if use_notes:
        note_sources += _kept_notes(ws, task, warnings)
    base: list[Any] = [system_source(system)] if system else []
    base += [*pre_sources, *note_sources, *hist]
    if stale:  # as every result says it: files the caller was shown that changed since
        from ..render import stale_line

        base.append(Source("stale", "context", "".join(stale_line(s) + "\n" for s in stale), relevance=1.0, priority=200, label="stale (changed since shown)"))

    def window(next_text: str) -> Context:
        extra = [Source("read-next", "context", next_text, relevance=1.0, priority=100, label="read next (not in this window)")] if next_text else []
        return assemble([*base, *evidence, *extra, task_src], budget, config=cfg, tokenizer=tok, warnings=warnings)

    if found is None or not located:
        what = "no file matches the task's terms" if found is not None else "the task could not be located"
        return _with_located(window(f"{what}; nothing was located. Name a function, a file or a message the code prints.\n" + _said(said)), located, stale)
    # Room for the read-next block is held while the evidence is chosen: the
    # widest lines it could list, then what is really left out.
    widest = sorted(candidates, key=lambda c: -len(c[1]))
    held = _next_text(widest, _summary(len(candidates), 10**6, len(candidates), found, said, task))
    ctx = window(held)
    for _ in range(3):
        out = {e.source for e in ctx.evicted}
        left = [c for c in candidates if c[0] in out or c[0].startswith("ref:")]
        cost = sum(e.tokens for e in ctx.evicted if e.source.startswith("evidence:") and e.source != "evidence:")
        summary = _summary(len([c for c in left if not c[0].startswith("ref:")]), cost, len({c[3] for c in left}), found, said, task)
        text = _next_text(left, summary) if left or said or found.truncated else ""
        again = window(text)
        for most in (NEXT_LINES // 2, 1, 0):  # tight: fewer calls, then the line that says what is missing
            if "read-next" not in {e.source for e in again.evicted} or not text:
                break
            again = window(_next_text(left, summary, most) if summary or most else "")
        if {e.source for e in again.evicted} - {"read-next"} == out - {"read-next"}:
            return _with_located(again, located, stale)
        ctx = again
    return _with_located(ctx, located, stale)


def _kept_notes(ws, task: str, warnings: list[str]) -> list[Source]:
    """The kept notes the task matches (shared words), most shared first, as note sources."""
    import os

    from ..session.notes import words

    if not hasattr(ws, "note_store"):  # a stand-in workspace (tests, embedders)
        return []
    try:
        store = ws.note_store()
        if not os.path.exists(store.path):
            return []
        listed = ws.notes("list").results
    except Exception as exc:  # tolerated: the window goes on without them
        warnings.append(f"notes: could not be read: {type(exc).__name__}: {exc}")
        return []
    wanted = words(task) - _NOTE_STOP
    out = []
    for n in listed:
        have = words(n.text + " " + " ".join(p for p, _ in n.paths) + " " + " ".join(s for s, _ in n.symbols))
        shared = len(wanted & have)
        if not wanted or not shared:
            continue
        stale = "; ".join(f"{s.get('path') or s.get('symbol')} {s['change']}" for s in n.stale)
        label = f"note #{n.id}" + (f" (stale: {stale} since written)" if stale else "")
        out.append(note_source(n.text, name=f"notes:#{n.id}", relevance=min(1.0, shared / len(wanted)), timestamp=n.created, label=label))
    return out


_NOTE_STOP = frozenset({"the", "and", "for", "with", "fix", "add", "that", "this", "from", "into", "when", "not", "make", "use"})


def _said(said: list[str]) -> str:
    return "".join(f"{s}\n" for s in said)


def _summary(regions: int, tokens: int, files: int, found, said: list[str], task: str) -> str:
    from ..query import MAX_LOCATE

    parts = []
    if regions:
        parts.append(f"left out: {regions:,} region{'s' if regions != 1 else ''} ({tokens:,} tokens) from {files:,} file{'s' if files != 1 else ''}")
    more = found.total - len(found.results)
    if more > 0:
        # the call that lists them, in tool-argument syntax (a surface shows it in its own); a long task is not repeated
        again = call("locate", task=" ".join(task.split()), limit=MAX_LOCATE) if len(task) <= 120 else f"locate lists up to {MAX_LOCATE} with limit={MAX_LOCATE}"
        parts.append(f"{more:,} more matching file{'s' if more != 1 else ''} not ranked here ({again})")
    parts.extend(said)
    return "; ".join(parts) if parts else ""


def _with_located(ctx: Context, located: int, stale: list[dict] | None = None) -> Context:
    from dataclasses import replace

    return replace(ctx, located=located, stale=tuple(stale) if stale is not None else ctx.stale)
