"""What counts as a definition in each language: one ``Rules`` per grammar.

Owns the per-language knowledge the outline walk needs: which syntax nodes
hold definitions (containers), which only wrap one (wrappers: their range
and doc comment become the definition's), which node types are doc comments
or attributes, and a handler per definition node type that names it, gives
its kind and the qualname parts the tree does not show (C++ ``Foo::bar``, a
Go receiver, ``Foo.prototype.bar``). Does not own the walk itself, line
ranges or signatures (``outline``), nor parsing (``parse``).

Handlers see a node and a ``Context`` and return ``Found`` records, or None
when the node is not a definition (the walk then treats it as a container if
its type is one). They never look up ``node.parent`` or siblings: tree-sitter
computes those by walking down from the root, which is quadratic on deeply
nested code; the walk hands them what they need instead.

Per language (a function directly inside a class-like kind is a method):

- Python: classes, functions (``async`` too) at any depth, in ``if``/``try``/
  ``with`` blocks too; decorators and ``@overload`` copies each count. Not
  outlined: assignments, lambdas.
- C: functions (the name found through pointer/parenthesised declarators),
  structs, unions and enums with a body, typedefs (``type``), function-like
  macros. ``typedef struct tag {...} name;`` gives ``type name`` and
  ``struct tag`` over the same lines (an anonymous struct takes the typedef
  name). Not outlined: prototypes, variables, object-like macros, fields.
- C++: as C, plus namespaces (``namespace a::b`` -> ``a.b``), classes, member
  declarations (``void bar();``), ``using X = ...`` (``type``), constructors and
  destructors; ``template <...>`` lines belong to the definition. Out-of-line
  ``Foo::bar`` is method ``Foo.bar`` (a function if ``Foo`` is a namespace seen in
  the file); specialisations are named by their template. Not outlined:
  lambdas, local classes, concepts, friends.
- JavaScript/TypeScript/TSX: classes, methods (getters too), constructors,
  functions and generators, ``const``/``let``/``var`` holding a function or class
  (named by the variable), class fields holding one (methods), ``exports.f =``
  and ``Foo.prototype.bar =`` assignments (``Foo.bar``, a method), ``export
  default`` anonymous ones (``default``); TypeScript interfaces and their
  method signatures, type aliases, enums, namespaces, ``declare module``,
  overload signatures. Functions inside call arguments (IIFE, ``describe``)
  are found. Not outlined: object-literal methods, ``this.x =`` assignments.
- Go: functions, methods (``Reader.Read``; generic receivers ``*Tree[K, V]`` ->
  ``Tree``), type declarations (struct, interface with its methods, other
  types and aliases). Not outlined: func literals, consts, vars.
- Rust: functions, structs, enums, unions, traits (with their methods),
  ``impl`` blocks (kind ``impl``, named by the type, so ``impl Display for Foo``
  holds ``Foo.fmt``), inline ``mod``s, ``macro_rules!``, type aliases; ``#[...]``
  attributes and ``///`` comments above belong to the item, ``//!`` does not.
  Not outlined: ``mod m;``, consts, statics, closures.
- Java: classes, records (``class``), interfaces, annotation types
  (``interface``), enums, methods, constructors; annotations are in the range,
  not in the signature. Not outlined: anonymous classes, enum constant bodies,
  local classes, fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .parse import Node

__all__ = ["CLASSLIKE", "NAME_CAP", "RULES", "Context", "Found", "Handler", "Rules", "clip"]

NAME_CAP = 200
"""Names longer than this many characters are cut, ending in ``…``."""

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


class Context:
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


Handler = Callable[["Node", Context], "list[Found] | None"]


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


def _field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def _named(kind: str, walk: bool = True) -> Handler:
    """A handler for nodes that carry their name in a ``name`` field."""

    def handle(node: Node, cx: Context) -> list[Found] | None:
        name = _field(node, "name")
        if name is None:
            return None
        return [Found(kind, cx.text(name), node, name, walk=node if walk else None)]

    return handle


def _body(kind: str) -> Handler:
    """Like ``_named``, nested definitions in the ``body`` field."""

    def handle(node: Node, cx: Context) -> list[Found] | None:
        name = _field(node, "name")
        if name is None:
            return None
        return [Found(kind, cx.text(name), node, name, walk=_field(node, "body"))]

    return handle


def _single(*types: str) -> Callable[[Node], bool]:
    """A wrapper test: the node holds exactly one child of these types."""

    def test(node: Node) -> bool:
        return sum(1 for child in node.named_children if child.type in types) == 1

    return test


# Python ---------------------------------------------------------------------

PYTHON = Rules(
    containers=frozenset(
        {
            "module",
            "block",
            "decorated_definition",
            "if_statement",
            "elif_clause",
            "else_clause",
            "for_statement",
            "while_statement",
            "try_statement",
            "except_clause",
            "except_group_clause",
            "finally_clause",
            "with_statement",
            "match_statement",
            "case_clause",
        }
    ),
    wrappers={"decorated_definition": None},
    handlers={"class_definition": _named("class"), "function_definition": _named("function")},
    docs=frozenset({"comment"}),
)

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
_DEPTH_GUARD = 32


def _inner_declarator(node: Node) -> Node | None:
    inner = _field(node, "declarator")
    if inner is None and node.named_child_count:
        inner = node.named_children[0]
    return inner


def _function_declarator(node: Node | None) -> Node | None:
    """The function declarator that names a function, or None (a variable, a function pointer)."""
    for _ in range(_DEPTH_GUARD):
        if node is None:
            return None
        if node.type == "function_declarator":
            inner = _field(node, "declarator")
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
    for _ in range(_DEPTH_GUARD):
        if node is None or node.type in _NAME_NODES:
            return node
        if node.type == "function_declarator" or node.type in _DECLARATOR_WRAPPERS:
            node = _inner_declarator(node)
        else:
            return None
    return None


def _scope_name(node: Node, cx: Context) -> str:
    if node.type == "template_type":
        name = _field(node, "name")
        if name is not None:
            return cx.text(name)
    return cx.text(node)


def _qualified(node: Node, cx: Context) -> tuple[tuple[str, ...], Node]:
    """``a::b::Foo::bar`` -> (("a", "b", "Foo"), the ``bar`` node)."""
    parts: list[str] = []
    for _ in range(_DEPTH_GUARD):
        if node.type != "qualified_identifier":
            break
        scope = _field(node, "scope")
        if scope is not None:
            parts.append(_scope_name(scope, cx))
        name = _field(node, "name")
        if name is None:
            break
        node = name
    return tuple(parts), node


def _function_name(node: Node, cx: Context) -> str:
    if node.type in ("template_function", "template_method"):
        name = _field(node, "name")
        if name is not None:
            return cx.text(name)
    text = cx.text(node)
    if node.type == "operator_name":
        # ``operator <<`` and ``operator<<`` are one name; ``operator new`` keeps its space.
        rest = "".join(text[len("operator") :].split())
        text = f"operator {rest}" if rest[:1].isalpha() else f"operator{rest}"
    return text


def _function(node: Node, declarator: Node, cx: Context, cpp: bool, walk: Node | None) -> Found:
    target = _field(declarator, "declarator")
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


def _specifier(spec: Node, cx: Context, name_node: Node | None = None) -> Found | None:
    body = _field(spec, "body")
    tag = _field(spec, "name")
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


def _c_specifier(node: Node, cx: Context) -> list[Found] | None:
    found = _specifier(node, cx)
    return [found] if found else None


def _c_typedef(node: Node, cx: Context) -> list[Found] | None:
    names = [n for n in map(_declarator_name, node.children_by_field_name("declarator")) if n is not None]
    spec = _field(node, "type")
    record: Found | None = None
    if spec is not None and spec.type in _SPECIFIERS and _field(spec, "body") is not None:
        if _field(spec, "name") is None and names:
            record = _specifier(spec, cx, names.pop(0))
        else:
            record = _specifier(spec, cx)
    # The typedef names come first: they are leaves, the record holds nested definitions.
    found = [Found("type", cx.text(n), node, n) for n in names]
    if record is not None:
        found.append(record)
    return found or None


def _c_function(cpp: bool) -> Handler:
    def handle(node: Node, cx: Context) -> list[Found] | None:
        declarator = _function_declarator(_field(node, "declarator"))
        if declarator is None:
            return None
        return [_function(node, declarator, cx, cpp, walk=None)]

    return handle


def _c_declaration(cpp: bool) -> Handler:
    """``struct foo {...} x;`` defines ``foo``; in a C++ class, ``void bar();`` declares a method."""

    def handle(node: Node, cx: Context) -> list[Found] | None:
        found: list[Found] = []
        spec = _field(node, "type")
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


def _cpp_namespace(node: Node, cx: Context) -> list[Found] | None:
    name = _field(node, "name")
    body = _field(node, "body")
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
        "preproc_function_def": _named("macro", walk=False),
    }
    containers = _C_CONTAINERS
    wrappers: dict[str, Callable[[Node], bool] | None] = {}
    if cpp:
        handlers.update(
            {
                "class_specifier": _c_specifier,
                "namespace_definition": _cpp_namespace,
                "alias_declaration": _named("type", walk=False),
            }
        )
        containers = containers | {"namespace_definition", "template_declaration"}
        wrappers["template_declaration"] = None
    return Rules(containers=containers, wrappers=wrappers, handlers=handlers, docs=frozenset({"comment"}))


# Go -------------------------------------------------------------------------


def _base_type(node: Node | None, cx: Context) -> str | None:
    """The type's own name: ``Tree`` in ``*Tree[K, V]``, ``Foo`` in ``&foo::Foo<T>``."""
    for _ in range(_DEPTH_GUARD):
        if node is None:
            return None
        t = node.type
        if t in ("type_identifier", "primitive_type", "identifier"):
            return cx.text(node)
        if t in ("generic_type", "reference_type", "pointer_type", "parenthesized_type"):
            node = _field(node, "type") or (node.named_children[0] if node.named_child_count else None)
        elif t == "scoped_type_identifier":
            node = _field(node, "name")
        else:
            return " ".join(cx.text(node).split()) or None
    return None


