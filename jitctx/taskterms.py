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

import re
from dataclasses import dataclass

from . import mentions as M
from .code import words as W
from .errors import QueryError

__all__ = ["AREA_WEIGHT", "CODE_WEIGHT", "MAX_TASK_CHARS", "MAX_TERMS", "STOP_WORDS", "TaskTerms", "task_terms"]

MAX_TERMS = 48  # distinct terms searched; a longer task is cut (and says so)
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
