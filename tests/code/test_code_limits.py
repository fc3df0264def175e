"""Any bytes give an Outline: hostile input, the caps and how they show."""

import threading
import time

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jitctx.code import outline as outline_module
from jitctx.code.outline import KINDS, MAX_DEPTH, outline
from jitctx.code.parse import LANGUAGES

DEEP = 100_000

NESTED = {
    "javascript": (b"function a(){" * DEEP + b"}" * DEEP, "a"),
    "typescript": (b"namespace a {" * DEEP + b"}" * DEEP, "a"),
    "tsx": (b"class A { m() { class A {" * (DEEP // 2) + b"}}}" * (DEEP // 2), None),
    "cpp": (b"namespace a {" * DEEP + b"}" * DEEP, "a"),
    "rust": (b"mod a {" * DEEP + b"}" * DEEP, "a"),
    "java": (b"class A {" * DEEP + b"}" * DEEP, "A"),
}


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(NESTED))
def test_deep_nesting_is_cut_at_max_depth(language):
    source, name = NESTED[language]
    started = time.monotonic()
    result = outline(language, source)
    assert time.monotonic() - started < 30
    assert result.partial and result.limit == "depth"
    assert max(d.depth for d in result.definitions) == MAX_DEPTH
    if name is not None:
        assert len(result.definitions) == MAX_DEPTH + 1
        assert result.definitions[-1].qualname == ".".join([name] * (MAX_DEPTH + 1))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("language", "source"),
    [
        ("python", b"x = " + b"(" * DEEP + b"1" + b")" * DEEP + b"\n"),
        ("python", b"def f(" * DEEP),
        ("c", b"int f() " + b"{" * DEEP + b"}" * DEEP),
        ("c", b"struct a {" * DEEP),
        ("javascript", b"f(() => " * DEEP + b"1" + b")" * DEEP),
        ("javascript", b"if (1) {" * DEEP + b"}" * DEEP),
        ("go", b"package a\nfunc a() {" + b"func() {" * DEEP + b"}" * DEEP + b"}"),
        ("tsx", b"<" * DEEP),
    ],
)
@pytest.mark.slow
def test_deep_expressions_and_blocks_finish(language, source):
    started = time.monotonic()
    result = outline(language, source)
    assert time.monotonic() - started < 30
    assert all(d.depth <= MAX_DEPTH for d in result.definitions)


@pytest.mark.slow
def test_a_ten_megabyte_line_is_cut_at_max_bytes():
    source = b"var x = [" + b"1, " * 3_500_000 + b"];\nfunction after() {}\n"
    started = time.monotonic()
    result = outline("javascript", source)
    assert time.monotonic() - started < 30
    assert result.partial and result.limit == "bytes" and result.definitions == ()


def test_only_the_first_max_bytes_are_outlined_cut_at_a_line_end():
    source = b"def a():\n    pass\n\n\ndef b():\n    pass\n"
    result = outline("python", source, max_bytes=len(b"def a():\n    pass\n\n\ndef b"))
    assert result.partial and result.limit == "bytes"
    assert [(d.name, d.start_line, d.end_line) for d in result.definitions] == [("a", 1, 2)]
    whole = outline("python", source, max_bytes=len(source))
    assert not whole.partial and [d.name for d in whole.definitions] == ["a", "b"]


def test_definitions_beyond_the_cap_are_dropped_visibly(monkeypatch):
    monkeypatch.setattr(outline_module, "MAX_DEFINITIONS", 3)
    result = outline("python", b"".join(b"def f%d(): pass\n" % i for i in range(10)))
    assert result.partial and result.limit == "definitions"
    assert [d.name for d in result.definitions] == ["f0", "f1", "f2"]


@pytest.mark.parametrize(
    "source",
    [
        b"\x00" * 5000,
        b"\xff\xfe" + "def f(): pass\n".encode("utf-16-le"),
        bytes(range(256)) * 64,
        b"def \xc3(x):\n  \x00 pass\n" * 50,
        b"\r" * 1000,
        b"\xef\xbb\xbf",
        b"}" * 1000 + b"{" * 1000,
    ],
)
@pytest.mark.parametrize("language", LANGUAGES)
def test_garbage_gives_an_outline(language, source):
    result = outline(language, source)
    assert result.language == language
    for d in result.definitions:
        assert d.kind in KINDS and "\r" not in d.signature


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(language=st.sampled_from(LANGUAGES), data=st.binary(max_size=400))
def test_random_bytes_never_raise(language, data):
    result = outline(language, data)
    lines = data.count(b"\n") + 1
    for i, d in enumerate(result.definitions):
        assert 1 <= d.start_line <= d.end_line <= lines
        assert d.parent is None or d.parent < i


FIXTURE_SOURCES = {
    "python": "rational.py",
    "c": "list.c",
    "cpp": "shapes.cpp",
    "javascript": "app.js",
    "typescript": "store.ts",
    "tsx": "Button.tsx",
    "go": "tree.go",
    "rust": "shapes.rs",
    "java": "Library.java",
}


@settings(max_examples=60, deadline=None)
@given(
    language=st.sampled_from(sorted(FIXTURE_SOURCES)),
    cut=st.integers(min_value=0, max_value=2000),
    junk=st.binary(max_size=20),
)
def test_damaged_sources_keep_their_invariants(language, cut, junk):
    source = (FIXTURES / "code" / FIXTURE_SOURCES[language]).read_bytes()
    data = source[:cut] + junk + source[cut:]
    result = outline(language, data)
    lines = data.count(b"\n") + 1
    for i, d in enumerate(result.definitions):
        assert 1 <= d.start_line <= d.end_line <= lines
        if d.parent is not None:
            parent = result.definitions[d.parent]
            assert d.parent < i and d.depth == parent.depth + 1
            assert parent.start_line <= d.start_line and d.end_line <= parent.end_line


@pytest.mark.slow
def test_outlines_from_many_threads_agree():
    sources = {lang: (FIXTURES / "code" / name).read_bytes() for lang, name in FIXTURE_SOURCES.items()}
    expected = {lang: outline(lang, src) for lang, src in sources.items()}
    mismatches: list[str] = []

    def work():
        for _ in range(5):
            for lang, src in sources.items():
                if outline(lang, src) != expected[lang]:
                    mismatches.append(lang)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []
