"""Task retrieval: which files, and which regions inside them, a task is about.

Owns turning a task into weighted search terms (``task_terms``), ranking the
repository's files for them (``rank``) and picking the regions that matter
inside the best files (definitions from the index, or line windows where the
terms concentrate), each with why it was chosen and what it costs in tokens.
Does not own the index (``code.index``: its FTS5 store and symbol lookup),
what the words of a file are (``code.words``, the same rule on both sides),
reading files (the caller's ``read``, its safe-open seam) nor any surface.

The ranking, in order (docs/design.md "Task retrieval" says why):

1. Terms. Every identifier of the task becomes its folded whole form and its
   sub-words (``einsum_path`` -> ``einsumpath einsum path``), as the index
   stores files. English and commit-message stop words, pure numbers, one
   letter words and the repository's own name are dropped. Names that look
   like code (``snake_case``, ``camelCase``, ``a.b``, ``f()``, in backticks,
   ``--option``) weigh 3, other words 1; the words of the area a task
   starts with (``nss: ...``, at most three words before a colon) 2 more.
   At most ``MAX_TERMS`` terms, in task order; a longer task is cut and the
   result says so.
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
   a generated file beside its source and a stub beside its module are
   scaled down.
3. Regions. In each file shown, every definition (and every line window of
   ``WINDOW`` lines outside definitions) is scored by the task terms its
   lines hold (weighted by IDF, saturating in frequency, normalised by
   length) plus a bonus when its name carries task words; the best few that
   do not overlap are the file's regions.
"""

from __future__ import annotations

import bisect
import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import mentions as M
from .code import words as W
from .code.testpaths import is_test_path
from .errors import QueryError

TYPE_CHECKING = False  # as typing's (workspace.py says why)
if TYPE_CHECKING:
    from .refs import Result

__all__ = [
    "CANDIDATES",
    "MAX_TERMS",
    "FileHit",
    "Located",
    "Region",
    "TaskTerms",
    "file_role",
    "locate",
    "task_terms",
    "to_result",
]

MAX_TERMS = 48  # distinct terms searched; a longer task is cut (and says so)
MAX_TASK_CHARS = 20_000  # characters of the task read for terms: a 100 KB paste costs no more
MAX_NAMES = 16  # code-like names looked up as symbols
CANDIDATES = 300  # files re-scored after the lexical query
PATH_WEIGHT = 2.5
CODE_WEIGHT = 3  # repetitions of a code-like name's whole form in the query
AREA_WEIGHT = 2  # more for a word of the area a task starts with ("nss: fix the build"): the area is what changes
AREA_WORDS = 3  # ... of at most this many words before the colon
UNIVERSAL_PATH = 0.25  # a word in more paths than this share counts in content only
WINDOW = 30  # lines of a window region
REGIONS = 3  # regions per file
SYMBOL_BONUS = 0.8
PROPER_FILES = 3  # a capitalised word of the task defined in more files than this is no evidence
CUE_BONUS = 0.4
BIND_BONUS = 0.8  # a file defining what a name table binds a task's word to (issue 24, class 4): as a definition's
BIND_WORDS = 6  # task words looked for in name tables, rarest first
BIND_DF = 20  # ... held by at most this many files (or 2% of them): "help" is in every table
SCAN_FILES = 12  # files holding a word that are read for its table rows or listings
LIST_BONUS = 1.2  # a package's entry file listing a name of a task about listing (class 5): above the definition's; other files half
ENTRY_STEMS = frozenset({"__init__", "index", "mod", "lib", "main", "exports"})
HUB_CHECK = 20  # best files whose start is read for a generator's banner (class 3)
GENERATED_PRIOR = 0.5  # a generated file beside its source, unless the task is about generated files
STUB_PRIOR = 0.5  # a ``.pyi`` stub beside its module: it names everything the module does
NAME_BONUS = 0.6  # a file the task names: its stem, or every sub-word of it, is a task word (issue 24, class 2)
PATH_BONUS = 0.5  # times the share of the task's weight the file's path words carry
SIZE_PRIOR = 0.5  # larger files hold more of what changes: a log-size prior (0.35-1.2 measured alike)
# Priors: how likely each kind of file is to be what a task is about.
ROLE_PRIOR = {"source": 1.0, "test": 0.3, "doc": 0.25, "other": 0.35, "data": 0.1}
ROLE_PRIOR_ASKED = {"test": 0.85, "doc": 0.85}  # the task mentions tests / docs
VENDOR_PRIOR = 0.5  # another project's code kept in the tree (``deps/jemalloc/``), unless the task names it
VENDOR_DIRS = frozenset({"deps", "vendor", "vendored", "third_party", "thirdparty", "third-party", "3rdparty", "external", "extern", "node_modules"})

