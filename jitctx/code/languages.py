"""What counts as a definition in each language: one ``Rules`` per grammar (``RULES``).

Owns the table the outline walk reads (``RULES``: language -> ``Rules``) and
the rules of Python, Go, Rust and Java; C and C++ are in ``c_rules``,
JavaScript, TypeScript and TSX in ``js_rules``. Does not own the walk, line
ranges or signatures (``outline``), nor the shape of the rules (``rules``).

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

from typing import TYPE_CHECKING

from .c_rules import CPP, C
from .js_rules import JAVASCRIPT, TYPESCRIPT
from .rules import DEPTH_GUARD, Found, Rules, WalkState, by_name, field_of, single, with_body

if TYPE_CHECKING:
    from .parse import Node

__all__ = ["GO", "JAVA", "PYTHON", "RULES", "RUST"]


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
    handlers={"class_definition": by_name("class"), "function_definition": by_name("function")},
    docs=frozenset({"comment"}),
)
# Go -------------------------------------------------------------------------


def _base_type(node: Node | None, cx: WalkState) -> str | None:
    """The type's own name: ``Tree`` in ``*Tree[K, V]``, ``Foo`` in ``&foo::Foo<T>``."""
    for _ in range(DEPTH_GUARD):
        if node is None:
            return None
        t = node.type
        if t in ("type_identifier", "primitive_type", "identifier"):
            return cx.text(node)
        if t in ("generic_type", "reference_type", "pointer_type", "parenthesized_type"):
            node = field_of(node, "type") or (node.named_children[0] if node.named_child_count else None)
        elif t == "scoped_type_identifier":
            node = field_of(node, "name")
        else:
            return " ".join(cx.text(node).split()) or None
    return None


def _go_method(node: Node, cx: WalkState) -> list[Found] | None:
    name = field_of(node, "name")
    if name is None:
        return None
    receiver = field_of(node, "receiver")
    base = None
    if receiver is not None:
        params = [c for c in receiver.named_children if c.type == "parameter_declaration"]
        if params:
            base = _base_type(field_of(params[0], "type"), cx)
    return [Found("method", cx.text(name), node, name, (base,) if base else ())]


def _go_type(node: Node, cx: WalkState) -> list[Found] | None:
    name = field_of(node, "name")
    if name is None:
        return None
    spec = field_of(node, "type")
    kind, walk = "type", None
    if node.type == "type_spec" and spec is not None:
        if spec.type == "struct_type":
            kind = "struct"
        elif spec.type == "interface_type":
            kind, walk = "interface", spec
    return [Found(kind, cx.text(name), node, name, walk=walk)]


GO = Rules(
    containers=frozenset({"source_file", "type_declaration"}),
    wrappers={"type_declaration": single("type_spec", "type_alias")},
    handlers={
        "function_declaration": by_name("function", walk=False),
        "method_declaration": _go_method,
        "type_spec": _go_type,
        "type_alias": _go_type,
        "method_elem": by_name("method", walk=False),
    },
    docs=frozenset({"comment"}),
)
# Rust -----------------------------------------------------------------------


def _rust_impl(node: Node, cx: WalkState) -> list[Found] | None:
    target = field_of(node, "type")
    name = _base_type(target, cx)
    if name is None or target is None:
        return None
    return [Found("impl", name, node, target, walk=field_of(node, "body"))]


_module = with_body("module")


def _rust_module(node: Node, cx: WalkState) -> list[Found] | None:
    """``mod m { ... }``; ``mod m;`` only names a file and defines nothing here."""
    return _module(node, cx) if field_of(node, "body") is not None else None


RUST = Rules(
    containers=frozenset({"source_file", "declaration_list", "block", "foreign_mod_item"}),
    wrappers={},
    handlers={
        "function_item": with_body("function"),
        "function_signature_item": by_name("function", walk=False),
        "struct_item": by_name("struct", walk=False),
        "enum_item": by_name("enum", walk=False),
        "union_item": by_name("union", walk=False),
        "type_item": by_name("type", walk=False),
        "trait_item": with_body("trait"),
        "impl_item": _rust_impl,
        "mod_item": _rust_module,
        "macro_definition": by_name("macro", walk=False),
    },
    docs=frozenset({"line_comment", "block_comment", "attribute_item"}),
    inner_docs=(b"//!", b"/*!"),
)
# Java -----------------------------------------------------------------------

JAVA = Rules(
    containers=frozenset({"program", "enum_body_declarations"}),
    wrappers={},
    handlers={
        "class_declaration": with_body("class"),
        "record_declaration": with_body("class"),
        "interface_declaration": with_body("interface"),
        "annotation_type_declaration": with_body("interface"),
        "enum_declaration": with_body("enum"),
        "method_declaration": by_name("method", walk=False),
        "annotation_type_element_declaration": by_name("method", walk=False),
        "constructor_declaration": by_name("constructor", walk=False),
        "compact_constructor_declaration": by_name("constructor", walk=False),
    },
    docs=frozenset({"line_comment", "block_comment"}),
)


RULES: dict[str, Rules] = {
    "python": PYTHON,
    "c": C,
    "cpp": CPP,
    "go": GO,
    "rust": RUST,
    "java": JAVA,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "tsx": TYPESCRIPT,
}
