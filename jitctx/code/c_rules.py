"""What counts as a definition in C and C++ (``C``, ``CPP``).

Functions (the name found through pointer and parenthesised declarators),
structs, unions and enums with a body, typedefs, function-like macros; in
C++ also namespaces, classes, member declarations, ``using`` aliases,
constructors and destructors, out-of-line ``Foo::bar`` methods and
specialisations named by their template (``languages`` lists each language's
rules in full). Does not own the walk (``outline``) or the rule shapes
(``rules``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .rules import CLASSLIKE, DEPTH_GUARD, Found, Handler, Rules, WalkState, by_name, field_of

if TYPE_CHECKING:
    from .parse import Node

__all__ = ["C", "CPP"]


# C and C++ ------------------------------------------------------------------

_SPECIFIERS = {
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "class_specifier": "class",
}
_DECLARATOR_WRAPPERS = frozenset(
    {
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
        "array_declarator",
    }
)
_NAME_NODES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "operator_cast",
        "template_function",
        "template_method",
    }
)


def _inner_declarator(node: Node) -> Node | None:
    inner = field_of(node, "declarator")
    if inner is None and node.named_child_count:
        inner = node.named_children[0]
    return inner


def _function_declarator(node: Node | None) -> Node | None:
    """The function declarator that names a function, or None (a variable, a function pointer)."""
    for _ in range(DEPTH_GUARD):
        if node is None:
            return None
        if node.type == "function_declarator":
            inner = field_of(node, "declarator")
            if inner is not None and inner.type in _NAME_NODES:
                return node
            node = inner
        elif node.type in _DECLARATOR_WRAPPERS:
            node = _inner_declarator(node)
        else:
            return None
    return None


def _declarator_name(node: Node | None) -> Node | None:
    """The name node a (typedef) declarator declares: ``cb`` in ``(*cb)(void)``."""
    for _ in range(DEPTH_GUARD):
        if node is None or node.type in _NAME_NODES:
            return node
        if node.type == "function_declarator" or node.type in _DECLARATOR_WRAPPERS:
            node = _inner_declarator(node)
        else:
            return None
    return None


def _scope_name(node: Node, cx: WalkState) -> str:
    if node.type == "template_type":
        name = field_of(node, "name")
        if name is not None:
            return cx.text(name)
    return cx.text(node)


def _qualified(node: Node, cx: WalkState) -> tuple[tuple[str, ...], Node]:
    """``a::b::Foo::bar`` -> (("a", "b", "Foo"), the ``bar`` node)."""
    parts: list[str] = []
    for _ in range(DEPTH_GUARD):
        if node.type != "qualified_identifier":
            break
        scope = field_of(node, "scope")
        if scope is not None:
            parts.append(_scope_name(scope, cx))
        name = field_of(node, "name")
        if name is None:
            break
        node = name
    return tuple(parts), node


def _function_name(node: Node, cx: WalkState) -> str:
    if node.type in ("template_function", "template_method"):
        name = field_of(node, "name")
        if name is not None:
            return cx.text(name)
    text = cx.text(node)
    if node.type == "operator_name":
        # ``operator <<`` and ``operator<<`` are one name; ``operator new`` keeps its space.
        rest = "".join(text[len("operator") :].split())
        text = f"operator {rest}" if rest[:1].isalpha() else f"operator{rest}"
    return text


def _function(node: Node, declarator: Node, cx: WalkState, cpp: bool, walk: Node | None) -> Found:
    target = field_of(declarator, "declarator")
    assert target is not None  # _function_declarator checked it
    prefix: tuple[str, ...] = ()
    if target.type == "qualified_identifier":
        prefix, target = _qualified(target, cx)
    name = _function_name(target, cx)
    kind = "function"
    if cpp:
        if target.type == "destructor_name":
            kind = "destructor"
        elif prefix:
            scope = ".".join(prefix)
            if name == prefix[-1]:
                kind = "constructor"
            elif scope not in cx.namespaces and f"{cx.enclosing_qualname}.{scope}" not in cx.namespaces:
                kind = "method"
        elif cx.enclosing_kind in CLASSLIKE and name == cx.enclosing_name:
            kind = "constructor"
    return Found(kind, name, node, target, prefix, walk)


def _specifier(spec: Node, cx: WalkState, name_node: Node | None = None) -> Found | None:
    body = field_of(spec, "body")
    tag = field_of(spec, "name")
    if body is None or (tag is None and name_node is None):
        return None
    named = tag if tag is not None else name_node
    assert named is not None
    prefix: tuple[str, ...] = ()
    target = named
    if named.type == "qualified_identifier":
        prefix, target = _qualified(named, cx)
    # A specialisation (``struct formatter<int> {``) is named by its template.
    name = _scope_name(target, cx)
    if not name:
        return None
    return Found(_SPECIFIERS[spec.type], name, spec, named, prefix, walk=body)


def _c_specifier(node: Node, cx: WalkState) -> list[Found] | None:
    found = _specifier(node, cx)
    return [found] if found else None


def _c_typedef(node: Node, cx: WalkState) -> list[Found] | None:
    names = [n for n in map(_declarator_name, node.children_by_field_name("declarator")) if n is not None]
    spec = field_of(node, "type")
    record: Found | None = None
    if spec is not None and spec.type in _SPECIFIERS and field_of(spec, "body") is not None:
        if field_of(spec, "name") is None and names:
            record = _specifier(spec, cx, names.pop(0))
        else:
            record = _specifier(spec, cx)
    # The typedef names come first: they are leaves, the record holds nested definitions.
    found = [Found("type", cx.text(n), node, n) for n in names]
    if record is not None:
        found.append(record)
    return found or None


def _c_function(cpp: bool) -> Handler:
    def handle(node: Node, cx: WalkState) -> list[Found] | None:
        declarator = _function_declarator(field_of(node, "declarator"))
        if declarator is None:
            return None
        return [_function(node, declarator, cx, cpp, walk=None)]

    return handle


def _c_declaration(cpp: bool) -> Handler:
    """``struct foo {...} x;`` defines ``foo``; in a C++ class, ``void bar();`` declares a method."""

    def handle(node: Node, cx: WalkState) -> list[Found] | None:
        found: list[Found] = []
        spec = field_of(node, "type")
        if spec is not None and spec.type in _SPECIFIERS:
            record = _specifier(spec, cx)
            if record is not None:
                found.append(record)
        if cpp and cx.enclosing_kind in CLASSLIKE:
            for child in node.children_by_field_name("declarator"):
                declarator = _function_declarator(child)
                if declarator is not None:
                    found.append(_function(node, declarator, cx, cpp, walk=None))
        return found or None

    return handle


def _cpp_namespace(node: Node, cx: WalkState) -> list[Found] | None:
    name = field_of(node, "name")
    body = field_of(node, "body")
    if name is None or body is None:
        return None  # an anonymous namespace: a container
    # ``namespace a::b::c`` nests its specifiers (a, then b::c): its text, split, is every part
    parts = [p.strip().removeprefix("inline ").strip() for p in cx.text(name).split("::")]
    parts = [p for p in parts if p] or [cx.text(name)]
    qual = ".".join(parts)
    cx.namespaces.add(f"{cx.enclosing_qualname}.{qual}" if cx.enclosing_qualname else qual)
    return [Found("namespace", parts[-1], node, name, tuple(parts[:-1]), walk=body)]


_C_CONTAINERS = frozenset(
    {
        "translation_unit",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "linkage_specification",
        "declaration_list",
    }
)


def _c_rules(cpp: bool) -> Rules:
    handlers: dict[str, Handler] = {
        "function_definition": _c_function(cpp),
        "declaration": _c_declaration(cpp),
        "field_declaration": _c_declaration(cpp),
        "type_definition": _c_typedef,
        "struct_specifier": _c_specifier,
        "union_specifier": _c_specifier,
        "enum_specifier": _c_specifier,
        "preproc_function_def": by_name("macro", walk=False),
    }
    containers = _C_CONTAINERS
    wrappers: dict[str, Callable[[Node], bool] | None] = {}
    if cpp:
        handlers.update(
            {
                "class_specifier": _c_specifier,
                "namespace_definition": _cpp_namespace,
                "alias_declaration": by_name("type", walk=False),
            }
        )
        containers = containers | {"namespace_definition", "template_declaration"}
        wrappers["template_declaration"] = None
    return Rules(containers=containers, wrappers=wrappers, handlers=handlers, docs=frozenset({"comment"}))


C = _c_rules(cpp=False)
CPP = _c_rules(cpp=True)
