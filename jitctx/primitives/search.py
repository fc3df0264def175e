"""grep: a validated SearchQuery -> FileRefs or LineRefs, whichever backend runs.

Owns what grep means to every surface (DESIGN sections 2-4): the query and
its checks, the scope (a directory or one file), glob filters, ordering by
path, paging (``offset``/``limit``), the three modes, context lines (merged,
each line once, clipped at file edges), windows around matches on very long
lines, the time cap, and notices that say what was cut, skipped or not
searched. These are shared so that both backends give the same results.
Does not own running a regex engine (``engines``), the file universe
(``repo``), the deny list (``policy``) or the session fields (``workspace``).
"""

from __future__ import annotations

import os
import stat as _stat
import time
from collections.abc import Callable
from dataclasses import replace

from .. import cancel
from ..errors import PathError, QueryError
from ..query import SearchQuery
from ..refs import LineRef, Result, Skipped, file_ref, mtime_of
from ..repo.policy import Opener, PathPolicy
from ..repo.universe import Repo
from ..text.globs import compile_glob
from ..text.lines import clean_line
from ..text.redact import KEY_MARK, Finding, key_block_lines, looks_like_key_body, redaction_note
from .engines import Spec
from .engines.scope import Scope, SearchBackend, read_lines
from .secrets import binary_match_shown, page_without, without_secret_matches

__all__ = ["LONG_LINE", "around_match", "search"]

LONG_LINE = 500  # chars; longer lines are shown as a window around the match


def pick_backend(name: str) -> SearchBackend:
    """``"rg"``, ``"python"``, or ``"auto"`` (rg when its binary is found)."""
    # imported on use: a grep loads one engine, and nothing else imports them
    from .engines import rg

    if name == "python":
        from .engines.py import PythonBackend

        return PythonBackend()
    exe = rg.find_rg()
    if exe is not None:
        return rg.RgBackend(exe)
    if name == "rg":
        raise QueryError(
            "backend 'rg' was asked for but the ripgrep binary was not found",
            hint="install the 'ripgrep' wheel (pip install ripgrep) or pass backend='python'",
            field="backend",
        )
    from .engines.py import PythonBackend

    return PythonBackend()


def _keep(globs: tuple[str, ...], prefix: str):
    """path -> whether the glob filters keep it (matched relative to the searched directory)."""
    if not globs:
        return lambda p: True
    pos = [compile_glob(g).match for g in globs if not g.startswith("!")]
    neg = [compile_glob(g[1:]).match for g in globs if g.startswith("!")]
    n = len(prefix)

    def keep(path: str) -> bool:
        rel = path[n:] if n and path.startswith(prefix) else path
        if pos and not any(m(rel) for m in pos):
            return False
        return not any(m(rel) for m in neg)

    return keep


# -- text shaping ---------------------------------------------------------------


