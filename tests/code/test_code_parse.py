"""The tree-sitter seam: language detection, parsers per thread, the one import site."""

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import FIXTURES

from jitctx.code.parse import LANGUAGES, language_for, parse

PACKAGE = Path(__file__).resolve().parents[2] / "jitctx"


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a.py", "python"),
        ("stubs/a.pyi", "python"),
        ("A.PY", "python"),
        ("x.c", "c"),
        ("x.C", "c"),
        ("x.cc", "cpp"),
        ("x.cpp", "cpp"),
        ("x.CXX", "cpp"),
        ("x.hpp", "cpp"),
        ("x.hh", "cpp"),
        ("x.hxx", "cpp"),
        ("x.ipp", "cpp"),
        ("x.inl", "cpp"),
        ("x.js", "javascript"),
        ("x.jsx", "javascript"),
        ("x.mjs", "javascript"),
        ("x.cjs", "javascript"),
        ("x.ts", "typescript"),
        ("x.d.ts", "typescript"),
        ("x.mts", "typescript"),
        ("x.cts", "typescript"),
        ("x.tsx", "tsx"),
        ("x.TSX", "tsx"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("src/A.java", "java"),
        ("/abs/path/to/.eslintrc.js", "javascript"),
        ("README.md", None),
        ("Makefile", None),
        (".bashrc", None),
        ("archive.tar.gz", None),
        ("x.pyc", None),
        ("dir.py/file", None),
    ],
)
def test_language_from_extension(path, language):
    assert language_for(path) == language


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"#!/usr/bin/env python3\nprint(1)\n", "python"),
        (b"#!/usr/bin/python3.11 -u\n", "python"),
        (b"#!/usr/bin/python\n", "python"),
        (b"#! /usr/bin/env pypy3\n", "python"),
        (b"#!/usr/bin/env node\n", "javascript"),
        (b"#!/usr/local/bin/nodejs\n", "javascript"),
        (b"#!/usr/bin/env -S deno run --allow-read\n", "typescript"),
        (b"#!/usr/bin/env ts-node\n", "typescript"),
        (b"#!/usr/bin/env -i PATH=/bin python3\n", "python"),
        (b"#!/bin/sh\n", None),
        (b"#!/usr/bin/env bash\n", None),
        (b"#!\n", None),
        (b"print(1)\n", None),
        (b"", None),
        (b"#!/usr/bin/env \xff\xfe\n", None),
    ],
)
def test_language_from_shebang_of_extensionless_file(head, language):
    assert language_for("bin/tool", head) == language


def test_shebang_does_not_override_an_extension():
    assert language_for("run.sh", b"#!/usr/bin/env python3\n") is None
    assert language_for("tool.js", b"#!/usr/bin/env python3\n") == "javascript"


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"", "c"),
        (b"#ifndef X_H\n#define X_H\nstruct x { int a; };\n#endif\n", "c"),
        (b'#ifdef __cplusplus\nextern "C" {\n#endif\nint f(int);\n', "c"),
        (b"int new(int class);\n", "c"),
        (b"#pragma once\nnamespace geo {\n}\n", "cpp"),
        (b"template <typename T>\nT max(T a, T b);\n", "cpp"),
        (b"class Widget;\n", "cpp"),
        (b"struct S {\n public:\n  int x;\n};\n", "cpp"),
        (b"#include <vector>\n", "cpp"),
        (b"#include <stdio.h>\n", "c"),
        (b"std::string name();\n", "cpp"),
    ],
)
def test_dot_h_is_c_unless_the_head_shows_cpp(head, language):
    assert language_for("include/x.h", head) == language


def test_dot_h_fixtures():
    assert language_for("list.h", (FIXTURES / "code" / "list.h").read_bytes()) == "c"
    assert language_for("shapes.h", (FIXTURES / "code" / "shapes.hpp").read_bytes()) == "cpp"


def test_every_detected_language_parses():
    assert sorted(LANGUAGES) == list(LANGUAGES)
    for language in LANGUAGES:
        tree = parse(language, b"\n")
        assert tree is not None and not tree.root_node.has_error


def test_unknown_language_is_a_value_error():
    with pytest.raises(ValueError, match="fortran"):
        parse("fortran", b"")


def test_parsers_are_per_thread():
    source = (FIXTURES / "code" / "rational.py").read_bytes()
    expected = str(parse("python", source).root_node)
    results: list[str] = []

    def work():
        for _ in range(20):
            results.append(str(parse("python", source).root_node))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 80


def test_importing_the_code_package_does_not_import_tree_sitter():
    code = "import sys, jitctx.code.outline, jitctx.code.parse; print('tree_sitter' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_tree_sitter_enters_through_code_parse_only():
    importers = set()
    pattern = re.compile(r"^\s*(?:import|from)\s+tree_sitter", re.MULTILINE)
    for path in PACKAGE.rglob("*.py"):
        if pattern.search(path.read_text(encoding="utf-8")):
            importers.add(path.relative_to(PACKAGE).as_posix())
    assert importers == {"code/parse.py"}
