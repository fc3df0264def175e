"""What a session says is true of the bytes (issue 29): each case the issue found, pinned.

Redaction holds in diffs and re-reads, compaction's "still current" judges the
placeholder's own content and its fetch-again call returns the text, a diff only
stands in for lines the caller was shown, a read of a file changed since any
earlier delivery says so, the lines and the hash come from one read, a head of a
file over 8 MiB renders, a hard link to a denied file answers nothing, turns count
calls, ``context --task`` reports staleness, ``head --symbol`` says what it did.
"""

from __future__ import annotations

from jitctx import Workspace
from jitctx.refs import Diff, Excerpt, Unchanged
from jitctx.render import render_text


def test_issue_29_head_of_a_file_over_8_mib_renders(make_repo, capsys):
    from jitctx.adapters.cli import main
    from jitctx.tools import dispatch

    repo = make_repo("basic")
    repo.write("huge.txt", "".join(f"row {i}\n" for i in range(1, 1_000_001)))  # ~10 MB
    with Workspace(repo.root) as w:
        for call in (lambda: w.head("huge.txt", n=3), lambda: w.head("huge.txt", n=3, force=True)):
            text = render_text(call())
            assert "==> huge.txt (lines 1-3, total not counted," in text and "     3\trow 3" in text
        out = dispatch("head", {"path": "huge.txt", "n": 2}, workspace=w)
        assert not out.is_error and "     2\trow 2" in out.text
    assert main(["head", "huge.txt", "-n", "2", "--root", str(repo.root)]) == 0
    assert "     2\trow 2" in capsys.readouterr().out


def test_issue_29_a_head_inside_a_key_block_redacts_it_although_begin_is_not_shown(make_repo):
    repo = make_repo("basic")
    body = "".join(f"{'QUJD' * 16}{i:04d}\n" for i in range(8))
    repo.write("keys.txt", "intro\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\nafter\n")
    for w in (Workspace(repo.root), Workspace(repo.root, record=False)):
        with w:
            res = w.head("keys.txt", start=4, n=3)  # body lines only: neither BEGIN nor END shown
            text = render_text(res)
            assert "QUJD" not in text and text.count("[redacted: private key]") == 3
            assert "secret(s) (private key) redacted in keys.txt at line(s) 4" in res.notice


# -- re-reads: what a session says of the bytes ---------------------------------------------

LINES = "".join(f"line {i}\n" for i in range(1, 201))
KEY = 'AWS_KEY = "AKIAABCDEFGHIJKLMNOP"'


def _ws(make_repo, text=LINES):
    repo = make_repo("basic")
    repo.write("f.py", text)
    return repo, Workspace(repo.root)


def only(res):
    assert len(res.results) == 1, res.results
    return res.results[0]


def test_issue_29_a_diff_never_shows_a_redacted_secret(make_repo):
    from jitctx.refs import Diff

    repo, w = _ws(make_repo, LINES.replace("line 10\n", KEY + "\n"))
    with w:
        first = render_text(w.head("f.py", n=100))
        assert "AKIA" not in first and "[redacted: AWS access key id]" in first
        repo.write("f.py", LINES.replace("line 10\n", KEY + "\n").replace("line 12\n", "line twelve\nline 12b\n"))
        res = w.head("f.py", n=100)
        d = only(res)
        assert isinstance(d, Diff) and "+line twelve" in d.content
        text = render_text(res)
        assert "AKIA" not in text and ' AWS_KEY = "[redacted: AWS access key id]"' in d.content  # the context as it was shown
        repo.write("f.py", LINES.replace("line 10\n", 'AWS_KEY = "AKIAQQQQQQQQQQQQQQQQ"\n').replace("line 12\n", "line twelve\nline 12b\n"))
        res = w.head("f.py", n=100)  # the key itself changed: shown as it is shown, redacted, both times
        assert "AKIA" not in render_text(res)
        assert isinstance(only(res), Unchanged)  # as shown, the line did not change


def test_issue_29_diff_true_over_lines_never_shown_gives_the_lines(make_repo):
    repo, w = _ws(make_repo)
    with w:
        w.head("f.py", n=10)
        repo.write("f.py", LINES.replace("line 5\n", "line five\n"))
        res = w.head("f.py", start=60, n=20, diff=True)
        e = only(res)
        assert isinstance(e, Excerpt) and (e.start_line, e.end_line) == (60, 79) and e.content.startswith("line 60\n")
        assert "no diff can rebuild lines 60-79" in res.notice


