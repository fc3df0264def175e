"""The words of lexical relevance: the index's fast path says what the rule says (issue 23)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jitctx.code import words

PIECES = st.sampled_from([*"abcXYZ019_ .,()-\n\té日本", "Handshake", "sslTimeout", "URLs", "HTTPServer", "x" * 70])
TEXT = st.lists(PIECES, max_size=60).map("".join)


def reference(text: str) -> str:
    """The rule, one identifier at a time (what the index stored before the fast path)."""
    return " ".join(filter(None, map(words._terms, words._IDENT.findall(text))))


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_issue_23_content_terms_fast_path_is_the_rule(text):
    assert words.content_terms(text) == reference(text)


def test_issue_23_ascii_and_unicode_identifiers_split_alike():
    assert words.content_terms("sslHandshakeTimeout einsum_path") == "sslhandshaketimeout ssl handshake timeout einsumpath einsum path"
    assert words.content_terms("café_au_lait HTTPServer") == "caféaulait café au lait httpserver http server"
    assert words.content_terms("a" * 65) == ""  # longer than MAX_WORD: no signal
