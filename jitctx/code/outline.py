"""Outlines: the definitions in one file's bytes, with exact line ranges.

Owns the ``Definition`` and ``Outline`` values, the walk that turns a syntax
tree into definitions (ranges, qualnames, signatures, nesting), and
``innermost`` (which definition encloses a line). Pure: callers hand over
bytes; no file I/O, no token counts, no caching (the on-disk index builds on
this). What counts as a definition per language lives in ``rules``; parsing
in ``parse``.

How definitions are found: a walk over the tree in Python with an explicit
stack, descending only into nodes that can hold definitions (module and
class bodies, blocks, namespaces, ``#if`` groups...) and never into
expressions, except the call arguments and parentheses that IIFE and
``describe(() => ...)`` code hides functions in. The grammar wheels' shipped
``queries/tags.scm`` do not serve: a query visits every node of the tree
(5.9 M nodes in 27.5 MB of Python), and the Python tags query alone costs
1.95 s CPU there, more than this whole walk with all extraction (1.36 s),
before its ~600k captures, mostly call references, are even looked at; the
walk reads ~10% of the nodes. The shipped queries also miss kinds we need
(Java enums, records and constructors, TypeScript enums and type aliases, C
unions), give no nesting, and differ in quality between grammars.

Limits, each of which sets ``partial`` and names itself in ``Outline.limit``:
only the first ``MAX_BYTES`` are parsed (a dense 4 MiB file takes ~4 s and
~500 MB to parse), definitions nested deeper than ``MAX_DEPTH`` are left out,
and at most ``MAX_DEFINITIONS`` are kept. Any bytes at all give an Outline.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .languages import RULES
from .parse import LANGUAGES, kind_names, parse
from .rules import CLASSLIKE, Found, Handler, Rules, WalkState, clip

if TYPE_CHECKING:
    from .parse import Node, Point

__all__ = [
    "KINDS",
    "MAX_BYTES",
    "MAX_DEFINITIONS",
    "MAX_DEPTH",
    "SIGNATURE_CAP",
    "Definition",
    "Outline",
    "innermost",
    "innermost_lookup",
    "outline",
]

KINDS: tuple[str, ...] = (
    "class",
    "constructor",
    "destructor",
    "enum",
    "function",
    "impl",
    "interface",
    "macro",
    "method",
    "module",
    "namespace",
    "struct",
    "trait",
    "type",
    "union",
)
"""Every ``Definition.kind``, one vocabulary across languages: ``class`` (Java
records too), ``interface`` (Java annotation types too), ``struct``, ``union``,
``enum``, ``trait``, ``impl`` (a Rust impl block, named by its type), ``type``
(aliases, typedefs, other Go types), ``namespace`` (C++, TypeScript), ``module``
(Rust ``mod``, TypeScript ``declare module``), ``function``, ``method`` (a
function directly in a class-like definition, a Go method, an out-of-line C++
member), ``constructor``, ``destructor`` (C++), ``macro`` (C function-like
macros, ``macro_rules!``). Python's ``__init__`` is a method."""

MAX_BYTES = 4 << 20
"""Only this many leading bytes are parsed (cut at a line end): parse time and memory grow with size."""
MAX_DEPTH = 64
"""Definitions nested deeper than this are left out (depth 0 is the top level)."""
MAX_DEFINITIONS = 100_000
"""At most this many definitions per file are kept."""
SIGNATURE_CAP = 200
"""Signatures longer than this many characters are cut, ending in ``…``."""

_CALLABLE = frozenset({"function", "method", "constructor", "destructor"})
# Nodes that declare a callable without its body: C/C++ (a member declared in its class),
# TypeScript (overloads, interface and abstract members), Rust (a trait's method).
_SIGNATURE_ONLY = frozenset({"declaration", "field_declaration", "function_signature", "method_signature", "abstract_method_signature", "function_signature_item"})
_OVERLOAD = re.compile(rb"@[ \t]*(?:[A-Za-z_][\w.]*\.)?overload\b")
_LINE_WINDOW = 1024  # bytes of a line looked at for a signature
_COLUMN_LIMIT = 4096  # a doc comment further right than this is not "alone on its line"
_CLIMB_LIMIT = 8
_SIGNATURE_SKIP = frozenset(
    {
        "decorator",
        "annotation",
        "marker_annotation",
        "comment",
        "line_comment",
        "block_comment",
        "attribute_declaration",
        "attribute_item",
    }
)


