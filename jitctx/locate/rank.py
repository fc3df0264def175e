"""Task retrieval: which files, and which regions inside them, a task is about.

Owns ranking the repository's files for a task's terms (``rank``) and the
answer: the best files, each with its regions (``regions``), why it was
chosen and what it costs in tokens. Does not own turning the task into terms
(``taskterms``), scoring a file's regions (``regions``), reading a file's
lines for names (``mentions``), the index (``code.index``: its FTS5 store and
symbol lookup), what the words of a file are (``code.words``, the same rule
on both sides), reading files (the caller's ``read``, its safe-open seam)
nor any surface.

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
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from ..code import words as W
from ..code.testpaths import is_test_path
from ..errors import QueryError
from . import mentions as M
from . import pointers as P
from .regions import REGIONS, SCORE_DIGITS, WINDOW, Region, regions
from .terms import AREA_WEIGHT, CODE_WEIGHT, MAX_TASK_CHARS, MAX_TERMS, STOP_WORDS, TaskTerms, task_terms

TYPE_CHECKING = False  # as typing's (workspace.py says why)
if TYPE_CHECKING:
    from ..refs import Result

__all__ = [
    "AREA_WEIGHT",
    "CANDIDATES",
    "CODE_WEIGHT",
    "MAX_TASK_CHARS",
    "MAX_TERMS",
    "REGIONS",
    "STOP_WORDS",
    "WINDOW",
    "FileHit",
    "Located",
    "Region",
    "TaskTerms",
    "file_role",
    "locate",
    "regions",
    "task_terms",
    "to_result",
]

CANDIDATES = 300  # files re-scored after the lexical query
PATH_WEIGHT = 2.5
UNIVERSAL_PATH = 0.25  # a word in more paths than this share counts in content only
SYMBOL_BONUS = 0.8
PROPER_FILES = 3  # a capitalised word of the task defined in more files than this is no evidence
CUE_BONUS = 0.4
BIND_BONUS = 0.8  # a file defining what a name table binds a task's word to (issue 24, class 4): as a definition's
BIND_WORDS = 6  # task words looked for in name tables, rarest first
BIND_DF = 20  # ... held by at most this many files (or 2% of them): "help" is in every table
SCAN_FILES = 12  # files holding a word that are read for its table rows or listings
HOLDING_DF = 200  # a word held by more files is looked for in the best files only
LIST_BONUS = 1.2  # a package's entry file listing a name of a task about listing (class 5): above the definition's; other files half
ENTRY_STEMS = frozenset({"__init__", "index", "mod", "lib", "main", "exports"})
HUB_CHECK = 20  # best files whose start is read for a generator's banner (class 3)
GENERATED_PRIOR = 0.5  # a generated file beside its source, unless the task is about generated files
STUB_PRIOR = 0.5  # a ``.pyi`` stub beside its module: it names everything the module does
NAME_BONUS = 0.6  # a file the task names: its stem, or every sub-word of it, is a task word (issue 24, class 2)
PATH_BONUS = 0.5  # times the share of the task's weight the file's path words carry
PAIR_CHECK = 10  # best files whose C/C++ header pulls its implementation along
PAIR_SHARE = 0.9  # ... to this share of the header's score at least
HEADER_EXT = frozenset({"h", "hh", "hpp", "hxx", "h++"})
IMPLEMENTATION_EXT = frozenset({"c", "cc", "cpp", "cxx", "c++", "m", "mm"})
JOIN_DF = 0.05  # two words of a task written as one (``manpage``) are searched when at most this share of files hold it
POINT_CAP = 1.6  # what a report's frames, paths, messages and options give one file at most
SIZE_PRIOR = 0.5  # larger files hold more of what changes: a log-size prior (0.35-1.2 measured alike)
# Priors: how likely each kind of file is to be what a task is about.
ROLE_PRIOR = {"source": 1.0, "test": 0.3, "doc": 0.25, "other": 0.35, "data": 0.1}
ROLE_PRIOR_ASKED = {"test": 0.85, "doc": 0.85}  # the task mentions tests / docs
VENDOR_PRIOR = 0.5  # another project's code kept in the tree (``deps/jemalloc/``), unless the task names it
VENDOR_DIRS = frozenset({"deps", "vendor", "vendored", "third_party", "thirdparty", "third-party", "3rdparty", "external", "extern", "node_modules"})

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
        from ..render import human_size
        from ..text.lines import show_name

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
    point: float = 0.0  # what the report's structure gives it (``pointers``)
    floor: float = 0.0  # a score it has at least: an implementation beside a header that ranks (``paired``)
    beside: str = ""
    pointed: list[str] = field(default_factory=list)  # what the report points at here (``pointers``): a frame, a message...
    lines: list[tuple[int, str]] = field(default_factory=list)  # the lines it names, and why


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
        hits = _definitions(index, name, exact_name=proper)
        files = list(dict.fromkeys(h.path for h in hits))
        if not hits and not proper:
            undefined.append(name)
        if not hits or (proper and len(files) > PROPER_FILES):
            continue
        _credit(index, found, hits, name, SYMBOL_BONUS / math.sqrt(len(files)))
    for p in P.point(index, terms.report, text_of, file_role):  # frames, paths, messages, options (issue 31)
        c = _candidate(index, found, p.path)
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
        _give(c, name, share)
        c.definitions.append((h.definition, name))


def _give(c: Candidate, name: str, share: float) -> None:
    """``share`` to the file ``c`` for defining ``name``, once a name."""
    if name not in c.symbols:
        c.symbols.append(name)
        c.bonus += share
        c.credit[name] = share


def _holding(index, term: str) -> list[str]:
    """The source files (not tests, docs or data) whose content holds ``term`` most, best first."""
    got = index.search("content_terms : " + _quote(term), weights=(PATH_WEIGHT, 1.0), limit=4 * SCAN_FILES)  # tests and docs are left out
    return [path for path, _score, _size, is_test in got if not is_test and file_role(path) in ("source", "other")][:SCAN_FILES]


def _last(name: str) -> str:
    return re.split(r"\.|::|->", name)[-1]


def _name_term(name: str) -> tuple[str, str] | None:
    """A task name's last part (``Rational.__add__`` -> ``__add__``) and its folded whole
    term as the index stores it; None for a dunder (``__all__``) or a name with no word."""
    last = _last(name)
    split = W.split(last) if not last.startswith("__") else []
    return (last, split[0]) if split else None


def declared(index, names: Iterable[str], found: dict[str, Candidate], text_of: Callable[[str], str | None]) -> None:
    """Issue 24, class 1, where the outline sees no definition: a task name no
    definition is named by (a constant, a variable, an object-like macro:
    ``chunkSize``, ``CACHE_LINE_SIZE``) credits the files that declare it with its
    value (``mentions.declares``) as a definition would, when at most
    ``PROPER_FILES`` of the ``SCAN_FILES`` files holding it most do."""
    for name in names:
        if (got := _name_term(name)) is None:
            continue
        last, term = got
        sites = [path for path in _holding(index, term) if (text := text_of(path)) is not None and M.declares(text, last)]
        if not sites or len(sites) > PROPER_FILES:
            continue
        for path in sites:
            _give(_candidate(index, found, path), last, SYMBOL_BONUS / math.sqrt(len(sites)))


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
    holds a word once: on a big tree it is rarely among the first). For a task about
    listing (class 5), the tables binding the word to a function (at most
    ``PROPER_FILES``) are where it is listed: ``LIST_BONUS`` each, shared."""
    defined = {s for c in found.values() for s in c.symbols}
    taken = [M.fold(_last(s)) for s in defined]
    rare = max(BIND_DF, 0.02 * documents)
    words: dict[str, str] = {}  # folded term -> the word as written
    for name in (*terms.names, *terms.proper):
        if (named := _name_term(name)) is not None:
            words.setdefault(named[1], named[0])
    for whole in terms.wholes:
        if terms.weights.get(whole) == 1 and whole.isalnum():
            words.setdefault(whole, whole)
    words = {t: w for t, w in words.items() if t in df and df[t][0] <= rare and not any(M.fold(w) in f for f in taken)}
    best = [c.path for c in sorted(found.values(), key=lambda c: -c.lexical)[:SCAN_FILES] if c.role in ("source", "other")]
    lowered: dict[str, str] = {}
    for term in sorted(words, key=lambda t: (df[t][0], t))[:BIND_WORDS]:
        word = words[term]
        targets: dict[str, None] = {}
        by_table: dict[str, list[str]] = {}
        holders = _holding(index, term) if df[term][0] <= HOLDING_DF else []  # a commoner word: the best files only (ranking its holders costs)
        for path in dict.fromkeys([*holders, *best]):
            text = text_of(path)
            if text is not None and path not in lowered:
                lowered[path] = text.lower()
            got = M.bound(text, word) if text is not None and word.lower() in lowered[path] else []  # most hold it nowhere
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
        if terms.lists and len(tables) <= PROPER_FILES:  # the table is where a name is listed
            for path in tables:
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
        if (got := _name_term(name)) is None:
            continue
        last, term = got
        sites = []
        for path in _holding(index, term):
            c = found.get(path)
            text = text_of(path) if c is None or name not in c.symbols else None
            if text is not None and M.lists(text, last):
                sites.append(path)
        for path in sites:
            c = _candidate(index, found, path)
            stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
            c.bonus += LIST_BONUS * (1.0 if stem in ENTRY_STEMS else 0.5) / math.sqrt(len(sites))
            c.listed.append(last)
        if sites:
            for c in found.values():
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
    stems = Counter(map(_stem, found))
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


