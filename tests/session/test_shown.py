"""Re-reads in a session (issue 22): unchanged notes, lines not shown yet, diffs since shown.

Content decides, never mtime: a checkout that restores the bytes is unchanged, an
edit that keeps the mtime is not.
"""

from __future__ import annotations

import os

import pytest

from jitctx import Workspace
from jitctx.errors import PathError
from jitctx.refs import Diff, Excerpt, Unchanged
from jitctx.render import render_text
from jitctx.session.shown import add, diff_since, merge, same_lines, spans, uncovered

LINES = "".join(f"line {i}\n" for i in range(1, 201))


@pytest.fixture
def ws(make_repo):
    repo = make_repo("basic")
    repo.write("big.txt", LINES)
    repo.commit("big")
    with Workspace(repo.root) as w:
        yield repo, w


def only(res):
    assert len(res.results) == 1, res.results
    return res.results[0]


def test_issue_22_an_unchanged_reread_is_a_short_note(ws):
    repo, w = ws
    first = only(w.head("big.txt", n=40))
    assert isinstance(first, Excerpt) and first.tokens
    again = w.head("big.txt", n=40)
    note = only(again)
    assert isinstance(note, Unchanged) and (note.start_line, note.end_line, note.turns, note.tokens) == (1, 40, (1,), first.tokens)
    assert "not repeated (same content)" in again.notice and "force=true" in again.notice
    assert not again.is_empty  # found: the CLI exits 0
    text = render_text(again)
    assert "line 1" not in text and "lines 1-40 of 200 unchanged since shown at turn 1" in text
    # inside what was shown: also unchanged
    assert isinstance(only(w.head("big.txt", n=10, start=5)), Unchanged)
    # force reads it again, whole
    forced = only(w.head("big.txt", n=40, force=True))
    assert isinstance(forced, Excerpt) and forced.content == first.content


def test_issue_22_a_partly_shown_range_returns_only_the_new_lines(ws):
    repo, w = ws
    w.head("big.txt", n=40)
    res = w.head("big.txt", n=60)
    e = only(res)
    assert isinstance(e, Excerpt) and (e.start_line, e.end_line) == (41, 60) and e.content.startswith("line 41\n")
    assert "lines 1-40 were shown at turn 1 and are unchanged: only lines 41-60 are shown" in res.notice
    res = w.head("big.txt", n=20, start=50)  # 50-60 shown, 61-69 not
    e = only(res)
    assert (e.start_line, e.end_line) == (61, 69)
    # holes on both sides: read as asked
    w.head("big.txt", n=10, start=100)
    e = only(w.head("big.txt", n=30, start=90))
    assert (e.start_line, e.end_line) == (90, 119)


def test_issue_22_tail_and_outline_rereads(make_repo):
    repo = make_repo("code")
    with Workspace(repo.root) as w:
        w.tail("rational.py", n=5)
        assert isinstance(only(w.tail("rational.py", n=5)), Unchanged)
        first = w.outline("rational.py")
        assert first.results and not isinstance(first.results[0], Unchanged)
        again = w.outline("rational.py")
        note = only(again)
        assert isinstance(note, Unchanged) and note.what == "outline" and note.count == len(first.results)
        assert "outline path=rational.py force=true" in again.notice
        assert not isinstance(w.outline("rational.py", force=True).results[0], Unchanged)
        repo.write("rational.py", (repo.root / "rational.py").read_text() + "\n\ndef added():\n    return 1\n")
        changed = w.outline("rational.py")
        assert any(getattr(s, "name", "") == "added" for s in changed.results)


def test_issue_22_a_changed_file_comes_back_as_a_diff_when_it_is_smaller(ws):
    repo, w = ws
    w.head("big.txt", n=80)
    repo.write("big.txt", LINES.replace("line 30\n", "line THIRTY\n"))
    res = w.head("big.txt", n=80)  # one line replaced: the others are as shown, at their numbers
    e = only(res)
    assert isinstance(e, Excerpt) and (e.start_line, e.end_line, e.content) == (30, 30, "line THIRTY\n")
    assert "lines 1-80 except 30 were shown at turn 1 and are unchanged: only line 30 is shown" in res.notice
    assert "changed since shown at turn 1: of the lines you were shown, those that differ now are shown here" in res.notice
    repo.write("big.txt", LINES.replace("line 30\n", "line THIRTY\nline 30b\n"))  # a line in: the rest moves down
    res = w.head("big.txt", n=80)
    d = only(res)
    assert isinstance(d, Diff) and "+line 30b\n" in d.content and "@@ -28,6 +28,7 @@" in d.content
    assert d.tokens and d.tokens < 100 and "changed since shown at turns 1, 2" in res.notice and "force=true" in res.notice
    assert not res.stale  # read again: current
    # the caller can rebuild lines 1-80 now: a re-read is a note
    assert isinstance(only(w.head("big.txt", n=80)), Unchanged)


