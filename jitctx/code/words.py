"""The words of lexical relevance: identifier sub-words of paths, contents and tasks.

Owns one rule, used on both sides of the ranking (what the index stores
for a file, and what a task is turned into), so that they always agree:
every identifier (``[A-Za-z0-9_]`` runs and non-ASCII letters) becomes its
whole form, folded (``einsum_path`` -> ``einsumpath``,
``JPEGLoadingContext`` -> ``jpegloadingcontext``), and, when it has more
than one, its sub-words (``einsum``, ``path``; ``jpeg``, ``loading``,
``context``): ``snake_case`` and ``camelCase`` split, digits apart. Words
are whole, never substrings: ``rational`` does not match ``irrational``.
The output is space-separated, ready for FTS5's ``ascii`` tokenizer (which
then only folds case). A file's words are made from its bytes
(``content_terms_of``: the same string as ``content_terms`` of the decoded
text, mostly in C: the build's hot path). Does not own ranking (``locate``)
nor stop words of a task (``locate``).
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import chain, repeat
from operator import mul

from ..text.redact import redact_bytes, redact_text

__all__ = ["MAX_WORD", "TF_CAP", "content_terms", "content_terms_of", "path_terms", "split", "words"]

TF_CAP = 8  # occurrences of one identifier a file's content counts for (``content_terms``)
MAX_WORD = 64  # longer runs (hashes, base64, minified code) carry no signal and bloat the index
_IDENT = re.compile(r"[^\W_]+(?:_+[^\W_]+)*", re.UNICODE)
# the same on ASCII text (most files), a third faster than the Unicode classes
_IDENT_ASCII = re.compile(r"[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)*")
# Sub-word boundaries inside one identifier: a plural acronym stays whole (URLs, IDs), an upper-case run before a capitalised
# word (HTTPServer -> HTTP Server), a lower/digit-to-upper step, letter/digit steps.
# Non-ASCII identifiers split on underscores only (case steps are script-specific).
_PARTS = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_cache: dict[str, str] = {}
_CACHE_MAX = 200_000
# Bytes to identifier runs (``content_terms_of``): the bytes of ``[A-Za-z0-9_]`` and every non-ASCII byte
# kept, every other byte a space; a run's non-ASCII part is decoded and cut by ``_IDENT`` (an ASCII byte is
# never inside a UTF-8 sequence, so a run decodes as it would inside the whole text).
_RUNS = bytes(c if chr(c).isalnum() and c < 128 or c == 95 or c >= 128 else 32 for c in range(256))
# The parts of many ASCII identifiers at once, one a line (``_fill``): the same parts, a newline between identifiers.
_PARTS_LINES = re.compile(_PARTS.pattern + "|\n")
_STRIP_PASSES = 8  # underscores at a run's end stripped in bulk up to this deep; deeper, one run at a time
# identifier (UTF-8) -> its terms and a space ("" when it has none): the words of a file are one ``join`` of these
_bcache: dict[bytes, str] = {}


def split(identifier: str) -> list[str]:
    """The folded whole form of one identifier and its sub-words (if more than one).

    >>> split("einsum_path")
    ['einsumpath', 'einsum', 'path']
    >>> split("JPEGLoadingContext")
    ['jpegloadingcontext', 'jpeg', 'loading', 'context']
    >>> split("greet")
    ['greet']
    """
    chunks = [c for c in identifier.split("_") if c]
    parts = [p.lower() for c in chunks for p in (_PARTS.findall(c) if c.isascii() else (c,))] or [identifier.lower()]
    whole = "".join(parts)
    return [whole] if len(parts) == 1 else [whole, *parts]


def _terms(identifier: str) -> str:
    got = _cache.get(identifier)
    if got is None:
        got = " ".join(split(identifier)) if len(identifier) <= MAX_WORD else ""
        if len(_cache) > _CACHE_MAX:
            _cache.clear()
        _cache[identifier] = got
    return got


def words(text: str) -> list[str]:
    """Every word of ``text`` in order, identifiers expanded (see the module docstring)."""
    out: list[str] = []
    for ident in _IDENT.findall(text):
        got = _terms(ident)
        if got:
            out.extend(got.split(" "))
    return out


def content_terms(text: str) -> str:
    """A file's content as the index stores it: each identifier's terms once per
    occurrence, up to ``TF_CAP`` occurrences (BM25's term frequency saturates: 8 scores
    0.87 of the most any count can, and a word a file repeats a thousand times is
    not a thousand times the evidence), grouped by identifier in the order they first
    occur. Order carries nothing (no phrase is ever asked); grouped, the words cost a
    third of the index's writing and compress several times better.

    The hot path of an index build: identifiers are counted in C (``Counter``), and
    each distinct one is looked up once (in C too), split in Python only when new.
    A secret in it (``text.redact``) is no word: a task that names it must find
    nothing, as a grep for it does."""
    return _grouped_terms(redact_text(text)[0])  # a scan for the rules' needles when there is none


def _grouped_terms(text: str) -> str:
    counts = Counter((_IDENT_ASCII if text.isascii() else _IDENT).findall(text))
    got = list(map(_cache.get, counts))
    if None in got:
        got = [g if g is not None else _terms(i) for g, i in zip(got, counts)]
    # all in C: each identifier's terms repeated min(n, TF_CAP) times, the empty ones dropped
    return " ".join(filter(None, chain.from_iterable(map(repeat, got, map(min, counts.values(), repeat(TF_CAP))))))


def _fill(missing: list[bytes]) -> None:
    """Put in ``_bcache`` the identifiers it does not hold, all at once: one decode, one regex
    pass and one lower-casing for the ASCII ones."""
    short = [m for m in missing if len(m) <= MAX_WORD and m.isascii()]
    if short:
        joined = b"\n".join(short).decode("ascii")
        wholes = joined.replace("_", "").lower().split("\n")
        parts = " ".join(_PARTS_LINES.findall(joined)).lower().split(" \n ")
        _bcache.update(zip(short, [w + " " + p + " " if " " in p else w + " " for w, p in zip(wholes, parts)]))
    if len(short) < len(missing):
        for m in missing:
            if m not in _bcache:  # non-ASCII (cut as ``split`` cuts it), or too long: no words
                got = _terms(m.decode("utf-8")) if len(m) <= 4 * MAX_WORD else ""
                _bcache[m] = got + " " if got else ""


def _rebuild(counts: dict[bytes, int]) -> dict[bytes, int]:
    """``counts`` of runs as counts of identifiers: underscores at a run's ends stripped, a
    run with non-ASCII bytes decoded and cut by ``_IDENT``; in the order they first occur."""
    fixed: dict[bytes, int] = {}
    get = fixed.get
    for run, n in counts.items():
        if run.isascii():
            run = run.strip(b"_")
            if run:
                fixed[run] = get(run, 0) + n
            continue
        for ident in _IDENT.findall(run.decode("utf-8", "replace")):
            key = ident.encode("utf-8")
            fixed[key] = get(key, 0) + n
    return fixed


def _identifiers(data: bytes) -> dict[bytes, int]:
    """The identifiers of ``data`` (UTF-8, invalid bytes as U+FFFD: as ``text.lines.decode``
    reads it) as UTF-8, each with its count, in the order they first occur: what
    ``Counter(_IDENT.findall(text))`` counts, made from bytes in C for the most part.
    Runs with underscores at their ends (``__init__``, ``_private``) are stripped all at once
    when none becomes another's identifier; else, and for a file with non-ASCII bytes, the
    runs are put right one at a time (``_rebuild``)."""
    counts = Counter(data.translate(_RUNS).split())
    if not data.isascii():
        return _rebuild(counts)
    if b"_" not in data:
        return counts
    runs = b"\n" + b"\n".join(counts) + b"\n"
    for _ in range(_STRIP_PASSES):
        if b"\n_" not in runs and b"_\n" not in runs:
            break
        runs = runs.replace(b"\n_", b"\n").replace(b"_\n", b"\n")
    else:
        return _rebuild(counts)
    fixed = dict(zip(runs[1:-1].split(b"\n"), counts.values()))
    return fixed if len(fixed) == len(counts) and b"" not in fixed else _rebuild(counts)


def content_terms_of(data: bytes) -> str:
    """``content_terms`` of ``data`` decoded as ``text.lines.decode`` does (BOM stripped by the
    caller), the same string, made without decoding: the build's hot path (issue 32). Runs of
    identifier bytes are split and counted in C; an identifier's terms are made once per
    process (``_bcache``), many at a time; the output is one ``join`` of them, each repeated
    ``min(count, TF_CAP)`` times. A secret is no word (``content_terms``): the bytes are
    redacted first (``text.redact``: a scan for the rules' needles when there is none)."""
    data = redact_bytes(data)
    if len(_bcache) > _CACHE_MAX:
        _bcache.clear()
    counts = _identifiers(data)
    got = list(map(_bcache.get, counts))
    if None in got:
        _fill([i for g, i in zip(got, counts) if g is None])
        got = list(map(_bcache.get, counts))
    return "".join(map(mul, got, map(min, counts.values(), repeat(TF_CAP))))[:-1]


def path_terms(path: str) -> str:
    """A repo-relative path as the index stores it: each folder and the name, split like identifiers."""
    return _grouped_terms(path.replace("/", " ").replace(".", " "))  # a path is shown as it is: nothing to redact