def implementation(index, header: str) -> str | None:
    """The one source file a C/C++ header declares for: the same stem with a source
    extension, in the header's folder, else (``include/x/tax.h``, ``src/tax.cpp``) the
    only one in the tree."""
    folder, _, name = header.rpartition("/")
    stem = name.rsplit(".", 1)[0]
    whole = W.split(stem)[0] if stem and len(stem) <= W.MAX_WORD and W.split(stem) else ""
    if not whole:
        return None
    found = []
    for path, _score, _size, is_test in index.search('path_terms : "' + whole.replace('"', '""') + '"', weights=(1.0, 0.0), limit=200):
        where, _, other = path.rpartition("/")
        base, _, ext = other.rpartition(".")
        if base == stem and ext.lower() in IMPLEMENTATION_EXT and not is_test:
            if where == folder:
                return path
            found.append(path)
    return found[0] if len(found) == 1 else None


def paired(index, top: Sequence[Candidate], found: dict[str, Candidate]) -> bool:
    """Issue 31: a C/C++ header among the best files pulls its implementation along
    (``FlexFormattingContext.h`` -> ``.cpp``): the change is usually in both, and the
    words a task shares with a class are in its declaration. The source file scores at
    least ``PAIR_SHARE`` of the header. Whether any was pulled."""
    changed = False
    for c in list(top):
        if c.path.rpartition(".")[2].lower() not in HEADER_EXT:
            continue
        impl = implementation(index, c.path)
        if impl is None:
            continue
        pulled = _candidate(index, found, impl)
        if pulled.score < PAIR_SHARE * c.score:
            pulled.floor = max(pulled.floor, PAIR_SHARE * c.score)
            pulled.beside = c.path.rsplit("/", 1)[-1]
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
    *folders, name = path.split("/")
    stem = name.split(".", 1)[0]
    if stem in ENTRY_STEMS and folders:  # ``src/plugin/quarterOfYear/index.js`` is the folder's file: named by its folder
        stem = folders[-1]
    if not stem or len(stem) > W.MAX_WORD:
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
    words: dict[str, str] = {}
    for t in sorted(terms.wholes, key=lambda t: (t != _singular(t), t)):  # "config" before "configs": the same for every process
        if t in idf:
            words.setdefault(_singular(t), t)
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
        bonus = min(c.bonus, 2 * SYMBOL_BONUS) + min(c.point, POINT_CAP)
        c.score = c.hub * prior(c, terms) * (c.lexical / top + bonus + (CUE_BONUS if cued(c.path, terms) else 0.0) + PATH_BONUS * path_share(c))
        c.score = max(c.score, c.floor)
    return sorted(found, key=lambda c: (-round(c.score, SCORE_DIGITS), c.path))


