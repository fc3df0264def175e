"""Text rules: the binary probe, decoding, line splitting, names in text output."""

from jitctx.text.lines import decode, is_binary, normalize, split_lines, trim_partial


def test_binary_is_a_nul_in_the_first_8_kib():
    assert is_binary(b"abc\0def")
    assert not is_binary(b"a" * 8192 + b"\0")


def test_decode_replaces_invalid_utf8_and_strips_bom():
    assert decode(b"caf\xe9") == ("caf\ufffd", True)
    assert decode("\ufeffhé".encode()) == ("hé", False)


def test_split_lines_only_on_newline_and_drops_carriage_returns():
    assert split_lines("a\r\nb\x0cc\u2028d\nlast") == ["a", "b\x0cc\u2028d", "last"]
    assert split_lines("one\n") == ["one"]
    assert split_lines("") == []
    assert split_lines("a\rb\n") == ["a\u240db"]


def test_normalize_strips_the_bom_and_crlf_only():
    assert normalize("\ufeffa\r\nb\rc\n".encode()) == b"a\nb\rc\n"


def test_trim_partial_drops_a_cut_character_only():
    assert trim_partial("é".encode()[:1]) == b""
    assert trim_partial("aé".encode()) == "aé".encode()
    assert trim_partial(b"abc") == b"abc"
