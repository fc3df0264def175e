"""Issue 32 item 5 (the build: words first, definitions after, words told again from git)
and issue 30 item 6 (``symbols`` never waits for the index)."""

from __future__ import annotations

import sqlite3
import sys

import pytest
from test_build import big_repo, wait_built

from jitctx import Workspace
from jitctx.cache.folders import index_file
from jitctx.code import build, structure

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="posix_spawn, flock")


def _store(root):
    return sqlite3.connect(index_file(root))


def test_issue_32_a_build_writes_the_words_first_then_the_definitions(make_repo):
    repo = big_repo(make_repo, files=40)
    seen: list[tuple[str, int, int]] = []
    assert build.build_here(str(repo.root), index_file(repo.root), nice=False, progress=lambda phase, done, total: seen.append((phase, done, total))) == 0
    phases = [p for p, _d, _t in seen]
    assert phases[0] == "words" and phases[-1] == "definitions" and phases.index("definitions") > max(i for i, p in enumerate(phases) if p == "words")
    with _store(repo.root) as conn:
        assert conn.execute("SELECT count(*) FROM files WHERE outlined = 0").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM definitions d JOIN files f ON f.id = d.file_id WHERE f.path = 'pkg/retry.py'").fetchone()[0] == 1


def test_issue_32_words_only_then_a_lookup_parses_the_file_it_needs(make_repo):
    repo = big_repo(make_repo, files=40)
    with Workspace(repo.root) as ws:
        ws.code.refresh(progress=False, parts="words")
        assert ws.code.index.outlined()[1] > 40  # every .py still to be parsed
        hits = ws.grep("return x", path="pkg/m0005.py", mode="content").results
        assert hits and all(h.symbol and h.symbol.startswith("f5_") for h in hits)  # grep parses a file still to be outlined
        assert [s.qualname for s in ws.outline("pkg/retry.py").results] == ["retry_handshake"]  # parsed on demand
        assert ws.head("pkg/m0003.py", symbol="f3_1").results[0].content.startswith("def f3_1(x):")
        assert ws.locate("retry the handshake when it times out").results[0].path == "pkg/retry.py"


def test_issue_32_a_call_leaves_a_tree_of_definitions_to_the_build(make_repo, monkeypatch):
    repo = big_repo(make_repo, files=40)
    monkeypatch.setattr(structure, "_INLINE", 10)
    monkeypatch.setattr(build, "INLINE", 10)
    with Workspace(repo.root) as ws:
        ws.code.refresh(progress=False, parts="words")
        ws.locate("retry the handshake when it times out")  # words current: no parse of 40 files in the call
        assert ws.code.index.outlined()[1] > 40 or build.progress(index_file(repo.root)) is not None or ws.code.index.outlined()[1] == 0
    wait_built(repo.root)  # the definitions' part was started
    with Workspace(repo.root) as ws:
        assert ws.code.index.outlined()[1] == 0


def test_issue_32_words_of_committed_files_are_told_again_from_git_not_kept(make_repo):
    repo = big_repo(make_repo, files=300)  # past KEEPS_MIN: git's index is asked
    assert build.build_here(str(repo.root), index_file(repo.root), nice=False) == 0
    with _store(repo.root) as conn:
        assert conn.execute("SELECT count(*) FROM lexdocs").fetchone()[0] == 0  # all committed: git has every blob
    repo.write("pkg/m0001.py", "def brand_new_sparkle():\n    return 1\n")  # a change, and a removal
    (repo.root / "pkg" / "m0002.py").unlink()
    with Workspace(repo.root) as ws:
        ws.code.refresh(progress=False)
        assert [p for p, _s in ws.code.index.lexical(["f1_0", "f2_0"])] == []  # the old words are gone
        assert [p for p, _s in ws.code.index.lexical(["sparkle"])] == ["pkg/m0001.py"]
    with _store(repo.root) as conn:
        conn.execute("INSERT INTO lexical(lexical) VALUES ('integrity-check')")  # raises when told the wrong words
        assert conn.execute("SELECT value FROM meta WHERE key = 'orphans'").fetchone() is None


def test_issue_32_a_blob_git_no_longer_has_leaves_its_words_under_an_id_never_reused(make_repo, monkeypatch):
    repo = big_repo(make_repo, files=300)
    assert build.build_here(str(repo.root), index_file(repo.root), nice=False) == 0
    monkeypatch.setattr(structure.CodeIndex, "_recall", lambda self, blobs: {})  # history rewritten and pruned
    repo.write("pkg/m0001.py", "def brand_new_sparkle():\n    return 1\n")
    with Workspace(repo.root) as ws:
        ws.code.refresh(progress=False)
        assert [p for p, _s in ws.code.index.lexical(["sparkle"])] == ["pkg/m0001.py"]
        assert [p for p, _s in ws.code.index.lexical(["f1_0"])] == []  # left behind, but no row has its id
    with _store(repo.root) as conn:
        conn.execute("INSERT INTO lexical(lexical) VALUES ('integrity-check')")
        assert conn.execute("SELECT value FROM meta WHERE key = 'orphans'").fetchone() == ("1",)


def test_issue_30_symbols_answers_without_the_index_and_says_so(make_repo, monkeypatch):
    repo = big_repo(make_repo, files=200)
    repo.write("pkg/deep/where.py", "class Finder:\n    def locate_thing(self, x):\n        return x\n")
    repo.commit("one more")
    monkeypatch.setattr(structure, "_INLINE", 20)  # this tree counts as large: no call brings it all up to date
    with Workspace(repo.root) as ws:
        res = ws.symbols("locate_thing")
        assert [(s.path, s.qualname) for s in res.results] == [("pkg/deep/where.py", "Finder.locate_thing")]
        assert "not indexed yet" in res.notice and "grep finds" in res.notice and "background" in res.notice
    wait_built(repo.root)
    repo.write("pkg/deep/where.py", "class Finder:\n    def locate_thing(self, x, y):\n        return y\n")  # changed since: not answered from its old row
    with Workspace(repo.root) as ws:
        ws.code.index._run(lambda conn: conn.execute("UPDATE files SET outlined = 0 WHERE path GLOB 'pkg/m0*'"))  # definitions behind again
        res = ws.symbols("locate_thing")
        assert [s.signature for s in res.results] == ["def locate_thing(self, x, y):"] and "not indexed yet" in res.notice
        assert res.extra["partial"]["grep_files"] >= 1 and res.extra["partial"]["parsed_now"] >= 1
    wait_built(repo.root)
    with Workspace(repo.root) as ws:
        done = ws.symbols("locate_thing")
    assert [s.path for s in done.results] == ["pkg/deep/where.py"] and "partial" not in done.extra and not done.notice
