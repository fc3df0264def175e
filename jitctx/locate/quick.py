"""The first answer to a task on a tree with no index yet: grep, read the likeliest files, rank.

Owns ``quick_locate``, the index-free first pass of task retrieval: an answer
within a deadline (issue 23: under 3 s on a 101k-file tree) that never waits
for the index build. It returns the ``locate.Located`` that ``locate.locate``
returns, so ``locate.to_result`` and every surface show it unchanged. Does
not own the task's terms, file roles, priors, regions or the envelope
(``locate``), what a word is (``code.words``), the file universe, the deny
list or the search engine (``search``: one grep through its usual path, so
denied, ignored and out-of-root files are left out exactly as grep leaves them
out), reading files (the caller's ``read``, its safe-open seam) nor parsing
(``code.outline``).

The pass, each step stopping at its share of the deadline:

1. Candidates: one case-insensitive grep count of the task's terms as an
   alternation (a substring match, so ``handshake`` is found inside
   ``sslHandshakeTimeout``), the universe listed beside it for its size.
2. IDF: a term's document frequency estimated from an even sample of the
   matching files (``_idf_estimates`` says why that is good enough).
3. Term counts: the likeliest ``READ_MAX`` files by what grep tells
   (``_likely``) are read (fewer when time runs short) and each term counted
   as a whole word by ``code.words``, the rule the index uses; BM25 over those
   counts and the path's words, as the index's ``bm25()`` computes it.
4. Re-scoring as ``locate.rank`` does it: role and size priors, path words,
   path cues and, for the code-like names of the task, a "defines X" bonus
   from tree-sitter outlines of the best few candidates holding the name
   (never a parse of the whole tree).
5. Regions of the shown files by ``locate.regions``, on those outlines.

Each step is cut by work (files, bytes: ``SAMPLE``, ``READ_MAX``,
``READ_BYTES``, ``OUTLINE_MAX``), so on a tree where that work fits the
deadline the answer is the same however fast the machine is (issue 33).
The clock is a safety net: what a step had no time for is left out and the
answer says so, and where ("cut by time, so another call may answer
otherwise: the grep ... stopped at its time cap ... with N matching files;
K of the M likeliest matching files read; ..."): fewer files read, fewer
outlines, shown files without regions or prices (a step overruns its share
by one file's work at most). A grep that runs to the end over the whole tree
would make every answer the same, but on a busy two-core machine it alone
took 3-5 s on the 101k-file tree, over the first answer's 3 s. Files over
``MAX_BYTES`` are no candidates, as the index leaves them out.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable

from ..code import words as W
from ..code.outline import Definition, outline
from ..code.parse import language_for, warm
from ..code.refresh import MAX_BYTES  # larger files are no candidates: the index leaves them out
from ..code.rows import ascii_lower
from ..primitives.search import search
from ..query import MAX_LIMIT, SearchQuery
from ..repo.policy import PathPolicy
from ..repo.universe import Repo
from . import answer as A
from . import evidence as E
from . import rank as L
from . import roles as R
from . import terms as T
from . import weights as K
from .evidence import Candidate
from .rank import idf_of

__all__ = ["BUDGET", "MAX_BYTES", "READ_MAX", "quick_locate"]

BUDGET = 2.5  # seconds from the call when no deadline is given
READ_MAX = 300  # candidates read for exact term counts at most
READ_BYTES = 24 * 1024 * 1024  # ... and bytes read at most: the pass is cut by work, the clock is a safety net
SAMPLE = 100  # matching files read evenly spread, for the terms' document frequencies
OUTLINE_MAX = 12  # candidates outlined for "defines X" at most (the shown files' outlines come on top)
LIST_MIN = 1.0  # a smaller budget skips listing the universe (~0.3 s for 100k files): the matching files stand for it
GREP_SHARE, READ_SHARE, OUTLINE_SHARE = 0.6, 0.75, 0.85  # of the budget: where grep, reading and outlines stop (a cut grep misses whole folders)
K1, B = 1.2, 0.75  # bm25() constants, FTS5's

_Counts = dict[str, tuple[int, Counter[str]]]  # path -> (bytes read, its task terms' counts)


def quick_locate(
    repo: Repo,
    policy: PathPolicy,
    task: str,
    *,
    read: Callable[[str], tuple[bytes, float] | None],
    repo_name: str = "",
    limit: int = 10,
    count: Callable[[str], int] | None = None,
    deadline: float | None = None,
    file_tokens: bool = True,
    universe: int | None = None,
) -> A.Located:
    """Rank the files of ``repo`` for ``task`` without an index, by ``deadline``
    (``time.monotonic()`` seconds; default ``BUDGET`` from the call). ``read``,
    ``repo_name``, ``limit``, ``count`` and ``file_tokens`` as for ``locate.locate``;
    the same ``QueryError`` for a task without words. ``universe``: how many files
    the repository holds, when the caller has listed them (else they are listed
    beside the grep)."""
    start = time.monotonic()
    budget = max((start + BUDGET if deadline is None else deadline) - start, 0.0)
    end = start + budget
    terms = T.task_terms(task, repo_name=repo_name)
    notes = A.task_notes(task, terms)
    timed: list[str] = []  # where the clock, not the work, cut the pass: said in the answer (its ranking may differ from the next call's)

    grep_end = start + budget * GREP_SHARE
    q = SearchQuery.make(pattern="|".join(map(re.escape, terms.weights)), mode="count", ignore_case=True, limit=MAX_LIMIT, timeout=max(grep_end - time.monotonic(), 0.001))
    listed = [universe] if universe is not None else []

    def beside() -> None:  # while rg runs: tree-sitter's import, and the universe's size for the IDF
        warm()
        if not listed and budget >= LIST_MIN and repo.is_git and not repo.blocking_rules():  # git lists fast; a walk would not be
            listed.append(len(repo.files()))

    res, _ = search(repo, policy, q, beside=beside)
    grep_cut = res.truncated and "stopped at the time cap" in (res.notice or "")  # grep's own words for it (a test holds them)
    if grep_cut:
        timed.append(f"the grep for candidates stopped at its time cap ({q.timeout:.3g} s) with {res.total:,} matching files, so another call may rank others")
    refs = [r for r in res.results if r.size <= MAX_BYTES]
    matched = {r.path: r.size for r in refs}
    path_words = {p: _path_words(p, terms) for p in matched}
    content_only = {t for t in terms.weights if len(matched) >= 20 and sum(t in w for w in path_words.values()) > K.UNIVERSAL_PATH * len(matched)}

    read_end = start + budget * READ_SHARE  # a safety net: the reading is cut by work (files, bytes) first
    counted: _Counts = {}
    spent = [0]  # bytes read

    def take(path: str) -> None:
        if path not in counted and (got := read(path)) is not None:
            counted[path] = (len(got[0]), _frequencies(got[0], terms.weights))
            spent[0] += len(got[0])

    sample = list(matched)[:: max(1, len(matched) // SAMPLE)][:SAMPLE]  # grep's order: most matching lines first
    asked = 0  # files meant to be read, by the work bounds
    for path in sample:
        if spent[0] >= READ_BYTES:
            break
        asked += 1
        if time.monotonic() >= read_end:
            break
        take(path)
    idf = _idf_estimates(terms, counted, sample, path_words, res.total, listed[0] if listed else 0)
    likely = _likely(refs, _path_shares(path_words, terms, idf, content_only), terms)
    clock = False
    for path in likely[:READ_MAX]:
        if spent[0] >= READ_BYTES:
            break
        if path in counted:
            continue
        asked += 1
        if time.monotonic() >= read_end:
            clock = True
            break
        take(path)
    clock = clock or len(counted) < min(asked, len(matched)) and time.monotonic() >= read_end
    idf = _idf_estimates(terms, counted, sample, path_words, res.total, listed[0] if listed else 0)  # again: terms the sample missed
    found = _bm25(counted, matched, path_words, terms, idf, content_only)
    if clock:
        timed.append(f"{len(counted):,} of the {min(len(likely), READ_MAX):,} likeliest matching files read")
    if not counted and likely:  # none could be read (in time): grep's counts alone
        notes.append(f"a first pass without the index: none of the {res.total:,} matching files could be read, so they are in the order grep's counts suggest")
        found = {p: Candidate(p, 1.0 / (1 + i), matched[p], R.file_role(p)) for i, p in enumerate(likely[:limit])}
    elif len(counted) < len(matched):
        notes.append(f"a first pass without the index: ranked the {len(counted):,} likeliest of {res.total:,} matching files")

    outlines: dict[str, tuple[Definition, ...]] = {}
    shares = _path_shares(path_words, terms, idf, content_only)

    def share(c: Candidate) -> float:
        return shares.get(c.path, 0.0)

    E.name_bonus(found.values(), terms, idf)
    L.rescore(found.values(), terms, share)
    left = _defines(found, counted, terms, read, outlines, start + budget * OUTLINE_SHARE)
    if left:
        timed.append(f"{left} candidate{'s' if left != 1 else ''} holding a name of the task not outlined")
    ordered = L.rescore(found.values(), terms, share)

    def definitions(path: str, data: bytes) -> tuple[Definition, ...]:
        if path not in outlines:
            outlines[path] = _outline(path, data)
        return outlines[path]

    shown: list[str] = []
    files = A.show(ordered[:limit], terms, idf, read, definitions, count=count, file_tokens=file_tokens, end=end, notes=shown)
    timed.extend(n.removesuffix(": the time ran out") for n in shown)
    if timed:
        notes.append("cut by time, so another call may answer otherwise: " + "; ".join(timed))
    return A.Located(tuple(files), res.total, terms, "; ".join(notes) or None, cut=grep_cut)


def _path_words(path: str, terms: T.TaskTerms) -> Counter[str]:
    """The task's terms among the path's words (a path holding none as a substring is not split)."""
    low = path.lower()
    if not any(t in low for t in terms.weights):
        return Counter()
    return Counter(t for t in W.path_terms(path).split() if t in terms.weights)


def _frequencies(data: bytes, wanted: dict[str, int]) -> Counter[str]:
    """How often each of ``wanted`` occurs in ``data`` as a word (``code.words``' rule).
    Only the lines holding a term as a substring (ASCII case folded) are split, as
    grep matched them: a word is a substring of its line, and most lines hold none.
    (A term with upper-case non-ASCII letters in the file is missed: a first pass.)"""
    low = data.lower()
    spans: set[tuple[int, int]] = set()
    for term in wanted:
        needle = term.encode()
        at = low.find(needle)
        while at != -1:
            stop = low.find(b"\n", at)
            stop = len(low) if stop == -1 else stop
            spans.add((low.rfind(b"\n", 0, at) + 1, stop))
            at = low.find(needle, stop)
    tf: Counter[str] = Counter()
    for a, b in spans:
        tf.update(w for w in W.words(data[a:b].decode("utf-8", "replace")) if w in wanted)
    return tf


def _idf_estimates(terms: T.TaskTerms, counted: _Counts, sample: list[str], path_words: dict[str, Counter[str]], matching: int, universe: int) -> dict[str, float]:
    """Each term's IDF, by ``locate.rank``'s formula, from estimated counts.

    Every file holding a term as a word matched the grep, so a term's document
    frequency is the share of the matching files that hold it, counted in an
    even sample of them (smoothed by half a file), times their number; never
    below the files seen holding it. The documents are the universe's files
    (the matching ones when it was not listed). Why that is good enough for a
    first answer: IDF only has to tell the task's rare words from its common
    ones, and a hundred files drawn across the candidates do; a rare word's
    estimate is coarse (a share under 1%), but any rare word weighs several
    times a common one, as in the index. The files read for ranking would not
    do: they are the ones richest in every term, so each term looks common
    (measured on a 100k-file tree: ``copy`` 0.25 and ``loses`` 5.3 from them,
    2.0 and 5.7 from the sample, 2.2 and 8.0 in the index).
    """
    seen = [counted[p][1] for p in sample if p in counted]
    in_paths = Counter(t for words in path_words.values() for t in words)
    documents = max(universe, matching, 1)
    idf: dict[str, float] = {}
    for t in terms.weights:
        held = max(sum(1 for _, tf in counted.values() if tf[t]), in_paths[t])
        if held:
            share = (sum(1 for tf in seen if tf[t]) + 0.5) / (len(seen) + 1)
            idf[t] = idf_of(documents, min(max(round(share * matching), held), documents))
    return idf


def _path_shares(path_words: dict[str, Counter[str]], terms: T.TaskTerms, idf: dict[str, float], content_only: set[str]) -> dict[str, float]:
    """path -> the share of the task's weight (times IDF) that its path's words carry (left out: none)."""
    weight = {t: w * idf.get(t, 0.0) for t, w in terms.weights.items()}
    mass = sum(weight.values()) or 1.0
    return {p: sum(weight[t] for t in words if t not in content_only) / mass for p, words in path_words.items() if words}


def _likely(refs: list, shares: dict[str, float], terms: T.TaskTerms) -> list[str]:
    """The matching files, likeliest first, from what grep tells alone: matching lines
    saturating against the file's size (BM25's shape, every term as one), the share
    of the task's weight its path words carry (weighing ``PATH_WEIGHT``), a path cue,
    the role and size priors."""
    if not refs:
        return []
    mean = sum(r.size for r in refs) / len(refs) or 1.0
    scored = []
    for r in refs:
        m = r.matches or 0
        density = m / (m + K1 * (1 - B + B * r.size / mean))
        cue = K.CUE_BONUS if L.cued(r.path, terms) else 0.0
        prior = L.prior(Candidate(r.path, 0.0, r.size, R.file_role(r.path)), terms)
        scored.append((-prior * (density + K.PATH_WEIGHT * shares.get(r.path, 0.0) + cue), r.path))
    return [p for _, p in sorted(scored)]


def _bm25(counted: _Counts, sizes: dict[str, int], path_words: dict[str, Counter[str]], terms: T.TaskTerms, idf: dict[str, float], content_only: set[str]) -> dict[str, Candidate]:
    """The files read, scored by BM25 as the index's ``bm25()`` does it (path words
    weigh ``PATH_WEIGHT``; saturating frequency, capped as the index caps it), a file's length in bytes against
    the matching files' mean rather than in words (BM25 reads only the ratio)."""
    mean = sum(sizes.values()) / (len(sizes) or 1) or 1.0
    found: dict[str, Candidate] = {}
    for path, (_, tf) in counted.items():
        norm = K1 * (1 - B + B * sizes[path] / mean)
        score = 0.0
        for t, w in terms.weights.items():
            f = min(tf[t], W.TF_CAP) + (0.0 if t in content_only else K.PATH_WEIGHT * path_words[path][t])
            if f:
                score += w * idf[t] * f * (K1 + 1) / (f + norm)
        if score > 0:
            found[path] = Candidate(path, score, sizes[path], R.file_role(path))
    return found


