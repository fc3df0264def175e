"""How a language's definitions are described: ``Rules``, handlers, what they see and return.

Owns the shape of the per-language knowledge the outline walk needs: which syntax nodes
hold definitions (containers), which only wrap one (wrappers: their range
and doc comment become the definition's), which node types are doc comments
or attributes, and a handler per definition node type that names it, gives
its kind and the qualname parts the tree does not show (C++ ``Foo::bar``, a
Go receiver, ``Foo.prototype.bar``). Does not own the walk itself, line
ranges or signatures (``outline``), nor parsing (``parse``), nor each
language's rules (``languages``, ``c_rules``, ``js_rules``).

Handlers see a node and a ``WalkState`` and return ``Found`` records, or None
when the node is not a definition (the walk then treats it as a container if
its type is one). They never look up ``node.parent`` or siblings: tree-sitter
computes those by walking down from the root, which is quadratic on deeply
nested code; the walk hands them what they need instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .parse import Node

__all__ = ["CLASSLIKE", "DEPTH_GUARD", "NAME_CAP", "Found", "Handler", "Rules", "WalkState", "by_name", "clip", "field_of", "single", "with_body"]

NAME_CAP = 200
"""Names longer than this many characters are cut, ending in ``…``."""

DEPTH_GUARD = 32
"""Steps a handler takes down or up a chain of nodes at most (declarators, member chains)."""

CLASSLIKE = frozenset({"class", "struct", "union", "enum", "interface", "trait", "impl"})
"""Kinds whose directly nested functions are methods."""


def clip(raw: bytes, cap: int) -> str:
    """``raw`` decoded as UTF-8 with replacement, at most ``cap`` characters (``…`` marks a cut)."""
    text = raw[: 4 * cap + 4].decode("utf-8", "replace")
    return text if len(text) <= cap and len(raw) <= 4 * cap + 4 else text[: cap - 1] + "…"


class Found:
    """One definition a handler recognised (internal, mutable, short-lived).

    ``node`` anchors the signature (its first line); ``name_node`` is where the
    name stands (a signature reaches down to it when it is a line or two
    below); ``prefix`` holds qualname parts between the enclosing definition
    and the name; ``walk`` is the node whose children hold nested definitions
    (None: nothing is nested, e.g. a declaration without a body).
    """

    __slots__ = ("kind", "name", "name_node", "node", "prefix", "walk")

    def __init__(
        self,
        kind: str,
        name: str,
        node: Node,
        name_node: Node | None = None,
        prefix: tuple[str, ...] = (),
        walk: Node | None = None,
    ) -> None:
        self.kind = kind
        self.name = name
        self.node = node
        self.name_node = name_node
        self.prefix = prefix
        self.walk = walk


class WalkState:
    """What a handler may know besides its node: set by the walk before each call.

    ``parent_type`` is the type of the node whose children are being walked;
    ``enclosing_kind``/``enclosing_name``/``enclosing_qualname`` describe the
    innermost definition around the node ("" at top level); ``namespaces``
    collects the qualnames of C++ namespaces met so far in the file.
    """

    __slots__ = ("data", "enclosing_kind", "enclosing_name", "enclosing_qualname", "namespaces", "parent_type")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.parent_type = ""
        self.enclosing_kind = ""
        self.enclosing_name = ""
        self.enclosing_qualname = ""
        self.namespaces: set[str] = set()

    def text(self, node: Node) -> str:
        return clip(self.data[node.start_byte : node.end_byte], NAME_CAP)


Handler = Callable[["Node", WalkState], "list[Found] | None"]


@dataclass(frozen=True, slots=True)
class Rules:
    """How one language's tree is walked for definitions.

    ``containers``: node types whose named children may hold definitions;
    ``wrappers``: node types that wrap one definition (decorators, ``export``,
    ``template <...>``), each with a test of whether it wraps exactly one
    (None: always); ``handlers``: node type -> handler; ``docs``: comment and
    attribute node types that belong to the definition right below them;
    ``inner_docs``: prefixes of those that document the enclosing item instead
    (Rust ``//!``).
    """

    containers: frozenset[str]
    wrappers: Mapping[str, Callable[[Node], bool] | None]
    handlers: Mapping[str, Handler]
    docs: frozenset[str]
    inner_docs: tuple[bytes, ...] = ()


def field_of(node: Node, name: str) -> Node | None:
    """The child in the field ``name`` (None: none)."""
    return node.child_by_field_name(name)


def by_name(kind: str, walk: bool = True) -> Handler:
    """A handler for nodes that carry their name in a ``name`` field."""

    def handle(node: Node, cx: WalkState) -> list[Found] | None:
        name = field_of(node, "name")
        if name is None:
            return None
        return [Found(kind, cx.text(name), node, name, walk=node if walk else None)]

    return handle


def with_body(kind: str) -> Handler:
    """Like ``by_name``, nested definitions in the ``body`` field."""

    def handle(node: Node, cx: WalkState) -> list[Found] | None:
        name = field_of(node, "name")
        if name is None:
            return None
        return [Found(kind, cx.text(name), node, name, walk=field_of(node, "body"))]

    return handle


def single(*types: str) -> Callable[[Node], bool]:
    """A wrapper test: the node holds exactly one child of these types."""

    def test(node: Node) -> bool:
        return sum(1 for child in node.named_children if child.type in types) == 1

    return test
