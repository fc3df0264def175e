"""The tree-sitter seam: which language a file is in, and its syntax tree.

Owns language detection (extension, shebang, the ``.h`` decision), loading the
grammar wheels and one parser per language per thread. tree-sitter enters
jitctx here and nowhere else, imported lazily so that ``jitctx --help`` never
pays for it. Does not own what counts as a definition (``outline``), reading
files (callers hand over bytes), or caching trees.

Grammars come from the per-language wheels (``tree-sitter-python`` and so
on), which ship compiled parsers: nothing is downloaded at run time.

A note for callers that want parallelism: py-tree-sitter's ``Parser.parse``
holds the GIL for the whole parse (measured: two threads parse no faster than
one), so spread files over processes, not threads.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Language, Parser, Tree
    from tree_sitter import Node as Node  # re-exported for the outline walk's annotations
    from tree_sitter import Point as Point

__all__ = ["EXTENSIONS", "LANGUAGES", "kind_names", "language_for", "parse", "warm"]

LANGUAGES: tuple[str, ...] = ("c", "cpp", "go", "java", "javascript", "python", "rust", "tsx", "typescript")

_BY_EXTENSION = {
    "py": "python",
    "pyi": "python",
    "pyw": "python",
    "c": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "cp": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
    "h++": "cpp",
    "ipp": "cpp",
    "inl": "cpp",
    "tpp": "cpp",
    "txx": "cpp",
    "tcc": "cpp",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
}

EXTENSIONS = frozenset({*_BY_EXTENSION, "h"})  # lower case, without the dot (.h: C or C++ by its head)

# Interpreter named by a shebang (version suffixes stripped) -> language.
_BY_INTERPRETER = {
    "python": "python",
    "pypy": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "typescript",
    "ts-node": "typescript",
}

# Signs of C++ in a .h file. ``extern "C"`` and ``__cplusplus`` are not among them: C
# headers carry those guards for C++ includers. Each sign is found by a literal first (a
# bytes search in C: a header of C is read to its end, 15 MB of headers in ~0.1 s, where
# one regex over them took 0.7 s), then checked where it stands: on a code line (a comment
# that mentions ``Foo::bar`` or ``template <class T>`` is not C++).
_LINE_SIGNS = (b"namespace", b"template", b"class", b"public", b"private", b"protected", b"using", b"include")
_LINE_SIGN = re.compile(
    rb"[ \t]*(?:namespace[ \t]+\w+[ \t]*(?:\{|\r?$)|template[ \t]*<|class[ \t]+\w|(?:public|private|protected)[ \t]*:"
    rb"|using[ \t]+namespace\b|using[ \t]+\w+[ \t]*=|#[ \t]*include[ \t]*<[a-z_]+>)",
    re.MULTILINE,
)
_WORD_SIGNS = (b"nullptr", b"constexpr", b"static_cast", b"reinterpret_cast", b"decltype", b"noexcept")
_SCOPE = re.compile(rb"[A-Za-z_]\w*::~?[A-Za-z_]")  # Foo::bar, std::vector, Foo::~Foo
_CODE_BEFORE = re.compile(rb"[ \t]*(?:[A-Za-z_~(][^/\"'\n]*)?\Z")  # a line's start up to a sign: code, no comment or string opened
_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _is_cpp(data: bytes) -> bool:
    """Whether a ``.h`` file's bytes show C++ (see ``language_for``)."""
    for sign in _LINE_SIGNS:
        at = data.find(sign)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            if _LINE_SIGN.match(data, start):
                return True
            at = data.find(sign, data.find(b"\n", at) + 1 or len(data))
    for sign in _WORD_SIGNS:
        at = data.find(sign)
        while at >= 0:
            end = at + len(sign)
            if (at == 0 or data[at - 1] not in _WORD) and (end == len(data) or data[end] not in _WORD):
                return True
            at = data.find(sign, end)
    if b"::" in data:
        for m in _SCOPE.finditer(data):
            at = m.start()
            if at and data[at - 1] in b"[:" or at and data[at - 1] in _WORD:  # [[gnu::unused]] is C23; a::b::c checked at its first part
                continue
            if _CODE_BEFORE.match(data, data.rfind(b"\n", 0, at) + 1, at):
                return True
    return False