def _outline(path: str, data: bytes) -> tuple[Definition, ...]:
    language = language_for(path, data[:8192])
    return outline(language, data).definitions if language else ()


def _named(d: Definition, name: str) -> bool:
    """Whether ``d`` is ``name``, as the index's exact and qualified tiers match (smart case)."""
    if ascii_lower(name) != name:
        return d.name == name or d.qualname == name or ("." in name and d.qualname.endswith("." + name))
    q = ascii_lower(d.qualname)
    return ascii_lower(d.name) == name or q == name or ("." in name and q.endswith("." + name))


def _defines(found: dict[str, Candidate], counted: _Counts, terms: T.TaskTerms, read: Callable, outlines: dict[str, tuple[Definition, ...]], until: float) -> int:
    """Give the candidates that define a code-like name of the task ``locate.rank``'s
    symbol bonus. Outlined: the best ``OUTLINE_MAX`` by the score so far among those
    in a known language holding the name's words (the whole form of each of its
    parts), until ``until``; returns how many of those were left for lack of time."""
    needs = {n: {w for part in re.split(r"\.|::|->", n) if (w := W.split(part)[0]) in terms.weights} for n in terms.names}
    needs = {n: ws for n, ws in needs.items() if ws}
    none: Counter[str] = Counter()
    ranked = sorted(found.values(), key=lambda c: (-c.score, c.path))
    holders = [c for c in ranked if language_for(c.path) and any(all(counted.get(c.path, (0, none))[1][w] for w in ws) for ws in needs.values())][:OUTLINE_MAX]
    hits: dict[str, list[tuple[Candidate, Definition]]] = {}
    for i, c in enumerate(holders):
        if time.monotonic() >= until:
            return len(holders) - i
        got = read(c.path)
        outlines[c.path] = _outline(c.path, got[0]) if got is not None else ()
        for name in needs:
            hits.setdefault(name, []).extend((c, d) for d in outlines[c.path] if _named(d, name))
    for name, pairs in hits.items():
        share = K.SYMBOL_BONUS / math.sqrt(len({c.path for c, _ in pairs}) or 1)
        for c, d in pairs:
            if name not in c.symbols:
                c.symbols.append(name)
                c.bonus += share
            c.definitions.append((d, name))
    return 0
