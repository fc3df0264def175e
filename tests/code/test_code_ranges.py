"""Line ranges, doc comments, signatures and line ends, on small inline sources."""

import pytest
from conftest import FIXTURES

from jitctx.code.outline import SIGNATURE_CAP, outline


def rows(language: str, source: bytes) -> list[tuple[str, str, int, int]]:
    return [(d.kind, d.qualname, d.start_line, d.end_line) for d in outline(language, source).definitions]


def signatures(language: str, source: bytes) -> list[str]:
    return [d.signature for d in outline(language, source).definitions]


def test_doc_comment_needs_no_blank_line_between():
    source = b"# detached\n\n# attached 1\n# attached 2\ndef f():\n    pass\n"
    assert rows("python", source) == [("function", "f", 3, 6)]


def test_trailing_comment_of_the_line_above_is_not_a_doc_comment():
    source = b"x = 1  # about x\ndef f():\n    pass\n"
    assert rows("python", source) == [("function", "f", 2, 3)]
    c = b"int x; /* about x */\nint f(void) { return 0; }\n"
    assert rows("c", c) == [("function", "f", 2, 2)]


def test_comment_above_the_first_statement_of_a_python_block():
    # tree-sitter puts this comment beside the class body, not inside it.
    source = b"class A:\n    # about f\n    def f(self):\n        pass\n"
    assert rows("python", source) == [("class", "A", 1, 4), ("method", "A.f", 2, 4)]


def test_comment_after_the_class_line_is_not_the_methods_doc():
    source = b"class A:  # noqa\n    def f(self):\n        pass\n"
    assert rows("python", source) == [("class", "A", 1, 3), ("method", "A.f", 2, 3)]


def test_decorators_over_several_lines_belong_to_the_definition():
    source = b'@app.route(\n    "/x",\n)\n@login_required\ndef view():\n    return 1\n'
    result = outline("python", source)
    assert rows("python", source) == [("function", "view", 1, 6)]
    assert result.definitions[0].signature == "def view():"


def test_rust_inner_doc_comment_is_not_the_next_items_doc():
    source = b"//! The crate.\nfn first() {}\n\n/// Outer.\n#[inline]\n/* and more */\nfn second() {}\n"
    assert rows("rust", source) == [("function", "first", 2, 2), ("function", "second", 4, 7)]


def test_javadoc_and_annotations_on_their_own_lines():
    source = b'class A {\n    /** Doc. */\n    @Override\n    @SuppressWarnings("x")\n    public String toString() { return ""; }\n}\n'
    result = outline("java", source)
    assert rows("java", source) == [("class", "A", 1, 6), ("method", "A.toString", 2, 5)]
    assert result.definitions[1].signature == 'public String toString() { return ""; }'


def test_cpp_template_line_belongs_to_the_definition():
    source = b"template <typename T>\ntemplate <typename U>\nvoid Box<T>::put(U u) {}\n"
    result = outline("cpp", source)
    assert rows("cpp", source) == [("method", "Box.put", 1, 3)]
    assert result.definitions[0].signature == "void Box<T>::put(U u) {}"


def test_ts_decorators_inside_the_class():
    source = b"class C {\n  @Input()\n  @Other()\n  run(): void {}\n}\n"
    result = outline("typescript", source)
    assert rows("typescript", source) == [("class", "C", 1, 5), ("method", "C.run", 2, 4)]
    assert result.definitions[1].signature == "run(): void {}"


def test_go_doc_comment_inside_a_type_group():
    source = b"package p\n\ntype (\n\t// A is a.\n\tA int\n\n\tB int\n)\n"
    assert rows("go", source) == [("type", "A", 4, 5), ("type", "B", 7, 7)]


def test_crlf_gives_the_same_outline_and_no_carriage_returns():
    lf = (FIXTURES / "code" / "rational.py").read_bytes()
    crlf = lf.replace(b"\n", b"\r\n")
    assert rows("python", crlf) == rows("python", lf)
    assert signatures("python", crlf) == signatures("python", lf)
    assert not any("\r" in s for s in signatures("python", crlf))


def test_lone_carriage_returns_never_reach_a_signature():
    result = outline("c", b"int f(void)\r{ return 0; }\rint g;\n")
    assert [d.signature for d in result.definitions] == ["int f(void)"]
    assert not any("\r" in d.name for d in result.definitions)


def test_bom_is_ignored():
    source = (FIXTURES / "code" / "tree.go").read_bytes()
    assert rows("go", b"\xef\xbb\xbf" + source) == rows("go", source)


