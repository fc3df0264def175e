"""The words of lexical relevance: the index's fast path says what the rule says (issue 23)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jitctx.code import words

PIECES = st.sampled_from([*"abcXYZ019_ .,()-\n\té日本", "Handshake", "sslTimeout", "URLs", "HTTPServer", "x" * 70, " ab ab ab ab ab ab ab ab ab "])
TEXT = st.lists(PIECES, max_size=60).map("".join)


def reference(text: str) -> str:
    """The rule, one identifier at a time: its terms once per occurrence, at most
    ``TF_CAP`` times, grouped where the identifier first occurs."""
    seen: dict[str, int] = {}
    for ident in words._IDENT.findall(text):
        seen[ident] = seen.get(ident, 0) + 1
    return " ".join(filter(None, (" ".join([words._terms(i)] * min(n, words.TF_CAP)) if words._terms(i) else "" for i, n in seen.items())))


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_issue_23_content_terms_fast_path_is_the_rule(text):
    assert words.content_terms(text) == reference(text)


def test_issue_23_ascii_and_unicode_identifiers_split_alike():
    assert words.content_terms("sslHandshakeTimeout einsum_path") == "sslhandshaketimeout ssl handshake timeout einsumpath einsum path"
    assert words.content_terms("café_au_lait HTTPServer") == "caféaulait café au lait httpserver http server"
    assert words.content_terms("a" * 65) == ""  # longer than MAX_WORD: no signal


def test_issue_23_a_repeated_word_counts_up_to_the_cap_grouped():
    text = "x = foo(bar)\n" * 20 + "fooBar\n"
    assert words.content_terms(text) == " ".join(["x"] * words.TF_CAP + ["foo"] * words.TF_CAP + ["bar"] * words.TF_CAP + ["foobar foo bar"])