def around_match(text: str, span: tuple[int, int] | None, width: int = LONG_LINE) -> str:
    """A line over ``width`` chars as a window around ``span``, naming what was omitted."""
    if len(text) <= width:
        return text
    s, e = span if span else (0, 0)
    s, e = max(0, min(s, len(text))), max(0, min(e, len(text)))
    room = max(width - (e - s), 0)
    left = max(0, s - room // 3)
    right = min(len(text), left + width)
    left = max(0, right - width) if right - left < width else left
    head = f"[… {left:,} chars] " if left else ""
    tail = f" [… {len(text) - right:,} chars]" if right < len(text) else ""
    return f"{head}{text[left:right]}{tail}"


def _clip(text: str) -> str:
    text = clean_line(text)
    return text if len(text) <= LONG_LINE else f"{text[:LONG_LINE]} [… {len(text) - LONG_LINE:,} more chars]"


# -- the search -------------------------------------------------------------------


def search(repo: Repo, policy: PathPolicy, q: SearchQuery, *, beside: Callable[[], object] | None = None) -> tuple[Result, list[str]]:
    """Run a grep; returns the result and the paths it shows. ``beside``: see ``Spec``."""
    target = policy.resolve(q.path, want="any")
    single = None
    if not target.is_dir:
        if not _stat.S_ISREG(target.st.st_mode):
            raise PathError(f"path {q.path!r} is not a regular file", path=q.path, reason="not_a_file")
        policy.resolve(q.path, want="file")  # raises PathError(reason="denied") for a denied file
        single = target.path
    scope_dir = target.path if target.is_dir else "."
    prefix = "" if scope_dir == "." else scope_dir + "/"
    spec = Spec(
        pattern=q.pattern,
        scope=scope_dir,
        file=single,
        fixed_strings=q.fixed_strings,
        ignore_case=q.ignore_case,
        multiline=q.multiline,
        include_ignored=q.include_ignored,
        keep=_keep(q.glob, prefix),
        has_filters=bool(q.glob),
        is_denied=policy.is_denied,
        deadline=time.monotonic() + q.timeout,
        cancel=cancel.current(),
        beside=beside,
    )
    scope = Scope(repo, policy, spec)
    # rg reads the ignore files itself: one git would block on (a FIFO) would block it too
    backend = pick_backend("python" if q.backend == "auto" and repo.blocking_rules() else q.backend)
    outcome = backend.count(scope)
    stats = _lstats(policy, outcome.counts)
    counts = _without_denied_links(policy, outcome.counts, stats)
    counts, hidden, cut = without_secret_matches(scope, backend, counts, stats)
    if single is not None and outcome.binary:
        outcome.binary = int(binary_match_shown(scope, single))
    # the page's files in order (every file has a match, so a page of lines needs no more than
    # offset + limit files): by path, stable pages for offset/limit; count mode most matches first, ties by path
    order = _first(counts, q.offset + q.limit, key=(lambda p: (-counts[p], p)) if q.mode == "count" else None)
    lines_total = sum(counts.values())
    skipped = list(outcome.skipped)
    timed_out = outcome.timed_out or cut
    replaced: list[str] = []
    ignored_flag = single is not None and bool(counts) and repo.is_ignored(single)

    notes: list[str] = []  # redactions the page made
    if q.mode == "content":
        results, cut, more_skipped, replaced = _content_page(scope, backend, q, order, counts, hidden, notes)
        if ignored_flag:  # named explicitly: served, and flagged as head and tail flag it
            results = [replace(r, ignored=True) for r in results]
        timed_out |= cut
        skipped += more_skipped
        total, unit = lines_total, "matching lines"
    else:
        results = []
        with policy.opener() as opener:
            for path in order[q.offset : q.offset + q.limit]:
                st = _listed_stat(opener, path, skipped)
                if st is not None:
                    results.append(file_ref(path, st, ignored=ignored_flag, matches=counts[path]))
        total, unit = len(counts), "files"

    res = Result("grep", results, total=total)
    if repo.notice:
        res.add_notice(repo.notice)
    if ignored_flag and q.mode == "content":
        res.add_notice(f"{single} is ignored by git; searched because it was named.")
    for note in notes:
        res.add_notice(note)
    res.extra["backend"] = backend.name
    res.extra["matching_files"] = len(counts)
    res.extra["matching_lines"] = lines_total
    skip_counts = {"binary": outcome.binary, "denied": outcome.denied, "ignored": None}
    if q.notice:
        res.add_notice(q.notice)
    where = f"in {single}" if single else (f"under {scope_dir}/" if prefix else "in the repository" if repo.is_git else "under the root")
    if total == 1:
        unit = unit[:-1]  # "1 file", "1 matching line"
    if timed_out:
        res.truncated = True
        res.add_notice(
            f"stopped at the time cap ({q.timeout:g} s): results are partial ({len(counts):,} matching file{'s' if len(counts) != 1 else ''} found so far) "
            f"and may not be in full path order; narrow with path=... or glob=..., or raise timeout."
        )
    if total == 0 and not timed_out:
        skip_counts = _explain_empty(scope, backend, q, outcome, res, where)
    elif q.offset and q.offset >= total and not timed_out:
        res.truncated = True
        res.add_notice(f"offset={q.offset:,} is past the end: {total:,} {unit} matched {where}; start again with offset=0.")
    elif q.offset + q.limit < total:
        res.truncated = True
        shown_to = q.offset + min(q.limit, total - q.offset)
        sorting = {"content": "by path, then line", "count": "most matches first"}.get(q.mode, "by path")
        res.add_notice(
            f"showing {q.offset + 1:,}-{shown_to:,} of {total:,} {unit} {where} ({sorting}); "
            f"next page: offset={q.offset + q.limit}; or narrow with path=... / glob=..., or raise limit."
        )
    if q.mode == "count" and counts and not res.truncated:
        res.add_notice(f"{lines_total:,} matching line{'s' if lines_total != 1 else ''} in {len(counts):,} file{'s' if len(counts) != 1 else ''}, most matches first.")
    if replaced:
        where_bad = ", ".join(replaced[:5]) + (", …" if len(replaced) > 5 else "")
        res.add_notice(f"invalid UTF-8 was replaced with U+FFFD in {len(replaced):,} shown line(s) or their context: {where_bad}.")
    if skipped:
        names = ", ".join(s.path for s in skipped[:5]) + (", …" if len(skipped) > 5 else "")
        res.add_notice(f"{len(skipped):,} file(s) vanished or could not be read and were skipped: {names}.")
    res.extra["skipped"] = {**skip_counts, "unreadable": len(skipped)}
    if skipped:
        res.extra["skipped_files"] = [s.to_dict() for s in skipped]
    shown = list(dict.fromkeys(r.path for r in results))
    return res, shown


def _lstats(policy: PathPolicy, counts: dict[str, int]) -> dict[str, os.stat_result]:
    """Each matching file's own ``lstat`` (gone since: left out; the page says so when it reaches it)."""
    root = str(policy.root)
    stats = {}
    for path in counts:
        try:
            st = os.lstat(f"{root}/{path}")
        except OSError:
            continue
        if _stat.S_ISREG(st.st_mode):
            stats[path] = st
    return stats


def _without_denied_links(policy: PathPolicy, counts: dict[str, int], stats: dict[str, os.stat_result]) -> dict[str, int]:
    """``counts`` without the files that are a hard link to a denied file (DESIGN 2). rg
    searches any file its walk names, so a second name of ``.env`` would be counted: in
    every mode the totals would confirm or deny a pattern, byte by byte, on a file never
    shown (the python backend reads through the opener, which refuses them). The walk
    for denied files' inodes runs only when a matching file has several names."""
    drop = {path for path, st in stats.items() if st.st_nlink > 1 and policy.is_denied_inode(st)}
    return {p: n for p, n in counts.items() if p not in drop} if drop else counts


def _first(counts: dict[str, int], k: int, *, key: Callable[[str], object] | None = None) -> list[str]:
    """The first ``k`` paths of ``counts`` in order (by path, or by ``key``).

    A heap when the page is small against the matches: 105k matching files
    and a page of 100 take 3.6 ms instead of 27 ms to sort them all.
    """
    if k * 4 < len(counts):
        import heapq

        return heapq.nsmallest(k, counts, key=key)  # type: ignore[arg-type]
    return sorted(counts, key=key)[:k]  # type: ignore[arg-type]


def _listed_stat(opener: Opener, path: str, skipped: list[Skipped]) -> os.stat_result | None:
    """A result's size and mtime: its own (no symlink followed on the way), or
    ``None`` with the file skipped (gone, or no longer a regular file)."""
    try:
        st = opener.lstat(path)
    except OSError:
        skipped.append(Skipped(path, "vanished"))
        return None
    if not _stat.S_ISREG(st.st_mode):
        skipped.append(Skipped(path, "vanished"))
        return None
    if st.st_nlink > 1 and opener.denied_inode is not None and opener.denied_inode(st):
        return None  # a hard link to a denied file: nothing of it, not even its match count, is shown
    return st


def _explain_empty(scope: Scope, backend, q: SearchQuery, outcome, res: Result, where: str) -> dict:
    """An empty result says what was searched and what was not (DESIGN 3):
    counted where the search pass itself yields the count, else named as a
    class with the call that widens the search. An empty grep costs no extra
    walk: no second rg pass for binary files, no git walk for the untracked
    or ignored ones (docs/design.md, grep: "What an empty result says")."""
    spec = scope.spec
    binary = outcome.binary
    if spec.file is not None:
        res.add_notice(f"no matches for {q.pattern!r} {where}" + (" (it is binary and contains the pattern; binary files are not shown)." if binary else "."))
        return {"binary": binary, "denied": 0, "ignored": None}
    kinds = "files (all, ignored ones included)" if q.include_ignored else "tracked and untracked-not-ignored files" if scope.repo.is_git else "files not ignored by .gitignore"
    if outcome.files_searched == 1:
        kinds = kinds.replace("files", "file", 1)
    searched = f"{outcome.files_searched:,} {kinds} searched" if outcome.files_searched is not None else f"searched the {kinds}"
    parts = [] if q.include_ignored else ["ignored files (include_ignored=true widens)"]
    if binary is not None:
        parts.append(f"{binary:,} binary file{'s' if binary != 1 else ''} containing the pattern")
    else:
        parts.append("binary files (a NUL byte in the text)")
    if outcome.denied is None:
        parts.append("files denied by policy")
    elif outcome.denied_tracked_only:
        parts.append(f"{outcome.denied:,} denied by policy (tracked; untracked ones not counted)")
    else:
        parts.append(f"{outcome.denied:,} denied by policy")
    filters = f" (glob filters {', '.join(map(repr, q.glob))})" if q.glob else ""  # no key=value: read alike on every surface
    res.add_notice(f"no matches for {q.pattern!r} {where}{filters}: {searched}; not searched: {', '.join(parts)}.")
    return {"binary": binary, "denied": outcome.denied, "ignored": None}


def _content_page(scope: Scope, backend, q: SearchQuery, order: list[str], counts: dict[str, int], hidden: dict[str, frozenset[int]], notes: list[str]):
    """The matching lines offset .. offset+limit, with merged context; ``hidden``: the
    matching lines that are no match (``secrets``)."""
    lo, hi = q.offset, q.offset + q.limit
    wanted: list[tuple[str, int, int]] = []  # path, first index in file, end index (exclusive)
    seen = 0
    for path in order:
        n = counts[path]
        if seen + n > lo and seen < hi:
            wanted.append((path, max(lo - seen, 0), min(hi - seen, n)))
        seen += n
        if seen >= hi:
            break
    if not wanted:
        return [], False, [], []
    upto = max(end for _, _, end in wanted)
    # one match past the page: a context line after its last match must not be the next match
    upto += max((len(h) for h in hidden.values()), default=0)
    found, skipped, cut = backend.lines(scope, [p for p, _, _ in wanted], upto + 1 if q.after else upto)
    found = page_without(found, hidden)
    with scope.policy.opener() as opener:
        results, replaced = _page_lines(opener, q, wanted, found, skipped, notes)
    return results, cut, skipped, replaced


def _page_lines(opener: Opener, q: SearchQuery, wanted: list[tuple[str, int, int]], found: dict, skipped: list[Skipped], notes: list[str]) -> tuple[list[LineRef], list[str]]:
    """LineRefs for the page, context lines read through ``opener``; a
    redaction's notice goes to ``notes``."""
    results: list[LineRef] = []
    replaced: list[str] = []  # path:line of results whose text (or context) held invalid UTF-8
    for path, first, end in wanted:
        matches = found.get(path, [])
        if not matches:
            continue
        st = _listed_stat(opener, path, skipped)
        if st is None:
            continue
        page = matches[first:end]
        read = read_lines(opener, path) if (q.before or q.after or any(looks_like_key_body(m.text) for m in page)) else None
        text_lines, bad = read if read is not None else (None, set())
        in_keys = key_block_lines(text_lines) if text_lines is not None else set()
        match_lines = [m.line for m in matches]
        shown_upto = 0  # last line already shown on this page (merged context)
        for i, m in enumerate(page):
            before: list[dict] = []
            after: list[dict] = []
            if text_lines is not None:
                # context stops at the neighbouring matches (shown on this page or
                # another), so each line is shown once and never as context
                idx = first + i
                prev = match_lines[idx - 1] if idx > 0 else 0
                nxt = match_lines[idx + 1] if idx + 1 < len(match_lines) else len(text_lines) + 1
                start = max(1, m.line - q.before, prev + 1, shown_upto + 1)
                before = [{"line": k, "text": _clip(text_lines[k - 1])} for k in range(start, m.line) if k <= len(text_lines)]
                stop = min(len(text_lines), m.line + q.after, nxt - 1)
                after = [{"line": k, "text": _clip(text_lines[k - 1])} for k in range(m.line + 1, stop + 1)]
            shown_upto = after[-1]["line"] if after else m.line
            if m.replaced or any(c["line"] in bad for c in (*before, *after)):
                replaced.append(f"{path}:{m.line}")
            text = clean_line(around_match(m.text, m.spans[0] if m.spans else None))
            if in_keys:  # a line inside a private-key block, seen without its BEGIN line
                hidden = sorted(k for k in (m.line, *(c["line"] for c in (*before, *after))) if k in in_keys)
                if hidden:
                    notes.append(redaction_note(path, [Finding(k, "private key") for k in hidden]))
                text = KEY_MARK if m.line in in_keys else text
                before = [{**c, "text": KEY_MARK} if c["line"] in in_keys else c for c in before]
                after = [{**c, "text": KEY_MARK} if c["line"] in in_keys else c for c in after]
            results.append(LineRef(path, st.st_size, mtime_of(st), m.line, text, tuple(before), tuple(after)))
    return results, replaced
