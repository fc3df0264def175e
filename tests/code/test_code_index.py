"""The on-disk index (jitctx.code.index): location, refresh, queries, safety.

A fake extractor stands in for tree-sitter: ``class X`` / ``def y`` lines,
nested by four-space indents, become definitions; words become the lexical
document. Trees are dicts of path -> bytes with synthetic stat signatures,
so every decision (trusted, racy, changed) is under the test's control.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import re
import signal
import sqlite3
import time

import pytest

from jitctx.cache import store
from jitctx.code import refresh as refresh_mod
from jitctx.code.index import Index, index_file
from jitctx.code.rows import SCHEMA_VERSION, Definition
from jitctx.code.testpaths import is_test_path
from jitctx.errors import QueryError

OLD_NS = 1_600_000_000 * 10**9  # long before any refresh: trusted signatures


def fake_analyze(path: str, data: bytes):
    """``class Name`` / ``def name`` lines -> definitions; words -> terms."""
    text = data.decode()
    if text.startswith("BINARY"):
        return None
    if text.startswith("RAISE"):
        raise ValueError("the extractor failed on this file")
    lines = text.split("\n")
    defs: list[Definition] = []
    stack: list[tuple[int, int]] = []  # (depth, index)
    for number, line in enumerate(lines, 1):
        body = line.lstrip(" ")
        if not body.startswith(("class ", "def ")):
            continue
        depth = (len(line) - len(body)) // 4
        word, name = body.split()[:2]
        name = name.split("(")[0].rstrip(":")
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack else None
        qualname = f"{defs[parent].qualname}.{name}" if parent is not None else name
        kind = "class" if word == "class" else "method" if parent is not None else "function"
        defs.append(
            Definition(
                kind,
                name,
                qualname,
                number,
                number,
                body.strip(),
                depth,
                parent,
                len(body),
            )
        )
        stack.append((depth, len(defs) - 1))
    ends = []
    for i, d in enumerate(defs):
        nxt = [e.start_line for e in defs[i + 1 :] if e.depth <= d.depth]
        ends.append((nxt[0] - 1) if nxt else len(lines))
    defs = [
        Definition(
            d.kind,
            d.name,
            d.qualname,
            d.start_line,
            end,
            d.signature,
            d.depth,
            d.parent,
            d.tokens,
        )
        for d, end in zip(defs, ends)
    ]
    path_terms = " ".join(w for w in re.split(r"[/._-]+", path) if w)
    return defs, path_terms, " ".join(re.findall(r"[A-Za-z0-9]+", text)).lower()


def slow_analyze(path: str, data: bytes):
    time.sleep(0.01)
    return fake_analyze(path, data)


def crashing_analyze(path: str, data: bytes):
    """Kills the worker process on ``crash.py`` (only in a worker: not the test's own process)."""
    if path.endswith("crash.py") and str(os.getpid()) != os.environ.get("TEST_MAIN_PID"):
        os._exit(3)
    return fake_analyze(path, data)


def interrupting_analyze(path: str, data: bytes):
    if path.endswith("stop.py"):
        raise KeyboardInterrupt
    return fake_analyze(path, data)


class Tree:
    """Files as bytes with controllable stat signatures; ``read`` counts reads."""

    def __init__(self, files: dict[str, bytes | str], mtime_ns: int = OLD_NS) -> None:
        self.files = {p: (d.encode() if isinstance(d, str) else d) for p, d in files.items()}
        self.mtime = {p: mtime_ns for p in self.files}
        self.inode = {p: i + 100 for i, p in enumerate(self.files)}
        self.reads: list[str] = []

    def write(self, path: str, data: bytes | str, mtime_ns: int | None = None) -> None:
        self.files[path] = data.encode() if isinstance(data, str) else data
        self.mtime[path] = mtime_ns if mtime_ns is not None else self.mtime.get(path, OLD_NS) + 10**9
        self.inode.setdefault(path, 100 + len(self.inode))

    def entries(self, under: str = "") -> list[tuple[str, int, int, int, int]]:
        return [(p, len(d), self.mtime[p], self.inode[p], self.mtime[p]) for p, d in sorted(self.files.items()) if p.startswith(under)]

    def read(self, path: str) -> bytes | None:
        self.reads.append(path)
        return self.files.get(path)


SOURCE = {
    "src/rational.py": "class Rational:\n    def __init__(self):\n        pass\n    def __add__(self, other):\n        return other\n\ndef igcd(a, b):\n    return a\n",
    "src/core/numbers.py": "class Number:\n    def __add__(self, other):\n        pass\nclass Outer:\n    class Rational:\n        def __add__(self):\n            pass\n        def limit(self):\n            pass\n",
    "tests/test_rational.py": "class Rational:\n    def __add__(self):\n        pass\ndef test_igcd():\n    pass\n",
    "docs/guide.md": "How to add rational numbers.\n",
    "lib/igcdex.py": "def igcdex(a):\n    pass\ndef Igcd():\n    pass\n",
}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(path))
    return path