STOP_WORDS = frozenset(
    """
a an the and or nor but if then else than so as at by for from in into of on onto to with without within via per
is are was were be been being am do does did done doing has have had having can could should would will shall may
might must not no yes it its it's this that these those there here where when what which who whom whose why how
i me my we us our you your he him his she her they them their one ones all any each every some more most other
such only own same too very just also about after before again once over under up down out off further while
because until against between through during above below both few many much lot lots now still even ever never
always already yet etc e g ie eg vs
fix fixes fixed fixing add adds added adding remove removes removed removing change changes changed changing
update updates updated updating make makes made making use uses used using get gets got set sets new old
allow allows allowed support supports supported instead like need needs needed want wants wanted let lets
issue issues bug bugs problem problems error-free case cases way ways thing things work works working worked
able unable properly correctly correct wrong better proper possible actually really please thanks
file files code patch commit commits pr pull request refs ref see also note notes cf fyi wip minor small
test tests testing tested doc docs documentation readme changelog
""".split()
)
_TEST_WORDS = frozenset({"test", "tests", "testing", "tested", "testcase", "testcases", "unittest", "pytest", "spec", "specs"})
_DOC_WORDS = frozenset({"doc", "docs", "documentation", "readme", "changelog", "docstring", "docstrings", "manual", "manpage"})
# A name in the task: optional option dashes, dotted / :: / -> parts, optional call parens.
_NAME = re.compile(r"(?<![\w.])(--?)?([^\W\d][\w]*(?:(?:\.|::|->)[^\W\d][\w]*)*)(\(\))?", re.UNICODE)
_TICKED = re.compile(r"`([^`\n]{1,200})`")
_CUE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]*)")
# Not evidence of where a change goes: links, e-mail addresses, commit ids.
_NOISE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+|\S+@\S+\.\w+|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_AREA = re.compile(r"\s*([^\n:]{1,60}?):\s")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")
_SOURCE_EXT = frozenset(
    "py pyi pyw pyx pxd c h cc cpp cxx hpp hh hxx ipp inl m mm js jsx mjs cjs ts tsx mts cts go rs java kt kts scala swift cs "
    "rb php pl pm lua tcl sh bash zsh fish ps1 el clj ex exs erl hrl hs ml mli fs r jl dart zig nim v vue svelte y l jq "
    "sql groovy gradle cmake asm s".split()
)
_DOC_EXT = frozenset("md markdown rst txt adoc asciidoc org tex texi texinfo pod rdoc 1 2 3 4 5 6 7 8 9 html htm".split())
# Markup and data: text, but rarely what a change is about (drawings, lockfiles, fixtures, minified code)
_DATA_EXT = frozenset("svg json xml csv tsv lock map sum mod po pot yaml yml toml ini cfg txt dat bin pem crt".split())
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "man", "changelog", "changes", "news", "examples", "example", "changelog.d"})
_DOC_STEMS = frozenset({"changes", "changelog", "news", "authors", "readme", "license", "copying", "thanks", "todo", "history", "contributing", "notice"})


# -- terms ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TaskTerms:
    """A task as search terms.

    ``weights``: term -> weight (repetitions in the query), in task order;
    ``names``: code-like names to look up as definitions (``Rational.__add__``);
    ``cues``: path fragments the task names (``lib/vtls``); ``dropped``:
    words left out (stop words, the repository's name); ``total``: distinct
    terms before the ``MAX_TERMS`` cut; ``chars``: characters of the task
    read (``MAX_TASK_CHARS`` at most); ``tests``/``docs``: the task is about
    tests / docs; ``wholes``: the terms that are a word of the task as written
    (``jv_invalid``, not its sub-word ``jv``); ``proper``: the capitalised words that are
    not code-like (``Factory``), as written; ``lists``: the task is about where a name is
    imported, exported, registered or listed; ``generated``: about generated files.
    """

    weights: dict[str, int]
    names: tuple[str, ...] = ()
    cues: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    total: int = 0
    chars: int = 0
    tests: bool = False
    docs: bool = False
    wholes: frozenset[str] = frozenset()
    proper: tuple[str, ...] = ()
    lists: bool = False
    generated: bool = False

    @property
    def cut(self) -> bool:
        return self.total > len(self.weights)


def _code_like(name: str, ticked: bool, dashes: str | None, parens: bool) -> bool:
    if ticked or parens or dashes:
        return True
    if any(sep in name for sep in (".", "::", "->")):
        parts = re.split(r"\.|::|->", name)
        return all(len(p) >= 2 for p in parts)
    core = name.strip("_")
    return "_" in core or name.startswith("_") and len(core) >= 2 or bool(_CAMEL.search(name)) or (any(c.isdigit() for c in name) and any(c.isalpha() for c in name))