def file_why(c: Candidate, terms: TaskTerms, present: set[str], weight: Callable[[str], float]) -> tuple[str, ...]:
    out = [*dict.fromkeys(c.pointed), *(f"defines {s}" for s in c.symbols)]
    if c.named:
        out.append(f"name: {c.named}")
    if c.listed:
        out.append("lists " + ", ".join(c.listed))
    if c.hub_why:
        out.append(c.hub_why)
    if c.beside:
        out.append(f"beside {c.beside}")
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


def reader(read: Callable[[str], tuple[bytes, float] | None]) -> tuple[Callable[[str], tuple[bytes, float] | None], Callable[[str], str | None]]:
    """``read`` remembered (the ranking reads a few files the answer shows again), and
    the text of what it reads (None: unreadable)."""
    got: dict[str, tuple[bytes, float] | None] = {}
    texts: dict[str, str | None] = {}  # as ``show`` reads it: CRLF and a BOM aside

    def once(path: str) -> tuple[bytes, float] | None:
        if path not in got:
            got[path] = read(path)
        return got[path]

    def text_of(path: str) -> str | None:
        if path not in texts:  # decoded once: the ranking asks for a file's text per word
            data = once(path)
            texts[path] = None if data is None else as_text(data[0])
        return texts[path]

    return once, text_of