@pytest.fixture
def root(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    return path


@pytest.fixture
def index(cache, root):
    ix = Index.open(root, analyzer="fake/1")
    yield ix
    ix.close()


def check(stats) -> None:
    """Every listed path is counted once."""
    assert stats.listed == stats.unchanged + stats.rehashed_same + stats.analyzed + sum(stats.skipped.values())


# -- location -----------------------------------------------------------------


def test_cache_dir_order(monkeypatch, tmp_path):
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(tmp_path / "own"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert store.cache_dir() == str(tmp_path / "own")
    monkeypatch.delenv("JITCTX_CACHE_DIR")
    assert store.cache_dir() == str(tmp_path / "xdg" / "jitctx")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert store.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "jitctx")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert store.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "jitctx")


def test_one_store_per_real_root(cache, tmp_path):
    a, b = tmp_path / "one" / "my repo", tmp_path / "two" / "my repo"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(a)
    fa, fb = index_file(a), index_file(b)
    assert fa != fb
    assert os.path.basename(fa).startswith("my_repo-") and fa.endswith(".sqlite")
    assert os.path.dirname(fa) == str(cache / "index")
    assert index_file(link) == fa
    with Index.open(a) as ix:
        assert ix.path == fa and ix.notice is None
        assert sqlite3.connect(fa).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert sqlite3.connect(fa).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_cache_inside_the_repository_is_refused(monkeypatch, root):
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(root / ".cache"))
    with Index.open(root) as ix:
        assert ix.path is None
        assert "in memory" in ix.notice and "inside the repository" in ix.notice
        tree = Tree(SOURCE)
        stats = ix.refresh(tree.entries(), tree.read, fake_analyze)
        assert stats.analyzed == len(SOURCE) and "in memory" in stats.notice
        assert ix.find("igcd").total >= 1
    assert not (root / ".cache").exists()


# -- refresh ------------------------------------------------------------------


def test_cold_then_warm_then_changes(index):
    tree = Tree(SOURCE)
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    check(stats)
    assert (stats.listed, stats.analyzed, stats.unchanged, stats.read) == (5, 5, 0, 5)
    tree.reads.clear()
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    check(stats)
    assert (stats.unchanged, stats.analyzed, stats.rehashed_same) == (5, 0, 0)
    assert tree.reads == []  # trusted by signature, not read

    tree.write("src/rational.py", SOURCE["src/rational.py"])  # touched: same bytes
    tree.write("lib/igcdex.py", "def renamed():\n    pass\n")
    del tree.files["docs/guide.md"]
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    check(stats)
    assert (stats.unchanged, stats.rehashed_same, stats.analyzed, stats.removed) == (
        2,
        1,
        1,
        1,
    )
    assert sorted(tree.reads) == ["lib/igcdex.py", "src/rational.py"]
    assert [d.name for d in index.definitions("lib/igcdex.py")] == ["renamed"]
    assert index.state("docs/guide.md") is None
    assert index.state("src/rational.py").mtime_ns == tree.mtime["src/rational.py"]
    assert index.paths() == sorted(tree.files)

    tree.reads.clear()
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    assert stats.unchanged == 4 and tree.reads == []


