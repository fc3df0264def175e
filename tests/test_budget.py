"""Exact token counts with tiktoken, offline (DESIGN section 5)."""

import socket

import pytest

from jitctx.budget import TiktokenTokenizer, Tokenizer, get_tokenizer
from jitctx.errors import TokenizerError


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
