"""head and tail: excerpts, limits, notices and bad input (DESIGN section 4)."""

import pytest
from tests_support import CharTokenizer

from jitctx import Workspace
from jitctx.errors import PathError, QueryError
from jitctx.primitives.headtail import COUNT_LIMIT


@pytest.fixture
def ws(repo):
    return Workspace(repo.root, tokenizer=CharTokenizer(), rereads=False)  # reads as such, not a session's re-reads (tests/test_reread.py)


def excerpt(result):
    assert len(result.results) == 1
    return result.results[0]


def test_head_returns_numbered_excerpt_with_exact_fields(ws):
    res = ws.head("text/numbers.txt", 3)
    e = excerpt(res)
    assert (e.path, e.start_line, e.end_line, e.total_lines) == ("text/numbers.txt", 1, 3, 300)
    assert e.content == "line 1\nline 2\nline 3\n"
    assert e.tokens == CharTokenizer().count(e.content)
    assert res.notice == "297 more lines; read on with head path=text/numbers.txt start=4."
    assert not res.truncated


def test_head_with_start_reads_forward_to_that_line(ws):
    e = excerpt(ws.head("text/numbers.txt", 2, start=299))
    assert (e.start_line, e.end_line, e.content) == (299, 300, "line 299\nline 300\n")


def test_head_past_the_end_is_empty_with_a_notice(ws):
    res = ws.head("text/numbers.txt", 5, start=400)
    e = excerpt(res)
    assert (e.content, e.start_line, e.end_line, e.total_lines) == ("", 400, 399, 300)  # an empty range
    assert res.notice == "start=400 is past the end: text/numbers.txt has 300 lines; read the end with tail path=text/numbers.txt."


def test_tail_returns_the_last_lines_with_exact_numbers(ws):
    res = ws.tail("text/numbers.txt", 2)
    e = excerpt(res)
    assert (e.start_line, e.end_line, e.total_lines, e.content) == (299, 300, 300, "line 299\nline 300\n")
    assert "298 earlier lines" in res.notice


def test_tail_of_a_short_file_returns_it_all(ws):
    e = excerpt(ws.tail("text/crlf.txt", 10))
    assert (e.start_line, e.end_line, e.total_lines, e.content) == (1, 3, 3, "first\nsecond\nthird\n")


def test_crlf_never_leaves_carriage_returns(ws):
    assert "\r" not in excerpt(ws.head("text/crlf.txt")).content


def test_bom_is_stripped_by_head_and_tail(ws):
    assert excerpt(ws.head("text/bom.txt")).content == "bom first line\nbom second\n"
    assert excerpt(ws.tail("text/bom.txt")).content == "bom first line\nbom second\n"


def test_invalid_utf8_is_replaced_and_said(ws):
    res = ws.head("text/latin1.txt")
    e = excerpt(res)
    assert e.content.startswith("caf\ufffd latin-1") and e.replaced
    assert "invalid UTF-8 was replaced" in res.notice


def test_last_line_without_newline_counts(ws):
    e = excerpt(ws.head("text/nonl.txt"))
    assert (e.content, e.total_lines) == ("no newline at end\n", 1)
    assert excerpt(ws.tail("text/nonl.txt")).content == "no newline at end\n"


def test_empty_file(ws):
    for res in (ws.head("text/empty.txt"), ws.tail("text/empty.txt")):
        assert (excerpt(res).content, excerpt(res).total_lines) == ("", 0)
        assert res.notice == "text/empty.txt is empty: nothing to read."  # not "read the end with tail"


def test_long_lines_are_cut_with_a_marker(ws):
    res = ws.head("text/long.txt")
    line = excerpt(res).content.split("\n")[1]
    assert line == "x" * 2000 + " [… line cut: 3,000 more chars]"
    assert "1 line(s) over 2,000 chars were cut" in res.notice


def test_a_huge_single_line_is_not_held_whole(repo, ws):
    repo.write("huge.txt", "y" * 3_000_000 + "\nend\n")
    e = excerpt(ws.head("huge.txt"))
    assert e.content.split("\n")[1] == "end"
    assert len(e.content) < 2100
    tail = excerpt(ws.tail("huge.txt", 2))
    assert tail.content.endswith("\nend\n") and len(tail.content) < 2100


