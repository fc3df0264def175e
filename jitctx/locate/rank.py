"""Task retrieval: which files, and which regions inside them, a task is about.

Owns ranking the repository's files for a task's terms (``rank``: the
lexical query, then the evidence, then ``rescore``: priors, path cues and
path words) and ``locate``, which ranks and hands the best to the answer
(``answer.show``). Does not own the weights (``weights``), a file's role
(``roles``), gathering the evidence (``evidence``), the answer and its
envelope (``answer``), turning the task into terms (``terms``), scoring a
file's regions (``regions``), reading a file's lines for names
(``mentions``), the index (``code.index``: its FTS5 store and symbol
lookup), what the words of a file are (``code.words``, the same rule on both
sides), reading files (the caller's ``read``, its safe-open seam) nor any
surface.

The ranking, in order (docs/design.md "Task retrieval" says why):

1. Terms (``taskterms.task_terms``): the task's identifiers, folded and split
   as the index stores files, stop words dropped, code-like names and the
   task's area weighing more.
2. Files. One FTS5 query over every file's path and content sub-words,
   ranked by BM25 (``bm25()``: IDF, term frequency, document length), path
   words weighing ``PATH_WEIGHT`` times content words; a term's weight is
   its repetitions in the query; a word in more than a quarter of the paths
   counts in content only. The best ``CANDIDATES`` are then re-scored:
   a definition named exactly as a code-like task word adds a strong bonus
   (split among the files defining it), a path cue in the task (``lib/vtls``)
   adds one, and tests, docs and other non-source files are scaled down
   unless the task is about them, vendored code unless the task names it.
   A few files' lines are read (``mentions``): a name table binding a rare
   task word to a function credits that function's file; a task about
   importing, exporting or registering a name credits the files listing it;
   a constant no definition names credits the file declaring it; a generated
   file beside its source and a stub beside its module are scaled down.
3. Regions (``regions.regions``): in each file shown, the best definitions
   or line windows for the task's terms.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..code import words as W
from . import pointers as P
from .answer import Located, reader, show, task_notes
from .evidence import Candidate, bind, candidate, credit, declared, definitions, hubs, listed, name_bonus, paired, quote
from .regions import REGIONS, SCORE_DIGITS
from .roles import file_role
from .terms import TaskTerms, task_terms
from .weights import (
    CANDIDATES,
    CUE_BONUS,
    HUB_CHECK,
    JOIN_DF,
    PAIR_CHECK,
    PATH_BONUS,
    PATH_WEIGHT,
    POINT_CAP,
    PROPER_FILES,
    ROLE_PRIOR,
    ROLE_PRIOR_ASKED,
    SIZE_PRIOR,
    SYMBOL_BONUS,
    UNIVERSAL_PATH,
    VENDOR_DIRS,
    VENDOR_PRIOR,
)

__all__ = ["cued", "idf_of", "locate", "prior", "rank", "rescore", "vendored"]


def _expression(weights: dict[str, int], content_only: set[str]) -> str:
    parts = []
    for term, weight in weights.items():
        phrase = ("content_terms : " if term in content_only else "") + quote(term)
        parts.extend([phrase] * weight)
    return " OR ".join(parts)


def idf_of(documents: int, docs: int) -> float:
    """A term's inverse document frequency (FTS5's bm25 form)."""
    return math.log(1.0 + (documents - docs + 0.5) / (docs + 0.5))


def rank(index, terms: TaskTerms, text_of: Callable[[str], str | None] | None = None) -> tuple[list[Candidate], dict[str, float], int]:
    """Candidate files best first, each term's IDF, and how many files matched.
    ``text_of(path)``: a file's text (None: unreadable); without it no line is read
    (no name tables, listings or generated files are recognised)."""
    documents, counts = index.term_counts([*terms.weights, *terms.joins])
    weights = {t: w for t, w in terms.weights.items() if t in counts}
    weights |= {t: w for t, w in terms.joins.items() if t in counts and counts[t][1] <= max(JOIN_DF * documents, 20)}  # "man page": ``manpage``
    idf = {t: idf_of(documents, max(counts[t])) for t in weights}
    content_only = {t for t in weights if documents >= 20 and counts[t][0] > UNIVERSAL_PATH * documents}
    found: dict[str, Candidate] = {}
    if weights:
        for path, score, size, is_test in index.search(_expression(weights, content_only), weights=(PATH_WEIGHT, 1.0), limit=CANDIDATES):
            found[path] = Candidate(path, score, size, "test" if is_test else file_role(path))
    # exact definitions of the code-like names the task gives; of its capitalised words, those
    # the code defines in a few files only (``Factory``: a class; ``The``, ``Fix``: none)
    undefined = []
    for name in (*terms.names, *terms.proper):
        proper = name in terms.proper
        hits = definitions(index, name, exact_name=proper)
        files = list(dict.fromkeys(h.path for h in hits))
        if not hits and not proper:
            undefined.append(name)
        if not hits or (proper and len(files) > PROPER_FILES):
            continue
        credit(index, found, hits, name, SYMBOL_BONUS / math.sqrt(len(files)))
    for p in P.point(index, terms.report, text_of, file_role):  # frames, paths, messages, options (issue 31)
        c = candidate(index, found, p.path)
        c.point += p.bonus
        c.pointed.append(p.why)
        c.lines.extend(p.lines)
    mass = sum(w * idf[t] for t, w in weights.items()) or 1.0
    if text_of is not None:
        declared(index, undefined, found, text_of)
        bind(index, terms, found, {t: (counts[t][1], w * idf[t] / mass) for t, w in weights.items()}, documents, text_of)
        if terms.lists:
            listed(index, terms, found, text_of)
    name_bonus(found.values(), terms, idf)

    shares: dict[str, float] = {}  # a rescore after ``hubs`` asks again

    def path_share(c: Candidate) -> float:
        if c.path not in shares:
            in_path = set(W.path_terms(c.path).split())
            shares[c.path] = sum(w * idf[t] for t, w in weights.items() if t in in_path and t not in content_only) / mass
        return shares[c.path]

    ordered = rescore(found.values(), terms, path_share)
    if text_of is not None and hubs(index, ordered[:HUB_CHECK], terms, text_of, found):
        ordered = rescore(found.values(), terms, path_share)
    if paired(index, ordered[:PAIR_CHECK], found):
        ordered = rescore(found.values(), terms, path_share)
    return ordered, idf, len(found)


def prior(c: Candidate, terms: TaskTerms) -> float:
    """The file's prior: its role's (raised when the task asks for tests or docs; lowered
    for vendored code, ``vendored``), times a log-size prior."""
    p = ROLE_PRIOR[c.role]
    if (c.role == "test" and terms.tests) or (c.role == "doc" and terms.docs):
        p = max(p, ROLE_PRIOR_ASKED[c.role])
    if vendored(c.path, terms):
        p *= VENDOR_PRIOR
    return p * (1.0 + SIZE_PRIOR * math.log1p(c.size / 4096))


def vendored(path: str, terms: TaskTerms) -> bool:
    """Whether ``path`` is another project's code kept in the tree (under ``deps/``,
    ``vendor/``, ``third_party/``...) that the task does not name: neither the folder
    it is kept in (``jemalloc`` of ``deps/jemalloc/``) nor one below is a task term."""
    folders = path.split("/")[:-1]
    for i, folder in enumerate(folders):
        if folder.lower() in VENDOR_DIRS:
            below = {t for f in folders[i + 1 :] for t in W.split(f)}
            return not (below & terms.weights.keys())
    return False


def cued(path: str, terms: TaskTerms) -> bool:
    """Whether ``path`` lies under a folder the task names."""
    return any(("/" + cue + "/") in ("/" + path) or path.startswith(cue) for cue in terms.cues)


def rescore(found: Iterable[Candidate], terms: TaskTerms, path_share: Callable[[Candidate], float]) -> list[Candidate]:
    """Score each candidate ``prior × (bm25 / best + symbol bonus + path cue + path words)``
    (``path_share``: the share of the task's weight its path's words carry); best first."""
    found = list(found)
    top = max((c.lexical for c in found), default=0.0) or 1.0
    for c in found:
        bonus = min(c.bonus, 2 * SYMBOL_BONUS) + min(c.point, POINT_CAP)
        c.score = c.hub * prior(c, terms) * (c.lexical / top + bonus + (CUE_BONUS if cued(c.path, terms) else 0.0) + PATH_BONUS * path_share(c))
        c.score = max(c.score, c.floor)
    return sorted(found, key=lambda c: (-round(c.score, SCORE_DIGITS), c.path))


def locate(
    index,
    task: str,
    *,
    read: Callable[[str], tuple[bytes, float] | None],
    repo_name: str = "",
    limit: int = 10,
    count: Callable[[str], int] | None = None,
    regions_per_file: int = REGIONS,
    file_tokens: bool = True,
) -> Located:
    """Rank the files of ``index`` for ``task`` and pick each shown file's regions.

    ``read(path) -> (data, mtime) | None``: the file's bytes through the
    caller's safe-open seam (None: unreadable now, listed without regions).
    ``count(text) -> tokens`` prices regions and files (None: not priced).
    ``repo_name``: the repository's own name, never evidence.
    ``file_tokens``: price whole files too (regions always are).
    """
    terms = task_terms(task, repo_name=repo_name)
    read, text_of = reader(read)
    ordered, idf, total = rank(index, terms, text_of)
    if joined := {t: w for t, w in terms.joins.items() if t in idf}:  # searched: its regions and why count it too
        terms = replace(terms, weights={**terms.weights, **joined})
    notes = task_notes(task, terms)
    files = show(
        ordered[:limit],
        terms,
        idf,
        read,
        lambda path, data: index.definitions(path),
        count=count,
        file_tokens=file_tokens,
        regions_per_file=regions_per_file,
        notes=notes,
        text_of=text_of,
    )
    return Located(tuple(files), total, terms, "; ".join(notes) or None)
