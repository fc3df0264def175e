"""``innermost`` and ``innermost_lookup``: which definition encloses a line."""

from conftest import FIXTURES
from hypothesis import given
from hypothesis import strategies as st

from jitctx.code.outline import Definition, innermost, innermost_lookup, outline
from jitctx.code.parse import language_for

RATIONAL = outline("python", (FIXTURES / "code" / "rational.py").read_bytes()).definitions


def enclosing(line: int) -> str | None:
    found = innermost(RATIONAL, line)
    return found.qualname if found else None


def test_innermost_on_the_fixture():
    assert [enclosing(n) for n in (1, 8, 9, 12, 15, 16, 17, 27, 28, 30, 35, 39, 44, 53, 55, 56, 57)] == [
        None,
        None,
        "Rational",
        "Rational",
        "Rational.Error",
        "Rational.Error",
        "Rational",
        "Rational.__add__.lift",
        "Rational.__add__.lift",
        "Rational.__add__",
        None,
        "conditional",
        None,
        "main.Local.run",
        "main",
        "main",
        None,
    ]


def test_lookup_agrees_with_innermost_on_every_line_of_every_fixture():
    for path in sorted((FIXTURES / "code").rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        language = language_for(path.name, data)
        assert language is not None, path.name
        defs = outline(language, data).definitions
        lookup = innermost_lookup(defs)
        last = max((d.end_line for d in defs), default=0) + 2
        assert [lookup(n) for n in range(-1, last)] == [innermost(defs, n) for n in range(-1, last)], path.name


def test_ties_go_to_the_later_definition():
    # A C typedef and its struct share one range; the struct (listed second) is the innermost.
    defs = outline("c", b"typedef struct foo { int a; } foo_t;\n").definitions
    assert [d.kind for d in defs] == ["type", "struct"]
    assert innermost(defs, 1) is defs[1] and innermost_lookup(defs)(1) is defs[1]


def test_empty():
    assert innermost((), 3) is None and innermost_lookup(())(3) is None


def _definition(start: int, length: int, depth: int) -> Definition:
    return Definition("function", "f", "f", start, start + length, "def f():", depth, None)


@given(
    st.lists(
        st.builds(_definition, st.integers(1, 60), st.integers(0, 20), st.integers(0, 4)),
        max_size=25,
    ),
    st.lists(st.integers(-2, 90), max_size=30),
)
def test_lookup_equals_the_scan_on_arbitrary_ranges(defs, lines):
    lookup = innermost_lookup(defs)
    for line in lines:
        assert lookup(line) is innermost(defs, line)
