"""Which repository paths hold tests: the rule that ranks source before tests.

Owns one predicate over a repo-relative POSIX path, :func:`is_test_path`,
judged from the path alone (no file is read). The index stores its verdict
per file, so changing the rule means a new index schema version. Does not
own ranking itself (``lookup``, ``locate``) nor docs.
"""

from __future__ import annotations

__all__ = ["is_test_path"]

# A folder with one of these names (any case) holds tests or their data.
_TEST_DIRS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__", "__mocks__", "testdata"})
# Stems (the name before its last dot, lower case) that name a test by themselves.
_TEST_STEMS = frozenset({"test", "tests", "conftest"})
_STEM_PREFIXES = ("test_",)  # test_parser.py, test_io.c
_STEM_SUFFIXES = ("_test", "_tests", "_spec", "_unittest")  # parser_test.go, io_spec.rb
_INFIXES = (".test.", ".spec.")  # parser.test.ts, io.spec.jsx


def is_test_path(path: str) -> bool:
    """A test file, by its folders or its name.

    Folders: ``test``, ``tests``, ``testing``, ``spec``, ``specs``,
    ``__tests__``, ``__mocks__``, ``testdata`` (any case). Names:
    ``test_*``, ``*_test``, ``*_tests``, ``*_spec``, ``*_unittest`` (any
    extension: ``test_x.py``, ``x_test.go``, ``x_spec.rb``), ``*.test.*`` and
    ``*.spec.*`` (``x.test.ts``), ``conftest.py``, and the CamelCase
    ``FooTest``/``FooTests`` of Java, Kotlin, C# (``Contest.java`` is not a
    test: the ``T`` must be upper case after a lower-case letter or digit).
    """
    low_path = path.lower()
    if "test" not in low_path and "spec" not in low_path and "mock" not in low_path:
        return False  # every rule below names one of these (most paths: an index build asks 100k)
    *folders, name = path.split("/")
    if any(folder.lower() in _TEST_DIRS for folder in folders):
        return True
    lower = name.lower()
    if any(infix in lower for infix in _INFIXES):
        return True
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    low = stem.lower()
    if low in _TEST_STEMS or low.startswith(_STEM_PREFIXES) or low.endswith(_STEM_SUFFIXES):
        return True
    for suffix in ("Test", "Tests"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            before = stem[-len(suffix) - 1]
            if before.islower() or before.isdigit():
                return True
    return False
