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


BYTES = st.lists(
    st.sampled_from(
        [
            *b"abcXYZ019_ .,()-\n\t\r",
            *[c.encode() for c in "é日本ΣςΑ"],
            b"__init__",
            b"_private",
            b"trailing_",
            b"___",
            b"AKIAIOSFODNN7EXAMPLE",  # secrets: no word (text.redact), from the bytes as from the text
            b"ghp_" + b"x1Y2" * 9,
            b"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef\n",
            b"_" * 12,
            b"HTTPServer",
            b"sslTimeout",
            b"URLs",
            b"x" * 70,
            b"\xff",
            b"\xc3",
            b"\xe6\x97",
            b"\xef\xbb\xbf",
            "ΑΣ_Β".encode(),
            b" ab ab ab ab ab ab ab ab ab ",
        ]
    ).map(lambda p: p if isinstance(p, bytes) else bytes([p])),
    max_size=80,
).map(b"".join)


@settings(max_examples=500, deadline=None)
@given(BYTES)
def test_issue_32_content_terms_of_bytes_is_the_rule_on_the_decoded_text(data):
    """The build's words come from the bytes, undecoded: the same string as the rule gives
    the text decoded as every reader decodes it (invalid UTF-8 replaced)."""
    from jitctx.text.lines import decode

    assert words.content_terms_of(data) == words.content_terms(decode(data)[0])


def test_issue_32_content_terms_of_merges_underscored_runs_and_keeps_the_first_order():
    data = b"_foo = foo + __foo__ + bar_\nbar __ baz_qux_ caf\xc3\xa9_au foo\xe2\x80\x94bar"
    assert words.content_terms_of(data) == words.content_terms(data.decode())
    assert words.content_terms_of(data).split(" ")[:5] == ["foo"] * 4 + ["bar"]  # where each first occurs, counted together
    assert words.content_terms_of(b"") == ""