def test_state_holds_the_git_blob_id(index):
    tree = Tree({"a.py": "def a():\n    pass\n"})
    index.refresh(tree.entries(), tree.read, fake_analyze)
    state = index.state("a.py")
    # `printf 'def a():\n    pass\n' | git hash-object --stdin`
    assert state.blob == refresh_mod.git_blob_sha1(b"def a():\n    pass\n")
    assert refresh_mod.git_blob_sha1(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert (state.size, state.inode, state.skipped, state.is_test) == (
        18,
        100,
        None,
        False,
    )


def test_a_subfolder_refresh_keeps_other_folders(index):
    tree = Tree(SOURCE)
    index.refresh(tree.entries(), tree.read, fake_analyze)
    del tree.files["src/core/numbers.py"]
    tree.write("src/new.py", "def fresh():\n    pass\n")
    stats = index.refresh(tree.entries("src/"), tree.read, fake_analyze, under="src")
    check(stats)
    assert (stats.listed, stats.removed, stats.analyzed, stats.unchanged) == (
        2,
        1,
        1,
        1,
    )
    assert index.paths() == sorted(
        [
            "docs/guide.md",
            "lib/igcdex.py",
            "src/new.py",
            "src/rational.py",
            "tests/test_rational.py",
        ]
    )
    assert index.paths("src/") == ["src/new.py", "src/rational.py"]
    assert index.find("test_igcd").total == 1  # tests/ untouched
    # ``src`` is a folder, not a prefix: ``srcx/`` is outside it.
    tree.write("srcx/keep.py", "def keep():\n    pass\n")
    index.refresh(tree.entries("srcx/"), tree.read, fake_analyze, under="srcx/")
    stats = index.refresh(tree.entries("src/"), tree.read, fake_analyze, under="src/")
    assert stats.removed == 0 and "srcx/keep.py" in index.paths()


def test_an_incomplete_listing_removes_nothing(index):
    tree = Tree(SOURCE)
    index.refresh(tree.entries(), tree.read, fake_analyze)
    one = [e for e in tree.entries() if e[0] == "lib/igcdex.py"]
    stats = index.refresh(one, tree.read, fake_analyze, complete=False)
    assert (stats.listed, stats.unchanged, stats.removed) == (1, 1, 0)
    assert len(index.paths()) == 5


def test_racy_signatures_are_hashed_again(index):
    now = time.time_ns()
    tree = Tree({"a.py": "def aaaa():\n    pass\n", "b.py": "def bbbb():\n    pass\n"})
    tree.mtime["a.py"] = now  # written just now: its signature proves nothing yet
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    assert stats.analyzed == 2
    tree.reads.clear()
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    check(stats)
    assert (stats.racy, stats.rehashed_same, stats.unchanged) == (
        1,
        1,
        1,
    ) and tree.reads == ["a.py"]

    # A same-size rewrite within the clock's granularity keeps the signature:
    # only the racy rule catches it.
    tree.files["a.py"] = b"def zzzz():\n    pass\n"
    tree.files["b.py"] = b"def yyyy():\n    pass\n"
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    assert (stats.racy, stats.analyzed, stats.unchanged) == (1, 1, 1)
    assert [d.name for d in index.definitions("a.py")] == ["zzzz"]
    # b.py kept an old signature: trusted (as git does).
    assert [d.name for d in index.definitions("b.py")] == ["bbbb"]

    # Once the file is older than the window, its signature is trusted again.
    with sqlite3.connect(index.path) as conn:
        conn.execute(
            "UPDATE files SET indexed_ns = ? WHERE path = 'a.py'",
            (now + refresh_mod.RACY_NS + 1,),
        )
    tree.reads.clear()
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    assert (stats.racy, stats.unchanged) == (0, 2) and tree.reads == []


def test_skips_and_their_reasons(index):
    tree = Tree(
        {
            "big.py": "def big():\n    pass\n" + "#" * 200,
            "secret.env": "TOKEN=1",
            "image.bin": "BINARY\0\0",
            "broken.py": "RAISE",
            "ok.py": "def ok():\n    pass\n",
        }
    )
    reads = tree.read
    tree.read = lambda p: None if p == "secret.env" else reads(p)
    stats = index.refresh(tree.entries(), tree.read, fake_analyze, max_bytes=100)
    check(stats)
    assert stats.skipped == {
        "declined": 1,
        "failed": 1,
        "too_large": 1,
        "unreadable": 1,
    }
    assert stats.skipped_paths == (
        ("big.py", "too_large"),
        ("broken.py", "failed"),
        ("image.bin", "declined"),
        ("secret.env", "unreadable"),
    )
    assert stats.analyzed == 1 and "big.py" not in tree.reads
    assert index.state("big.py").blob is None and index.state("image.bin").skipped == "declined"

    tree.reads.clear()
    stats = index.refresh(tree.entries(), tree.read, fake_analyze, max_bytes=100)
    check(stats)
    assert stats.skipped == {
        "declined": 1,
        "failed": 1,
        "too_large": 1,
        "unreadable": 1,
    }
    # Content-decided skips are trusted; the unreadable file is asked again.
    assert tree.reads == []
    index.refresh(tree.entries(), tree.read, fake_analyze)  # the default cap: 2 MiB
    assert "big.py" in tree.reads and [d.name for d in index.definitions("big.py")] == ["big"]


def test_definitions_round_trip(index):
    tree = Tree(SOURCE)
    index.refresh(tree.entries(), tree.read, fake_analyze)
    defs = index.definitions("src/core/numbers.py")
    assert [(d.kind, d.qualname, d.depth, d.parent) for d in defs] == [
        ("class", "Number", 0, None),
        ("method", "Number.__add__", 1, 0),
        ("class", "Outer", 0, None),
        ("class", "Outer.Rational", 1, 2),
        ("method", "Outer.Rational.__add__", 2, 3),
        ("method", "Outer.Rational.limit", 2, 3),
    ]
    assert (defs[3].start_line, defs[3].end_line, defs[3].signature) == (
        5,
        10,
        "class Rational:",
    )
    assert defs[1].tokens == len("def __add__(self, other):")
    assert index.enclosing("src/core/numbers.py", 7).qualname == "Outer.Rational.__add__"
    assert index.enclosing("src/core/numbers.py", 5).qualname == "Outer.Rational"
    assert index.definitions("missing.py") == ()


# -- find ---------------------------------------------------------------------


def found(index, query, **kw):
    return [(h.tier, h.path, h.definition.qualname) for h in index.find(query, **kw).hits]


def test_find_tiers_and_order(index):
    tree = Tree(SOURCE)
    index.refresh(tree.entries(), tree.read, fake_analyze)
    # exact name before anything else; source before tests; then shorter paths
    assert found(index, "__add__") == [
        ("exact", "src/rational.py", "Rational.__add__"),
        ("exact", "src/core/numbers.py", "Number.__add__"),
        ("exact", "src/core/numbers.py", "Outer.Rational.__add__"),
        ("exact", "tests/test_rational.py", "Rational.__add__"),
    ]
    # exact qualname, then the qualname's tail on a dot boundary
    assert found(index, "Rational.__add__") == [
        ("exact", "src/rational.py", "Rational.__add__"),
        ("exact", "tests/test_rational.py", "Rational.__add__"),
        ("qualified", "src/core/numbers.py", "Outer.Rational.__add__"),
    ]
    # a container: everything inside any Rational
    assert found(index, "Rational.") == [
        ("prefix", "src/rational.py", "Rational.__init__"),
        ("prefix", "src/rational.py", "Rational.__add__"),
        ("prefix", "src/core/numbers.py", "Outer.Rational.__add__"),
        ("prefix", "src/core/numbers.py", "Outer.Rational.limit"),
        ("prefix", "tests/test_rational.py", "Rational.__add__"),
    ]
    assert found(index, "Outer.Rational.l") == [("prefix", "src/core/numbers.py", "Outer.Rational.limit")]
    # lower case ignores case and ranks case-exact first; name prefixes only named beside exact ones (issue 33)
    assert found(index, "igcd") == [
        ("exact", "src/rational.py", "igcd"),
        ("exact", "lib/igcdex.py", "Igcd"),
    ]
    assert (index.find("igcd").others, index.find("igcd").others_total, index.find("igcd").total) == (("igcdex",), 1, 2)
    assert sorted(found(index, "igc")) == [("prefix", "lib/igcdex.py", "Igcd"), ("prefix", "lib/igcdex.py", "igcdex"), ("prefix", "src/rational.py", "igcd")]
    # An upper-case letter makes the query case-sensitive.
    assert found(index, "Igcd") == [("exact", "lib/igcdex.py", "Igcd")]
    assert found(index, "Ratio") == [
        ("prefix", "src/rational.py", "Rational"),
        ("prefix", "src/core/numbers.py", "Outer.Rational"),
        ("prefix", "tests/test_rational.py", "Rational"),
    ]
    assert found(index, "tional.__add__") == []  # a tail must start on a dot
    assert found(index, "XRational.") == []


def test_find_filters_limits_and_totals(index):
    tree = Tree(SOURCE)
    index.refresh(tree.entries(), tree.read, fake_analyze)
    assert found(index, "Rational", kind="class", under="src") == [
        ("exact", "src/rational.py", "Rational"),
        ("exact", "src/core/numbers.py", "Outer.Rational"),
    ]
    assert found(index, "__add__", kind="method", under="tests/") == [("exact", "tests/test_rational.py", "Rational.__add__")]
    result = index.find("Rational.", limit=2)
    assert (len(result.hits), result.total, result.truncated) == (2, 5, True)
    result = index.find("igcd", limit=0)
    assert (result.hits, result.total) == ((), 2)  # the exact ones; the prefix match is named apart (others)
    assert index.find("__add__").hits[0].is_test is False and index.find("__add__").hits[-1].is_test is True
    with pytest.raises(QueryError):
        index.find("  ")
    with pytest.raises(QueryError):
        index.find("x", under="../elsewhere")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_x.py", True),
        ("pkg/test/helpers.py", True),
        ("src/__tests__/a.js", True),
        ("spec/models/user_spec.rb", True),
        ("test_io.py", True),
        ("io_test.go", True),
        ("ui/Button.test.tsx", True),
        ("ui/Button.spec.ts", True),
        ("conftest.py", True),
        ("src/main/java/FooTest.java", True),
        ("src/FooTests.cs", True),
        ("Tests/App.swift", True),
        ("web/__MOCKS__/api.js", True),  # the rule's quick refusal folds case too
        ("x/TestData/a.bin", True),
        ("src/SPECS/a.rb", True),
        ("net/Protocol_UNITTEST.cc", True),
        ("src/contest.py", False),
        ("src/Contest.java", False),
        ("src/latest.py", False),
        ("src/testing_utils.py", False),
        ("src/attest/x.py", False),
        ("README.md", False),
    ],
)
def test_test_path_rule(path, expected):
    assert is_test_path(path) is expected