def task_terms(task: str, *, repo_name: str = "") -> TaskTerms:
    """The search terms of ``task`` (see the module docstring); ``QueryError``
    for a task that is not text or holds no searchable word."""
    if not isinstance(task, str) or not task.strip():
        raise QueryError(f"the task must be non-empty text, got {task!r}"[:200], hint="describe the change, e.g. task='fix the retry loop in the HTTP client'", field="task")
    text = _NOISE.sub(" ", task[:MAX_TASK_CHARS])
    ticked = {m.group(1).strip() for m in _TICKED.finditer(text)}
    own = set(W.split(repo_name)) if repo_name else set()
    weights: dict[str, int] = {}
    names: list[str] = []
    proper: list[str] = []  # capitalised words that are not code-like: looked up, a bonus only when defined in few files
    dropped: list[str] = []
    seen_words: set[str] = set()
    total: set[str] = set()
    wholes: set[str] = set()  # the task's words as written (not the sub-words of an identifier)
    lowered = {w.lower() for w in W._IDENT.findall(text)}  # noqa: SLF001 -- the same identifier rule as the index
    area = _AREA.match(text)  # "nss: ...", "Curl_wait_for_resolv: ...", "net/http: ..."
    area_end = area.end(1) if area and len(area.group(1).split()) <= AREA_WORDS else -1
    for m in _NAME.finditer(text):
        dashes, name, parens = m.group(1), m.group(2), bool(m.group(3))
        code = _code_like(name, name in ticked or m.group(0) in ticked, dashes, parens)
        mine = bool(own) and set(W.split(name.strip("_"))[1:] or W.split(name.strip("_"))) <= own  # ``_pytest`` in pytest
        if code and not dashes and len(names) < MAX_NAMES and name not in names and not mine:
            names.append(name)
        elif not code and name[:1].isupper() and len(name) >= 3 and name.lower() not in STOP_WORDS and name not in proper and len(proper) < MAX_NAMES:
            proper.append(name)
        for part in re.split(r"\.|::|->", name):
            split = W.split(part) if len(part) <= W.MAX_WORD else []
            for i, term in enumerate(split):
                whole = i == 0
                if term in own or (len(term) < 2) or term.isdigit():
                    if term not in seen_words and len(term) >= 2 and not term.isdigit():
                        dropped.append(term)
                    seen_words.add(term)
                    continue
                if term in STOP_WORDS and not (code and whole and len(split) == 1 and "_" in part):
                    if term not in seen_words:
                        dropped.append(term)
                    seen_words.add(term)
                    continue
                seen_words.add(term)
                total.add(term)
                weight = (CODE_WEIGHT if code and whole else 1) + (AREA_WEIGHT if m.start() < area_end else 0)
                if whole:
                    wholes.add(term)
                if term in weights:
                    weights[term] = max(weights[term], weight)
                elif len(weights) < MAX_TERMS:
                    weights[term] = weight
    if not weights:
        raise QueryError(
            "the task has no words to search for: only stop words, punctuation or numbers" + (f" (dropped: {', '.join(dropped[:12])})" if dropped else ""),
            hint="name what the change is about: a function, a file, a behaviour (e.g. 'retry timeout in the HTTP client')",
            field="task",
        )
    cues = tuple(dict.fromkeys(c.strip("/.") for c in _CUE.findall(text) if c.count("/") >= 1 and len(c.strip("/.")) >= 3))[:8]
    return TaskTerms(
        weights,
        tuple(names),
        cues,
        tuple(dict.fromkeys(dropped)),
        len(total),
        len(text),
        tests=bool(lowered & _TEST_WORDS),
        docs=bool(lowered & _DOC_WORDS),
        wholes=frozenset(wholes & weights.keys()),
        proper=tuple(p for p in proper if p.lower() in weights and p.lower() not in own),
        lists=bool(lowered & M.LISTING_WORDS) or "__all__" in text,
        generated=any(w.startswith(("generat", "regenerat", "codegen")) for w in lowered),
    )


# -- file roles ----------------------------------------------------------------------


def file_role(path: str) -> str:
    """``source``, ``test``, ``doc``, ``data`` (markup and data formats: svg, json, yaml, lockfiles,
    minified code) or ``other`` (build files, scripts without an extension...), from the path alone."""
    if is_test_path(path):
        return "test"
    *folders, name = path.split("/")
    low = name.lower()
    stem, _, ext = low.rpartition(".") if "." in low[1:] else (low, "", "")
    if any(f.lower() in _DOC_DIRS for f in folders) or ext in _DOC_EXT or (stem or low) in _DOC_STEMS:
        return "doc"
    if ext in _SOURCE_EXT and ".min." not in low:
        return "source"
    return "data" if ext in _DATA_EXT or ".min." in low else "other"


