"""head and tail agree with a naive reading of the same bytes, for any text."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jitctx.primitives.headtail import read_head, read_tail
from jitctx.text.lines import decode, split_lines

line = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00"), max_size=30)
files = st.lists(st.tuples(line, st.sampled_from(["\n", "\r\n"])), max_size=40).flatmap(
    lambda rows: st.booleans().map(lambda last_nl: "".join(t + e for t, e in rows) + ("" if last_nl else "tail"))
)


def naive(text: str) -> list[str]:
    return split_lines(decode(text.encode())[0])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=files, n=st.integers(1, 50), start=st.integers(1, 60))
def test_head_and_tail_match_a_naive_split(tmp_path, text, n, start):
    p = tmp_path / "f.txt"
    data = text.encode()
    p.write_bytes(data)
    expected = naive(text)
    with open(p, "rb") as f:
        h = read_head(f, "f.txt", len(data), n, start)
    assert h.lines == expected[start - 1 : start - 1 + n]
    assert h.total_lines == len(expected)
    with open(p, "rb") as f:
        t = read_tail(f, "f.txt", len(data), n)
    assert t.lines == expected[-n:] if expected else t.lines == []
    assert t.total_lines == len(expected)
    assert t.start_line == len(expected) - len(t.lines) + 1