# -- lexical ------------------------------------------------------------------


def test_lexical_bm25_with_column_weights(index):
    tree = Tree(
        {
            "src/parser/tokens.py": "def run():\n    pass\n",
            "src/other.py": "def parser():\n    parser parser tokens\n",
            "docs/notes.md": "nothing relevant here\n",
        }
    )
    index.refresh(tree.entries(), tree.read, fake_analyze)
    by_path = index.lexical(["parser"], weights=(10.0, 0.1))
    by_content = index.lexical(["parser"], weights=(0.1, 10.0))
    assert [p for p, _ in by_path] == ["src/parser/tokens.py", "src/other.py"]
    assert [p for p, _ in by_content] == ["src/other.py", "src/parser/tokens.py"]
    assert all(score > 0 for _, score in by_path)
    # Terms are OR-ed.
    assert [p for p, _ in index.lexical(["relevant", "nope"])] == ["docs/notes.md"]
    assert index.lexical(["parser"], under="docs") == []
    assert index.lexical(["+++", ""]) == [] and index.lexical([]) == []
    assert index.lexical(['pars"er', "OR", "NEAR("]) == []  # quoted: never FTS5 syntax
    assert len(index.lexical(["parser"], limit=1)) == 1


def _vocabulary(ix) -> list[tuple]:
    conn = ix._conn
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, 'lexical', 'instance')")
    ids = dict(conn.execute("SELECT id, path FROM files"))
    return sorted((ids.get(doc, f"(no file: {doc})"), term, col) for term, doc, col, _offset in conn.execute("SELECT term, doc, col, offset FROM temp.v"))