def test_names_and_signatures_are_utf8_with_replacement():
    result = outline("python", b"def caf\xc3\xa9(x):  # \xff\n    pass\n")
    assert [(d.name, d.signature) for d in result.definitions] == [("café", "def café(x):  # \ufffd")]


def test_long_signature_is_capped_with_a_marker():
    params = ", ".join(f"p{i}" for i in range(200)).encode()
    result = outline("python", b"def f(" + params + b"):\n    pass\n")
    sig = result.definitions[0].signature
    assert len(sig) == SIGNATURE_CAP and sig.endswith("…") and sig.startswith("def f(p0, p1")


def test_long_name_is_capped_with_a_marker():
    result = outline("python", b"def " + b"n" * 5000 + b"():\n    pass\n")
    d = result.definitions[0]
    assert d.name == "n" * 199 + "…" and d.qualname == d.name


def test_gnu_style_return_type_joins_the_name_line():
    source = b"static const char *\nname_of(int x)\n{\n  return 0;\n}\n"
    assert signatures("c", source) == ["static const char * name_of(int x)"]


def test_signature_of_a_one_line_member_stops_where_it_ends():
    source = b"type T struct{}\n\nfunc (T) A() {}; func (T) B() {}\n"
    assert signatures("go", source) == ["type T struct{}", "func (T) A() {}", "func (T) B() {}"]


@pytest.mark.parametrize(
    ("language", "source"),
    [
        ("python", b""),
        ("python", b"\n\n   \n"),
        ("c", b"/* only a comment */\n"),
        ("go", b"package p\n"),
        ("java", b"package a.b;\nimport c.D;\n"),
    ],
)
def test_nothing_defined_is_an_empty_outline(language, source):
    result = outline(language, source)
    assert result.definitions == () and not result.partial


def test_issue_error_root_does_not_crash():
    # Statement-like macros can make the whole tree one ERROR node (kind id 65535, outside the grammar's table).
    source = (
        b"static void\nfirst(void) {\n\thelper();\n}\n\nstatic void\nsecond(int n) {\n"
        b"\tfor (int i = 0; i < n; i++) {\n\t\tBEGIN_BLOCK(a)\n\t\t\tn++;\n\t\tEND_BLOCK(a)\n\n"
        b'\t\tBEGIN_BLOCK(b)\n\t\t\tn++;\n\t\tEND_BLOCK(b)\n\t}\n\tcheck(n, 0, "x");\n'
    )
    result = outline("c", source)
    assert result.partial
    assert rows("c", source) == [("function", "first", 1, 4)]


def test_definitions_inside_error_nodes_are_still_outlined():
    # Conditional initialisers derail tree-sitter-c: the function below ends up inside the ERROR node.
    source = (
        b'entry table[] = {\n#ifdef LINUX\n    {.name = "a", .fn = run_a},\n#ifdef ARM\n'
        b'    {.name = "b", .fn = run_b},\n#endif\n#endif\n    {.name = NULL, .fn = NULL}\n};\n\n'
        b"/* Runs every entry. */\nint run_all(void) {\n    return 0;\n}\n"
    )
    result = outline("c", source)
    assert result.partial
    assert rows("c", source) == [("function", "run_all", 11, 14)]


def test_cpp_specialisation_is_named_by_its_template():
    source = b"template <>\nstruct formatter<int, char> {\n  void format();\n};\nenum : unsigned { A };\n"
    assert rows("cpp", source) == [("struct", "formatter", 1, 4), ("method", "formatter.format", 3, 3)]


def test_cpp_operator_names_are_normalised():
    source = b"struct M {\n  M& operator <<(int);\n  M& operator<<(long);\n  void* operator new(unsigned long);\n};\n"
    assert [d.name for d in outline("cpp", source).definitions] == ["M", "operator<<", "operator<<", "operator new"]


def test_js_default_exports_and_module_exports():
    source = b"export default function () {}\nmodule.exports = function createApp() {};\nmodule.exports = function () {};\nthis.handler = () => {};\nconst { a, b } = () => {};\n"
    assert rows("javascript", source) == [("function", "default", 1, 1), ("function", "createApp", 2, 2)]
    assert rows("typescript", b"export default class {\n  m() {}\n}\n") == [
        ("class", "default", 1, 3),
        ("method", "default.m", 2, 2),
    ]


def test_js_several_declarators_each_get_their_own_range():
    source = b"const a = () => 1,\n  b = () => 2;\n"
    assert rows("javascript", source) == [("function", "a", 1, 1), ("function", "b", 2, 2)]
