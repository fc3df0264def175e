"""A task as search terms: the words ``locate`` searches for, and what they say.

Owns turning a task into weighted terms (``task_terms``): every identifier
becomes its folded whole form and its sub-words (``einsum_path`` ->
``einsumpath einsum path``), as the index stores files; English and
commit-message stop words, pure numbers, one-letter words and the
repository's own name are dropped. Names that look like code
(``snake_case``, ``camelCase``, ``a.b``, ``f()``, in backticks, ``--option``)
weigh ``CODE_WEIGHT``, other words 1; the words of the area a task starts
with (``nss: ...``, at most ``AREA_WORDS`` words before a colon)
``AREA_WEIGHT`` more. At most ``MAX_TERMS`` terms, in task order; a longer
task is cut and the result says so. Also what the task is about: code-like
names and capitalised words to look up, path cues, tests, docs, listing,
generated files. Does not own ranking (``locate``) nor the word rule
(``code.words``, the same on both sides).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from ..code import words as W
from ..errors import QueryError
from . import mentions as M
from . import report as R

__all__ = ["AREA_WEIGHT", "CODE_WEIGHT", "MAX_TASK_CHARS", "MAX_TERMS", "STOP_WORDS", "TaskTerms", "task_terms"]

MAX_TERMS = 56  # distinct terms searched; a longer task keeps the strongest kinds' (``KIND_BUDGET``) and says so
# Distinct terms each kind of evidence may bring (``report.KINDS``, strongest first): a long report keeps its
# frames, messages and options wherever they sit, and an environment dump or a log cannot use the terms up.
KIND_BUDGET = {"frame": 12, "message": 12, "option": 8, "path": 10, "tick": 16, "code": 16, "title": 12, "prose": 24, "output": 8, "boilerplate": 4}
WEAK_KINDS = frozenset({"output", "boilerplate"})  # never more terms than their budget
# A dotted word ending in one of these is a file's name (``walk.rs``): its stem is the term, never ``rs`` or ``py``.
FILE_EXTENSIONS = frozenset(
    "py pyi pyx rs go java kt kts scala js jsx mjs cjs ts tsx mts cts vue svelte c h cc cpp cxx hpp hh hxx m mm rb php cs swift "
    "lua pl pm sh bash zsh toml yaml yml json ini cfg conf md rst txt html css scss xml gradle cmake mk lock log".split()
)
MAX_TASK_CHARS = 20_000  # characters of the task read for terms: a 100 KB paste costs no more
MAX_NAMES = 16  # code-like names looked up as symbols
CODE_WEIGHT = 3  # repetitions of a code-like name's whole form in the query
AREA_WEIGHT = 2  # more for a word of the area a task starts with ("nss: fix the build"): the area is what changes
AREA_WORDS = 3  # ... of at most this many words before the colon

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
# Keywords of the common languages: in code, a traceback or output they say nothing of where (in prose they are words).
CODE_KEYWORDS = frozenset(
    """
self this cls def class import from return pass none null nil true false let const var function fn func new void int
char bool boolean string str float double long short unsigned signed static public private protected final
struct enum impl pub use mod crate super extern include define ifdef ifndef endif pragma package go defer
try catch except finally raise throw throws await async yield lambda print println printf console log
auto std main args argv argc ok err some
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
_NOT_AREA = re.compile(
    r"(?:Error|Exception|Warning|Panic)$|[\[\]()]|\d\.\d|^(?:bug|feature|question|proposal|request|help|rfc|enhancement|idea)\b", re.IGNORECASE
)  # an issue's "TypeError: ..."
_PAIR = re.compile(r"(?<![\w.-])([A-Za-z]{2,})[ -]+(?=([A-Za-z]{2,})(?![\w.(]))")  # two plain words in a row, overlapping
MAX_JOINS = 32
_JOINABLE = frozenset({"file", "files", "code", "test", "tests", "doc", "docs", "set", "get", "use", "make", "new", "old", "work"})  # "file name": ``filename``
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")


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
    imported, exported, registered or listed; ``generated``: about generated files;
    ``written``: a compound name's whole term -> the name as the task wrote it
    (``formatton`` -> ``format_to_n``), how evidence shows the term.
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
    kinds: dict[str, str] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)
    report: R.Report = field(default_factory=R.Report)
    weak_left: int = 0
    joins: dict[str, int] = field(default_factory=dict)

    @property
    def cut(self) -> bool:
        """Whether terms were left out beyond the weak kinds' budgets (``MAX_TERMS``)."""
        return self.total - self.weak_left > len(self.weights)