def _go_method(node: Node, cx: Context) -> list[Found] | None:
    name = _field(node, "name")
    if name is None:
        return None
    receiver = _field(node, "receiver")
    base = None
    if receiver is not None:
        params = [c for c in receiver.named_children if c.type == "parameter_declaration"]
        if params:
            base = _base_type(_field(params[0], "type"), cx)
    return [Found("method", cx.text(name), node, name, (base,) if base else ())]


def _go_type(node: Node, cx: Context) -> list[Found] | None:
    name = _field(node, "name")
    if name is None:
        return None
    spec = _field(node, "type")
    kind, walk = "type", None
    if node.type == "type_spec" and spec is not None:
        if spec.type == "struct_type":
            kind = "struct"
        elif spec.type == "interface_type":
            kind, walk = "interface", spec
    return [Found(kind, cx.text(name), node, name, walk=walk)]


GO = Rules(
    containers=frozenset({"source_file", "type_declaration"}),
    wrappers={"type_declaration": _single("type_spec", "type_alias")},
    handlers={
        "function_declaration": _named("function", walk=False),
        "method_declaration": _go_method,
        "type_spec": _go_type,
        "type_alias": _go_type,
        "method_elem": _named("method", walk=False),
    },
    docs=frozenset({"comment"}),
)

