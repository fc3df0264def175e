"""The answer to a task: the files shown, each with its regions, why, and what it costs.

Owns :class:`FileHit` (one ranked file, its text form), :class:`Located`
(the answer), reading the shown files once (``reader``: the ranking reads a
few of them too), their regions (``regions``), why each was chosen
(``file_why``), whole-file prices within a time limit (``show``), what was
cut from the task (``task_notes``) and the ``locate`` envelope
(``to_result``). Does not own the ranking (``rank``) or the evidence
(``evidence``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..code import words as W
from .evidence import Candidate
from .regions import REGIONS, Region, regions
from .terms import MAX_TASK_CHARS, TaskTerms
from .weights import CANDIDATES

TYPE_CHECKING = False  # as typing's (workspace.py says why)
if TYPE_CHECKING:
    from ..refs import Result

__all__ = ["FileHit", "Located", "as_text", "boilerplate_lines", "file_why", "reader", "show", "task_notes", "to_result"]


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
        from ..render import human_size, show_name

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
    shown = terms.written  # a compound name as the task wrote it (``format_to_n``), not its folded term
    if path_hits:
        out.append("path: " + ", ".join(shown.get(t, t) for t in path_hits[:4]))
    if present:
        out.append("terms: " + ", ".join(shown.get(t, t) for t in sorted(present, key=lambda t: (-weight(t), t))[:6]))
    return tuple(out)


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
