"""Outlines of the fixture sources in ``fixtures_repo/code/``: whole outputs, per language."""

import pickle

import pytest
from conftest import FIXTURES

from jitctx.code.outline import KINDS, Definition, Outline, outline

CODE = FIXTURES / "code"


def rows(result: Outline) -> list[tuple[str, str, int, int]]:
    return [(d.kind, d.qualname, d.start_line, d.end_line) for d in result.definitions]


def outline_of(name: str, language: str) -> Outline:
    return outline(language, (CODE / name).read_bytes())


EXPECTED = {
    ("rational.py", "python"): [
        ("class", "Rational", 9, 34),
        ("class", "Rational.Error", 15, 16),
        ("method", "Rational.__init__", 18, 20),
        ("method", "Rational.__add__", 22, 23),
        ("method", "Rational.__add__", 24, 25),
        ("method", "Rational.__add__", 26, 30),
        ("function", "Rational.__add__.lift", 27, 28),
        ("method", "Rational.value", 32, 34),
        ("function", "conditional", 39, 40),
        ("function", "gcd", 45, 48),
        ("function", "main", 51, 56),
        ("class", "main.Local", 52, 54),
        ("method", "main.Local.run", 53, 54),
    ],
    ("bin/greet", "python"): [("function", "greet", 5, 6)],
    ("list.h", "c"): [
        ("macro", "LIST_FIRST", 7, 7),
        ("type", "list_node", 9, 13),
        ("struct", "list_node", 9, 13),
        ("struct", "list", 15, 18),
        ("type", "list_cmp", 20, 20),
        ("union", "list_value", 22, 25),
        ("enum", "list_flags", 27, 27),
        ("struct", "list_stats", 29, 34),
        ("struct", "list_stats.list_stats_inner", 31, 33),
    ],
    ("list.c", "c"): [
        ("function", "list_new", 4, 9),
        ("function", "list_free", 11, 14),
        ("function", "compare_values", 16, 20),
        ("function", "list_dump", 23, 25),
        ("function", "list_dump", 27, 27),
        ("function", "pick", 30, 32),
    ],
    ("shapes.hpp", "cpp"): [
        ("namespace", "geo", 4, 32),
        ("class", "geo.Shape", 6, 19),
        ("constructor", "geo.Shape.Shape", 9, 9),
        ("destructor", "geo.Shape.~Shape", 10, 10),
        ("method", "geo.Shape.area", 11, 11),
        ("method", "geo.Shape.id", 12, 12),
        ("struct", "geo.Shape.Cache", 15, 17),
        ("struct", "geo.Point", 21, 25),
        ("method", "geo.Point.dot", 24, 24),
        ("namespace", "geo.detail", 27, 30),
        ("enum", "geo.detail.Kind", 28, 28),
        ("type", "geo.detail.Id", 29, 29),
    ],
    ("shapes.cpp", "cpp"): [
        ("namespace", "geo.impl", 3, 5),
        ("function", "geo.impl.helper", 4, 4),
        ("constructor", "geo.Shape.Shape", 7, 7),
        ("destructor", "geo.Shape.~Shape", 9, 9),
        ("class", "Circle", 11, 19),
        ("constructor", "Circle.Circle", 14, 14),
        ("method", "Circle.area", 15, 15),
        ("method", "Circle.area", 21, 21),
        ("function", "clamp", 23, 26),
        ("method", "Circle.operator+", 28, 28),
        ("function", "geo.impl.helper2", 30, 30),
        ("function", "c_entry", 33, 33),
        ("function", "hidden", 37, 37),
    ],
    ("app.js", "javascript"): [
        ("class", "Greeter", 3, 24),
        ("method", "Greeter.onClick", 9, 11),
        ("constructor", "Greeter.constructor", 13, 15),
        ("method", "Greeter.greet", 17, 19),
        ("method", "Greeter.count", 21, 23),
        ("function", "ids", 26, 28),
        ("function", "shout", 30, 30),
        ("function", "whisper", 31, 33),
        ("function", "legacy", 34, 34),
        ("function", "outer", 36, 42),
        ("function", "outer.inner", 37, 37),
        ("function", "outer.helper", 38, 40),
        ("method", "Greeter.wave", 44, 46),
        ("function", "make", 49, 49),
        ("function", "hiddenInIife", 52, 52),
        ("function", "fixture", 56, 56),
    ],
    ("store.ts", "typescript"): [
        ("interface", "Item", 3, 7),
        ("method", "Item.label", 6, 6),
        ("type", "Id", 9, 9),
        ("type", "Handlers", 11, 13),
        ("method", "Handlers.onAdd", 12, 12),
        ("enum", "Status", 15, 18),
        ("class", "Store", 20, 36),
        ("method", "Store.onChange", 23, 25),
        ("constructor", "Store.constructor", 27, 29),
        ("method", "Store.add", 31, 31),
        ("method", "Store.add", 32, 32),
        ("method", "Store.add", 33, 35),
        ("class", "Base", 38, 40),
        ("method", "Base.load", 39, 39),
        ("function", "createStore", 42, 44),
        ("function", "byId", 46, 46),
        ("function", "external", 48, 48),
        ("namespace", "Utils.Strings", 50, 54),
        ("function", "Utils.Strings.trim", 51, 53),
        ("module", "plugin", 56, 58),
        ("function", "plugin.register", 57, 57),
    ],
    ("Button.tsx", "tsx"): [
        ("interface", "ButtonProps", 3, 5),
        ("function", "Button", 7, 11),
        ("function", "Button.handle", 9, 9),
        ("function", "App", 13, 15),
        ("class", "Legacy", 17, 21),
        ("method", "Legacy.render", 18, 20),
    ],
    ("tree.go", "go"): [
        ("struct", "Tree", 6, 10),
        ("struct", "node", 12, 15),
        ("interface", "Visitor", 18, 21),
        ("method", "Visitor.Visit", 20, 20),
        ("type", "Size", 22, 22),
        ("type", "Alias", 25, 25),
        ("method", "Tree.Insert", 27, 30),
        ("method", "Tree.Len", 32, 32),
        ("method", "Size.String", 34, 36),
        ("function", "New", 38, 42),
    ],
    ("shapes.rs", "rust"): [
        ("struct", "Point", 5, 11),
        ("enum", "Shape", 13, 16),
        ("trait", "Area", 18, 23),
        ("method", "Area.area", 19, 19),
        ("method", "Area.describe", 20, 22),
        ("impl", "Point", 25, 29),
        ("method", "Point.new", 26, 28),
        ("impl", "Point", 31, 35),
        ("method", "Point.fmt", 32, 34),
        ("impl", "Vec", 37, 41),
        ("method", "Vec.area", 38, 40),
        ("type", "Pair", 43, 43),
        ("macro", "square", 45, 49),
        ("module", "geometry", 51, 63),
        ("union", "geometry.Bits", 52, 55),
        ("function", "geometry.origin", 57, 62),
        ("function", "geometry.origin.zero", 58, 60),
        ("module", "tests", 67, 71),
        ("function", "tests.it_works", 69, 70),
    ],
    ("Library.java", "java"): [
        ("class", "Library", 5, 55),
        ("constructor", "Library.Library", 12, 14),
        ("method", "Library.hashCode", 16, 20),
        ("method", "Library.find", 22, 27),
        ("class", "Library.Shelf", 29, 31),
        ("method", "Library.Shelf.sort", 30, 30),
        ("interface", "Library.Lender", 33, 35),
        ("method", "Library.Lender.lend", 34, 34),
        ("enum", "Library.Genre", 37, 44),
        ("method", "Library.Genre.label", 41, 43),
        ("class", "Library.Book", 46, 50),
        ("constructor", "Library.Book.Book", 47, 49),
        ("interface", "Library.Audited", 52, 54),
        ("method", "Library.Audited.by", 53, 53),
    ],
}