# Rust -----------------------------------------------------------------------


def _rust_impl(node: Node, cx: Context) -> list[Found] | None:
    target = _field(node, "type")
    name = _base_type(target, cx)
    if name is None or target is None:
        return None
    return [Found("impl", name, node, target, walk=_field(node, "body"))]


_module = _body("module")


def _rust_module(node: Node, cx: Context) -> list[Found] | None:
    """``mod m { ... }``; ``mod m;`` only names a file and defines nothing here."""
    return _module(node, cx) if _field(node, "body") is not None else None


RUST = Rules(
    containers=frozenset({"source_file", "declaration_list", "block", "foreign_mod_item"}),
    wrappers={},
    handlers={
        "function_item": _body("function"),
        "function_signature_item": _named("function", walk=False),
        "struct_item": _named("struct", walk=False),
        "enum_item": _named("enum", walk=False),
        "union_item": _named("union", walk=False),
        "type_item": _named("type", walk=False),
        "trait_item": _body("trait"),
        "impl_item": _rust_impl,
        "mod_item": _rust_module,
        "macro_definition": _named("macro", walk=False),
    },
    docs=frozenset({"line_comment", "block_comment", "attribute_item"}),
    inner_docs=(b"//!", b"/*!"),
)

# Java -----------------------------------------------------------------------

JAVA = Rules(
    containers=frozenset({"program", "enum_body_declarations"}),
    wrappers={},
    handlers={
        "class_declaration": _body("class"),
        "record_declaration": _body("class"),
        "interface_declaration": _body("interface"),
        "annotation_type_declaration": _body("interface"),
        "enum_declaration": _body("enum"),
        "method_declaration": _named("method", walk=False),
        "annotation_type_element_declaration": _named("method", walk=False),
        "constructor_declaration": _named("constructor", walk=False),
        "compact_constructor_declaration": _named("constructor", walk=False),
    },
    docs=frozenset({"line_comment", "block_comment"}),
)