def test_issue_29_a_changed_file_read_in_a_new_range_says_so(make_repo):
    repo, w = _ws(make_repo)
    with w:
        w.head("f.py", n=10)
        repo.write("f.py", LINES.replace("line 5\n", "line five\n"))
        res = w.head("f.py", start=60, n=3)
        assert isinstance(only(res), Excerpt)
        assert "f.py changed since shown at turn 1: line 5 as you were shown them differ now (read them again)" in res.notice
        repo.write("f.py", LINES.replace("line 5\n", "line five\n").replace("line 150\n", "line 150!\n"))
        res = w.head("f.py", start=100, n=3)  # changed again, away from anything shown
        assert "f.py changed since shown at turn 2, elsewhere: the lines you were shown are as they were" in res.notice


def test_issue_29_a_full_reread_of_a_changed_file_keeps_what_was_shown_before(make_repo):
    repo, w = _ws(make_repo)
    with w:
        w.head("f.py", n=50)
        w.head("f.py", start=150, n=50)
        repo.write("f.py", LINES.replace("line 100\n", "line hundred\n"))
        w.head("f.py", start=90, n=20)  # the changed part, read whole
        again = only(w.head("f.py", n=50))  # lines 1-50 are still as shown at turn 1
        assert isinstance(again, Unchanged) and again.turns == (1,)
        assert isinstance(only(w.head("f.py", start=150, n=50)), Unchanged)


def test_issue_29_notes_cite_the_turn_that_showed_each_line(make_repo):
    repo, w = _ws(make_repo)
    with w:
        w.head("f.py", n=100)  # turn 1
        repo.write("f.py", LINES.replace("line 5\n", "line 5\nline 5b\n"))
        assert isinstance(only(w.head("f.py", n=100)), Diff)  # turn 2: the diff shows lines 2-9
        note = only(w.head("f.py", start=50, n=10))  # shown at turn 1, carried through the diff
        assert isinstance(note, Unchanged) and note.turns == (1,)
        assert note.tokens == w.content_counts.count("".join(f"line {i}\n" for i in range(49, 59)))  # these lines, not the diff


def test_issue_29_failed_calls_count_as_turns(make_repo):
    repo, w = _ws(make_repo)
    with w:
        w.head("f.py", n=5)  # turn 1
        for bad in (lambda: w.head("nope.py"), lambda: w.head("f.py", n=0), lambda: w.grep("(")):
            try:
                bad()
            except Exception:
                pass
        assert w.turn == 4
        res = w.head("f.py", n=5)
        assert isinstance(only(res), Unchanged) and w.turn == 5 and only(res).turns == (1,)
        repo.write("f.py", LINES.replace("line 2\n", "line two\n"))
        assert "changed since shown at turn 5" in w.head("f.py", n=3).notice  # the note at turn 5 confirmed it


def test_issue_29_hash_and_lines_come_from_one_read(make_repo, monkeypatch):
    """A writer right after each read of a call: what the answers say stays true of the bytes."""
    from session_model import Memory

    from jitctx.repo.policy import Opener

    repo, w = _ws(make_repo, "".join(f"1111 {i}\n" for i in range(1, 51)))
    path = repo.root / "f.py"
    real_read = Opener.read
    versions = iter(["".join(f"2222 {i}\n" for i in range(1, 51))])

    def read_then_write(self, rel, limit):
        got = real_read(self, rel, limit)
        new = next(versions, None) if rel == "f.py" else None
        if new is not None:
            path.write_text(new)  # the file moves on right after the first read
        return got

    monkeypatch.setattr(Opener, "read", read_then_write)
    mem = Memory()
    with w:
        for turn in range(3):
            res = w.head("f.py", n=50)
            mem.take(render_text(res))
            if turn == 0:
                path.write_text("".join(f"1111 {i}\n" for i in range(1, 51)))  # and back, before the next call
            truth = path.read_text().split("\n")[:-1]
            assert mem.check("f.py", 1, 50, truth) == (0, 0) and mem.contradictions == 0
        assert "unchanged" in render_text(res) and not res.stale


def test_issue_29_head_symbol_says_deleted_since_and_names_its_own_clamp(make_repo):
    from jitctx.errors import PathError

    repo = make_repo("code")
    body = "".join(f"    x{i} = {i}\n" for i in range(2100))
    repo.write("long.py", f"def big():\n{body}    return 0\n")
    with Workspace(repo.root) as w:
        res = w.head("long.py", symbol="big")
        e = only(res)
        assert (e.start_line, e.end_line) == (1, 2000)
        assert "big spans 2,102 lines (1-2,102): its first 2,000 are shown" in res.notice and "n=" not in res.notice.split("read on")[0]
        (repo.root / "long.py").unlink()
        try:
            w.head("long.py", symbol="big")
        except PathError as exc:
            assert exc.reason == "not_found" and "deleted since it was shown at turn 1" in exc.message
        else:
            raise AssertionError("no error")


