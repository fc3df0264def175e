"""Issue 35: the CLI takes one explicit object for a call (``jitctx.call.Caller``):
its streams, working directory, width, and a server's Workspaces. Nothing
reaches it through a module global, a process-wide stream or an exception."""

import io
import json
import sys

import pytest

from jitctx.adapters import cli
from jitctx.adapters.cli.run import call
from jitctx.call import Caller


def _caller(**kw) -> Caller:
    return Caller(io.StringIO(), io.StringIO(), **kw)


def test_issue_35_output_goes_to_the_callers_streams_not_the_processs(repo, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the process's own directory is not the caller's
    caller = _caller(cwd=str(repo.root / "src" / "util"))
    code = call(["glob", "*.py", "--sort", "path"], caller)
    assert code == 0
    listed = [line.split("  ")[0] for line in caller.out.getvalue().splitlines() if not line.startswith("[instructions]")]
    assert listed == ["__init__.py", "helpers.py"]  # found from the caller's directory, printed from it
    assert capsys.readouterr() == ("", "")


def test_issue_35_errors_and_usage_go_to_the_callers_err_at_its_width(repo, capsys):
    caller = _caller(cwd=str(repo.root), columns=40)
    assert call(["head", "nope.py", "--json"], caller) == 2
    assert "jitctx: error:" in caller.err.getvalue() and json.loads(caller.out.getvalue())["error"]["type"]
    narrow = _caller(cwd=str(repo.root), columns=40)
    wide = _caller(cwd=str(repo.root), columns=200)
    assert call(["grep", "x", "--mode", "nope"], narrow) == 2
    assert call(["grep", "x", "--mode", "nope"], wide) == 2
    usage = narrow.err.getvalue()
    assert usage.startswith("usage: jitctx grep") and "invalid choice" in usage
    assert len(usage.splitlines()) > len(wide.err.getvalue().splitlines())  # wrapped at the caller's width
    assert capsys.readouterr() == ("", "")


def test_issue_35_a_call_for_another_root_is_handed_back_with_nothing_written(repo, make_repo, capsys):
    other = make_repo("code")
    made: list[bool] = []
    caller = _caller(cwd=str(other.root), serves=str(repo.root), workspace=made.append)
    assert call(["glob", "*.py"], caller) == 2
    assert caller.elsewhere == str(other.root.resolve())
    assert made == [] and caller.out.getvalue() == caller.err.getvalue() == ""
    # a bad root is reported where a call in process reports it, not handed back
    bad = _caller(cwd=str(repo.root), serves=str(repo.root), workspace=made.append)
    assert call(["glob", "*.py", "--root", str(repo.root / "missing")], bad) == 2
    assert bad.elsewhere is None and "does not exist" in bad.err.getvalue()
    assert capsys.readouterr() == ("", "")


def test_issue_35_the_server_swaps_no_process_stream_and_sets_no_global():
    from jitctx.repo import universe as repo
    from jitctx.server import request as calls
    from jitctx.server import serve as server

    assert not hasattr(repo, "CALLER_CWD") and not hasattr(cli, "_CALLER") and not hasattr(cli, "Elsewhere")
    assert not hasattr(calls, "Switch") and not hasattr(server.Server, "_install_streams")


@pytest.mark.parametrize("argv", [["--version"], ["glob", "--help"]])
def test_issue_35_help_and_version_go_to_the_callers_out(argv, capsys):
    caller = _caller()
    assert call(argv, caller) == 0
    assert caller.out.getvalue().startswith(("jitctx ", "usage: jitctx glob")) and capsys.readouterr() == ("", "")
    assert sys.stdout is not caller.out