@dataclass(frozen=True, slots=True)
class Definition:
    """One definition in a file.

    ``kind``: one of ``KINDS``. ``name``: as written (``__add__``, ``~Foo``,
    ``operator+``). ``qualname``: the enclosing names and the name, dot-joined
    (``Rational.__add__``; C++ ``ns::Foo::bar`` -> ``ns.Foo.bar``; a Go method
    ``Reader.Read``; a Rust method ``Foo.fmt``). ``start_line``/``end_line``:
    1-based, inclusive; the start takes in decorators, annotations, attributes
    and the doc comment directly above (contiguous comment lines, no blank
    line between them and the definition). ``signature``: the definition's own
    first line (not its decorator's), trimmed, at most ``SIGNATURE_CAP``
    characters (``…`` marks a cut). ``depth``: 0 at top level, one more per
    enclosing definition in this outline. ``parent``: index of the enclosing
    definition in ``Outline.definitions``, or None. ``tokens``: the exact
    cost of reading it whole (``head --symbol``), once the index counted it;
    None from the extractor. ``stub``: a declaration whose body is elsewhere
    or nowhere (a C++ member declared in its class, a Python ``@overload``
    copy or a ``.pyi`` stub, a TypeScript overload or interface signature, a
    Rust trait method or Java method without a body): lookups prefer an
    implementation over it.
    """

    kind: str
    name: str
    qualname: str
    start_line: int
    end_line: int
    signature: str = ""
    depth: int = 0
    parent: int | None = None
    tokens: int | None = None
    stub: bool = False


@dataclass(frozen=True, slots=True)
class Outline:
    """The definitions of one file.

    ``language``: one of ``parse.LANGUAGES``. ``definitions``: in source
    order, each parent before its children. ``partial``: the outline may miss
    definitions: the file has syntax errors (whatever parsed is still
    outlined) or a limit was reached. ``limit``: None, or which limit cut the
    outline short: ``"bytes"`` (only the first ``MAX_BYTES`` were parsed),
    ``"depth"`` (definitions nested deeper than ``MAX_DEPTH`` left out) or
    ``"definitions"`` (only the first ``MAX_DEFINITIONS`` kept).
    """

    language: str
    definitions: tuple[Definition, ...]
    partial: bool
    limit: str | None = None


def outline(language: str, data: bytes, *, max_bytes: int = MAX_BYTES) -> Outline:
    """The definitions in ``data``, a file in ``language`` (one of ``parse.LANGUAGES``).

    Never raises for any bytes; an unknown ``language`` is a ``ValueError``.
    """
    rules = RULES.get(language)
    if rules is None:
        raise ValueError(f"no outline rules for language {language!r}; known: {', '.join(LANGUAGES)}")
    data = bytes(data)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    limit = None
    if len(data) > max_bytes:
        cut = data.rfind(b"\n", 0, max_bytes)
        data = data[: cut + 1 if cut > 0 else max_bytes]
        limit = "bytes"
    tree = parse(language, data)
    if tree is None:
        return Outline(language, (), True, limit)
    walk = _Walk(_compiled(language, rules), data)
    walk.run(tree.root_node)
    limit = limit or walk.limit
    return Outline(language, tuple(walk.definitions), tree.root_node.has_error or limit is not None, limit)


def innermost(definitions: Sequence[Definition], line: int) -> Definition | None:
    """The innermost definition whose range holds ``line`` (the deepest; the later one among equals).

    A scan of all definitions: for many lines of one file, use ``innermost_lookup``.
    """
    best = None
    for d in definitions:
        if d.start_line <= line <= d.end_line and (best is None or d.depth >= best.depth):
            best = d
    return best


def innermost_lookup(definitions: Sequence[Definition]) -> Callable[[int], Definition | None]:
    """``innermost`` for many lines: precomputes in O(n log n), then answers each line by bisection."""
    defs = tuple(definitions)
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, d in enumerate(defs):
        if d.start_line <= d.end_line:
            starts.setdefault(d.start_line, []).append(i)
            ends.setdefault(d.end_line + 1, []).append(i)
    heap: list[tuple[int, int]] = []
    gone: set[int] = set()
    bounds: list[int] = []
    owners: list[int] = []
    for point in sorted(starts.keys() | ends.keys()):
        gone.update(ends.get(point, ()))
        for i in starts.get(point, ()):
            heapq.heappush(heap, (-defs[i].depth, -i))
        while heap and -heap[0][1] in gone:
            heapq.heappop(heap)
        bounds.append(point)
        owners.append(-heap[0][1] if heap else -1)

    def lookup(line: int) -> Definition | None:
        k = bisect.bisect_right(bounds, line) - 1
        return defs[owners[k]] if k >= 0 and owners[k] >= 0 else None

    return lookup