# -- compaction: "still current" judges the placeholder's own content ------------------------


def _run_hint(w, call: str):
    """Run a placeholder's fetch-again call (tool-argument syntax) through the tool surface."""
    from jitctx.tools import dispatch

    name, *words = call.split(" ")
    args = {}
    for word in words:
        k, v = word.split("=", 1)
        args[k] = True if v == "true" else False if v == "false" else int(v) if v.isdigit() else v
    return dispatch(name, args, workspace=w)


def test_issue_29_compaction_judges_each_result_and_fetch_again_returns_the_text(make_repo):
    import json

    from jitctx.window.compact import compact
    from jitctx.window.sources import Message, ToolCall

    repo, w = _ws(make_repo)
    history = [Message("user", "read f.py")]
    with w:

        def call(cid, **args):
            c = ToolCall(cid, "head", json.dumps({"path": "f.py", **args}))
            history.append(Message("assistant", "", (c,)))
            history.append(Message("tool", render_text(w.head("f.py", **args)), tool_call_id=cid))

        call("c1", n=40)  # lines 1-40
        repo.write("f.py", LINES.replace("line 5\n", "line five\n"))
        call("c2", n=40)  # only line 5: the rest is as shown
        call("c3", start=100, n=5)  # untouched lines
        history.append(Message("user", "go on"))
        done = compact(history, 0, keep_recent=0, is_current=w.current)
        verdicts = {c.tool_call_id: c.current for c in done.cleared}
        assert verdicts == {"c1": False, "c2": True, "c3": True}  # c1 holds the old line 5
        text = {c.tool_call_id: done.messages[c.index].content for c in done.cleared}
        assert "changed since: fetch again with head path=f.py n=40 force=true" in text["c1"]
        for c in done.cleared:
            again = _run_hint(w, c.call)
            assert not again.is_error and "content" in again.data["results"][0], again.text  # the text, not a note
        repo.write("f.py", LINES)  # line 5 back as c1 showed it
        assert w.current(ToolCall("c1", "head", '{"path": "f.py", "n": 40}'), history[2].content) is True
        assert w.current(ToolCall("c2", "head", '{"path": "f.py", "n": 40}'), history[4].content) is False


def test_issue_29_context_task_reports_staleness(make_repo, capsys):
    import json

    from jitctx.adapters.cli import main
    from jitctx.window.for_task import context_for_task

    repo = make_repo("basic")
    with Workspace(repo.root) as w:
        w.head("src/app.py", n=5)
        turn = w.turn
        repo.write("src/app.py", (repo.root / "src/app.py").read_text() + "\n# changed\n")
        ctx = context_for_task(w, "make greet shout", budget=3000)
        assert [s["path"] for s in ctx.stale or ()] == ["src/app.py"] and ctx.to_dict()["stale"][0]["change"] == "changed"
        assert "[stale] src/app.py: changed since you read it" in ctx.text
        assert w.turn == turn + 1  # one call, however many reads it made
    assert main(["context", "--task", "make greet shout", "--root", str(repo.root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stale"] == []


def test_issue_29_a_diff_is_only_over_lines_shown(make_repo):
    """Lines held from an older version at the numbers a hunk would cover: no diff ("as shown" would lie)."""
    from session_model import Memory

    repo, w = _ws(make_repo, "a\nb\nc\n")
    mem = Memory()
    with w:
        mem.take(render_text(w.head("f.py", n=40)))  # v1: 3 lines
        v2 = [f"v2 line {i}" for i in range(1, 32)]
        repo.write("f.py", "".join(ln + "\n" for ln in v2))
        mem.take(render_text(w.head("f.py", start=26, n=23)))  # lines 1-3 of v1 are still what it holds up there
        mem.take(render_text(w.head("f.py", start=10, n=35)))
        v3 = [v2[0], "new", *v2[3:]]  # a change at the top, over lines held only from v1
        repo.write("f.py", "".join(ln + "\n" for ln in v3))
        res = w.head("f.py", start=10, n=35, diff=True)
        mem.take(render_text(res))
        assert mem.contradictions == 0 and not isinstance(only(res), Diff)
        assert mem.check("f.py", 10, 30, v3) == (0, 0)