# -- results -------------------------------------------------------------------------


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
        """The CLI call that reads exactly this region."""
        if self.symbol:
            return f"jitctx head {self.path} --symbol {self.symbol}"
        return f"jitctx head {self.path} --start {self.start_line} -n {self.end_line - self.start_line + 1}"


@dataclass(frozen=True, slots=True)
class FileHit:
    """One ranked file: a reference (``path``, ``size``, ``mtime``) plus
    ``score`` (higher is better), ``role`` (source, test, doc, other),
    ``why`` (what matched: path words, symbols, content terms), its best
    ``regions`` and ``tokens`` (the whole file's cost; None when not read)."""

    path: str
    size: int
    mtime: float
    score: float
    role: str
    why: tuple[str, ...]
    regions: tuple[Region, ...] = ()
    tokens: int | None = None
    total_lines: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "size": self.size,
            "mtime": self.mtime,
            "score": round(self.score, 4),
            "role": self.role,
            "why": list(self.why),
            "tokens": self.tokens,
            "total_lines": self.total_lines,
            "regions": [r.to_dict() for r in self.regions],
        }

    def render(self, now: float | None = None, view=None) -> str:
        """The text form: one line for the file (its path as ``view`` shows paths), one per region."""
        from .render import human_size
        from .text import show_name

        cost = f", {self.tokens:,} tokens" if self.tokens is not None else ""
        role = "" if self.role == "source" else f" [{self.role}]"
        why = f"  ({'; '.join(self.why)})" if self.why else ""
        out = [f"{show_name(view.path(self.path) if view is not None else self.path)}  {human_size(self.size)}{cost}{role}{why}"]
        for r in self.regions:
            what = r.symbol or f"lines {r.start_line}-{r.end_line}"
            rcost = f", {r.tokens:,} tokens" if r.tokens is not None else ""
            sig = f"  {r.signature}" if r.signature else ""
            out.append(f"  {r.start_line}-{r.end_line} {what} ({r.kind}{rcost}; {', '.join(r.why)}){sig}")
        return "\n".join(out)


@dataclass(frozen=True, slots=True)
class Located:
    """The answer: ``files`` best first (cut to the limit), ``total`` files
    that matched any term, the ``terms`` used (term -> weight), ``notice``
    (what was cut or dropped, in words), ``warnings``; ``cut``: the search for
    candidates stopped short (time), so no file found is not "no file holds them"."""

    files: tuple[FileHit, ...]
    total: int
    terms: TaskTerms
    notice: str | None = None
    warnings: tuple[str, ...] = field(default=())
    cut: bool = False


# -- ranking -------------------------------------------------------------------------


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _expression(weights: dict[str, int], content_only: set[str]) -> str:
    parts = []
    for term, weight in weights.items():
        phrase = ("content_terms : " if term in content_only else "") + _quote(term)
        parts.extend([phrase] * weight)
    return " OR ".join(parts)


def idf_of(documents: int, docs: int) -> float:
    """A term's inverse document frequency (FTS5's bm25 form)."""
    return math.log(1.0 + (documents - docs + 0.5) / (docs + 0.5))


@dataclass(slots=True)
class Candidate:
    """A file being ranked: its ``lexical`` score (BM25), the task's names it defines
    (``symbols``, their ``bonus``, the ``definitions`` found), the final ``score``."""

    path: str
    lexical: float
    size: int
    role: str
    symbols: list[str] = field(default_factory=list)
    bonus: float = 0.0
    score: float = 0.0
    definitions: list = field(default_factory=list)  # (definition, name matched) from the symbol lookup
    named: str = ""  # the file's name, when the task names it (``names_file``)
    listed: list[str] = field(default_factory=list)  # the task's names this file imports, exports or registers
    credit: dict[str, float] = field(default_factory=dict)  # the bonus each name defined here gave
    hub: float = 1.0  # a generated file's or a stub's factor (``hubs``)
    hub_why: str = ""


