"""A file's role from its path alone: source, test, doc, data or other.

Owns the tables (source, doc and data extensions; doc folders and names) and
``file_role``. Does not own how much a role weighs (``weights.ROLE_PRIOR``)
or what a test path is (``code.testpaths``).
"""

from __future__ import annotations

from ..code.testpaths import is_test_path

__all__ = ["file_role"]

_SOURCE_EXT = frozenset(
    "py pyi pyw pyx pxd c h cc cpp cxx hpp hh hxx ipp inl m mm js jsx mjs cjs ts tsx mts cts go rs java kt kts scala swift cs "
    "rb php pl pm lua tcl sh bash zsh fish ps1 el clj ex exs erl hrl hs ml mli fs r jl dart zig nim v vue svelte y l jq "
    "sql groovy gradle cmake asm s".split()
)
_DOC_EXT = frozenset("md markdown rst txt adoc asciidoc org tex texi texinfo pod rdoc 1 2 3 4 5 6 7 8 9 html htm".split())
# Markup and data: text, but rarely what a change is about (drawings, lockfiles, fixtures, minified code)
_DATA_EXT = frozenset("svg json xml csv tsv lock map sum mod po pot yaml yml toml ini cfg txt dat bin pem crt".split())
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "man", "changelog", "changes", "news", "examples", "example", "changelog.d"})
_DOC_STEMS = frozenset({"changes", "changelog", "news", "authors", "readme", "license", "copying", "thanks", "todo", "history", "contributing", "notice"})


def file_role(path: str) -> str:
    """``source``, ``test``, ``doc``, ``data`` (markup and data formats: svg, json, yaml, lockfiles,
    minified code) or ``other`` (build files, scripts without an extension...), from the path alone."""
    if is_test_path(path):
        return "test"
    *folders, name = path.split("/")
    low = name.lower()
    stem, _, ext = low.rpartition(".") if "." in low[1:] else (low, "", "")
    if any(f.lower() in _DOC_DIRS for f in folders) or ext in _DOC_EXT or (stem or low) in _DOC_STEMS:
        return "doc"
    if ext in _SOURCE_EXT and ".min." not in low:
        return "source"
    return "data" if ext in _DATA_EXT or ".min." in low else "other"