# JavaScript, TypeScript, TSX ------------------------------------------------

_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_PROPERTY_NAMES = frozenset({"property_identifier", "private_property_identifier", "identifier"})


def _property_name(node: Node, cx: Context) -> str:
    if node.type == "string":
        return cx.text(node)[1:-1]
    return cx.text(node)


def _js_method(node: Node, cx: Context) -> list[Found] | None:
    name = _field(node, "name")
    if name is None:
        return None
    text = _property_name(name, cx)
    kind = "constructor" if text == "constructor" and node.type == "method_definition" else "method"
    return [Found(kind, text, node, name, walk=node)]


def _js_field(node: Node, cx: Context) -> list[Found] | None:
    value = _field(node, "value")
    name = _field(node, "name") or _field(node, "property")
    if value is None or name is None or value.type not in _FUNCTION_VALUES:
        return None
    return [Found("method", _property_name(name, cx), node, name, walk=value)]


def _js_declarator(node: Node, cx: Context) -> list[Found] | None:
    name = _field(node, "name")
    value = _field(node, "value")
    if name is None or value is None or name.type != "identifier":
        return None
    if value.type in _FUNCTION_VALUES:
        return [Found("function", cx.text(name), node, name, walk=value)]
    if value.type == "class":
        return [Found("class", cx.text(name), node, name, walk=_field(value, "body"))]
    return None


def _member_chain(node: Node, cx: Context) -> list[str] | None:
    parts: list[str] = []
    for _ in range(_DEPTH_GUARD):
        if node.type == "member_expression":
            prop = _field(node, "property")
            obj = _field(node, "object")
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


def _js_assignment(node: Node, cx: Context) -> list[Found] | None:
    """``exports.f = function``, ``Foo.prototype.bar = () => {}``, ``module.exports = function g() {}``."""
    if cx.parent_type != "expression_statement":
        return None
    left, right = _field(node, "left"), _field(node, "right")
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
        own = _field(right, "name")
        if own is None:
            return None
        parts, name_node = [cx.text(own)], own
    walk = _field(right, "body") if right.type == "class" else right
    return [Found(kind, parts[-1], node, name_node, tuple(parts[:-1]), walk)]


def _js_class(node: Node, cx: Context) -> list[Found] | None:
    if node.type == "class" and cx.parent_type != "export_statement":
        return None
    name = _field(node, "name")
    text = cx.text(name) if name is not None else "default"
    return [Found("class", text, node, name, walk=_field(node, "body"))]


def _js_default_function(node: Node, cx: Context) -> list[Found] | None:
    """``export default function () {}``; other anonymous functions are containers."""
    if cx.parent_type != "export_statement":
        return None
    return [Found("function", "default", node, None, walk=node)]


def _ts_namespace(kind: str) -> Handler:
    def handle(node: Node, cx: Context) -> list[Found] | None:
        name = _field(node, "name")
        if name is None:
            return None
        if name.type == "string":
            parts = [cx.text(name)[1:-1]]
        else:
            parts = cx.text(name).replace(" ", "").split(".")
        return [Found(kind, parts[-1], node, name, tuple(parts[:-1]), walk=_field(node, "body"))]

    return handle


def _ts_type_alias(node: Node, cx: Context) -> list[Found] | None:
    name = _field(node, "name")
    if name is None:
        return None
    value = _field(node, "value")
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
_SINGLE_DECLARATOR = _single("variable_declarator")


def _js_rules(typescript: bool) -> Rules:
    handlers: dict[str, Handler] = {
        "function_declaration": _named("function"),
        "generator_function_declaration": _named("function"),
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
                "function_signature": _named("function", walk=False),
                "method_signature": _js_method,
                "abstract_method_signature": _js_method,
                "interface_declaration": _body("interface"),
                "type_alias_declaration": _ts_type_alias,
                "enum_declaration": _named("enum", walk=False),
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


RULES: dict[str, Rules] = {
    "python": PYTHON,
    "c": _c_rules(cpp=False),
    "cpp": _c_rules(cpp=True),
    "go": GO,
    "rust": RUST,
    "java": JAVA,
    "javascript": _js_rules(typescript=False),
    "typescript": _js_rules(typescript=True),
    "tsx": _js_rules(typescript=True),
}
