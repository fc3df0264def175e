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
then only folds case). Does not own ranking (``locate``) nor stop words of
a task (``locate``).
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import chain, repeat

from ..text.redact import redact_text

__all__ = ["MAX_WORD", "TF_CAP", "content_terms", "path_terms", "split", "words"]

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
        if len(_cache) > 200_000:
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
    text = redact_text(text)[0]  # a scan for the rules' needles when there is none
    counts = Counter((_IDENT_ASCII if text.isascii() else _IDENT).findall(text))
    got = list(map(_cache.get, counts))
    if None in got:
        got = [g if g is not None else _terms(i) for g, i in zip(got, counts)]
    # all in C: each identifier's terms repeated min(n, TF_CAP) times, the empty ones dropped
    return " ".join(filter(None, chain.from_iterable(map(repeat, got, map(min, counts.values(), repeat(TF_CAP))))))


def path_terms(path: str) -> str:
    """A repo-relative path as the index stores it: each folder and the name, split like identifiers."""
    return content_terms(path.replace("/", " ").replace(".", " "))
