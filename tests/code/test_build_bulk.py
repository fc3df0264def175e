"""A build's words written in bulk, merged before the definitions (issue 32)."""

from __future__ import annotations

import sqlite3
import sys

import pytest

from jitctx.cache.folders import index_file
from jitctx.code import build, refresh
from jitctx.code.analyze import ANALYZER
from jitctx.code.index import Index

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="flock")


def small_tree(make_repo, files: int = 40):
    repo = make_repo("basic")
    for i in range(files):
        repo.write(f"pkg/m{i:03}.py", f"def handshake_{i}(conn):\n    return conn.retry_timeout + {i}\n")
    repo.commit("modules")
    return repo


def lexical_config(path: str) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT k, v FROM lexical_config WHERE k IN ('automerge', 'hashsize')").fetchall())
    finally:
        conn.close()


def test_issue_32_a_large_words_refresh_writes_in_bulk_then_restores_the_defaults(make_repo, monkeypatch):
    repo = small_tree(make_repo)
    monkeypatch.setattr(refresh, "BULK", 20)  # this tree counts as a large refresh
    monkeypatch.setattr(refresh, "BATCH", 4)
    seen: list[tuple[int, dict]] = []
    real_flush = refresh._Writer.flush

    def flush(self):
        if self._count:
            seen.append((self._batch, lexical_config(index_file(repo.root))))
        real_flush(self)

    monkeypatch.setattr(refresh._Writer, "flush", flush)
    monkeypatch.setattr(build, "MERGE_MIN", 10**9)  # no merge: only the bulk writes are looked at
    assert build.build_here(str(repo.root), index_file(repo.root), nice=False) == 0
    words_part = [s for s in seen if s[0] == refresh.BULK_BATCH]
    assert words_part, seen  # the words went in bulk transactions, with FTS5's bulk settings
    assert all(s[1] == {"automerge": 16, "hashsize": 16 * 1024 * 1024} for s in words_part[1:])
    assert lexical_config(index_file(repo.root)) == {"automerge": 4, "hashsize": 1024 * 1024}  # restored
    with Index.open(repo.root, analyzer=ANALYZER) as index:
        assert [p for p, *_ in index.search('"handshake"', weights=(1.0, 1.0), limit=100)]  # and the words are there


def test_issue_32_the_lexical_index_is_merged_between_the_words_and_the_definitions(make_repo, monkeypatch):
    repo = small_tree(make_repo)
    monkeypatch.setattr(build, "MERGE_MIN", 10)
    order: list = []
    monkeypatch.setattr(Index, "merge_lexical", lambda self: order.append(("merge", self.outlined()[1])))
    real_refresh = refresh.refresh
    monkeypatch.setattr(refresh, "refresh", lambda *a, **k: order.append(k["parts"]) or real_refresh(*a, **k))
    assert build.build_here(str(repo.root), index_file(repo.root), nice=False) == 0
    assert order[0] == "words" and order[1][0] == "merge" and order[2] == "all", order
    assert order[1][1] > 0  # merged before any definition was parsed: they take the pages it frees
