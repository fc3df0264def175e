"""What a file's lines say of a task's names: bound in a table, listed, or generated.

Task retrieval ranks files by their words; some evidence is only in the
lines (issue 24):

- ``bound``: a name table binds a task's word, as a string, to the function
  that implements it (``{"getrange", getrangeCommand, ...}``, ``{"can_cast",
  (PyCFunction)array_can_cast_safely}``, ``{f_getpath, "getpath", 2}``).
  The identifiers in such a row that hold the word are what the task is
  about, across languages: the Python name, the C function.
- ``lists``: a line imports, exports or registers a name (``from .m import
  Method``, an ``__all__`` item, ``pub use``, ``register(...)``): the sites
  a task that says "import", "export", "register" or "list" changes.
- ``declares``: a line gives a name its value, where the outline sees no
  definition: a constant, a variable, an object-like macro (``#define
  CACHE_LINE_SIZE 64``, Go's ``chunkSize int = 100`` in a ``const`` block,
  ``static final int MAX = 3;``, ``pub const N: usize = 4;``, ``LIMIT = 10``).
- ``generated``: a file's header says a tool wrote it (``Code generated ...
  DO NOT EDIT``, GNU Bison's banner): a table that mentions everything,
  rarely where a change is made by hand.

Owns those four reads of a text, each bounded per match (``ROW`` characters
either side, the first ``MAX_LINES`` places): a 2 MB line costs no more than a
short one. Does not own the ranking that weighs them (``locate``) nor reading
files (the caller's).
"""

from __future__ import annotations

import re

__all__ = ["LISTING_WORDS", "bound", "declares", "fold", "generated", "lists"]

# A task with one of these words is about where a name is listed (issue 24, class 5).
LISTING_WORDS = frozenset(
    "import imports imported importing reexport reexports export exports exported exporting register registers "
    "registered registering registration registry __all__ list listed table alias aliases".split()
)
MAX_LINES = 64  # lines holding the word read per file: a table names a function once
HEAD = 2_000  # characters of a file's start read for a generator's banner
MIN_FOLD = 4  # a word shorter than this (folded) binds too much to mean anything
ROW = 1_000  # characters of a table row read after the word (redis's MAKE_CMD rows run long)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")
_BANNER = re.compile(
    r"\bcode generated\b|\b(?:auto(?:matically)?[- ]?)generated\b|\bgenerated (?:by|from|with|using)\b|\bthis file (?:is|was) generated\b"
    r"|\bdo not (?:edit|modify)\b|@generated\b|\bmade by gnu bison\b|\bbison parser\b|\ba lexical scanner generated\b",
    re.IGNORECASE,
)
# Lines that import, export or register what they name; a list item alone on its line
# (a multi-line import, an ``__all__`` entry) is checked apart, on the name itself.
_LISTING = re.compile(
    r"^\s*(?:from\s+\S+\s+)?import\b|^\s*export\b|\b__all__\b|^\s*pub(?:\([\w:]+\))?\s+(?:use|mod)\b|^\s*(?:use|mod)\s"
    r"|^\s*#\s*include\b|\brequire\s*\(|\bregister\w*\s*\(|\bimport\s*\(",
)


def fold(word: str) -> str:
    """A name as case and underscores aside: ``can_cast``, ``canCast`` -> ``cancast``."""
    return word.replace("_", "").lower()


def _row_start(text: str, at: int) -> int:
    """Where the line holding ``at`` starts, or ``ROW`` characters before it in a longer one."""
    return text.rfind("\n", max(0, at - ROW), at) + 1 or max(0, at - ROW)


def _lines_holding(text: str, pattern: re.Pattern[str]) -> list[str]:
    out: list[str] = []
    for m in pattern.finditer(text):  # each line, or ``ROW`` characters either side of the match in a longer one
        start = _row_start(text, m.start())
        end = text.find("\n", m.end(), m.end() + ROW)
        line = text[start : end if end != -1 else min(len(text), m.end() + ROW)]
        if not out or out[-1] != line:
            out.append(line)
        if len(out) >= MAX_LINES:
            break
    return out