def test_issue_23_changed_and_removed_files_leave_the_words_a_fresh_build_has(cache, root, tmp_path, monkeypatch):
    # the contentless lexical table forgets a file's words only when told them exactly: its path's words
    # kept when the analyzer's differ from the rule (HttpServer; a name longer than the rule keeps), made
    # again from the path when not
    long = "src/" + "n" * 70 + ".py"
    files = {
        long: "def x():\n    pass\n",
        "src/HttpServer.py": "class HttpServer:\n    pass\n",
        "src/plain.py": "def plain():\n    return words here\n",
        "docs/a.md": "some notes\n",
    }
    tree = Tree(files)
    with Index.open(root, analyzer="fake/1") as ix:
        ix.refresh(tree.entries(), tree.read, fake_analyze)
        before = dict(ix._conn.execute("SELECT path, id FROM files"))
        tree.write("src/HttpServer.py", "class HttpServer:\n    def serve(self):\n        pass\n")
        tree.write("src/plain.py", "def plain():\n    return other words\n")
        del tree.files["docs/a.md"]
        tree.write("src/new_thing.py", "def new():\n    pass\n")
        del tree.files[long]
        stats = ix.refresh(tree.entries(), tree.read, fake_analyze)
        # told the wrong words, FTS5 finds its index corrupt and the store is rebuilt: it was not
        assert stats.notice is None and stats.removed == 2
        assert dict(ix._conn.execute("SELECT path, id FROM files WHERE path != 'src/new_thing.py'")) == {p: before[p] for p in ("src/HttpServer.py", "src/plain.py")}
        assert ix.lexical(["notes"]) == [] and ix.lexical(["here"]) == []
        incremental = _vocabulary(ix)
        stored = dict(ix._conn.execute("SELECT f.path, d.path_terms FROM lexdocs d JOIN files f ON f.id = d.id"))
    assert stored["src/plain.py"] is None and stored["src/HttpServer.py"] == "src HttpServer py"
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(tmp_path / "fresh"))
    with Index.open(root, analyzer="fake/1") as ix:
        ix.refresh(tree.entries(), tree.read, fake_analyze)
        assert _vocabulary(ix) == incremental


