"""Every tier of a definitions lookup seeks the name index, whatever the query's case (issue 32:
a case-sensitive name scanned all 244k definitions of the real tree, 0.6 s a statement)."""

from __future__ import annotations

import sqlite3

import pytest

from jitctx.code import lookup
from jitctx.code.rows import SCHEMA


@pytest.mark.parametrize("query", ["setrangeCommand", "setrangecommand", "CircularBuffer.size", "Parser.parse_ratio", "Rational.", "Parse"])
def test_issue_32_a_lookup_never_scans_the_definitions(query):
    conn = sqlite3.connect(":memory:")
    for statement in SCHEMA:
        conn.execute(statement)
    rows = [(1 + i // 50, i, "function", f"Mod{i}.fn{i}", 1, 2, "", 0, None, None, 0) for i in range(2000)]
    conn.executemany("INSERT INTO definitions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.executemany(
        "INSERT INTO files(id, path, size, mtime_ns, inode, ctime_ns, indexed_ns, is_test, outlined) VALUES (?, ?, 1, 1, 1, 1, 1, 0, 1)", [(i, f"f{i}.py") for i in range(1, 41)]
    )
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    lookup.find(conn, query, kind=None, bounds=None, limit=10)
    conn.set_trace_callback(None)
    assert statements
    for sql in statements:
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
        assert not any(step.startswith("SCAN d") for step in plan), (sql, plan)
