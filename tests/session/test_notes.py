"""Notes kept outside the window and the tree (issue 22): add, list, read, delete; stale
when the paths or symbols a note is about changed since it was written."""

from __future__ import annotations

import json
import os

import pytest

from jitctx import Workspace
from jitctx.errors import PathError, QueryError
from jitctx.session.notes import NoteStore, notes_file


@pytest.fixture
def ws(make_repo):
    repo = make_repo("code")
    with Workspace(repo.root) as w:
        yield repo, w


def test_issue_22_notes_are_kept_outside_the_tree_and_survive_the_workspace(ws):
    repo, w = ws
    res = w.notes("add", "Rational.__add__ normalises signs; keep it", paths=["rational.py"], symbols=["Rational.__add__"])
    note = res.results[0]
    assert note.id == 1 and "kept outside the tree" in res.notice
    path = notes_file(str(repo.root))
    assert os.path.exists(path) and not path.startswith(str(repo.root))
    assert not any(p.name.endswith(".json") for p in repo.root.rglob("*") if ".git" not in p.parts)
    with Workspace(repo.root) as other:  # another session, another process: the same notes
        listed = other.notes("list")
        assert [n.id for n in listed.results] == [1] and listed.results[0].text.startswith("Rational.__add__")
        assert not listed.results[0].stale and "1 note;" in listed.notice
    w.notes("add", "second")
    assert [n.id for n in w.notes("list").results] == [1, 2]
    gone = w.notes("delete", id=1)
    assert "deleted" in gone.notice and [n.id for n in w.notes("list").results] == [2]
    assert w.notes("add", "third").results[0].id == 3  # ids are never reused


def test_issue_22_a_note_is_stale_when_its_path_or_symbol_changed(ws):
    repo, w = ws
    w.notes("add", "about the file", paths=["list.c"])
    w.notes("add", "about a method", symbols=["Rational.__add__"])
    w.notes("add", "about nothing")
    assert not any(n.stale for n in w.notes("list").results)
    repo.write("list.c", (repo.root / "list.c").read_text() + "\n/* edited */\n")
    src = (repo.root / "rational.py").read_text()
    repo.write("rational.py", src + "\n\ndef unrelated():\n    return 0\n")  # the file changed, the method did not
    listed = {n.id: n for n in w.notes("list").results}
    assert listed[1].stale == ({"path": "list.c", "change": "changed"},)
    assert listed[2].stale == () and listed[3].stale == ()
    assert "1 stale" in w.notes("list").notice
    body = src.split("def __add__", 1)
    repo.write("rational.py", body[0] + "def __add__" + body[1].replace("return", "return  # now\n        return", 1))
    read = w.notes("read", id=2)
    assert read.results[0].stale == ({"symbol": "Rational.__add__", "change": "changed"},)
    (repo.root / "list.c").unlink()
    assert w.notes("read", id=1).results[0].stale == ({"path": "list.c", "change": "deleted"},)
    # a checkout that restores the bytes: current again
    repo.git("checkout", "--", "list.c")
    assert w.notes("read", id=1).results[0].stale == ()


def test_issue_22_notes_refuse_bad_input_naming_it(ws):
    repo, w = ws
    for call, field in [
        (lambda: w.notes("add", ""), "text"),
        (lambda: w.notes("add", "x" * 20_001), "text"),
        (lambda: w.notes("read"), "id"),
        (lambda: w.notes("read", id=99), "id"),
        (lambda: w.notes("delete", id=99), "id"),
        (lambda: w.notes("list", paths=["list.c"]), "paths"),
        (lambda: w.notes("add", "x", symbols=["no_such_definition"]), "symbols"),
        (lambda: w.notes("shout"), "action"),
    ]:
        with pytest.raises(QueryError) as info:
            call()
        assert info.value.fields.get("field") == field, (field, info.value)
    with pytest.raises(PathError):
        w.notes("add", "x", paths=["missing.c"])
    assert w.notes("list").results == []  # nothing half-written


def test_issue_22_a_denied_file_is_no_tie(make_repo):
    repo = make_repo("basic")
    with Workspace(repo.root) as w, pytest.raises(PathError) as info:
        w.notes("add", "the secret", paths=[".env"])
    assert info.value.reason == "denied"


def test_issue_22_an_unreadable_notes_file_is_kept_aside_not_lost(ws):
    repo, w = ws
    w.notes("add", "one")
    path = notes_file(str(repo.root))
    with open(path, "w") as f:
        f.write("{not json")
    res = w.notes("list")
    assert res.results == [] and "kept as" in res.notice
    aside = [p for p in os.listdir(os.path.dirname(path)) if ".unreadable-" in p]
    from pathlib import Path

    assert aside and (Path(path).parent / aside[0]).read_text() == "{not json"
    w.notes("add", "two")
    assert json.loads(Path(path).read_text())["notes"][0]["text"] == "two"


def test_issue_22_two_writers_lose_nothing(ws):
    import threading

    repo, w = ws
    stores = [NoteStore(str(repo.root)) for _ in range(4)]
    threads = [threading.Thread(target=lambda s=s, k=k: [s.add(f"note {k}-{i}") for i in range(25)]) for k, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    notes = NoteStore(str(repo.root)).list()
    assert len(notes) == 100 and len({n.id for n in notes}) == 100


def test_issue_22_notes_on_every_surface(ws, capsys):
    from jitctx.adapters.cli import main
    from jitctx.tools import dispatch

    repo, w = ws
    out = dispatch("notes", {"action": "add", "text": "tool note", "paths": ["tree.go"]}, workspace=w)
    assert not out.is_error and out.data["results"][0]["paths"] == ["tree.go"]
    bad = dispatch("notes", {"action": "read"}, workspace=w)
    assert bad.is_error and bad.data["error"]["field"] == "id"
    assert main(["notes", "add", "cli note", "--path", "list.c", "--root", str(repo.root)]) == 0
    assert "#2" in capsys.readouterr().out
    assert main(["notes", "list", "--root", str(repo.root), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [n["text"] for n in listed["results"]] == ["tool note", "cli note"]
    assert main(["notes", "read", "--id", "9", "--root", str(repo.root)]) == 2
    assert "no note with id 9" in capsys.readouterr().err


def test_issue_22_context_brings_back_the_notes_a_task_matches(ws):
    from jitctx import context_for_task

    repo, w = ws
    w.notes("add", "Rational addition must keep the sign on the numerator", symbols=["Rational.__add__"])
    w.notes("add", "the Go tree walks depth first")
    ctx = context_for_task(w, "fix Rational addition of negative numbers", budget=6000)
    assert "[Notes]" in ctx.text and "keep the sign on the numerator" in ctx.text
    assert "depth first" not in ctx.text  # a note the task does not match stays out


def test_issue_22_current_tells_compaction_whether_a_read_is_current(ws):
    from jitctx.window.sources import ToolCall

    repo, w = ws
    w.head("list.c", n=5)
    call = ToolCall("c1", "head", json.dumps({"path": "list.c", "n": 5}))
    assert w.current(call) is True
    repo.write("list.c", "changed\n")
    assert w.current(call) is False
    assert w.current(ToolCall("c2", "grep", json.dumps({"pattern": "x"}))) is None
    assert w.current(ToolCall("c3", "head", json.dumps({"path": "tree.go"}))) is None  # never read here
