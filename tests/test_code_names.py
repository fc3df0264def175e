"""Issue 32 items 1-3 and issue 33 item 7: the language of a header, C++ names, overloads, exact before prefix.

Real tree-sitter over the ``code`` fixture plus headers the tests write.
"""

from __future__ import annotations

import pytest

from jitctx.code.parse import language_for
from jitctx.errors import QueryError
from jitctx.workspace import Workspace

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
