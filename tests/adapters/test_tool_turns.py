"""Issue 29 item 11: a tool call that dispatch refuses (unknown tool, bad arguments) is still
one of the caller's calls, so "turn N" stays the caller's Nth call."""

from __future__ import annotations

from jitctx import Workspace
from jitctx.adapters.tools import dispatch


def test_issue_29_a_refused_tool_call_advances_the_turn(repo):
    with Workspace(repo.root) as ws:
        first = dispatch("head", {"path": "README.md", "n": 5}, workspace=ws)
        assert not first.is_error and ws.turn == 1
        assert dispatch("head", {"path": "README.md", "bogus": 1}, workspace=ws).is_error
        assert dispatch("no_such_tool", {}, workspace=ws).is_error
        assert dispatch("head", '{"path": ', workspace=ws).is_error  # not JSON
        assert ws.turn == 4
        again = dispatch("head", {"path": "README.md", "n": 5}, workspace=ws)
        assert ws.turn == 5 and "unchanged since shown at turn 1" in again.text