def test_issue_22_a_change_after_the_lines_asked_for_is_a_note_and_a_shift_is_never_hidden(ws):
    repo, w = ws
    w.head("big.txt", n=40)
    repo.write("big.txt", LINES.replace("line 150\n", "line 150 changed\n"))
    res = w.head("big.txt", n=40)
    note = only(res)
    assert isinstance(note, Unchanged) and "big.txt changed since shown at turn 1, elsewhere: the lines you were shown are as they were" in res.notice
    repo.write("big.txt", LINES.replace("line 150\n", "line 150 changed\n").replace("line 3\n", ""))  # one line gone near the top
    res = w.head("big.txt", n=40)
    d = only(res)
    # lines 1-40 now end with the old line 41, which was never shown: the caller cannot rebuild it from a diff
    assert isinstance(d, Excerpt) and d.content.endswith("line 41\n")


def test_issue_22_diff_only_when_asked_for_or_the_lines_were_shown(ws):
    repo, w = ws
    w.head("big.txt", n=10)
    repo.write("big.txt", LINES.replace("line 3\n", "line three\n"))
    e = only(w.head("big.txt", n=80))  # lines 11-80 were never shown: the text, not a diff
    assert isinstance(e, Excerpt) and "line three" in e.content
    repo.write("big.txt", LINES.replace("line 3\n", "line 3!\n"))
    assert isinstance(only(w.head("big.txt", n=80, diff=True)), Diff)
    repo.write("big.txt", "".join(f"other {i}\n" for i in range(1, 201)))
    e = only(w.head("big.txt", n=5))  # every line changed: the diff is larger than the five lines
    assert isinstance(e, Excerpt) and e.content.startswith("other 1\n")
    repo.write("big.txt", LINES)
    assert isinstance(only(w.head("big.txt", n=5, force=True)), Excerpt)


def test_issue_22_content_decides_not_mtime(ws):
    repo, w = ws
    path = repo.root / "big.txt"
    w.head("big.txt", n=40)
    st = os.stat(path)
    repo.write("big.txt", LINES.replace("line 7\n", "line 8\n"))  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same mtime
    assert not isinstance(only(w.head("big.txt", n=40)), Unchanged)
    # a checkout that restores the bytes shown: unchanged again
    w.head("big.txt", n=40, force=True)
    repo.git("stash", "-q")  # back to the committed bytes
    repo.git("stash", "pop", "-q")  # and forward again: the same bytes as the last read
    assert isinstance(only(w.head("big.txt", n=40)), Unchanged)


def test_issue_22_a_checkout_is_judged_by_content(ws):
    repo, w = ws
    w.head("big.txt", n=40)
    repo.checkout("other", create=True)
    repo.write("big.txt", LINES.replace("line 2\n", "line two\nline 2b\n"))
    repo.commit("change on other")
    assert isinstance(only(w.head("big.txt", n=40)), Diff)
    repo.checkout("main")  # the bytes of turn 1 again, a new mtime
    res = w.head("big.txt", n=40)
    assert isinstance(only(res), Diff)  # the last shown is the other branch's: the diff back
    assert isinstance(only(w.head("big.txt", n=40)), Unchanged)


def test_issue_22_a_file_gone_says_so(ws):
    repo, w = ws
    w.head("big.txt", n=5)
    (repo.root / "big.txt").unlink()
    with pytest.raises(PathError) as info:
        w.head("big.txt", n=5)
    assert info.value.reason == "not_found" and "deleted since it was shown at turn 1" in info.value.message


