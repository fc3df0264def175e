"""Issue 32 items 1-3 and issue 33 item 7: the language of a header, C++ names, overloads, exact before prefix.

Real tree-sitter over the ``code`` fixture plus headers the tests write.
"""

from __future__ import annotations

import pytest

from jitctx.code.parse import language_for
from jitctx.errors import QueryError
from jitctx.session.workspace import Workspace

_LICENSE = "/*\n" + "".join(f" * Copyright line {i}: permission is granted to use, copy and modify this file.\n" for i in range(6)) + " */\n\n"

# C++ only past the first 256 bytes (a license first): read as C before, outlined as nothing
_LATE_CPP = (
    _LICENSE
    + "#pragma once\n\n#include <AK/Noncopyable.h>\n\nnamespace AK {\n\n"
    + "template<typename T, size_t Capacity>\nclass CircularBuffer {\npublic:\n"
    + "    void enqueue(T value);\n    size_t size() const { return m_size; }\n\nprivate:\n    size_t m_size { 0 };\n};\n\n}\n"
)
# C++ within the first 256 bytes
_EARLY_CPP = "#pragma once\nnamespace geo {\nclass Early {\npublic:\n    int run();\n};\n}\n"
# C that mentions C++ in comments only, and uses a C++ keyword as a name: stays C
_C_WITH_MENTIONS = (
    _LICENSE
    + "/* Unlike C++'s std::vector or Foo::bar, this list is plain C.\n"
    + " * template <class T> is not used here. */\n"
    + "// see Vec::push for the C++ binding\n"
    + "struct vec { int *items; int new; int class; };\nint vec_push(struct vec *v, int item);\n"
)
# C++ only in its last lines, past 8 KiB of macros and comments
_VERY_LATE_CPP = _LICENSE + "".join(f"#define FLAG_{i} (1u << {i % 31})  /* flag number {i} of the set */\n" for i in range(200)) + "namespace late {\nint helper();\n}\n"


def test_issue_32_header_language_is_read_from_the_whole_head_not_256_bytes():
    assert len(_LATE_CPP.split("namespace")[0]) > 256
    assert language_for("AK/CircularBuffer.h", _LATE_CPP.encode()) == "cpp"
    assert language_for("geo/early.h", _EARLY_CPP.encode()) == "cpp"
    assert language_for("vec.h", _C_WITH_MENTIONS.encode()) == "c"
    assert len(_VERY_LATE_CPP) > 8192 and language_for("late.h", _VERY_LATE_CPP.encode()) == "cpp"
    assert language_for("x.h", b"using mode_t = unsigned int;\n") == "cpp"
    assert language_for("x.h", b"int f(void) { return Foo::bar(); }\n") == "cpp"
    assert language_for("x.h", b"[[gnu::unused]] static int x;\n") == "c"  # a C23 attribute


def test_issue_32_outline_and_symbols_of_a_cpp_header_with_a_license_first(make_repo):
    code = make_repo("code")
    code.write("AK/CircularBuffer.h", _LATE_CPP)
    code.write("vec.h", _C_WITH_MENTIONS)
    ws = Workspace(code.root)
    quals = [s.qualname for s in ws.outline("AK/CircularBuffer.h").results]
    assert quals == ["AK", "AK.CircularBuffer", "AK.CircularBuffer.enqueue", "AK.CircularBuffer.size"]
    assert [s.path for s in ws.symbols("CircularBuffer").results] == ["AK/CircularBuffer.h"]
    assert [s.qualname for s in ws.outline("vec.h").results] == ["vec"]  # C: `new` and `class` are field names


@pytest.fixture
def code(make_repo):
    return make_repo("code")


def test_issue_33_symbols_lists_prefix_matches_only_without_an_exact_one(code):
    code.write("numbers.py", "def igcd(a, b):\n    return a\n\n\ndef igcd_lehmer(a, b):\n    return a\n\n\ndef igcdex(a, b):\n    return a\n")
    ws = Workspace(code.root)
    res = ws.symbols("igcd")
    assert [s.qualname for s in res.results] == ["igcd"]
    assert "igcd_lehmer" in res.notice and "igcdex" in res.notice  # named, so the caller can ask for one
    prefix = ws.symbols("igcd_")
    assert [s.qualname for s in prefix.results] == ["igcd_lehmer"]  # no exact one: the prefix matches


def test_head_symbol_unknown_name_is_still_an_error(code):
    with pytest.raises(QueryError):
        Workspace(code.root).head("rational.py", symbol="nope")


_PARSER_H = """#pragma once
namespace Web::CSS::Parser {

class Parser {
public:
    Parser();
    int parse_ratio(int x);
};

}
"""
_PARSER_CPP = """#include "Parser.h"

namespace Web::CSS::Parser {

Parser::Parser() {}

int Parser::parse_ratio(int x)
{
    return x * 2;
}

}
"""


def test_issue_32_cpp_names_as_written_one_separator_and_declaration_to_definition(code):
    code.write("css/Parser.h", _PARSER_H)
    code.write("css/Parser.cpp", _PARSER_CPP)
    ws = Workspace(code.root)
    quals = {s.qualname for s in ws.outline("css/Parser.h").results}
    assert quals == {"Web.CSS.Parser", "Web.CSS.Parser.Parser", "Web.CSS.Parser.Parser.Parser", "Web.CSS.Parser.Parser.parse_ratio"}  # one separator
    for query in ("Parser::parse_ratio", "Web::CSS::Parser::Parser::parse_ratio", "Parser.parse_ratio"):
        hits = ws.symbols(query).results
        assert [(h.path, h.start_line) for h in hits] == [("css/Parser.cpp", 7), ("css/Parser.h", 7)], query  # the definition first
    read = ws.head("css/Parser.cpp", symbol="Parser::parse_ratio")
    assert read.results[0].content.startswith("int Parser::parse_ratio(int x)") and read.results[0].end_line == 10
    declared = ws.head("css/Parser.h", symbol="Parser::parse_ratio")
    assert declared.results[0].content.strip() == "int parse_ratio(int x);"
    assert "its definition is css/Parser.cpp:7-10: read it with head path=css/Parser.cpp symbol=Web.CSS.Parser.Parser.parse_ratio" in declared.notice


def test_issue_32_an_overload_reads_its_implementation(code):
    ws = Workspace(code.root)
    res = ws.head("rational.py", symbol="Rational.__add__")  # two @overload stubs and the implementation
    assert (res.results[0].start_line, res.results[0].end_line) == (26, 30)
    stub = ws.head("rational.py", symbol="Rational.__add__", start=22)  # a stub, by a line it holds
    assert (stub.results[0].start_line, stub.results[0].end_line) == (22, 23)
    code.write("rational.pyi", "class Rational:\n    def gcd_of(self) -> int: ...\n")
    code.write("rational.py", (code.root / "rational.py").read_text() + "\n\ndef gcd_of(x):\n    return x\n")
    assert [s.path for s in ws.symbols("gcd_of").results] == ["rational.py", "rational.pyi"]  # the implementation before the stub


def test_issue_32_head_symbol_of_a_complete_definition_has_no_read_on_note(code):
    res = Workspace(code.root).head("rational.py", symbol="gcd")
    assert res.results[0].end_line < res.results[0].total_lines and not res.notice