# -- safety -------------------------------------------------------------------


def test_a_corrupt_store_is_rebuilt(cache, root):
    path = index_file(root)
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
        f.write(b"this is not a database at all" * 200)
    tree = Tree(SOURCE)
    with Index.open(root) as ix:
        assert ix.path == path and "rebuilt" in ix.notice
        stats = ix.refresh(tree.entries(), tree.read, fake_analyze)
        assert stats.analyzed == 5
    with Index.open(root) as ix:
        assert ix.notice is None
        assert ix.refresh(tree.entries(), tree.read, fake_analyze).unchanged == 5


def test_a_truncated_store_is_rebuilt(cache, root):
    files = {f"pkg/m{i:03}.py": f"class C{i}:\n    def method_{i}(self):\n        pass\n" for i in range(400)}
    tree = Tree(files)
    with Index.open(root) as ix:
        ix.refresh(tree.entries(), tree.read, fake_analyze)
        path = ix.path
    size = os.path.getsize(path)
    assert size > 100_000 and not os.path.exists(path + "-wal")
    with open(path, "r+b") as f:
        f.truncate(size // 3)
    with Index.open(root) as ix:
        stats = ix.refresh(tree.entries(), tree.read, fake_analyze)
        assert ix.path == path and "rebuilt" in (ix.notice or "")
        assert (stats.analyzed, stats.unchanged) == (400, 0)
        assert ix.find("method_399").total == 1
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("version", [0, SCHEMA_VERSION + 1])
def test_a_store_of_another_version_is_rebuilt(cache, root, version):
    path = index_file(root)
    os.makedirs(os.path.dirname(path))
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE files(path TEXT, stale INTEGER)")
        conn.execute("INSERT INTO files VALUES ('src/rational.py', 1)")
        conn.execute(f"PRAGMA user_version = {version}")
    with Index.open(root) as ix:
        assert f"schema version {version}" in ix.notice
        assert ix.paths() == []
        tree = Tree(SOURCE)
        assert ix.refresh(tree.entries(), tree.read, fake_analyze).analyzed == 5
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_another_analyzer_rebuilds(cache, root):
    tree = Tree(SOURCE)
    with Index.open(root, analyzer="a/1") as ix:
        ix.refresh(tree.entries(), tree.read, fake_analyze)
    with Index.open(root, analyzer="a/2") as ix:
        assert "analyzer 'a/1'" in ix.notice and ix.paths() == []
        assert ix.refresh(tree.entries(), tree.read, fake_analyze).analyzed == 5
    with Index.open(root, analyzer="a/2") as ix:
        assert ix.notice is None and len(ix.paths()) == 5


def test_an_uncreatable_cache_dir_means_memory(monkeypatch, tmp_path, root):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(blocker / "cache"))
    with Index.open(root) as ix:
        assert ix.path is None
        assert "in memory" in ix.notice and "cannot create" in ix.notice
        tree = Tree(SOURCE)
        stats = ix.refresh(tree.entries(), tree.read, fake_analyze)
        assert stats.analyzed == 5 and stats.notice == ix.notice
        assert ix.refresh(tree.entries(), tree.read, fake_analyze).unchanged == 5
        assert found(ix, "igcd")[0] == ("exact", "src/rational.py", "igcd")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_an_unwritable_cache_dir_means_memory(monkeypatch, tmp_path, root):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(locked))
    try:
        with Index.open(root) as ix:
            assert ix.path is None and "in memory" in ix.notice
            tree = Tree(SOURCE)
            assert ix.refresh(tree.entries(), tree.read, fake_analyze).analyzed == 5
    finally:
        locked.chmod(0o700)