def _rows_holding(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Each match's table row: from its line's start to the row's end (the ``}``,
    ``)`` or ``]`` closing it, a ``;``, or a line's end not after a comma), at most
    ``ROW`` characters: a row may span lines
    (vim's ``{"setcellwidths", 1, 1, ...,\n ret_void, f_setcellwidths},``)."""
    out: list[str] = []
    for m in pattern.finditer(text):
        start = _row_start(text, m.start())
        end, depth, limit = m.end(), 0, min(len(text), m.end() + ROW)
        while end < limit:  # to the bracket closing the row, strings skipped ("O(N)" in a summary)
            ch = text[end]
            if ch in "\"'":
                got = _STRING.match(text, end, limit)
                end = got.end() if got else end + 1
                continue
            if ch in "({[":
                depth += 1
            elif ch in ")}]" and depth:
                depth -= 1
            elif ch in ")};]":
                break
            elif ch == "\n" and not depth and not text[m.end() : end].rstrip().endswith(","):
                break  # a statement's end, not a row going on (``return "xpassed", ...``)
            end += 1
        out.append(text[start:end])
        if len(out) >= MAX_LINES:
            break
    return out


def bound(text: str, word: str) -> list[str]:
    """The identifiers ``text`` binds to ``word``: in a table row that holds ``word``
    as a string literal (case aside), those whose folded form holds ``word``'s and is
    not it (``getrangeCommand`` for "getrange"); first seen first."""
    want = fold(word)
    if len(want) < MIN_FOLD:
        return []
    quoted = re.compile(r"([\"'])" + re.escape(word) + r"\1", re.IGNORECASE)
    out: dict[str, None] = {}
    for row in _rows_holding(text, quoted):
        for ident in _IDENT.findall(_STRING.sub(" ", row)):  # names, not the words of strings (an ``__all__`` of them)
            f = fold(ident)
            if f != want and want in f:
                out.setdefault(ident)
    return list(out)


def lists(text: str, name: str) -> bool:
    """Whether ``text`` only lists ``name`` (the name as written, a whole word): every
    line holding it imports, exports or registers it, or holds it alone as an item of a
    multi-line import or ``__all__`` does. A file that also uses the name is no list."""
    word = re.compile(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])")
    alone = re.compile(r"^\s*[\"']?" + re.escape(name) + r"[\"']?\s*(?:as\s+\w+\s*)?,?\s*(?:#.*|//.*)?$")
    lines = _lines_holding(text, word)
    return bool(lines) and all(len(line) <= ROW and (_LISTING.search(line) or alone.match(line)) for line in lines)


_BLOCK = re.compile(r"^[ \t]*(?:const|var)[ \t]*\([ \t]*$")
_DEFINE = re.compile(r"#[ \t]*define[ \t]+$")
_KEYWORD = re.compile(r"\b(?:const|let|var|static|final|val)\b[^=;(\n]*$")
_VALUE = re.compile(r"[ \t]*(?::[^=\n]{1,200})?=(?!=)")
_BARE_VALUE = re.compile(r"(?:[ \t]*:[^=\n]{1,200}|[ \t]+[\w\[\]*.]{1,100})?[ \t]*=(?!=)")
BACK = 20_000  # characters above a bare assignment searched for the Go block opening it


def declares(text: str, name: str) -> bool:
    """Whether a line of ``text`` declares ``name`` (as written) with its value: an
    object-like ``#define``, a ``const``/``let``/``var``/``static``/``final``/``val``
    declaration, or the name at a line's start assigned (``NAME = ...``) where that
    line is no statement of a function body: at the top level, an upper-case
    constant (a class attribute too), or inside a Go ``const (``/``var (`` block
    (``chunkSize int = 100``). Not ``x.name = ...``, a comparison, nor a local
    variable (``remote_src = args.get(...)`` in a method). Each of the first
    ``MAX_LINES`` places holding the name is judged on ``ROW`` characters around it:
    a 2 MB line costs no more than a short one."""
    word = re.compile(r"(?<![\w.$])" + re.escape(name) + r"(?![\w$])")
    for seen, m in enumerate(word.finditer(text)):
        if seen >= MAX_LINES:
            break
        line_start = text.rfind("\n", max(0, m.start() - ROW), m.start()) + 1
        before = text[max(line_start, m.start() - ROW) : m.start()]
        after = text[m.end() : m.end() + ROW]
        if _DEFINE.search(before):
            if not after.startswith("("):
                return True
            continue
        if _KEYWORD.search(before) and _VALUE.match(after):
            return True
        at_start = line_start >= m.start() - ROW and not before.strip(" \t")
        if at_start and _BARE_VALUE.match(after):
            if not before or name.isupper():
                return True
            for line in reversed(text[max(0, line_start - BACK) : line_start].split("\n")[-200:]):  # the nearest block opening or closing above
                if line.strip() == ")":
                    break
                if _BLOCK.match(line):
                    return True
    return False


def generated(text: str) -> bool:
    """Whether the start of ``text`` says a tool generated it."""
    return _BANNER.search(text[:HEAD]) is not None
