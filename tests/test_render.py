"""Text and JSON rendering of the envelope (DESIGN section 3)."""

import json

from jitctx.refs import Excerpt, FileRef, Result
from jitctx.render import age, human_size, render_json, render_text, show_name

NOW = 1_700_000_000.0


def test_envelope_json_has_the_contract_keys_in_order():
    res = Result("glob", [FileRef("a.py", 10, NOW - 7200)], total=1, git_head="abc")
    d = json.loads(render_json(res))
    assert list(d) == ["tool", "results", "total", "truncated", "notice", "git_head", "stale", "instructions"]
    assert d["results"] == [{"path": "a.py", "size": 10, "mtime": NOW - 7200}]


def test_extra_keys_follow_the_fixed_ones():
    res = Result("grep", extra={"backend": "rg"})
    assert list(res.to_dict())[-1] == "backend"


def test_text_is_one_line_per_ref_with_size_and_age():
    res = Result("glob", [FileRef("src/a.py", 1536, NOW - 3 * 3600), FileRef(".env", 20, NOW - 30, denied=True)], total=5, truncated=True, notice="showing 2 of 5 files")
    assert render_text(res, now=NOW) == "src/a.py  1.5 KB  3h ago\n.env  20 B  just now  [denied]\n[truncated] showing 2 of 5 files"


def test_excerpt_text_numbers_lines():
    e = Excerpt("a.txt", 12, NOW - 86400 * 2, 5, 6, 9, "five\nsix\n", tokens=3)
    assert render_text(Result("head", [e], total=1), now=NOW) == ("==> a.txt (lines 5-6 of 9, 12 B, 2d ago, 3 tokens) <==\n     5\tfive\n     6\tsix")


def test_uncounted_tail_numbers_from_the_end():
    e = Excerpt("big.log", 9 << 20, NOW, None, None, None, "a\nb\n")
    text = render_text(Result("tail", [e], total=1), now=NOW)
    assert text.splitlines()[1:] == ["    -2\ta", "    -1\tb"]


def test_stale_then_instructions_come_first():
    res = Result(
        "glob",
        [FileRef("a", 1, NOW)],
        stale=[{"path": "AGENTS.md", "change": "changed", "old_head": "a" * 40, "new_head": "b" * 40}],
        instructions=[{"path": "src/AGENTS.md", "dir": "src", "content": None}],
    )
    lines = render_text(res, now=NOW).splitlines()
    assert lines[0] == "[stale] AGENTS.md: changed since it was delivered (HEAD aaaaaaaa -> bbbbbbbb)"  # no kind given
    assert lines[1].startswith("[instructions] src/AGENTS.md applies to files under src/")


def test_human_units_and_ages():
    assert [human_size(n) for n in (0, 1023, 1024, 5 << 20, 3 << 30)] == ["0 B", "1023 B", "1.0 KB", "5.0 MB", "3.0 GB"]
    assert [age(NOW - d, NOW) for d in (5, 120, 7200, 86400 * 3, 86400 * 40, 86400 * 400, -50)] == [
        "just now",
        "2m ago",
        "2h ago",
        "3d ago",
        "1mo ago",
        "1y ago",
        "just now",
    ]


def test_stale_lines_state_what_changed_per_kind():
    from jitctx.render import stale_line

    assert stale_line({"path": "a.py", "kind": "read", "change": "changed", "old_head": "x" * 40, "new_head": "x" * 40}) == "[stale] a.py: changed since you read it"
    assert stale_line({"path": "AGENTS.md", "kind": "preload", "change": "deleted"}) == "[stale] AGENTS.md: was deleted since it was put in the prefix"
    assert stale_line({"path": "src/AGENTS.override.md", "kind": "instructions", "change": "added"}) == "[stale] src/AGENTS.override.md: appeared since it was shown to you"


def test_issue_12_names_with_control_characters_are_escaped_in_text():
    refs = [FileRef("fake\rREADME.md", 1, 0.0), FileRef("a\nb.txt", 1, 0.0)]
    text = render_text(Result("glob", refs, total=2, notice="see fake\rREADME.md"), now=0.0)
    assert "\r" not in text and text.splitlines()[0].startswith("fake\\rREADME.md")
    assert text.splitlines()[1].startswith("a\\nb.txt") and text.splitlines()[2] == "[note] see fake\\rREADME.md"


def test_issue_15_context_groups_that_are_not_adjacent_are_separated_by_a_dashes_line():
    from jitctx.refs import LineRef, Result
    from jitctx.render import render_text

    def m(path, line, before=(), after=()):
        return LineRef(path, 1, 0.0, line, "hit", tuple({"line": n, "text": "c"} for n in before), tuple({"line": n, "text": "c"} for n in after))

    res = Result("grep", [m("a.py", 2, [1], [3]), m("a.py", 4, [], [5]), m("a.py", 9, [8]), m("b.py", 1, [], [2])], total=4)
    assert render_text(res).splitlines() == [
        "a.py", "1-c", "2:hit", "3-c", "4:hit", "5-c", "--", "8-c", "9:hit", "", "b.py", "1:hit", "2-c",
    ]  # fmt: skip  # grouped under the file, as rg --heading (issue 33)
    plain = Result("grep", [m("a.py", 2), m("a.py", 9)], total=2)
    assert "--" not in render_text(plain).splitlines()  # without context lines, as rg


def test_issue_33_grep_content_names_each_file_once_and_json_is_unchanged():
    import json

    from jitctx.refs import LineRef, Result
    from jitctx.render import render_json, render_text

    long = "src/a/very/long/path/to/the/module.py"
    hits = [LineRef(long, 1, 0.0, n, f"hit {n}", symbol="f" if n == 3 else None) for n in (3, 9)] + [LineRef("b.py", 1, 0.0, 1, "hit")]
    res = Result("grep", hits, total=3, notice="2 files")
    text = render_text(res)
    assert text.count(long) == 1
    assert text.splitlines() == [long, "3 [f]:hit 3", "9:hit 9", "", "b.py", "1:hit", "[note] 2 files"]
    assert [r["path"] for r in json.loads(render_json(res))["results"]] == [long, long, "b.py"]  # JSON: each match keeps its path


def test_issue_33_a_token_cut_prices_grouped_lines_as_shown():
    from jitctx.refs import LineRef, Result
    from jitctx.render import fit_tokens, render_text

    class Words:  # about 4 characters a token, as for code
        def count(self, text):
            return len(text) // 4 + 1

    long = "src/" + "/".join(["deep"] * 20) + "/module.py"
    hits = [LineRef(long, 1, 0.0, n, "x") for n in range(1, 301)]
    out = fit_tokens(Result("grep", hits, total=300), 250, Words())
    assert out.truncated and len(out.results) > 50  # the path once (~30 tokens), not once a line
    assert Words().count(render_text(out)) <= 250


def test_show_name_escapes_control_characters_but_keeps_undecodable_bytes():
    assert show_name("fake\rREADME.md") == "fake\\rREADME.md"
    assert show_name("a\nb\tc\x1b") == "a\\nb\\tc\\x1b"
    assert show_name("plain name é.py") == "plain name é.py"
    assert show_name("bad\udcff.txt") == "bad\udcff.txt"