@dataclass(frozen=True, slots=True)
class _Ids:
    """A language's ``Rules`` keyed by node kind id (``node.kind_id``), which is cheaper to read than ``node.type``."""

    names: dict[int, str]
    handlers: dict[int, Handler]
    containers: frozenset[int]
    wanted: frozenset[int]
    wrappers: dict[int, Callable[[Node], bool] | None]
    docs: frozenset[int]
    inner_docs: tuple[bytes, ...]
    skip: frozenset[int]
    modifiers: frozenset[int]


_IDS: dict[str, _Ids] = {}


def _compiled(language: str, rules: Rules) -> _Ids:
    found = _IDS.get(language)
    if found is None:
        names = kind_names(language)

        def ids(types: Iterable[str]) -> frozenset[int]:
            wanted = set(types)
            return frozenset(i for i, name in names.items() if name in wanted)

        handlers = {i: rules.handlers[names[i]] for i in ids(rules.handlers)}
        # Error recovery wraps intact definitions in ERROR nodes: look inside, so whatever parsed is outlined.
        containers = ids(rules.containers | {"ERROR"})
        found = _IDS[language] = _Ids(
            names=names,
            handlers=handlers,
            containers=containers,
            wanted=containers | handlers.keys(),
            wrappers={i: rules.wrappers[names[i]] for i in ids(rules.wrappers)},
            docs=ids(rules.docs),
            inner_docs=rules.inner_docs,
            skip=ids(_SIGNATURE_SKIP),
            modifiers=ids(["modifiers"]),
        )
    return found


