"""Where a report's structure points in the repository: frames, paths, messages, options.

Task retrieval ranks files by the words they share with a task; a report also
points at files directly (DESIGN section 10, issue 31):

- ``frames``: a traceback frame's path, mapped to the repository's file by
  the longest common ending of their folders (``site-packages/marshmallow/
  schema.py`` is ``src/marshmallow/schema.py``); frames that map nowhere are
  another project's (the standard library, site-packages, node_modules). The
  innermost frame of the project's own code weighs most, outer ones less.
- ``paths``: a file path or a module name the report writes
  (``src/walk.rs``, ``dayjs/plugin/relativeTime``, ``astroid.brain.brain_numpy``).
- ``messages``: an error message the report quotes, looked for as a literal
  in the source (its variable parts, numbers, quoted values, paths, left
  out: the longest constant run of words is what the source holds).
- ``options``: a command-line option or a config key (``--max-depth``,
  ``rst_prolog``), looked for as a string literal (``"max-depth"``,
  ``'rst_prolog'``): where it is defined.

Each is a ``Pointer``: a file, its bonus, why, and the lines it names (a
frame's line, the message's line) for the regions. Files are found through
the index (its path words, its content words: never a scan of the tree) and
read through the caller's ``text_of``; every lookup is bounded (``LOOKUPS``,
``READ``). Does not own reading the report (``report``), the terms
(``taskterms``) nor the ranking that adds the bonuses (``locate``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..code import words as W
from .report import Report

__all__ = ["FRAME_BONUS", "MESSAGE_BONUS", "OPTION_BONUS", "PATH_BONUS", "Pointer", "point"]

FRAME_BONUS = 1.2  # the innermost frame of the project's own code
FRAME_DECAY = 0.5  # each next file outwards keeps this share
FRAME_FILES = 6  # files credited for frames at most
PATH_BONUS = 0.6  # a file the report names by its path or module name, shared among the files it maps to
MESSAGE_BONUS = 1.0  # a file holding a quoted message's constant text, shared (at most ``SITES`` files)
OPTION_BONUS = 0.8  # a file defining an option or a config key as a string, shared (at most ``SITES`` files)
SITES = 3  # a literal held by more files than this says little of where
LOOKUPS = 8  # paths, messages, options looked up each at most
READ = 12  # files read per message or option
MAP_ROWS = 400  # files holding a path's file name as a path word, considered for it
MIN_RUN = 10  # characters of a message's constant run, at least
_VARIABLE = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|<[^>]*>|\S*\d\S*|\S*[/\\]\S*|\S*::\S*|[^\s\w,.:;!?()-]+")
_WORD = re.compile(r"[A-Za-z]{2,}")


@dataclass(frozen=True, slots=True)
class Pointer:
    """A file the report points at: ``path``, the ``bonus`` it gives, ``why`` (for the
    answer: ``frame: schema.py:894 in validate``), ``lines`` it names (1-based), each
    with its own why, the strongest first (a file's innermost frame)."""

    path: str
    bonus: float
    why: str
    lines: tuple[tuple[int, str], ...] = ()


def _parts(path: str) -> list[str]:
    path = re.sub(r"^[a-z][a-z0-9+.-]*://+", "", path.replace("\\", "/"))
    return [p for p in path.split("/") if p and p not in (".", "..")]


def resolve(index, written: str, *, module: bool = False) -> list[str]:
    """The repository files a path as the report writes it is (best matches only):
    those whose path ends with the most of its parts (at least its file name, and
    two parts when it has more, unless the file name is unique); a ``module``
    (``a.b.c``, or a path without extension) may be ``a/b/c.<ext>`` or
    ``a/b/c/__init__.py``, ``index.js``, ``mod.rs``."""
    parts = _parts(written)
    if not parts:
        return []
    name = parts[-1]
    stem = name.split(".", 1)[0] if not module else name
    whole = W.split(stem)[0] if stem and len(stem) <= W.MAX_WORD and W.split(stem) else ""
    if not whole:
        return []
    rows = index.search('path_terms : "' + whole.replace('"', '""') + '"', weights=(1.0, 0.0), limit=MAP_ROWS)
    best: list[str] = []
    best_k = 0
    for path, _score, _size, _is_test in rows:
        mine = path.split("/")
        if module or "." not in name:
            base = mine[-1].split(".", 1)[0]
            if base == name:
                mine = [*mine[:-1], name]
            elif base in ("__init__", "index", "mod") and mine[-2:-1] == [name]:
                mine = mine[:-1]
            else:
                continue
        k = 0
        while k < min(len(mine), len(parts)) and mine[-1 - k] == parts[-1 - k]:
            k += 1
        if k == 0:
            continue
        if k > best_k:
            best, best_k = [path], k
        elif k == best_k:
            best.append(path)
    if not best:
        return []
    if best_k < min(2, len(parts)) and len(best) > 1:  # a common file name in another folder: not this one
        return []
    return best


def frames(index, report: Report) -> list[Pointer]:
    """The files of the project's own frames, innermost first (``FRAME_BONUS``, then
    ``FRAME_DECAY`` per file outwards), at most ``FRAME_FILES``; each with its frames' lines."""
    out: dict[str, list] = {}
    mapped: dict[str, list[str]] = {}
    for f in sorted(report.frames, key=lambda f: f.depth):
        if f.path not in mapped:
            if len(mapped) >= 2 * FRAME_FILES:
                continue
            mapped[f.path] = resolve(index, f.path)
        files = mapped[f.path]
        if len(files) != 1:  # nowhere (another project's), or ambiguous
            continue
        got = out.setdefault(files[0], [f, []])
        if f.line:
            got[1].append((f.line, _frame_why(f)))
        if len(out) >= FRAME_FILES:
            break
    pointers = []
    for i, (path, (f, lines)) in enumerate(out.items()):
        pointers.append(Pointer(path, FRAME_BONUS * FRAME_DECAY**i, _frame_why(f), tuple(dict.fromkeys(lines))))
    return pointers


def _frame_why(f) -> str:
    return f"frame: {f.path.rsplit('/', 1)[-1]}:{f.line}" + (f" in {f.function}" if f.function else "")


def paths(index, report: Report) -> list[Pointer]:
    """The files the report names by path or module name (``PATH_BONUS``, shared among
    the files one name maps to)."""
    out: list[Pointer] = []
    for written in report.paths[:LOOKUPS]:
        module = "/" not in written and "." in written and written.rsplit(".", 1)[-1] not in _EXTENSIONS
        if module:
            written = written.replace(".", "/")
        files = resolve(index, written, module=module or "." not in written.rsplit("/", 1)[-1])
        if 0 < len(files) <= SITES:
            out.extend(Pointer(p, PATH_BONUS / math.sqrt(len(files)), f"named: {written}") for p in files)
    return out


_EXTENSIONS = frozenset("py pyi rs go java kt js jsx mjs cjs ts tsx c h cc cpp cxx hpp hh rb php cs swift scala toml yaml yml json ini cfg md rst".split())


def constant_run(message: str) -> str:
    """The longest run of a message's words that no variable part breaks (numbers,
    quoted values, paths, ``<...>``): what a format string in the source holds
    (``Invalid value 'x' for field 3`` -> ``for field`` is shorter than ``Invalid value``)."""
    runs = [r.strip(" ,.:;!?()-") for r in _VARIABLE.split(message)]
    runs = [r for r in runs if len(_WORD.findall(r)) >= 2 and len(r) >= MIN_RUN]
    return max(runs, key=len, default="")


def _holders(index, words: list[str], role: Callable[[str], str]) -> list[str]:
    """The source files holding all of ``words`` most (by BM25), at most ``READ``."""
    terms = list(dict.fromkeys(t for w in words for t in W.split(w)[:1] if len(t) >= 2))
    if not terms:
        return []
    expr = " AND ".join('content_terms : "' + t.replace('"', '""') + '"' for t in terms)
    got = index.search(expr, weights=(1.0, 1.0), limit=4 * READ)
    return [p for p, _s, _z, is_test in got if not is_test and role(p) in ("source", "other")][:READ]


def _lines_of(text: str, at: list[int], why: str) -> tuple[tuple[int, str], ...]:
    return tuple((text.count("\n", 0, a) + 1, why) for a in at[:3])


def messages(index, report: Report, text_of: Callable[[str], str | None], role: Callable[[str], str]) -> list[Pointer]:
    """The files holding a quoted message's constant text (``constant_run``), case
    aside, when at most ``SITES`` of the ``READ`` likeliest do (``MESSAGE_BONUS``, shared)."""
    out: list[Pointer] = []
    for message in report.messages[:LOOKUPS]:
        run = constant_run(message)
        if not run:
            continue
        low = run.lower()
        why = 'message: "' + (run if len(run) <= 60 else run[:57] + "...") + '"'
        sites = []
        for path in _holders(index, _WORD.findall(run), role):
            text = text_of(path)
            if text is None:
                continue
            at = text.lower().find(low)
            if at != -1:
                sites.append((path, _lines_of(text, [at], why)))
        if 0 < len(sites) <= SITES:
            out.extend(Pointer(p, MESSAGE_BONUS / math.sqrt(len(sites)), why, lines) for p, lines in sites)
    return out


def options(index, report: Report, text_of: Callable[[str], str | None], role: Callable[[str], str]) -> list[Pointer]:
    """The files that define an option or a config key as a string literal (``"max-depth"``,
    ``'--max-depth'``, ``"max_depth"``), when at most ``SITES`` of the ``READ`` likeliest do."""
    out: list[Pointer] = []
    for option in report.options[:LOOKUPS]:
        bare = option.lstrip("-")
        parts = re.split(r"[-_]", bare)
        if len(bare) < 3 or not all(parts):
            continue
        literal = re.compile(r"[\"'](?:--?)?" + r"[-_]".join(map(re.escape, parts)) + r"[\"']")
        sites = []
        for path in _holders(index, parts, role):
            text = text_of(path)
            if text is not None and (m := literal.search(text)):
                sites.append((path, _lines_of(text, [m.start()], f"option: {option}")))
        if 0 < len(sites) <= SITES:
            out.extend(Pointer(p, OPTION_BONUS / math.sqrt(len(sites)), f"option: {option}", lines) for p, lines in sites)
    return out


def point(index, report: Report, text_of: Callable[[str], str | None] | None, role: Callable[[str], str]) -> list[Pointer]:
    """Every pointer of ``report`` (frames and paths always; messages and options when
    files can be read: ``text_of``)."""
    out = frames(index, report) + paths(index, report)
    if text_of is not None:
        out += messages(index, report, text_of, role) + options(index, report, text_of, role)
    return out
