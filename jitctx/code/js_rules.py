"""What counts as a definition in JavaScript, TypeScript and TSX (``JAVASCRIPT``, ``TYPESCRIPT``).

Classes, methods, constructors, functions and generators, variables and
class fields holding a function or class, ``exports.f =`` and
``Foo.prototype.bar =`` assignments, ``export default`` anonymous ones; in
TypeScript also interfaces and their method signatures, type aliases, enums,
namespaces, ``declare module`` and overload signatures (``languages`` lists
each language's rules in full). Does not own the walk (``outline``) or the
rule shapes (``rules``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .rules import DEPTH_GUARD, Found, Handler, Rules, WalkState, by_name, field_of, single, with_body

if TYPE_CHECKING:
    from .parse import Node

__all__ = ["JAVASCRIPT", "TYPESCRIPT"]


# JavaScript, TypeScript, TSX ------------------------------------------------

_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_PROPERTY_NAMES = frozenset({"property_identifier", "private_property_identifier", "identifier"})


def _property_name(node: Node, cx: WalkState) -> str:
    if node.type == "string":
        return cx.text(node)[1:-1]
    return cx.text(node)


def _js_method(node: Node, cx: WalkState) -> list[Found] | None:
    name = field_of(node, "name")
    if name is None:
        return None
    text = _property_name(name, cx)
    kind = "constructor" if text == "constructor" and node.type == "method_definition" else "method"
    return [Found(kind, text, node, name, walk=node)]


def _js_field(node: Node, cx: WalkState) -> list[Found] | None:
    value = field_of(node, "value")
    name = field_of(node, "name") or field_of(node, "property")
    if value is None or name is None or value.type not in _FUNCTION_VALUES:
        return None
    return [Found("method", _property_name(name, cx), node, name, walk=value)]


def _js_declarator(node: Node, cx: WalkState) -> list[Found] | None:
    name = field_of(node, "name")
    value = field_of(node, "value")
    if name is None or value is None or name.type != "identifier":
        return None
    if value.type in _FUNCTION_VALUES:
        return [Found("function", cx.text(name), node, name, walk=value)]
    if value.type == "class":
        return [Found("class", cx.text(name), node, name, walk=field_of(value, "body"))]
    return None


def _member_chain(node: Node, cx: WalkState) -> list[str] | None:
    parts: list[str] = []
    for _ in range(DEPTH_GUARD):
        if node.type == "member_expression":
            prop = field_of(node, "property")
            obj = field_of(node, "object")
            if prop is None or obj is None or prop.type not in _PROPERTY_NAMES:
                return None
            parts.append(cx.text(prop))
            node = obj
        elif node.type == "identifier":
            parts.append(cx.text(node))
            parts.reverse()
            return parts
        else:
            return None
    return None


def _js_assignment(node: Node, cx: WalkState) -> list[Found] | None:
    """``exports.f = function``, ``Foo.prototype.bar = () => {}``, ``module.exports = function g() {}``."""
    if cx.parent_type != "expression_statement":
        return None
    left, right = field_of(node, "left"), field_of(node, "right")
    if left is None or right is None or (right.type not in _FUNCTION_VALUES and right.type != "class"):
        return None
    parts = _member_chain(left, cx)
    if parts is None:
        return None
    if parts[:2] == ["module", "exports"]:
        parts = parts[2:]
    elif parts[:1] == ["exports"]:
        parts = parts[1:]
    kind = "class" if right.type == "class" else "function"
    if "prototype" in parts:
        parts = [p for p in parts if p != "prototype"]
        kind = "method"
    name_node = left
    if not parts:
        own = field_of(right, "name")
        if own is None:
            return None
        parts, name_node = [cx.text(own)], own
    walk = field_of(right, "body") if right.type == "class" else right
    return [Found(kind, parts[-1], node, name_node, tuple(parts[:-1]), walk)]


def _js_class(node: Node, cx: WalkState) -> list[Found] | None:
    if node.type == "class" and cx.parent_type != "export_statement":
        return None
    name = field_of(node, "name")
    text = cx.text(name) if name is not None else "default"
    return [Found("class", text, node, name, walk=field_of(node, "body"))]


def _js_default_function(node: Node, cx: WalkState) -> list[Found] | None:
    """``export default function () {}``; other anonymous functions are containers."""
    if cx.parent_type != "export_statement":
        return None
    return [Found("function", "default", node, None, walk=node)]


def _ts_namespace(kind: str) -> Handler:
    def handle(node: Node, cx: WalkState) -> list[Found] | None:
        name = field_of(node, "name")
        if name is None:
            return None
        if name.type == "string":
            parts = [cx.text(name)[1:-1]]
        else:
            parts = cx.text(name).replace(" ", "").split(".")
        return [Found(kind, parts[-1], node, name, tuple(parts[:-1]), walk=field_of(node, "body"))]

    return handle


def _ts_type_alias(node: Node, cx: WalkState) -> list[Found] | None:
    name = field_of(node, "name")
    if name is None:
        return None
    value = field_of(node, "value")
    walk = value if value is not None and value.type == "object_type" else None
    return [Found("type", cx.text(name), node, name, walk=walk)]


_JS_CONTAINERS = frozenset(
    {
        "program",
        "statement_block",
        "export_statement",
        "expression_statement",
        "lexical_declaration",
        "variable_declaration",
        "ambient_declaration",
        "if_statement",
        "else_clause",
        "for_statement",
        "for_in_statement",
        "while_statement",
        "do_statement",
        "try_statement",
        "catch_clause",
        "finally_clause",
        "switch_statement",
        "switch_body",
        "switch_case",
        "switch_default",
        "labeled_statement",
        "call_expression",
        "arguments",
        "parenthesized_expression",
        "arrow_function",
        "function_expression",
        "function",
    }
)
_SINGLE_DECLARATOR = single("variable_declarator")


def _js_rules(typescript: bool) -> Rules:
    handlers: dict[str, Handler] = {
        "function_declaration": by_name("function"),
        "generator_function_declaration": by_name("function"),
        "class_declaration": _js_class,
        "class": _js_class,
        "method_definition": _js_method,
        "field_definition": _js_field,
        "variable_declarator": _js_declarator,
        "assignment_expression": _js_assignment,
        "function_expression": _js_default_function,
        "function": _js_default_function,
        "arrow_function": _js_default_function,
    }
    if typescript:
        handlers.update(
            {
                "abstract_class_declaration": _js_class,
                "public_field_definition": _js_field,
                "function_signature": by_name("function", walk=False),
                "method_signature": _js_method,
                "abstract_method_signature": _js_method,
                "interface_declaration": with_body("interface"),
                "type_alias_declaration": _ts_type_alias,
                "enum_declaration": by_name("enum", walk=False),
                "internal_module": _ts_namespace("namespace"),
                "module": _ts_namespace("module"),
            }
        )
    return Rules(
        containers=_JS_CONTAINERS,
        wrappers={
            "export_statement": None,
            "ambient_declaration": None,
            "expression_statement": None,
            "lexical_declaration": _SINGLE_DECLARATOR,
            "variable_declaration": _SINGLE_DECLARATOR,
        },
        handlers=handlers,
        docs=frozenset({"comment", "decorator"}),  # TypeScript puts a method's decorators beside it
    )


JAVASCRIPT = _js_rules(typescript=False)
TYPESCRIPT = _js_rules(typescript=True)