@pytest.mark.parametrize(("name", "language"), sorted(EXPECTED), ids=lambda v: v)
def test_fixture_outline(name, language):
    result = outline_of(name, language)
    assert result.language == language
    assert rows(result) == EXPECTED[(name, language)]
    assert not result.partial and result.limit is None


@pytest.mark.parametrize(("name", "language"), sorted(EXPECTED), ids=lambda v: v)
def test_parents_come_first_and_enclose_their_children(name, language):
    defs = outline_of(name, language).definitions
    for i, d in enumerate(defs):
        assert d.kind in KINDS
        assert d.qualname.endswith(d.name)
        assert d.start_line <= d.end_line
        if d.parent is None:
            assert d.depth == 0
            continue
        parent = defs[d.parent]
        assert d.parent < i
        assert d.depth == parent.depth + 1
        assert parent.start_line <= d.start_line and d.end_line <= parent.end_line
        assert d.qualname.startswith(parent.qualname + ".")


def test_python_names_and_parents():
    defs = outline_of("rational.py", "python").definitions
    lift = defs[6]
    assert (lift.name, lift.depth, lift.parent) == ("lift", 2, 5)
    assert defs[lift.parent].name == "__add__"
    assert [d.name for d in defs if d.parent is None] == ["Rational", "conditional", "gcd", "main"]


