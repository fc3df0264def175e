"""The cross-process token-count cache (jitctx.tokens.counts)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from jitctx.tokens.counts import COUNTS_FILE, TokenCounts


def key(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


@pytest.fixture
def cache(tmp_path):
    return str(tmp_path / "cache")


def test_put_get_and_persistence(cache):
    counts = TokenCounts.open(cache)
    assert counts.notice is None and counts.path == os.path.join(cache, COUNTS_FILE)
    assert counts.get(key("hello"), "cl100k_base") is None
    counts.put(key("hello"), "cl100k_base", 1)
    counts.put_many([(key("a b c"), "cl100k_base", 3), (key("a b c"), "o200k_base", 4)])
    assert counts.get(key("hello"), "cl100k_base") == 1
    assert counts.get(key("a b c"), "o200k_base") == 4  # counts are per encoding
    assert counts.get(key("hello"), "o200k_base") is None
    assert counts.get_many([key("hello"), key("a b c"), key("nope")], "cl100k_base") == {key("hello"): 1, key("a b c"): 3}
    counts.put(key("hello"), "cl100k_base", 2)  # a later count replaces the earlier
    counts.close()
    again = TokenCounts.open(cache)
    assert again.get(key("hello"), "cl100k_base") == 2
    again.close()


def test_default_location_follows_the_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(tmp_path / "here"))
    counts = TokenCounts.open()
    assert counts.path == str(tmp_path / "here" / COUNTS_FILE)
    counts.close()


def test_oldest_rows_are_evicted_beyond_the_limit(cache):
    counts = TokenCounts.open(cache, limit=10)
    counts.put_many([(key(f"t{i}"), "enc", i) for i in range(8)])
    counts.put(key("t0"), "enc", 100)  # rewritten: young again
    counts.put_many([(key(f"u{i}"), "enc", i) for i in range(5)])
    rows = sqlite3.connect(counts.path).execute("SELECT count(*) FROM counts").fetchone()[0]
    assert rows == 10
    assert counts.get(key("t0"), "enc") == 100
    assert counts.get(key("t1"), "enc") is None and counts.get(key("t3"), "enc") is None
    assert counts.get(key("t4"), "enc") == 4 and counts.get(key("u4"), "enc") == 4
    counts.close()


def test_an_uncreatable_cache_is_no_cache(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    counts = TokenCounts.open(str(blocker / "cache"))
    assert "not cached" in counts.notice and "cannot create" in counts.notice
    counts.put(key("x"), "enc", 1)
    assert counts.get(key("x"), "enc") is None
    assert counts.get_many([key("x")], "enc") == {}
    counts.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_read_only_cache_still_answers(cache):
    counts = TokenCounts.open(cache)
    counts.put(key("x"), "enc", 1)
    counts.close()
    os.chmod(os.path.join(cache, COUNTS_FILE), 0o400)
    try:
        counts = TokenCounts.open(cache)
        counts.put(key("y"), "enc", 2)
        assert "read-only" in counts.notice
        assert counts.get(key("x"), "enc") == 1 and counts.get(key("y"), "enc") is None
        counts.close()
    finally:
        os.chmod(os.path.join(cache, COUNTS_FILE), 0o600)


def test_a_corrupt_cache_is_rebuilt(cache):
    os.makedirs(cache)
    path = os.path.join(cache, COUNTS_FILE)
    with open(path, "wb") as f:
        f.write(os.urandom(8192))
    counts = TokenCounts.open(cache)
    assert "rebuilt" in counts.notice
    counts.put(key("x"), "enc", 7)
    assert counts.get(key("x"), "enc") == 7
    counts.close()
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_damage_found_in_use_is_rebuilt(cache):
    counts = TokenCounts.open(cache, limit=1_000_000)
    counts.put_many([(key(f"t{i}"), "enc", i) for i in range(20_000)])
    counts.close()
    path = os.path.join(cache, COUNTS_FILE)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 4)
    counts = TokenCounts.open(cache)
    assert counts.get(key("t19999"), "enc") is None  # the damaged page is not trusted
    assert "rebuilt" in counts.notice
    counts.put(key("t1"), "enc", 1)
    assert counts.get(key("t1"), "enc") == 1
    counts.close()


def test_another_version_is_rebuilt(cache):
    os.makedirs(cache)
    path = os.path.join(cache, COUNTS_FILE)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE counts(key BLOB, tokens INTEGER)")
        conn.execute("PRAGMA user_version = 7")
    counts = TokenCounts.open(cache)
    assert "schema version 7" in counts.notice
    counts.put(key("x"), "enc", 3)
    assert counts.get(key("x"), "enc") == 3
    counts.close()


def test_a_fresh_process_answers_without_the_tokenizer(cache):
    counts = TokenCounts.open(cache)
    counts.put(key("seen before"), "cl100k_base", 2)
    counts.close()
    script = (
        "import json, sys\n"
        "from jitctx.tokens.counts import TokenCounts\n"
        f"c = TokenCounts.open({cache!r})\n"
        f"n = c.get({key('seen before')!r}, 'cl100k_base')\n"
        "print(json.dumps([n, sorted(m for m in sys.modules if m.split('.')[0] in ('tiktoken', 'tree_sitter', 'jitctx'))]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    n, modules = json.loads(out)
    assert n == 2
    assert modules == ["jitctx", "jitctx.cache", "jitctx.cache.folders", "jitctx.cache.store", "jitctx.tokens", "jitctx.tokens.counts"]