def test_tail_of_a_file_over_8_mib_numbers_from_the_end(repo, ws):
    line = "0123456789" * 10 + "\n"
    repo.write("big.txt", line * (COUNT_LIMIT // len(line) + 10))
    res = ws.tail("big.txt", 50)
    e = excerpt(res)
    assert (e.start_line, e.end_line, e.total_lines) == (None, None, None)
    assert e.content == line * 50
    assert "over 8 MiB" in res.notice and "-50" in res.notice


def test_n_above_the_maximum_is_clamped_with_a_notice(repo, ws):
    repo.write("many.txt", "".join(f"{i}\n" for i in range(3000)))
    res = ws.head("many.txt", 5000)
    assert excerpt(res).end_line == 2000
    assert res.notice.startswith("n=5000 is above the maximum; clamped to 2,000.")


@pytest.mark.parametrize("n", [0, -3, 2.5, True, "10", None])
def test_bad_counts(ws, n):
    with pytest.raises(QueryError, match="n must be"):
        ws.head("text/numbers.txt", n)
    with pytest.raises(QueryError, match="n must be"):
        ws.tail("text/numbers.txt", n)


@pytest.mark.parametrize("start", [0, -1, False])
def test_bad_start(ws, start):
    with pytest.raises(QueryError, match="start must be"):
        ws.head("text/numbers.txt", 5, start=start)


@pytest.mark.parametrize(
    "path,reason",
    [
        ("data/blob.bin", "binary"),
        (".env", "denied"),
        ("secrets/server.pem", "denied"),
        ("src", "not_a_file"),
        ("nope.txt", "not_found"),
        ("../x", "outside_root"),
        (".git/HEAD", "git_internal"),
    ],
)
def test_refusals(ws, path, reason):
    for call in (ws.head, ws.tail):
        with pytest.raises(PathError) as info:
            call(path)
        assert info.value.reason == reason


def test_denied_content_never_appears_in_the_error(ws):
    with pytest.raises(PathError) as info:
        ws.head(".env")
    assert "secret-value" not in str(info.value.to_dict())


def test_ignored_file_named_explicitly_is_served_and_flagged(ws):
    e = excerpt(ws.head("debug.log"))
    assert e.ignored and e.content == "debug line\n"


def test_max_tokens_cuts_head_at_whole_lines_and_says_where_to_read_on(ws):
    res = ws.head("text/numbers.txt", 100, max_tokens=100)
    e = excerpt(res)
    assert res.truncated and 0 < e.end_line < 100
    assert e.content == "".join(f"line {i}\n" for i in range(1, e.end_line + 1))
    assert f"read on with head path=text/numbers.txt start={e.end_line + 1}" in res.notice


def test_max_tokens_keeps_the_end_for_tail(ws):
    res = ws.tail("text/numbers.txt", 100, max_tokens=100)
    e = excerpt(res)
    assert res.truncated and e.end_line == 300 and e.start_line > 201
    assert e.content.endswith("line 300\n")


def test_tail_cost_does_not_read_the_whole_file(repo, ws, monkeypatch):
    line = "abcdefghij" * 5 + "\n"
    repo.write("big.txt", line * (COUNT_LIMIT // len(line) * 2))
    reads = []
    real_open = open

    class Counting:
        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            data = self.f.read(n)
            reads.append(len(data))
            return data

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    import jitctx.primitives.headtail as headtail

    monkeypatch.setattr(headtail, "open", lambda *a, **k: Counting(real_open(*a, **k)), raising=False)
    ws.tail("big.txt", 50)
    assert sum(reads) < 200_000


def test_issue_2_max_tokens_cut_leaves_one_read_on_notice(ws):
    res = ws.head("text/numbers.txt", 100, max_tokens=100)
    assert res.notice.count("read on with head") == 1
    tail = ws.tail("text/numbers.txt", 100, max_tokens=100)
    e = excerpt(tail)
    assert tail.notice.count("earlier lines") == 1 and f"{e.start_line - 1:,} earlier lines" in tail.notice


def test_issue_2_max_tokens_holds_with_large_nested_instructions(repo):
    from jitctx.render import render_text
    from jitctx.tokens.tokenizer import get_tokenizer

    repo.write("src/util/AGENTS.md", "".join(f"rule {i}: keep helpers pure and small\n" for i in range(300)))
    real = Workspace(repo.root)
    res = real.head("src/util/helpers.py", max_tokens=300)
    assert get_tokenizer().count(render_text(res)) <= 300
    assert res.instructions[0]["path"] == "src/util/AGENTS.md" and res.instructions[0]["content"] is None
    assert "given as references to fit max_tokens" in res.notice


def test_issue_2_a_long_line_cut_inside_a_character_is_not_called_invalid(repo, ws):
    repo.write("wide.txt", "a" + "中" * 5000 + "\nend\n")
    res = ws.head("wide.txt")
    e = excerpt(res)
    assert not e.replaced and "invalid UTF-8" not in (res.notice or "")
    assert e.content.split("\n")[0].startswith("a中中")
    assert "\ufffd" not in e.content


def test_issue_2_a_lone_carriage_return_never_appears(repo, ws):
    repo.write("cr.txt", b"a\rb\rc\nnext\r\n")
    for res in (ws.head("cr.txt"), ws.tail("cr.txt")):
        assert excerpt(res).content == "a\u240db\u240dc\nnext\n"


def test_issue_2_a_file_named_tilde_is_served(repo, ws):
    repo.write("~", "tilde file\n")
    assert excerpt(ws.head("~")).content == "tilde file\n"


@pytest.mark.parametrize("n", [5, 40, 200])
def test_issue_2_head_and_tail_fit_max_tokens_with_their_notices(repo, n):
    from jitctx.render import render_text
    from jitctx.tokens.tokenizer import get_tokenizer

    repo.write("long.md", "".join(f"line {i}: some words to make it longer than it needs\n" for i in range(3000)))
    ws = Workspace(repo.root)
    for res in (ws.head("long.md", 2000, start=n, max_tokens=250), ws.tail("long.md", 2000, max_tokens=250)):
        assert get_tokenizer().count(render_text(res)) <= 250
        assert "read" in res.notice and res.truncated


def test_issue_15_max_tokens_caps_the_text_the_caller_receives(repo):
    """The cap holds on the rendered text, and a file whose whole rendering fits is shown whole
    (main priced the header's token count as a 10-digit number and tried a cut's notice first)."""
    from jitctx.render import render_text

    ws = Workspace(repo.root, rereads=False)
    count = ws.tokenizer.count
    repo.write("small.txt", "".join(f"line {i}\n" for i in range(40)))
    whole = count(render_text(ws.head("small.txt")))
    assert whole > 200  # above the floor max_tokens is held to
    for cap in range(whole, whole + 12):
        res = ws.head("small.txt", max_tokens=cap)
        assert count(render_text(res)) <= cap and excerpt(res).end_line == 40 and not res.truncated, cap
    for tool in (ws.head, ws.tail):
        for cap in (200, 333, 1000, 1500):
            res = tool("text/numbers.txt", 2000, max_tokens=cap)
            text = render_text(res)
            assert count(text) <= cap and res.truncated, (tool, cap)
            assert count(text) > cap - 60, (tool, cap)  # not wasteful either