def rank(index, terms: TaskTerms, text_of: Callable[[str], str | None] | None = None) -> tuple[list[Candidate], dict[str, float], int]:
    """Candidate files best first, each term's IDF, and how many files matched.
    ``text_of(path)``: a file's text (None: unreadable); without it no line is read
    (no name tables, listings or generated files are recognised)."""
    documents, counts = index.term_counts(terms.weights)
    weights = {t: w for t, w in terms.weights.items() if t in counts}
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
        hits = _definitions(index, name, exact_name=proper)
        files = list(dict.fromkeys(h.path for h in hits))
        if not hits and not proper:
            undefined.append(name)
        if not hits or (proper and len(files) > PROPER_FILES):
            continue
        _credit(index, found, hits, name, SYMBOL_BONUS / math.sqrt(len(files)))
    mass = sum(w * idf[t] for t, w in weights.items()) or 1.0
    if text_of is not None:
        declared(index, undefined, found, text_of)
        bind(index, terms, found, {t: (counts[t][1], w * idf[t] / mass) for t, w in weights.items()}, documents, text_of)
        if terms.lists:
            listed(index, terms, found, text_of)
    name_bonus(found.values(), terms, idf)

    def path_share(c: Candidate) -> float:
        in_path = set(W.path_terms(c.path).split())
        return sum(w * idf[t] for t, w in weights.items() if t in in_path and t not in content_only) / mass

    ordered = rescore(found.values(), terms, path_share)
    if text_of is not None and hubs(index, ordered[:HUB_CHECK], terms, text_of, found):
        ordered = rescore(found.values(), terms, path_share)
    return ordered, idf, len(found)


def _definitions(index, name: str, *, exact_name: bool = False) -> list:
    """The index's exact (or qualified) definitions of ``name``; ``exact_name``: named so, case and all."""
    try:
        look = index.find(name, limit=40)
    except QueryError:
        return []
    return [h for h in look.hits if h.tier in ("exact", "qualified") and (not exact_name or h.definition.name == name)]


def _candidate(index, found: dict[str, Candidate], path: str, is_test: bool = False) -> Candidate:
    c = found.get(path)
    if c is None:
        state = index.state(path)
        c = found[path] = Candidate(path, 0.0, state.size if state else 0, "test" if is_test else file_role(path))
    return c


def _credit(index, found: dict[str, Candidate], hits: list, name: str, share: float) -> None:
    """Give the files defining ``name`` (``hits``) ``share`` each, once a name."""
    for h in hits:
        c = _candidate(index, found, h.path, h.is_test)
        if name not in c.symbols:
            c.symbols.append(name)
            c.bonus += share
            c.credit[name] = share
        c.definitions.append((h.definition, name))


def _holding(index, term: str) -> list[str]:
    """The source files (not tests, docs or data) whose content holds ``term`` most, best first."""
    got = index.search("content_terms : " + _quote(term), weights=(PATH_WEIGHT, 1.0), limit=4 * SCAN_FILES)  # tests and docs are left out
    return [path for path, _score, _size, is_test in got if not is_test and file_role(path) in ("source", "other")][:SCAN_FILES]


def _last(name: str) -> str:
    return re.split(r"\.|::|->", name)[-1]


def declared(index, names: Iterable[str], found: dict[str, Candidate], text_of: Callable[[str], str | None]) -> None:
    """Issue 24, class 1, where the outline sees no definition: a task name no
    definition is named by (a constant, a variable, an object-like macro:
    ``chunkSize``, ``CACHE_LINE_SIZE``) credits the files that declare it with its
    value (``mentions.declares``) as a definition would, when at most
    ``PROPER_FILES`` of the ``SCAN_FILES`` files holding it most do."""
    for name in names:
        last = _last(name)
        split = W.split(last) if not last.startswith("__") else []
        if not split:
            continue
        sites = [path for path in _holding(index, split[0]) if (text := text_of(path)) is not None and M.declares(text, last)]
        if not sites or len(sites) > PROPER_FILES:
            continue
        for path in sites:
            c = _candidate(index, found, path)
            if last not in c.symbols:
                c.symbols.append(last)
                c.bonus += SYMBOL_BONUS / math.sqrt(len(sites))
                c.credit[last] = SYMBOL_BONUS / math.sqrt(len(sites))