def as_text(data: bytes) -> str:
    """A file's bytes as the ranking and its regions read them."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").removeprefix("\ufeff")


def task_notes(task: str, terms: TaskTerms) -> list[str]:
    """What was cut from the task itself, in words."""
    notes = []
    if terms.cut:
        notes.append(
            f"the task is long: searched {len(terms.weights)} of its {terms.total} distinct terms, the strongest kinds first (frames, messages, options, paths, code names)"
        )
    if terms.report.boilerplate:
        left = f", {terms.weak_left} of its words not searched" if terms.weak_left else ""
        notes.append(f"read as boilerplate, weighing little{left}: " + boilerplate_lines(terms.report.boilerplate))
    if len(task) > MAX_TASK_CHARS:
        notes.append(f"only the first {MAX_TASK_CHARS:,} of {len(task):,} characters of the task were read")
    return notes


def boilerplate_lines(blocks: Sequence[tuple[int, int, str]]) -> str:
    """``lines 26-29 (environment), 2, 22 (template)``: the boilerplate blocks by what they are, three each."""
    by_what: dict[str, list[str]] = {}
    for first, last, what in blocks:
        by_what.setdefault(what, []).append(f"{first}-{last}" if last > first else str(first))
    return "lines " + ", ".join(f"{', '.join(spans[:3])}{' ...' if len(spans) > 3 else ''} ({what})" for what, spans in by_what.items())


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
    text_of: Callable[[str], str | None] | None = None,
) -> list[FileHit]:
    """The shown files: each read (``read`` as for ``locate``), its regions on
    ``definitions(path, data)``, why, lines and whole-file tokens. ``end`` (monotonic
    seconds): a file met past it is listed without them, and ``notes`` says so.
    ``text_of``: the texts the ranking already decoded (``reader``)."""
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
        text = (text_of(c.path) if text_of is not None else None) or as_text(data)
        present: set[str] = set()
        regs = regions(c.path, text, definitions(c.path, data), terms, idf, named=c.definitions, count=count, limit=regions_per_file, present=present, pointed=c.lines)
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
    from ..refs import Result

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
        res.add_notice(f"showing {len(found.files):,} of {found.total:,}{more} matching files; name more of the task's words to narrow it, or raise limit.")
    return res