SIGNATURES = {
    ("rational.py", "python"): {
        "Rational": "class Rational:",
        "Rational.value": "async def value(self):",
        "Rational.__init__": "def __init__(self, num, den=1):",
    },
    ("list.c", "c"): {
        "compare_values": "static int compare_values(const void *a, const void *b)",
        "pick": "static void (*pick(int which))(list *) {",
    },
    ("list.h", "c"): {"list": "typedef struct {", "list_cmp": "typedef int (*list_cmp)(const void *a, const void *b);"},
    ("shapes.hpp", "cpp"): {"geo.Point": "struct Point {", "geo.Shape.id": "int id() const { return id_; }"},
    ("store.ts", "typescript"): {
        "Store": "export class Store<T extends Item> extends EventEmitter {",
        "Item.label": "label(): string",
        "byId": "export const byId = async (id: Id): Promise<Item | undefined> => undefined;",
    },
    ("tree.go", "go"): {"Tree.Insert": "func (t *Tree[T]) Insert(v T) {", "Visitor": "Visitor interface {"},
    ("shapes.rs", "rust"): {"Point": "pub struct Point {", "Vec": "impl<T: Area> Area for Vec<T> {"},
    ("Library.java", "java"): {
        "Library": "public class Library {",
        "Library.hashCode": "public int hashCode() {",
        "Library.Audited": "@interface Audited {",
    },
}


@pytest.mark.parametrize(("name", "language"), sorted(SIGNATURES), ids=lambda v: v)
def test_signature_is_the_definitions_own_first_line(name, language):
    got: dict[str, str] = {}
    for d in outline_of(name, language).definitions:
        got.setdefault(d.qualname, d.signature)  # the first of equal qualnames (Rust: struct before impl)
    assert {q: got[q] for q in SIGNATURES[(name, language)]} == SIGNATURES[(name, language)]


def test_syntax_error_still_outlines_what_parsed():
    result = outline_of("broken.py", "python")
    assert result.partial and result.limit is None
    assert rows(result) == [
        ("function", "good", 1, 2),
        ("function", "bad", 5, 6),
        ("class", "Survivor", 9, 11),
        ("method", "Survivor.method", 10, 11),
    ]


def test_definition_is_frozen_and_slotted():
    d = outline_of("tree.go", "go").definitions[0]
    assert isinstance(d, Definition) and not hasattr(d, "__dict__")
    with pytest.raises(AttributeError):
        d.name = "other"  # type: ignore[misc]


def test_unknown_language_is_a_value_error():
    with pytest.raises(ValueError, match="cobol"):
        outline("cobol", b"IDENTIFICATION DIVISION.")


def test_outlines_pickle_for_worker_processes():
    result = outline_of("rational.py", "python")
    assert pickle.loads(pickle.dumps(result)) == result
