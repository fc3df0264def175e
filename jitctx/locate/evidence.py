"""The evidence a file is what a task is about, gathered beyond the lexical query.

Owns :class:`Candidate` (a file being ranked and everything said for it) and
each kind of evidence the ranking (``rank``) adds to the candidates: the
index's definitions of a name the task gives (``definitions``, ``credit``), a
constant no definition names but a file declares (``declared``), a name table
binding a rare task word to a function (``bind``), a file listing a name a
task about listing gives (``listed``), generated files and stubs beside their
source (``hubs``), a C/C++ header's implementation (``paired``) and a file the
task names (``name_bonus``). A few files' lines are read through ``text_of``
(``mentions`` judges them). Does not own the weights (``weights``), the
scoring and order (``rank``) or the answer (``answer``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..code import words as W
from ..errors import QueryError
from . import mentions as M
from .roles import file_role
from .terms import TaskTerms
from .weights import (
    BIND_BONUS,
    BIND_DF,
    BIND_WORDS,
    ENTRY_STEMS,
    GENERATED_PRIOR,
    HEADER_EXT,
    HOLDING_DF,
    IMPLEMENTATION_EXT,
    LIST_BONUS,
    NAME_BONUS,
    PAIR_SHARE,
    PATH_WEIGHT,
    PROPER_FILES,
    SCAN_FILES,
    STUB_PRIOR,
    SYMBOL_BONUS,
)

__all__ = ["Candidate", "bind", "candidate", "credit", "declared", "definitions", "hubs", "implementation", "listed", "name_bonus", "names_file", "paired", "quote"]


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


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def definitions(index, name: str, *, exact_name: bool = False) -> list:
    """The index's exact (or qualified) definitions of ``name``; ``exact_name``: named so, case and all."""
    try:
        look = index.find(name, limit=40)
    except QueryError:
        return []
    return [h for h in look.hits if h.tier in ("exact", "qualified") and (not exact_name or h.definition.name == name)]


def candidate(index, found: dict[str, Candidate], path: str, is_test: bool = False) -> Candidate:
    c = found.get(path)
    if c is None:
        state = index.state(path)
        c = found[path] = Candidate(path, 0.0, state.size if state else 0, "test" if is_test else file_role(path))
    return c


def credit(index, found: dict[str, Candidate], hits: list, name: str, share: float) -> None:
    """Give the files defining ``name`` (``hits``) ``share`` each, once a name."""
    for h in hits:
        c = candidate(index, found, h.path, h.is_test)
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
    got = index.search("content_terms : " + quote(term), weights=(PATH_WEIGHT, 1.0), limit=4 * SCAN_FILES)  # tests and docs are left out
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
            _give(candidate(index, found, path), last, SYMBOL_BONUS / math.sqrt(len(sites)))


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
            hits = definitions(index, ident, exact_name=True)
            files = list(dict.fromkeys(h.path for h in hits))
            if hits and len(files) <= PROPER_FILES:
                credit(index, found, hits, ident, (BIND_BONUS + df[term][1]) / math.sqrt(len(files)))
                resolved.add(ident)
        tables = [path for path, got in by_table.items() if resolved.intersection(got)]  # binds a function, not a variable
        if terms.lists and len(tables) <= PROPER_FILES:  # the table is where a name is listed
            for path in tables:
                c = candidate(index, found, path)
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
            c = candidate(index, found, path)
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
        pulled = candidate(index, found, impl)
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