def bind(index, terms: TaskTerms, found: dict[str, Candidate], df: dict[str, tuple[int, float]], documents: int, text_of: Callable[[str], str | None]) -> None:
    """Issue 24, class 4: a task word no definition is named by (``getrange``,
    ``can_cast``, ``XADD``) that a name table binds, as a string, to a function
    (``{"getrange", getrangeCommand}``) credits the files defining that function
    as if the task had named it (``BIND_BONUS``) and as if they held the word (its
    share of the task's weight: ``array_can_cast_safely`` does not hold the word
    ``cancast``). ``df``: per term, the files holding it and that share. Only rare
    words (held by at most ``BIND_DF`` files or 2% of the ``documents``), none part of
    a name the task gives that is defined (``jv_setpath()`` already says where
    "setpath" is); the rarest ``BIND_WORDS``, each looked for in the ``SCAN_FILES``
    files holding it most and the ``SCAN_FILES`` best by the task's words (a table
    holds a word once: on a big tree it is rarely among the first). For a task about listing (class 5), the tables binding the
    word (at most ``PROPER_FILES``) are where it is listed: ``LIST_BONUS`` each, shared."""
    defined = {s for c in found.values() for s in c.symbols}
    taken = [M.fold(_last(s)) for s in defined]
    rare = max(BIND_DF, 0.02 * documents)
    words: dict[str, str] = {}  # folded term -> the word as written
    for name in (*terms.names, *terms.proper):
        last = _last(name)
        if not last.startswith("__") and (split := W.split(last)):
            words.setdefault(split[0], last)
    for whole in terms.wholes:
        if terms.weights.get(whole) == 1 and whole.isalnum():
            words.setdefault(whole, whole)
    words = {t: w for t, w in words.items() if t in df and df[t][0] <= rare and not any(M.fold(w) in f for f in taken)}
    best = [c.path for c in sorted(found.values(), key=lambda c: -c.lexical)[:SCAN_FILES] if c.role in ("source", "other")]
    for term in sorted(words, key=lambda t: (df[t][0], t))[:BIND_WORDS]:
        word = words[term]
        targets: dict[str, None] = {}
        by_table: dict[str, list[str]] = {}
        for path in dict.fromkeys([*_holding(index, term), *best]):
            text = text_of(path)
            got = M.bound(text, word) if text is not None else []
            targets.update(dict.fromkeys(got))
            if got:
                by_table[path] = got
        resolved = set()
        for ident in list(targets)[:8]:
            hits = _definitions(index, ident, exact_name=True)
            files = list(dict.fromkeys(h.path for h in hits))
            if hits and len(files) <= PROPER_FILES:
                _credit(index, found, hits, ident, (BIND_BONUS + df[term][1]) / math.sqrt(len(files)))
                resolved.add(ident)
        tables = [path for path, got in by_table.items() if resolved.intersection(got)]  # binds a function, not a variable
        for path in tables if terms.lists and len(tables) <= PROPER_FILES else ():  # the table is where a name is listed
            c = _candidate(index, found, path)
            c.bonus += LIST_BONUS / math.sqrt(len(tables))
            c.listed.append(word)


def listed(index, terms: TaskTerms, found: dict[str, Candidate], text_of: Callable[[str], str | None]) -> None:
    """Issue 24, class 5: for a task about where a name is imported, exported,
    registered or listed ("Add `Method` to `__all__`"), the files whose every line
    holding one of the task's names lists it (``mentions.lists``: a re-export, a
    registration, not a use) get ``LIST_BONUS`` (a package's entry file:
    ``__init__.py``, ``index.ts``, ``mod.rs``) or half of it (any other), shared among
    them; the name's definition, context now, keeps half of what it gave."""
    for name in (*terms.names, *terms.proper):
        last = _last(name)
        split = W.split(last) if not last.startswith("__") else []
        if not split:
            continue
        sites = []
        for path in _holding(index, split[0]):
            c = found.get(path)
            text = text_of(path) if c is None or name not in c.symbols else None
            if text is not None and M.lists(text, last):
                sites.append(path)
        for path in sites:
            c = _candidate(index, found, path)
            stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
            c.bonus += LIST_BONUS * (1.0 if stem in ENTRY_STEMS else 0.5) / math.sqrt(len(sites))
            c.listed.append(last)
        for c in found.values() if sites else ():
            c.bonus -= c.credit.get(name, 0.0) / 2


def _stem(path: str) -> str:
    """A path without its extensions: ``src/parser.c`` -> ``src/parser``."""
    folder, _, name = path.rpartition("/")
    return f"{folder}/{name.split('.', 1)[0]}" if folder else name.split(".", 1)[0]


def hubs(index, top: Iterable[Candidate], terms: TaskTerms, text_of: Callable[[str], str | None], found: dict[str, Candidate]) -> bool:
    """Issue 24, class 3: of the best files, one that is another's output is scaled
    down, for its source is where a change is written: a ``.pyi`` stub beside its
    module by ``STUB_PRIOR``, a generated file (its header says so) whose source is a
    candidate too (the same name with another extension: ``parser.c`` and ``parser.y``)
    by ``GENERATED_PRIOR``, unless the task is about generated files. Whether any was."""
    stems: dict[str, int] = {}
    for path in found:
        stems[_stem(path)] = stems.get(_stem(path), 0) + 1
    changed = False
    for c in top:
        if c.path.endswith(".pyi") and index.state(c.path[:-1]) is not None:
            c.hub, c.hub_why = STUB_PRIOR, "a stub beside its module"
        elif not terms.generated and stems[_stem(c.path)] > 1 and (text := text_of(c.path)) is not None and M.generated(text):
            c.hub, c.hub_why = GENERATED_PRIOR, "generated"
        else:
            continue
        changed = True
    return changed