def _code_like(name: str, ticked: bool, dashes: str | None, parens: bool) -> bool:
    if ticked or parens or dashes:
        return True
    if any(sep in name for sep in (".", "::", "->")):
        parts = re.split(r"\.|::|->", name)
        return all(len(p) >= 2 for p in parts)
    core = name.strip("_")
    return "_" in core or name.startswith("_") and len(core) >= 2 or bool(_CAMEL.search(name)) or (any(c.isdigit() for c in name) and any(c.isalpha() for c in name))


def _kind_of(report: R.Report, at: int, ticked: bool, in_path: bool) -> str:
    kind = report.kind_at(at)
    if kind in ("frame", "message", "boilerplate"):
        return kind
    if in_path:
        return "path"
    if ticked and kind in ("prose", "title", "output"):
        return "tick"
    return kind


def _spans_of(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span(1) for m in pattern.finditer(text)]


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    i = bisect.bisect_right(spans, (at, 1 << 60)) - 1
    return i >= 0 and spans[i][0] <= at < spans[i][1]


def task_terms(task: str, *, repo_name: str = "") -> TaskTerms:
    """The search terms of ``task`` (see the module docstring); ``QueryError``
    for a task that is not text or holds no searchable word."""
    if not isinstance(task, str) or not task.strip():
        raise QueryError(f"the task must be non-empty text, got {task!r}"[:200], hint="describe the change, e.g. task='fix the retry loop in the HTTP client'", field="task")
    report = R.read_report(task[:MAX_TASK_CHARS])  # links too: a JS frame's path is one (``webpack:///./src/a.js:4:35``)
    text = _NOISE.sub(lambda m: " " * len(m.group(0)), task[:MAX_TASK_CHARS])  # the same offsets: the report's spans hold
    ticks = [m.span(1) for m in _TICKED.finditer(text)]
    ticked = {text[a:b].strip() for a, b in ticks}
    paths = _spans_of(R.PATH, text)
    options = [(m.start(1), m.end(1), m.group(1)) for m in R.OPTION.finditer(text)]
    option_spans = [(a, b) for a, b, _ in options]
    own = set(W.split(repo_name)) if repo_name else set()
    found: dict[str, list] = {}  # term -> [weight, kind rank, first offset, whole]
    names: dict[str, tuple[int, int]] = {}  # code-like name -> (kind rank, offset)
    proper: list[str] = []  # capitalised words that are not code-like: looked up, a bonus only when defined in few files
    dropped: list[str] = []
    seen_words: set[str] = set()
    lowered = {w.lower() for w in W._IDENT.findall(text)}  # noqa: SLF001 -- the same identifier rule as the index
    area = _AREA.match(text)  # "nss: ...", "Curl_wait_for_resolv: ...", "net/http: ..."
    area_end = area.end(1) if area and len(area.group(1).split()) <= AREA_WORDS and not _NOT_AREA.search(area.group(1)) else -1

    def drop(term: str) -> None:
        if term not in seen_words and len(term) >= 2 and not term.isdigit():
            dropped.append(term)
        seen_words.add(term)

    def add(term: str, weight: int, kind: str, at: int, whole: bool) -> None:
        rank = R.KINDS.index(kind)
        got = found.get(term)
        if got is None:
            found[term] = [weight, rank, at, whole]
        else:
            got[0], got[1], got[3] = max(got[0], weight), min(got[1], rank), got[3] or whole
        seen_words.add(term)

    written: dict[str, str] = {}

    def words_of(part: str, at: int, kind: str, code: bool, keep_stop: bool) -> None:
        split = W.split(part) if len(part) <= W.MAX_WORD else []
        if len(split) > 1:  # a compound name: its whole term is shown as the task wrote it
            written.setdefault(split[0], part.strip("_"))
        for i, term in enumerate(split):
            whole = i == 0
            if term in own or len(term) < 2 or term.isdigit():
                drop(term)
                continue
            if term in STOP_WORDS and not (keep_stop and whole) and not (code and whole and len(split) == 1 and "_" in part):
                drop(term)
                continue
            if term in CODE_KEYWORDS and kind in ("code", "output", "frame", "boilerplate", "message") and not keep_stop:
                drop(term)
                continue
            weight = (CODE_WEIGHT if code and whole and kind != "boilerplate" else 1) + (AREA_WEIGHT if at < area_end else 0)
            add(term, weight, kind, at, whole)

    for a, _b, option in options:  # ``--ignore-paths``: one name, its words
        kind = "boilerplate" if report.kind_at(a) == "boilerplate" else "option"
        words_of(option.lstrip("-").replace("-", "_"), a, kind, True, True)
    for m in _NAME.finditer(text):
        if option_spans and _inside(option_spans, m.start()):
            continue
        dashes, name, parens = m.group(1), m.group(2), bool(m.group(3))
        is_ticked = name in ticked or m.group(0) in ticked  # the backticks hold just this name: code, a stop word kept
        in_ticks = is_ticked or bool(ticks) and _inside(ticks, m.start())  # a word of a backticked phrase: its kind only
        parts = re.split(r"\.|::|->", name)
        if len(parts) > 1 and parts[-1].lower() in FILE_EXTENSIONS:  # ``walk.rs``, ``test.py``: a file's name, not ``rs`` or ``py``
            parts = parts[:-1]
            name = ".".join(parts)
            code = False
            in_path = True
        else:
            code = _code_like(name, is_ticked, dashes, parens)
            in_path = bool(paths) and _inside(paths, m.start())
        kind = _kind_of(report, m.start(), in_ticks, in_path)
        mine = bool(own) and set(W.split(name.strip("_"))[1:] or W.split(name.strip("_"))) <= own  # ``_pytest`` in pytest
        if code and not dashes and not mine and kind != "boilerplate" and name not in names:
            names[name] = (R.KINDS.index(kind), m.start())
        elif not code and name[:1].isupper() and len(name) >= 3 and name.lower() not in STOP_WORDS and name not in proper and kind not in ("boilerplate", "output"):
            proper.append(name)
        for part in parts:
            words_of(part, m.start(), kind, code, is_ticked or bool(dashes))
    joins: dict[str, int] = {}  # "man page" may be ``manpage`` in the code: looked up, searched only when the index has it
    for pair in _PAIR.finditer(text):
        first, second = pair.group(1), pair.group(2)
        joined = (first + second).lower()
        if (
            len(joins) < MAX_JOINS
            and (first.islower() or first.istitle())
            and second.islower()  # prose words, not ``NUMBER``
            and report.kind_at(pair.start()) in ("prose", "title")
            and not ({first.lower(), second} & (STOP_WORDS - _JOINABLE))
            and joined not in found
            and len(joined) <= W.MAX_WORD
        ):
            joins.setdefault(joined, 2)  # the two words as one: a phrase matched, both words' weight
    ranked = sorted(found.items(), key=lambda kv: (kv[1][1], kv[1][2]))  # strongest kind first, then as written
    weights: dict[str, int] = {}
    kinds: dict[str, str] = {}
    taken = dict.fromkeys(R.KINDS, 0)
    for term, (weight, rank, _at, _whole) in ranked:  # each kind its budget, strongest kinds first
        kind = R.KINDS[rank]
        if taken[kind] < KIND_BUDGET[kind] and len(weights) < MAX_TERMS:
            taken[kind] += 1
            weights[term], kinds[term] = weight, kind
    for term, (weight, rank, _at, _whole) in ranked:  # then what is left of ``MAX_TERMS``; output and boilerplate keep to theirs
        kind = R.KINDS[rank]
        if len(weights) >= MAX_TERMS:
            break
        if term not in weights and kind not in WEAK_KINDS:
            weights[term], kinds[term] = weight, kind
    weights = {t: weights[t] for t, _ in sorted(found.items(), key=lambda kv: kv[1][2]) if t in weights}  # task order, as before
    wholes = {t for t, v in found.items() if v[3]}
    if not weights:
        raise QueryError(
            "the task has no words to search for: only stop words, punctuation or numbers" + (f" (dropped: {', '.join(dropped[:12])})" if dropped else ""),
            hint="name what the change is about: a function, a file, a behaviour (e.g. 'retry timeout in the HTTP client')",
            field="task",
        )
    cues = tuple(dict.fromkeys(c.strip("/.") for c in _CUE.findall(text) if c.count("/") >= 1 and len(c.strip("/.")) >= 3))[:8]
    by_kind = sorted(names, key=lambda n: names[n])
    return TaskTerms(
        weights,
        tuple(by_kind[:MAX_NAMES]),
        cues,
        tuple(dict.fromkeys(dropped)),
        len(found),
        len(text),
        tests=bool(lowered & _TEST_WORDS),
        docs=bool(lowered & _DOC_WORDS),
        wholes=frozenset(wholes & weights.keys()),
        proper=tuple(p for p in proper if p.lower() in weights and p.lower() not in own)[:MAX_NAMES],
        lists=bool(lowered & M.LISTING_WORDS) or "__all__" in text,
        generated=any(w.startswith(("generat", "regenerat", "codegen")) for w in lowered),
        kinds=kinds,
        written={t: w for t, w in written.items() if t in weights},
        report=report,
        joins=joins,
        weak_left=sum(1 for t, v in found.items() if t not in weights and R.KINDS[v[1]] in WEAK_KINDS),
    )