class _Walk:
    """One pass over a tree, collecting definitions.

    The stack holds frames ``[kids, next, node, up, enclosing]``: the named
    children of ``node`` being visited, the index of the next one, the frame
    in which ``node`` itself is a child, and the index of the definition that
    encloses the kids (-1: none).
    """

    def __init__(self, ids: _Ids, data: bytes) -> None:
        self.ids = ids
        self.data = data
        self.cx = WalkState(data)
        self.definitions: list[Definition] = []
        self.limit: str | None = None

    def run(self, root: Node) -> None:
        ids, cx, defs = self.ids, self.cx, self.definitions
        names, handlers, containers, wanted = ids.names, ids.handlers, ids.containers, ids.wanted
        stack: list[list] = [[root.named_children, 0, root, None, -1]]
        while stack:
            frame = stack[-1]
            kids, i = frame[0], frame[1]
            count = len(kids)
            # Most children hold no definition: skip them without touching the frame.
            while i < count and kids[i].kind_id not in wanted:
                i += 1
            if i >= count:
                stack.pop()
                continue
            node = kids[i]
            frame[1] = i + 1
            kind = node.kind_id
            handler = handlers.get(kind)
            found = None
            if handler is not None:
                cx.parent_type = names.get(frame[2].kind_id, "")
                enc = frame[4]
                if enc >= 0:
                    d = defs[enc]
                    cx.enclosing_kind, cx.enclosing_name, cx.enclosing_qualname = d.kind, d.name, d.qualname
                else:
                    cx.enclosing_kind = cx.enclosing_name = cx.enclosing_qualname = ""
                found = handler(node, cx)
            if found:
                inner = []
                for f in found:
                    index = self._add(f, node, frame)
                    if index is None:
                        if self.limit == "definitions":
                            return
                        continue
                    if f.walk is not None:
                        inner.append([f.walk.named_children, 0, f.walk, frame, index])
                stack.extend(reversed(inner))
            elif kind in containers:
                stack.append([node.named_children, 0, node, frame, frame[4]])

    def _add(self, found: Found, node: Node, frame: list) -> int | None:
        defs = self.definitions
        enc = frame[4]
        parent = defs[enc] if enc >= 0 else None
        depth = parent.depth + 1 if parent is not None else 0
        if depth > MAX_DEPTH:
            self.limit = self.limit or "depth"
            return None
        if len(defs) >= MAX_DEFINITIONS:
            self.limit = "definitions"
            return None
        kind = found.kind
        if kind == "function" and parent is not None and parent.kind in CLASSLIKE:
            kind = "method"
        prefix = found.prefix
        if any("::" in p for p in prefix):  # one separator: Web::CSS as Web.CSS
            prefix = tuple(q for p in prefix for q in p.split("::") if q)
        qualname = ".".join(prefix + (found.name,))
        if parent is not None:
            qualname = f"{parent.qualname}.{qualname}"
        if frame[2].kind_id in self.ids.wrappers:
            outer, outer_frame = self._outer(node, frame)
        else:
            outer, outer_frame = node, frame
        start = outer.start_point
        end = outer.end_point
        core = found.node
        if core is not outer and core.end_byte > outer.end_byte:
            end = core.end_point
        stub = kind in _CALLABLE and self._is_stub(core, outer)
        # A node that ends with its newline ends on the row before.
        end_row = end.row - 1 if end.column == 0 and end.row > start.row else end.row
        defs.append(
            Definition(
                kind,
                found.name,
                qualname,
                self._doc_start(start.row, outer_frame) + 1,
                end_row + 1,
                self._signature(core, found.name_node, outer, start),
                depth,
                enc if enc >= 0 else None,
                None,
                stub,
            )
        )
        return len(defs) - 1

    def _is_stub(self, core: Node, outer: Node) -> bool:
        """Whether a callable is only declared here (``Definition.stub``)."""
        kind = self.ids.names.get(core.kind_id, "")
        if kind in _SIGNATURE_ONLY:
            return True
        if kind == "method_declaration":  # Java: abstract or an interface's
            return core.child_by_field_name("body") is None
        # a decorated Python function: an @overload (or @typing.overload) copy
        return outer is not core and _OVERLOAD.search(self.data, outer.start_byte, core.start_byte) is not None

    def _outer(self, node: Node, frame: list) -> tuple[Node, list]:
        """The node whose range is the definition's: ``node`` or the wrappers around it."""
        wrappers = self.ids.wrappers
        for _ in range(_CLIMB_LIMIT):
            holder, up = frame[2], frame[3]
            kind = holder.kind_id
            if up is None or kind not in wrappers:
                break
            test = wrappers[kind]
            if test is not None and not test(holder):
                break
            node, frame = holder, up
        return node, frame

    def _doc_start(self, top: int, frame: list) -> int:
        """``top``, the first row of the definition's node (a child of ``frame``), moved up over doc comments."""
        docs, data, inner_docs = self.ids.docs, self.data, self.ids.inner_docs
        kids, j = frame[0], frame[1] - 2
        for _ in range(_CLIMB_LIMIT):
            while j >= 0:
                s = kids[j]
                if s.kind_id not in docs:
                    return top
                point = s.start_point
                end = s.end_point
                last = end.row - 1 if end.column == 0 and end.row > point.row else end.row
                if last < top - 1:
                    return top
                if point.column > _COLUMN_LIMIT or data[s.start_byte - point.column : s.start_byte].strip():
                    return top
                if inner_docs and data.startswith(inner_docs, s.start_byte):
                    return top
                top = point.row
                j -= 1
            # Python puts a comment above a block's first statement beside the block, not in it.
            holder, up = frame[2], frame[3]
            if up is None or not kids or holder.start_byte != kids[0].start_byte:
                return top
            frame = up
            kids, j = frame[0], frame[1] - 2
        return top

    def _signature(self, node: Node, name_node: Node | None, outer: Node, outer_start: Point) -> str:
        """The first line from where the definition starts (``export``/``static`` included, decorators not).

        When the name stands a line or two below (``static int *`` above
        ``helper(int x)``), those lines are joined; a definition that ends on
        its first line ends there.
        """
        ids, data = self.ids, self.data
        anchor = node
        first = node.child(0)
        if first is not None and (first.kind_id in ids.skip or first.kind_id in ids.modifiers):
            anchor = self._signature_anchor(node)
        if anchor is outer:
            point, at = outer_start, outer.start_byte
            start = at
        else:
            point, at = anchor.start_point, anchor.start_byte
            outer_at = outer.start_byte
            if outer_start.row == point.row and outer_at <= at:
                start = outer_at
            else:
                start = at - point.column if point.column <= _LINE_WINDOW else at
        end = data.find(b"\n", at, at + _LINE_WINDOW)
        if end < 0:
            end = min(len(data), at + _LINE_WINDOW)
        if name_node is not None and name_node.start_byte > end and name_node.start_point.row - point.row <= 2:
            at = name_node.start_byte
            end = data.find(b"\n", at, at + _LINE_WINDOW)
            if end < 0:
                end = min(len(data), at + _LINE_WINDOW)
        stop = outer.end_byte if node is outer else max(outer.end_byte, node.end_byte)
        text = data[start : min(end, stop)]
        if b"\n" in text or b"\r" in text:
            text = b" ".join(p for p in (line.split(b"\r", 1)[0].strip() for line in text.split(b"\n")) if p)
        return clip(text.strip(), SIGNATURE_CAP)

    def _signature_anchor(self, node: Node) -> Node:
        """Where a definition's own first line starts: past its decorators and annotations."""
        skip, modifiers = self.ids.skip, self.ids.modifiers
        for child in node.children:
            kind = child.kind_id
            if kind in skip:
                continue
            if kind in modifiers:
                for inner in child.children:
                    if inner.kind_id not in skip:
                        return inner
                continue
            return child
        return node