def _singular(word: str) -> str:
    """A word with a plural ``s`` taken off (``flags`` -> ``flag``; ``class``, ``is`` kept):
    a task says "flags" of the file ``flag.go``, "macro" of ``macros.rs``."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def names_file(path: str, words: dict[str, str]) -> tuple[str, list[str]] | None:
    """Whether the task names the file ``path``: its stem (the name before its first dot)
    whole, or every one of its sub-words, is a task word, plurals aside. ``words``: each
    task term by its singular. Returns the stem and the task terms it covers."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    if not stem:
        return None
    whole, *subs = W.split(stem)
    if (t := words.get(_singular(whole))) is not None:
        return stem, [t]
    if subs and all(_singular(p) in words for p in subs):
        return stem, list(dict.fromkeys(words[_singular(p)] for p in subs))
    return None


def name_bonus(found: Iterable[Candidate], terms: TaskTerms, idf: dict[str, float]) -> None:
    """Give the files the task names ``NAME_BONUS``, scaled by the task weight their name
    covers against the best-named file's (``default_types.go`` before ``types.go`` for
    "default file types") and shared among the files named alike (``main.c`` in every folder).
    Only the task's words as written name a file: ``jv_invalid`` does not name ``jv.c``."""
    weights = terms.weights
    words = {_singular(t): t for t in terms.wholes if t in idf}
    named = [(c, got) for c in found if (got := names_file(c.path, words)) is not None]
    if not named:
        return
    weight = {c.path: sum(weights[t] * idf[t] for t in covered) for c, (_stem, covered) in named}
    best = max(weight.values()) or 1.0
    alike = sum(1 for c, _ in named if weight[c.path] == best)
    for c, (stem, _covered) in named:
        c.named = stem
        c.bonus += NAME_BONUS * weight[c.path] / best / math.sqrt(alike)


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
        c.score = c.hub * prior(c, terms) * (c.lexical / top + min(c.bonus, 2 * SYMBOL_BONUS) + (CUE_BONUS if cued(c.path, terms) else 0.0) + PATH_BONUS * path_share(c))
    return sorted(found, key=lambda c: (-c.score, c.path))


# -- regions -------------------------------------------------------------------------


def _line_terms(lines: list[str], wanted: dict[str, float]) -> list[set[str]]:
    """The task terms each line holds. Only lines where some term occurs as a
    substring (case folded) are split into words: a term is always a
    substring of the line that holds it, and most lines hold none."""
    out: list[set[str]] = [set() for _ in lines]
    if not lines or not wanted:
        return out
    text = "\n".join(lines).lower()
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
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
) -> list[Region]:
    """The best ``limit`` non-overlapping regions of one file (see the module
    docstring); ``present``, when given, receives the task terms the file holds."""
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
        if score > 0:
            cands.append((score, start, end, d, tf, tuple(reasons), frozenset(name_terms)))
    # windows where terms concentrate, over the lines no definition covers
    hit_lines = [i for i, ts in enumerate(per_line) if ts and not covered[i]]
    hit_lines.sort(key=lambda i: -sum(weight(t) for t in per_line[i]))
    taken: list[tuple[int, int]] = []
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
    cands.sort(key=lambda c: (-c[0], c[1]))
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
            chosen.append(Region(path, start, end, "lines", None, first[:120], tokens, score, _why(tf, weight)))
        if len(chosen) >= limit:
            break
    return chosen


def file_why(c: Candidate, terms: TaskTerms, present: set[str], weight: Callable[[str], float]) -> tuple[str, ...]:
    out = [f"defines {s}" for s in c.symbols]
    if c.named:
        out.append(f"name: {c.named}")
    if c.listed:
        out.append("lists " + ", ".join(c.listed))
    if c.hub_why:
        out.append(c.hub_why)
    in_path = set(W.path_terms(c.path).split())
    path_hits = [t for t in terms.weights if t in in_path]
    if path_hits:
        out.append("path: " + ", ".join(path_hits[:4]))
    if present:
        out.append("terms: " + ", ".join(sorted(present, key=lambda t: (-weight(t), t))[:6]))
    return tuple(out)


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
    notes = task_notes(task, terms)
    files = show(
        ordered[:limit], terms, idf, read, lambda path, data: index.definitions(path), count=count, file_tokens=file_tokens, regions_per_file=regions_per_file, notes=notes
    )
    return Located(tuple(files), total, terms, "; ".join(notes) or None)


