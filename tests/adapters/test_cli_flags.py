"""A flag a subcommand takes works, one it does not take is refused (issue 33 item 3, DESIGN 11):
exit codes as documented, usage errors with the subcommand's own usage."""

from __future__ import annotations

import json

import pytest

from jitctx.adapters.cli import main
from jitctx.adapters.cli.parser import build_parser


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv,refused",
    [
        (["tools", "--root", "/nonexistent"], "--root"),
        (["tools", "--json"], "--json"),
        (["session", "new", "--root", "/x"], "--root"),
        (["session", "new", "--json"], "--json"),
        (["mcp", "--json"], "--json"),
    ],
)
def test_issue_33_a_flag_a_subcommand_does_not_use_is_refused(capsys, argv, refused):
    code, out, err = run(capsys, *argv)
    assert code == 2 and f"unrecognized arguments: {refused}" in err
    assert err.startswith(f"usage: jitctx {argv[0]} ")  # the subcommand's usage, not the top level's


def test_issue_33_every_subcommand_that_reads_a_repository_takes_root_and_json():
    subs = next(a for a in build_parser()._subparsers._group_actions).choices  # type: ignore[union-attr]
    for name in ("glob", "grep", "head", "tail", "outline", "symbols", "locate", "notes", "preload", "context", "watch"):
        options = subs[name]._option_string_actions
        assert "--root" in options and "--json" in options, name
    assert "--root" in subs["mcp"]._option_string_actions  # reads a repository; its stdout is the protocol: no --json
    for name in ("tools", "session"):  # read no repository
        assert "--root" not in subs[name]._option_string_actions and "--json" not in subs[name]._option_string_actions


def test_issue_33_a_bad_argument_prints_the_subcommands_usage(repo, capsys):
    code, _, err = run(capsys, "glob", "*", "--bogus", "--root", str(repo.root))
    assert code == 2 and err.startswith("usage: jitctx glob ") and "jitctx glob: error: unrecognized arguments: --bogus" in err
    code, out, _ = run(capsys, "grep", "x", "--bogus", "--json", "--root", str(repo.root))
    assert code == 2 and json.loads(out)["error"]["hint"] == "see jitctx grep --help"


def test_issue_33_locate_without_task_names_the_option(repo, capsys):
    code, _, err = run(capsys, "locate", "--root", str(repo.root))
    assert code == 2 and "the following arguments are required: --task" in err and "None" not in err
    assert err.startswith("usage: jitctx locate ")


def test_issue_33_watch_json_makes_its_error_a_json_object(repo, capsys):
    code, out, err = run(capsys, "watch", "--timeout", "-1", "--json", "--root", str(repo.root))
    assert code == 2 and json.loads(out)["error"]["timeout"] == -1


def test_issue_33_notes_delete_exits_0_and_ids_are_never_reused(repo, capsys):
    root = str(repo.root)
    for text in ("one", "two"):
        assert run(capsys, "notes", "add", text, "--root", root)[0] == 0
    code, out, err = run(capsys, "notes", "delete", "--id", "2", "--root", root)
    assert code == 0 and "note #2 deleted" in out and err == ""
    code, out, _ = run(capsys, "notes", "add", "three", "--root", root)
    assert code == 0 and out.startswith("#3 ")  # not #2 again
    code, out, _ = run(capsys, "notes", "delete", "--id", "2", "--root", root)
    assert code == 2
    code, out, _ = run(capsys, "notes", "delete", "--id", "3", "--json", "--root", root)
    assert code == 0 and [n["id"] for n in json.loads(out)["results"]] == [3]  # what it removed
    assert run(capsys, "notes", "add", "four", "--root", root)[1].startswith("#4 ")


def test_issue_33_notes_usage_lists_the_actions(capsys):
    code, _, err = run(capsys, "notes", "shout")
    assert code == 2 and "invalid choice: 'shout'" in err and "{add,list,read,delete}" in err


def test_issue_33_serve_refuses_an_unknown_argument_with_its_usage(capsys):
    from jitctx.server.serve import main as serve_main

    assert serve_main(["serve", "--status", "--bogus"]) == 2
    assert capsys.readouterr().err.startswith("usage: jitctx serve ")