def test_issue_22_off_without_a_session_or_when_turned_off(make_repo):
    repo = make_repo("basic")
    for w in (Workspace(repo.root, record=False), Workspace(repo.root, rereads=False)):
        with w:
            w.head("src/app.py")
            assert isinstance(only(w.head("src/app.py")), Excerpt)


def test_issue_22_the_cli_without_a_session_is_unchanged(make_repo, capsys):
    from jitctx.adapters.cli import main

    repo = make_repo("basic")
    outs = []
    for _ in range(2):
        assert main(["head", "src/app.py", "--root", str(repo.root)]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and "def main" in outs[0]


def test_issue_22_tool_calls_share_the_session(make_repo):
    from jitctx.tools import dispatch

    repo = make_repo("basic")
    with Workspace(repo.root) as w:
        assert "def main" in dispatch("head", {"path": "src/app.py"}, workspace=w).text
        again = dispatch("head", {"path": "src/app.py"}, workspace=w)
        assert "unchanged since shown at turn 1" in again.text and again.data["results"][0]["unchanged"] == "lines"
        assert "def main" in dispatch("head", {"path": "src/app.py", "force": True}, workspace=w).text


# -- the pure rules --------------------------------------------------------------------------


def test_issue_22_ranges():
    assert merge([(5, 9), (1, 3), (4, 4), (20, 21), (8, 12)]) == [(1, 12), (20, 21)]
    assert uncovered([(1, 40)], 1, 40) == []
    assert uncovered([(1, 40)], 1, 60) == [(41, 60)]
    assert uncovered([(10, 20)], 1, 30) == [(1, 9), (21, 30)]
    assert uncovered([(1, 5), (10, 20)], 3, 12) == [(6, 9)]
    assert uncovered([], 3, 4) == [(3, 4)]


def _known(ranges, turn=1):
    return [(a, b, turn) for a, b in ranges]


def test_issue_22_known_lines_after_a_diff_follow_insertions_and_deletions():
    old = [str(i) for i in range(1, 21)]
    deleted = old[:4] + old[7:]  # three lines gone: old 8-20 are new 5-17
    after = lambda new, ranges, **kw: spans(diff_since(old, new, "a.txt", _known(ranges), 9, **kw)[2])  # noqa: E731
    assert diff_since(old, deleted, "a.txt", _known([(1, 10)]), 9)[3] and not diff_since(old, deleted, "a.txt", _known([(15, 20)]), 9)[3]  # the hunk's old lines 2-10
    assert after(deleted, [(1, 10)]) == [(1, 7)]  # old 1-4 and 8-10, the hunk's context lines
    assert after(deleted, [(15, 20)]) == [(2, 7), (12, 17)]  # the hunk shows its context: new 2-7
    inserted = old[:5] + ["x", "y"] + old[5:]  # two lines in: old 6-20 are new 8-22
    assert after(inserted, [(1, 10)]) == [(1, 12)]  # old 1-10 plus the two shown in the diff
    assert after(inserted, [(15, 20)]) == [(3, 10), (17, 22)]
    assert diff_since(old, old, "a.txt", [], 2) == ("", 0, [], True)
    late = [*old[:17], "18!", *old[18:]]
    text, left, known, _ = diff_since(old, late, "a.txt", _known([(1, 20)]), 2, upto=10)
    assert (text, left) == ("", 1) and spans(known) == [(1, 17)]  # the change is past line 10: placed up to it
    text, left, known, _ = diff_since(old, [old[0], "2!", *late[2:]], "a.txt", _known([(1, 20)]), 2, upto=10)
    assert left == 1 and "+2!" in text and "18!" not in text and "@@ -1,5 +1,5 @@" in text
    assert spans(known) == [(1, 17)] and (1, 5, 2) in known  # the hunk's lines at the diff's turn, the rest at theirs


def test_issue_29_same_lines_and_add_keep_turns():
    old = ["a", "b", "c", "d"]
    assert same_lines([(1, 4, 3)], old, ["a", "B", "c"]) == [(1, 1, 3), (3, 3, 3)]
    assert add([(1, 10, 1)], 4, 6, 2) == [(1, 3, 1), (4, 6, 2), (7, 10, 1)]
    assert add([(1, 3, 1), (4, 6, 2)], 1, 6, 2) == [(1, 6, 2)]