def test_a_full_disk_mid_build_moves_to_memory(index):
    tree = Tree({f"m{i:04}.py": f"def f{i}():\n    pass\n" + "# padding words\n" * 50 for i in range(300)})
    pages = index._conn.execute("PRAGMA page_count").fetchone()[0]
    index._conn.execute(f"PRAGMA max_page_count = {pages + 3}")  # SQLITE_FULL soon
    stats = index.refresh(tree.entries(), tree.read, fake_analyze, batch=20)
    check(stats)
    assert stats.analyzed == 300 and "in memory" in stats.notice and "full" in stats.notice
    assert index.path is None and index.find("f299").total == 1


def test_progress_is_reported(index):
    tree = Tree(SOURCE)
    calls: list[tuple[int, int]] = []
    index.refresh(
        tree.entries(),
        tree.read,
        fake_analyze,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls[0] == (0, 5) and calls[-1] == (5, 5)
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(calls))
    calls.clear()
    index.refresh(
        tree.entries(),
        tree.read,
        fake_analyze,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls == []  # nothing to do, nothing drawn


def test_an_interrupt_keeps_the_committed_batches(index):
    files = {f"m{i:03}.py": f"def f{i}():\n    pass\n" for i in range(50)}
    files["m025stop.py"] = "def stop():\n    pass\n"
    tree = Tree(files)
    with pytest.raises(KeyboardInterrupt):
        index.refresh(tree.entries(), tree.read, interrupting_analyze, batch=10)
    kept = len(index.paths())
    assert kept == 20  # two whole batches; the third was rolled back
    stats = index.refresh(tree.entries(), tree.read, fake_analyze, batch=10)
    check(stats)
    assert (stats.unchanged, stats.analyzed) == (20, 31)
    assert index._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# -- processes ----------------------------------------------------------------


def _bulk(n: int, pad: int = 0) -> dict[str, str]:
    return {f"pkg{i % 7}/mod_{i:04}.py": f"class Thing{i}:\n    def run_{i}(self):\n        pass\n" + "#" * pad for i in range(n)}


def _child_refresh(cache_dir, root, n, analyze, batch, start, queue):
    os.environ["JITCTX_CACHE_DIR"] = cache_dir
    tree = Tree(_bulk(n))
    start.wait(30)
    try:
        with Index.open(root, analyzer="fake/1") as ix:
            stats = ix.refresh(tree.entries(), tree.read, analyze, batch=batch)
            queue.put(("ok", stats.listed, stats.notice))
    except BaseException as exc:  # noqa: BLE001 -- the parent reports it
        queue.put(("error", repr(exc), None))


def test_two_processes_refresh_one_store_at_once(cache, root):
    ctx = multiprocessing.get_context("spawn")
    start, queue = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(
            target=_child_refresh,
            args=(str(cache), str(root), 150, fake_analyze, 1, start, queue),
        )
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    start.set()
    results = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
    assert results == [("ok", 150, None), ("ok", 150, None)]
    with Index.open(root, analyzer="fake/1") as ix:
        assert ix._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tree = Tree(_bulk(150))
        stats = ix.refresh(tree.entries(), tree.read, fake_analyze)
        assert stats.unchanged == 150
        assert ix._conn.execute("SELECT count(*) FROM definitions").fetchone()[0] == 300
        assert ix.find("run_149").total == 1


def test_a_killed_build_resumes(cache, root):
    ctx = multiprocessing.get_context("spawn")
    start, queue = ctx.Event(), ctx.Queue()
    proc = ctx.Process(
        target=_child_refresh,
        args=(str(cache), str(root), 300, slow_analyze, 5, start, queue),
    )
    proc.start()
    start.set()
    path = index_file(root)
    deadline = time.monotonic() + 60
    committed = 0
    while committed < 30 and time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            with sqlite3.connect(path, timeout=5) as conn:
                committed = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        except sqlite3.OperationalError:
            pass  # not created yet
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    assert 30 <= committed < 300
    with Index.open(root, analyzer="fake/1") as ix:
        assert ix.notice is None
        assert ix._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tree = Tree(_bulk(300))
        stats = ix.refresh(tree.entries(), tree.read, fake_analyze)
        check(stats)
        kept = stats.unchanged
        assert kept >= committed and stats.analyzed == 300 - kept
        assert ix.refresh(tree.entries(), tree.read, fake_analyze).unchanged == 300


def test_workers_give_the_same_index(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(refresh_mod, "POOL_MIN_BYTES", 0)
    tree = Tree(_bulk(120, pad=100))
    results = []
    for workers in (1, 2):
        root = tmp_path / f"repo{workers}"
        root.mkdir()
        with Index.open(root) as ix:
            stats = ix.refresh(tree.entries(), tree.read, fake_analyze, workers=workers)
            check(stats)
            assert (stats.workers, stats.analyzed) == (workers, 120)
            results.append([(p, ix.definitions(p)) for p in ix.paths()])
    assert results[0] == results[1]
    with (
        Index.open(tmp_path / "repo1") as ix,
        pytest.raises(TypeError, match="module-level"),
    ):
        tree.write("pkg0/mod_0000.py", "def changed():\n    pass\n")
        ix.refresh(tree.entries(), tree.read, lambda p, d: fake_analyze(p, d), workers=2)


def test_a_worker_crash_costs_one_file(index, monkeypatch):
    monkeypatch.setattr(refresh_mod, "POOL_MIN_BYTES", 0)
    monkeypatch.setenv("TEST_MAIN_PID", str(os.getpid()))
    files = _bulk(40, pad=50)
    files["pkg0/crash.py"] = "def boom():\n    pass\n"
    tree = Tree(files)
    stats = index.refresh(tree.entries(), tree.read, crashing_analyze, workers=2, batch=10)
    check(stats)
    assert stats.skipped == {"crashed": 1} and stats.analyzed == 40
    assert stats.skipped_paths == (("pkg0/crash.py", "crashed"),)
    tree.reads.clear()
    stats = index.refresh(tree.entries(), tree.read, crashing_analyze, workers=2)
    assert (stats.unchanged, stats.skipped) == (40, {"crashed": 1}) and tree.reads == []


# -- the unchanged-listing shortcut -------------------------------------------


def test_an_identical_listing_is_answered_without_comparing_rows(index):
    files = {**SOURCE, "image.bin": "BINARY\0", "big.py": "#" * 300}
    tree = Tree(files)
    first = index.refresh(tree.entries(), tree.read, fake_analyze, max_bytes=200)
    assert not first.listing_unchanged
    again = index.refresh(tree.entries(), tree.read, fake_analyze, max_bytes=200)
    check(again)
    assert again.listing_unchanged and tree.reads == sorted(set(files) - {"big.py"})
    assert (again.listed, again.unchanged) == (7, 5)
    assert again.skipped == {"declined": 1, "too_large": 1}
    assert again.skipped_paths == first.skipped_paths
    # Another cap, another order, a sub-folder: compared row by row (same verdicts).
    other = index.refresh(tree.entries(), tree.read, fake_analyze, max_bytes=300)
    assert not other.listing_unchanged and other.analyzed == 1  # big.py fits now
    reordered = index.refresh(tree.entries()[::-1], tree.read, fake_analyze, max_bytes=300)
    assert not reordered.listing_unchanged and reordered.unchanged == 6
    assert index.refresh(tree.entries()[::-1], tree.read, fake_analyze, max_bytes=300).listing_unchanged


def test_a_write_by_anyone_else_disables_the_shortcut(index, root):
    tree = Tree(SOURCE)
    index.refresh(tree.entries(), tree.read, fake_analyze)
    listing = tree.entries()
    assert index.refresh(listing, tree.read, fake_analyze).listing_unchanged
    # Another connection records other content for one path (it saw another state).
    other = Tree({"lib/igcdex.py": "def other():\n    pass\n"})
    other.mtime["lib/igcdex.py"] = OLD_NS + 5
    with Index.open(root, analyzer="fake/1") as second:
        second.refresh(other.entries(), other.read, fake_analyze, complete=False)
    stats = index.refresh(listing, tree.read, fake_analyze)  # the very same listing
    check(stats)
    assert not stats.listing_unchanged and stats.analyzed == 1
    assert [d.name for d in index.definitions("lib/igcdex.py")] == ["igcdex", "Igcd"]


def test_no_shortcut_while_a_row_is_racy_or_unreadable(index):
    tree = Tree({"a.py": "def a():\n    pass\n", "b.py": "def b():\n    pass\n"})
    tree.mtime["a.py"] = time.time_ns()
    index.refresh(tree.entries(), tree.read, fake_analyze)
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    assert not stats.listing_unchanged and stats.racy == 1
    tree.mtime["a.py"] = OLD_NS
    tree.write("denied.env", "SECRET=1", mtime_ns=OLD_NS)
    reads = tree.read
    tree.read = lambda p: None if p == "denied.env" else reads(p)
    index.refresh(tree.entries(), tree.read, fake_analyze)
    stats = index.refresh(tree.entries(), tree.read, fake_analyze)
    assert not stats.listing_unchanged and stats.skipped == {"unreadable": 1}
    assert stats.unchanged == 2
