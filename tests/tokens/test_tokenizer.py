"""Exact token counts with tiktoken, offline (DESIGN section 5)."""

import socket

import pytest

from jitctx.errors import TokenizerError
from jitctx.tokens.tokenizer import TiktokenTokenizer, Tokenizer, fit_lines, get_tokenizer


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_cl100k_counts_exactly_without_network(no_network):
    tok = TiktokenTokenizer("cl100k_base")
    assert isinstance(tok, Tokenizer)
    assert tok.count("hello world") == 2
    assert tok.count("") == 0
    assert tok.count("<|endoftext|>") > 1  # special tokens are counted as text


def test_counts_are_cached_by_content(no_network):
    tok = TiktokenTokenizer()
    text = "def f():\n    return 1\n" * 10
    first = tok.count(text)
    tok._enc = None  # a cache hit must not touch the encoder
    assert tok.count(text) == first


def test_truncate_ends_on_a_whole_character(no_network):
    tok = get_tokenizer()
    text = "héllo wörld " * 50 + "日本語のテキスト" * 20
    cut = tok.truncate(text, 37)
    assert text.startswith(cut) and tok.count(cut) <= 37
    assert tok.truncate("short", 100) == "short"


def test_get_tokenizer_is_shared():
    assert get_tokenizer() is get_tokenizer("cl100k_base")


def test_unknown_encoding_is_a_clear_error(no_network):
    with pytest.raises(TokenizerError, match="'no_such_encoding'"):
        TiktokenTokenizer("no_such_encoding")


def test_issue_2_an_encoding_not_bundled_is_refused_without_network(no_network, tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    with pytest.raises(TokenizerError, match="cannot load token encoding 'o200k_base' offline") as info:
        TiktokenTokenizer("o200k_base")
    assert "TIKTOKEN_CACHE_DIR" in info.value.hint


class WordTokenizer:
    """One token per whitespace-separated word; records the longest text counted."""

    name = "words"

    def __init__(self) -> None:
        self.longest = 0
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        self.longest = max(self.longest, len(text))
        return len(text.split())

    def truncate(self, text: str, n: int) -> str:  # pragma: no cover - unused
        return " ".join(text.split()[:n])


def render_with(lines):
    return lambda k: "".join(line + "\n" for line in lines[:k]) + f"[cut at {k}]\n"


def test_cut_lines_keeps_the_most_whole_lines_that_fit():
    lines = tuple(f"w{i} x y" for i in range(100))  # 3 tokens a line, marker 3 tokens
    tok = WordTokenizer()
    assert fit_lines(tok.count, lines, 33, render_with(lines)) == 10
    assert fit_lines(tok.count, lines, 35, render_with(lines)) == 10
    assert fit_lines(tok.count, lines, 36, render_with(lines)) == 11
    assert fit_lines(tok.count, lines, 2, render_with(lines)) is None
    assert fit_lines(tok.count, lines, 3, render_with(lines)) == 0
    assert fit_lines(tok.count, lines, 10_000, render_with(lines)) == 100


def test_cut_lines_on_a_huge_input_counts_only_text_near_the_fit():
    lines = tuple(f"line {i} of many" for i in range(200_000))
    tok = WordTokenizer()
    k = fit_lines(tok.count, lines, 400, render_with(lines))
    assert k == 99  # 4 tokens a line, 3 for the marker
    assert tok.longest < 20_000 and tok.calls < 40


# -- counts of file contents, remembered on disk (issue 16) ------------------------

_HEAD_SCRIPT = (
    "import json, sys\n"
    "from jitctx import Workspace\n"
    "ws = Workspace(sys.argv[1])\n"
    "r = ws.head(sys.argv[2] if len(sys.argv) > 2 else 'big.py', 40)\n"
    "print(json.dumps([r.results[0].tokens, ws.content_counts.fresh, 'tiktoken' in sys.modules]))\n"
)


def _head_in_fresh_process(root, env, *path):
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _HEAD_SCRIPT, str(root), *path], capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out)


@pytest.mark.slow
def test_issue_16_a_head_of_content_counted_before_loads_no_tokenizer(tmp_path):
    import os

    root = tmp_path / "repo"
    root.mkdir()
    text = "".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(100))
    (root / "big.py").write_text(text)
    env = {**os.environ, "JITCTX_CACHE_DIR": str(tmp_path / "cache")}
    tokens, fresh, loaded = _head_in_fresh_process(root, env)
    assert (fresh, loaded) == (1, True)  # the first read of this content counts it
    assert tokens == get_tokenizer().count("".join(text.splitlines(keepends=True)[:40]))
    assert _head_in_fresh_process(root, env) == [tokens, 0, False]  # counted before: no tokenizer
    (root / "big.py").write_text(text.replace("return", "yield"))  # new content is counted again
    assert _head_in_fresh_process(root, env)[1:] == [1, True]
    (root / "sub").mkdir()  # a nested instruction file comes with the excerpt (a new session each process)
    (root / "sub" / "AGENTS.md").write_text("# Rules\nRun the tests.\n")
    (root / "sub" / "a.py").write_text(text)
    assert _head_in_fresh_process(root, env, "sub/a.py") == [tokens, 1, True]  # the AGENTS.md is new content
    assert _head_in_fresh_process(root, env, "sub/a.py") == [tokens, 0, False]


def test_issue_16_content_counts_are_per_encoding_and_never_kept_in_the_repository(tmp_path, monkeypatch):
    from jitctx.tokens.tokenizer import ContentCounts, content_key

    calls = []

    class Fake(Tokenizer):
        name = "fake"

        def count(self, text):
            calls.append(text)
            return len(text.split())

    monkeypatch.setenv("JITCTX_CACHE_DIR", str(tmp_path / "cache"))
    a = ContentCounts("enc-a", Fake)
    assert a.count("one two three") == 3 and a.count("") == 0
    assert ContentCounts("enc-a", Fake).count("one two three") == 3 and len(calls) == 1  # from disk
    assert ContentCounts("enc-b", Fake).count("one two three") == 3 and len(calls) == 2  # another encoding
    assert content_key("x") == content_key("x") != content_key("y")
    fake = ContentCounts("enc-a", Fake, persist=False)  # a caller's own tokenizer: always asked
    assert fake.count("one two three") == 3 and len(calls) == 3 and fake.fresh == 1
    inside = tmp_path / "repo"
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(inside / ".cache"))
    c = ContentCounts("enc-a", Fake, root=str(inside))
    assert c.count("four five") == 2 and c.count("four five") == 2
    assert "inside the repository" in c.notice and not (inside / ".cache").exists()
