"""What the index stores for one file: its definitions and its lexical words.

Owns :func:`analyze`, the extraction the index is refreshed with
(``Index.refresh(..., analyze)``), and its identity :data:`ANALYZER` (rows
made by another identity are rebuilt, never trusted). For every text file:
the path's and the content's words (``words``); for a file with a grammar
(``parse.language_for``), its outline's definitions. Their token costs are
not counted here (issue 23: ~12 % of a cold build for counts mostly never
shown): :func:`definition_text` is what the code index prices when it shows
one. A binary file (a NUL byte in its first 8 KiB) is declined. Module level and free of state, so that it
pickles into worker processes. Does not read files (the index's caller
does, through the safe-open seam) nor rank anything.
"""

from __future__ import annotations

from dataclasses import replace

from ..text import decode, is_binary, strip_bom
from . import words
from .outline import outline
from .parse import language_for

__all__ = ["ANALYZER", "analyze", "definition_text"]

# Bump when what analyze() returns changes: stores made by another identity are rebuilt.
# 2: plural acronyms (URLs) are one word; 3: definitions unpriced (counted when shown); 4: words
# capped, grouped; 5: a .h is C++ by its whole text; 6: stubs marked, C++ names with one separator
ANALYZER = "jitctx.code.analyze/6"


def definition_text(lines: list[str], start_line: int, end_line: int) -> str:
    """The content ``head --symbol`` shows for lines ``start_line..end_line``
    of ``lines`` (``text.split_lines``), as an excerpt's content is counted:
    each line with its newline."""
    return "".join(line + "\n" for line in lines[start_line - 1 : end_line])


def analyze(path: str, data: bytes) -> tuple[list, str, str] | None:
    """``(definitions, path_terms, content_terms)`` for ``data`` at ``path``, or
    None for a binary file (see the module docstring)."""
    if is_binary(data):
        return None
    data = strip_bom(data)
    text = decode(data)[0]  # as peek decodes: invalid UTF-8 replaced
    language = language_for(path, data)  # the whole file: a C++ header may show it late
    definitions = list(outline(language, data).definitions) if language is not None else []
    if definitions and path.endswith(".pyi"):  # a typing stub: its implementation is elsewhere
        definitions = [replace(d, stub=True) if d.kind in ("function", "method") else d for d in definitions]
    return definitions, words.path_terms(path), words.content_terms(text)