def language_for(path: str, head: bytes = b"") -> str | None:
    """The language of ``path`` (one of ``LANGUAGES``), or None if jitctx has no grammar for it.

    The extension decides, case-insensitively (``.jsx``/``.mjs``/``.cjs`` are
    JavaScript, ``.mts``/``.cts`` TypeScript, ``.tsx`` TSX, ``.cc``/``.hpp``/
    ``.ipp``/``.inl``... C++). A file without an extension is recognised by a
    shebang on the first line of ``head`` (``python3``, ``node``, ``deno``,
    ``ts-node``, also behind ``/usr/bin/env [-S]``).

    ``.h`` is C unless ``head`` (pass the whole file: a C++ header may hold
    only macros and comments for its first 8 KiB) shows C++ on a code line: a
    namespace, a template, a class, an access specifier, ``using``, a scope
    (``Foo::bar``, ``std::``), ``nullptr``/``constexpr``/``decltype``/``noexcept``/
    a C++ cast, an extensionless standard include such as ``<vector>``. A
    comment that mentions one is not a sign. C is the default because the C
    grammar reads C headers exactly, while the C++ grammar stumbles over C that
    uses C++ keywords as names (``new``, ``class``, ``this``), which C headers
    do. With no ``head``, ``.h`` is C.
    """
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot > 0:
        ext = name[dot + 1 :].lower()
        if ext == "h":
            return "cpp" if _is_cpp(head) else "c"
        return _BY_EXTENSION.get(ext)
    if dot == -1 and head.startswith(b"#!"):
        return _from_shebang(head)
    return None


def _from_shebang(head: bytes) -> str | None:
    line = head[2:256].split(b"\n", 1)[0].decode("utf-8", "replace")
    words = line.split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    program = re.sub(r"[\d.]+$", "", program)
    return _BY_INTERPRETER.get(program)


_lock = threading.Lock()
_languages: dict[str, Language] = {}
_kind_names: dict[str, dict[int, str]] = {}
_ERROR_KIND = 0xFFFF  # tree-sitter's error symbol, outside the grammar's own kinds
_local = threading.local()


def _language(language: str) -> Language:
    with _lock:
        found = _languages.get(language)
        if found is None:
            found = _languages[language] = _load(language)
        return found


def _load(language: str) -> Language:
    from importlib import import_module

    from tree_sitter import Language

    if language not in _GRAMMARS:
        raise ValueError(f"no grammar for language {language!r}; known: {', '.join(LANGUAGES)}")
    module, function = _GRAMMARS[language]
    return Language(getattr(import_module(module), function)())


_GRAMMARS = {  # language -> (grammar wheel's module, its function returning the grammar)
    "python": ("tree_sitter_python", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
}


def kind_names(language: str) -> dict[int, str]:
    """Named node types by kind id (``node.kind_id``) for ``language``, the error node's (``ERROR``) included.

    Reading ``node.kind_id`` and looking it up here is about twice as fast as
    ``node.type``, which builds a new string on every read.
    """
    found = _kind_names.get(language)
    if found is None:
        grammar = _language(language)
        found = {i: grammar.node_kind_for_id(i) or "" for i in range(grammar.node_kind_count) if grammar.node_kind_is_named(i)}
        found[_ERROR_KIND] = "ERROR"
        _kind_names[language] = found
    return found


def warm() -> None:
    """Import tree-sitter ahead of the first parse, for a caller with time to
    spare (grep, while rg runs: its ``symbol`` annotation parses next)."""
    import tree_sitter  # noqa: F401


def _parser(language: str) -> Parser:
    # A tree-sitter parser must not be shared between threads; one per thread.
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    found = parsers.get(language)
    if found is None:
        from tree_sitter import Parser

        found = parsers[language] = Parser(_language(language))
    return found


def parse(language: str, data: bytes) -> Tree | None:
    """The syntax tree of ``data`` in ``language`` (one of ``LANGUAGES``).

    Any bytes parse: invalid UTF-8, NUL bytes and syntax errors become error
    nodes in the tree (``tree.root_node.has_error``). None only if tree-sitter
    gives up without a tree. An unknown ``language`` is a caller's bug:
    ``ValueError``.
    """
    parser = _parser(language)
    try:
        return parser.parse(data)
    except ValueError:
        parser.reset()
        return None
