"""What the index stores for one file: its definitions and its lexical words.

Owns :func:`analyze`, the extraction the index is refreshed with
(``Index.refresh(..., analyze)``), and its identity :data:`ANALYZER` (rows
made by another identity are rebuilt, never trusted). For every text file:
the path's and the content's words (``words``); for a file with a grammar
(``parse.language_for``), its outline's definitions, or either part alone
(a build takes the words first, the definitions after: issue 32). Their
token costs are not counted here (issue 23: ~12 % of a cold build for counts
mostly never shown): the code index prices a definition when it shows one,
as the read that fetches it (``headtail.read_costs``). A binary file (a NUL byte
in its first 8 KiB) is declined. Module level and free of state, so that it
pickles into worker processes. Does not read files (the index's caller
does, through the safe-open seam) nor rank anything.
"""

from __future__ import annotations

from dataclasses import replace

from ..text.lines import decode, is_binary, strip_bom
from . import words
from .outline import outline
from .parse import language_for

__all__ = ["ANALYZER", "analyze"]

# Bump when what analyze() returns changes: stores made by another identity are rebuilt.
# 2: plural acronyms (URLs) are one word; 3: definitions unpriced (counted when shown); 4: words
# capped, grouped; 5: a .h is C++ by its whole text; 6: stubs marked, C++ names with one separator; 7: parts;
# 8: no word from a secret (text.redact)
ANALYZER = "jitctx.code.analyze/8"


def analyze(path: str, data: bytes, parts: str = "all") -> tuple[list | None, str | None, str | None] | None:
    """``(definitions, path_terms, content_terms)`` for ``data`` at ``path``, or
    None for a binary file (see the module docstring). ``parts``: ``all``;
    ``words`` (definitions None for a file with a grammar: they come later, the
    lexical-first build; ``[]`` for one without); ``definitions`` (no words)."""
    if is_binary(data):
        return None
    data = strip_bom(data)
    language = language_for(path, data)  # the whole file: a C++ header may show it late
    definitions: list | None = [] if language is None else None
    if language is not None and parts != "words":
        definitions = list(outline(language, data).definitions)
        if definitions and path.endswith(".pyi"):  # a typing stub: its implementation is elsewhere
            definitions = [replace(d, stub=True) if d.kind in ("function", "method") else d for d in definitions]
    if parts == "definitions":
        return definitions, None, None
    text = decode(data)[0]  # as headtail decodes: invalid UTF-8 replaced
    return definitions, words.path_terms(path), words.content_terms(text)