def reader(read: Callable[[str], tuple[bytes, float] | None]) -> tuple[Callable[[str], tuple[bytes, float] | None], Callable[[str], str | None]]:
    """``read`` remembered (the ranking reads a few files the answer shows again), and
    the text of what it reads (None: unreadable)."""
    got: dict[str, tuple[bytes, float] | None] = {}

    def once(path: str) -> tuple[bytes, float] | None:
        if path not in got:
            got[path] = read(path)
        return got[path]

    def text_of(path: str) -> str | None:
        data = once(path)
        return None if data is None else data[0].decode("utf-8", "replace")

    return once, text_of


def task_notes(task: str, terms: TaskTerms) -> list[str]:
    """What was cut from the task itself, in words."""
    notes = []
    if terms.cut:
        notes.append(f"the task is long: searched its first {len(terms.weights)} of {terms.total} distinct terms")
    if len(task) > MAX_TASK_CHARS:
        notes.append(f"only the first {MAX_TASK_CHARS:,} of {len(task):,} characters of the task were read")
    return notes


def show(
    shown: list[Candidate],
    terms: TaskTerms,
    idf: dict[str, float],
    read: Callable[[str], tuple[bytes, float] | None],
    definitions: Callable[[str, bytes], Sequence],
    *,
    count: Callable[[str], int] | None = None,
    file_tokens: bool = True,
    regions_per_file: int = REGIONS,
    end: float | None = None,
    notes: list[str] | None = None,
) -> list[FileHit]:
    """The shown files: each read (``read`` as for ``locate``), its regions on
    ``definitions(path, data)``, why, lines and whole-file tokens. ``end`` (monotonic
    seconds): a file met past it is listed without them, and ``notes`` says so."""
    weights = {t: terms.weights[t] * idf.get(t, 1.0) for t in terms.weights}

    def weight(t: str) -> float:
        return weights.get(t, 0.0)

    files: list[FileHit] = []
    late = unpriced = 0
    for c in shown:
        over = end is not None and time.monotonic() >= end
        got = None if over else read(c.path)
        late += over
        if got is None:
            files.append(FileHit(c.path, c.size, 0.0, c.score, c.role, file_why(c, terms, set(), weight)))
            continue
        data, mtime = got
        text = data.decode("utf-8", "replace").replace("\r\n", "\n").removeprefix("\ufeff")
        present: set[str] = set()
        regs = regions(c.path, text, definitions(c.path, data), terms, idf, named=c.definitions, count=count, limit=regions_per_file, present=present)
        tokens = None
        if count is not None and file_tokens:
            if end is None or time.monotonic() < end:
                tokens = count(text)
            else:
                unpriced += 1
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        files.append(FileHit(c.path, len(data), mtime, c.score, c.role, file_why(c, terms, present, weight), tuple(regs), tokens, lines))
    if notes is not None and late:
        notes.append(f"{late} shown file{'s' if late != 1 else ''} listed without regions: the time ran out")
    if notes is not None and unpriced:
        notes.append(f"{unpriced} shown file{'s' if unpriced != 1 else ''} not priced whole: the time ran out")
    return files


def to_result(found: Located, *, notices: Iterable[str] = ()) -> Result:
    """The ``locate`` envelope: ``results`` are the files (each with its
    regions), ``total`` the files that matched any term; ``extra`` holds the
    ``terms`` searched (term -> weight) and the words ``dropped``."""
    from .refs import Result

    res = Result("locate", list(found.files), total=found.total, truncated=found.total > len(found.files))
    notes = [t if t.endswith(".") else t + "." for t in [*notices, found.notice] if t]
    res.extra = {"terms": dict(found.terms.weights), "dropped": list(found.terms.dropped), "notes": notes}
    for text in notes:
        res.add_notice(text)
    if not found.files and found.cut:
        res.add_notice("no file was found before the time ran out; ask again once the index is built, or name a function, a file or a message the code prints.")
    elif not found.files:
        res.add_notice(f"no file holds any of the task's terms ({', '.join(list(found.terms.weights)[:12])}); name a function, a file or a message the code prints.")
    elif res.truncated:
        more = "+" if found.total >= CANDIDATES else ""
        res.add_notice(
            f"showing {len(found.files):,} of {found.total:,}{more} matching files; name more of the task's words to narrow it, or list more with the CLI's --limit or the Python API's limit (the tool shows the best 10)."
        )
    return res
