"""A file's role from its path (jitctx.locate.roles)."""

from __future__ import annotations

import pytest

from jitctx.locate import roles as R


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/app.py", "source"),
        ("tests/test_app.py", "test"),
        ("app_test.go", "test"),
        ("docs/guide.rst", "doc"),
        ("README.md", "doc"),
        ("CHANGES", "doc"),
        ("examples/demo.py", "doc"),
        ("setup.cfg", "data"),
        ("artwork/logo.svg", "data"),
        ("static/app.min.js", "data"),
        ("Makefile", "other"),
        ("lib/x.c", "source"),
    ],
)
def test_file_role(path, role):
    assert R.file_role(path) == role
