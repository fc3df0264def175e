"""Issue 35: a matching file is read whole for grep's context lines and its secrets by one
reader (``engines.scope.read_lines``, cut at its ``CONTEXT_READ``)."""

from __future__ import annotations

from jitctx.primitives.engines import scope
from jitctx.session.workspace import Workspace


def test_issue_35_grep_context_lines_come_from_the_one_reader_and_its_cut(make_repo, monkeypatch):
    repo = make_repo("basic")
    repo.write("ctx.txt", "needle\nafter one\nafter two\n")
    with Workspace(repo.root, record=False) as ws:
        (hit,) = ws.grep("needle", "ctx.txt", mode="content", after=2).results
        assert [c["text"] for c in hit.after] == ["after one", "after two"]
        monkeypatch.setattr(scope, "CONTEXT_READ", len("needle\n"))  # the file is read up to the match's line end
        (hit,) = ws.grep("needle", "ctx.txt", mode="content", after=2).results
        assert hit.after == ()
