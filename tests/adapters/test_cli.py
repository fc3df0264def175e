"""The CLI: exit codes 0/1/2, text and --json, messages on stderr, quiet pipes."""

import json
import os
import subprocess
import sys

import pytest

from jitctx.adapters.cli import main

ROOT_OF_PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_glob_text_and_exit_0(repo, capsys):
    code, out, err = run(capsys, "glob", "*.py", "src/util", "--sort", "path", "--root", str(repo.root))
    assert code == 0 and err == ""
    assert [line.split("  ")[0] for line in out.splitlines()] == [
        "[instructions] src/util/AGENTS.md applies to files under src/util/; read it with jitctx head src/util/AGENTS.md",
        "src/util/__init__.py",
        "src/util/helpers.py",
    ]


def test_glob_json_is_one_envelope(repo, capsys):
    code, out, _ = run(capsys, "glob", "**/*.md", "--json", "--sort", "path", "--root", str(repo.root))
    d = json.loads(out)
    assert code == 0 and d["tool"] == "glob" and d["total"] == 4
    assert [r["path"] for r in d["results"]] == ["AGENTS.md", "README.md", "docs/guide.md", "src/util/AGENTS.md"]
    assert d["git_head"] == repo.head()


def test_nothing_found_exits_1(repo, capsys):
    code, out, err = run(capsys, "glob", "**/*.rs", "--root", str(repo.root))
    assert code == 1 and "no files match" in out and err == ""


def test_head_and_tail(repo, capsys):
    code, out, _ = run(capsys, "head", "text/numbers.txt", "-n", "2", "--root", str(repo.root))
    assert code == 0
    assert out.splitlines()[1:3] == ["     1\tline 1", "     2\tline 2"]
    code, out, _ = run(capsys, "tail", "text/numbers.txt", "-n", "1", "--json", "--root", str(repo.root))
    assert json.loads(out)["results"][0]["content"] == "line 300\n"


def test_head_past_the_end_exits_1(repo, capsys):
    code, out, _ = run(capsys, "head", "text/numbers.txt", "--start", "999", "--root", str(repo.root))
    assert code == 1 and "past the end" in out


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["glob", "  "], "pattern is empty"),
        (["glob", "*", "missing-dir"], "'missing-dir' does not exist"),
        (["glob", "*", "README.md"], "'README.md' is a file, not a directory"),
        (["head", "src"], "'src' is a directory, not a file"),
        (["head", "../../etc/passwd"], "outside the root"),
        (["head", ".git/config"], "inside git's internals"),
        (["head", "data/blob.bin"], "'data/blob.bin' is a binary file"),
        (["head", ".env"], "'.env' is on the deny list"),
        (["tail", "README.md", "-n", "0"], "n must be at least 1, got 0"),
        (["head", "README.md", "-n", "-5"], "n must be at least 1, got -5"),
        (["glob", "*", "--limit", "0"], "limit must be at least 1"),
    ],
)
def test_errors_exit_2_with_a_message_on_stderr(repo, capsys, argv, needle):
    code, out, err = run(capsys, *argv, "--root", str(repo.root))
    assert code == 2 and out == ""
    assert err.startswith("jitctx: error: ") and needle in err
    assert "Traceback" not in err
    assert "secret-value" not in err


def test_non_integer_count_is_an_argparse_error(repo, capsys):
    with pytest.raises(SystemExit) as info:
        main(["head", "README.md", "-n", "ten", "--root", str(repo.root)])
    assert info.value.code == 2
    assert "invalid int value: 'ten'" in capsys.readouterr().err


def test_bad_root_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "glob", "*", "--root", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err


def test_no_command_prints_help_and_exits_2(capsys):
    code, _, err = run(capsys)
    assert code == 2 and "usage: jitctx" in err


def _cli(*argv, **kw):
    env = {**os.environ, "PYTHONPATH": ROOT_OF_PROJECT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "jitctx", *argv], capture_output=True, text=True, env=env, **kw)


def test_closed_pipe_exits_quietly(repo):
    for i in range(3000):
        repo.write(f"many/f{i}.txt", "x\n")
    env = {**os.environ, "PYTHONPATH": ROOT_OF_PROJECT}
    proc = subprocess.run(
        f"{sys.executable} -m jitctx glob '**/*.txt' --limit 3000 --root {repo.root} | head -n 1",
        shell=True,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.stdout.count("\n") == 1
    assert proc.stderr == ""


def test_version_and_module_entry_point():
    proc = _cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("jitctx ")


def test_relative_paths_are_taken_from_the_working_directory_inside_the_root(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo.root / "src" / "util")
    code, out, _ = run(capsys, "head", "helpers.py", "-n", "1")
    assert code == 0 and out.startswith("[instructions] AGENTS.md applies to files under ./:\n# util notes")
    assert "==> helpers.py " in out  # printed from the working directory too (issue 15)
    code, out, _ = run(capsys, "glob", "*.py", "--sort", "path")
    listed = [line.split("  ")[0] for line in out.splitlines() if not line.startswith("[instructions]")]
    assert listed == ["__init__.py", "helpers.py"]
    code, out, _ = run(capsys, "head", "../app.py", "-n", "1", "--json")
    assert json.loads(out)["results"][0]["path"] == "src/app.py"


def test_relative_paths_are_taken_from_the_root_when_outside_it(repo, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "head", "src/app.py", "-n", "1", "--root", str(repo.root))
    assert code == 0 and out.startswith("==> src/app.py ")


def test_preload_chain_runs_to_the_working_directory(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo.root / "src" / "util")
    code, out, _ = run(capsys, "preload")
    assert code == 0
    labels = [line for line in out.splitlines() if line.startswith("==> ")]
    assert labels == [
        "==> AGENTS.md (instructions for the whole repository) <==",
        "==> src/util/AGENTS.md (instructions for src/util/) <==",
        "==> README.md (project README) <==",
    ]
    code, out, _ = run(capsys, "preload", "--cwd", "..")  # from the working directory: src/
    assert "src/util/AGENTS.md" not in out


def test_path_after_options_is_taken_as_the_path(repo, capsys):
    code, out, _ = run(capsys, "glob", "*.py", "--sort", "path", "src/util", "--root", str(repo.root))
    assert code == 0 and "src/app.py" not in out and "src/util/helpers.py" in out
    with pytest.raises(SystemExit):
        main(["glob", "*.py", "--sort", "path", "a", "b", "--root", str(repo.root)])
    assert "unrecognized arguments: a b" in capsys.readouterr().err


def test_file_names_that_are_not_utf8(repo):
    name = b"caf\xe9.txt"
    (repo.root / os.fsdecode(name)).write_bytes(b"hello\n")
    proc = subprocess.run(
        [sys.executable, "-m", "jitctx", "glob", "caf*", "--json", "--root", str(repo.root)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": ROOT_OF_PROJECT, "LANG": "C.UTF-8"},
    )
    assert proc.returncode == 0
    d = json.loads(proc.stdout.decode("utf-8"))  # valid UTF-8 JSON
    assert [r["path"] for r in d["results"]] == ["caf\udce9.txt"]
    text = subprocess.run(
        [sys.executable, "-m", "jitctx", "glob", "caf*", "--root", str(repo.root)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": ROOT_OF_PROJECT, "LANG": "C.UTF-8"},
    )
    assert text.returncode == 0 and text.stdout.startswith(name)  # the name's own bytes


def test_glob_leaves_no_git_process_behind_when_it_fails_after_starting_the_listing(repo, capsys, monkeypatch):
    from jitctx.repo.universe import Repo

    started = []
    real = Repo.prefetch

    def spy(self, **kw):
        real(self, **kw)
        started.append(self._listing.procs)

    monkeypatch.setattr(Repo, "prefetch", spy)
    code, out, err = run(capsys, "glob", "*.py", "--limit", "0", "--root", str(repo.root))
    assert code == 2 and "limit" in err
    assert started and all(p.returncode is not None for procs in started for p in procs)
    code, out, _ = run(capsys, "glob", "**/*.py", "--sort", "path", "--root", str(repo.root))
    assert code == 0 and "src/app.py" in out and "src/util/helpers.py" in out
    assert len(started) == 2 and all(p.returncode is not None for procs in started for p in procs)


def test_the_console_entry_flushes_everything_before_it_exits(repo):
    for i in range(1500):
        repo.write(f"many/f{i}.txt", "x\n")
    proc = _cli("glob", "**/*.txt", "--json", "--limit", "2000", "--sort", "path", "--root", str(repo.root))
    assert proc.returncode == 0 and proc.stderr == ""
    assert len(json.loads(proc.stdout)["results"]) == 1500 + 7  # the fixture's own .txt files too
    proc = _cli("glob", "   ", "--root", str(repo.root))
    assert proc.returncode == 2 and "pattern" in proc.stderr and proc.stdout == ""
    proc = _cli("glob")
    assert proc.returncode == 2 and "usage: jitctx glob" in proc.stderr
    proc = _cli("--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: jitctx")


def test_errors_name_the_path_as_typed_not_an_absolute_one(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo.root)
    code, _, err = run(capsys, "head", "src", "-n", "1")
    assert code == 2 and "path 'src' is a directory" in err and str(repo.root) not in err
    code, _, err = run(capsys, "tail", "nope.txt")
    assert code == 2 and "path 'nope.txt' does not exist" in err
    monkeypatch.chdir(repo.root / "src")
    code, _, err = run(capsys, "head", "nope.py")
    assert code == 2 and "path 'nope.py' does not exist" in err  # as typed, from the working directory (issue 15)
    code, out, _ = run(capsys, "glob", "*.py", "util", "--sort", "path")
    assert code == 0 and "\nutil/helpers.py  " in out


def test_issue_15_mcp_without_the_extra_says_how_to_install_it(repo, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "anyio", None)  # import anyio -> ImportError, as without the extra
    monkeypatch.delitem(sys.modules, "jitctx.adapters.mcp", raising=False)
    code, out, err = run(capsys, "mcp", "--root", str(repo.root))
    assert code == 2 and out == ""
    assert "needs the MCP SDK, which is not installed (no module 'anyio')" in err
    assert "pip install '.[mcp]'" in err and "internal error" not in err and "Traceback" not in err


def test_issue_15_paths_printed_from_a_subfolder_paste_back_into_the_same_shell(repo, capsys, monkeypatch):
    """Text output and its hints print paths from the working directory (as rg and git grep do);
    a repo-relative path (what --json prints) is accepted back too."""
    monkeypatch.chdir(repo.root / "src" / "util")
    code, out, _ = run(capsys, "grep", "def greet", "..", "--mode", "files")
    assert code == 0 and "../util/helpers.py" not in out and "\nhelpers.py  " in "\n" + out
    code, out, _ = run(capsys, "head", "../app.py", "-n", "1")
    assert "==> ../app.py " in out and "read on with jitctx head ../app.py --start 2." in out
    hint = out.rsplit("read on with ", 1)[1].rstrip(".\n").split()
    assert main(hint[1:]) == 0  # the hint runs as printed
    capsys.readouterr()
    code, out, _ = run(capsys, "head", "src/app.py", "-n", "1", "--json")
    assert code == 0 and json.loads(out)["results"][0]["path"] == "src/app.py"


def test_issue_15_hints_on_the_cli_are_flags_and_for_tools_arguments(repo, capsys, monkeypatch):
    from jitctx import Workspace
    from jitctx.adapters.tools import dispatch

    monkeypatch.chdir(repo.root)
    code, out, _ = run(capsys, "head", "text/numbers.txt", "-n", "3")
    assert out.rstrip().endswith("read on with jitctx head text/numbers.txt --start 4.")
    code, out, _ = run(capsys, "glob", "*.nothing")
    assert "--include-ignored widens" in out and "include_ignored=true" not in out
    code, _, err = run(capsys, "grep", "(", "--mode", "content")
    assert code == 2 and "--fixed-strings" in err and "fixed_strings=true" not in err
    tool = dispatch("head", {"path": "text/numbers.txt", "n": 3}, workspace=Workspace(repo.root))
    assert tool.text.rstrip().endswith("read on with head path=text/numbers.txt start=4.")


def test_issue_15_cli_max_tokens_caps_the_printed_text_from_a_subfolder(repo, capsys, monkeypatch):
    from jitctx.tokens.tokenizer import get_tokenizer

    monkeypatch.chdir(repo.root / "src" / "util")
    for argv in (("head", "../../text/numbers.txt", "-n", "2000"), ("tail", "../../text/numbers.txt"), ("grep", "line", "../../text", "--mode", "content")):
        code, out, _ = run(capsys, *argv, "--max-tokens", "200")
        assert code == 0 and get_tokenizer().count(out.rstrip("\n")) <= 200, argv


def test_issue_15_cli_context_flags_imply_content_mode(repo, capsys):
    code, out, _ = run(capsys, "grep", "def greet", "-C", "1", "--root", str(repo.root))
    assert code == 0 and "src/util/helpers.py\n1 [greet]:" in out and "\n2-" in out
    code, out, _ = run(capsys, "grep", "def greet", "-C", "1", "--mode", "files", "--root", str(repo.root))
    assert "src/util/helpers.py:1:" not in out and "1 match" in out


def test_issue_15_json_errors_are_one_json_object_on_stdout(repo, capsys):
    code, out, err = run(capsys, "head", "nope.txt", "--json", "--root", str(repo.root))
    assert code == 2 and "jitctx: error: path 'nope.txt' does not exist" in err
    data = json.loads(out)
    assert data["error"]["type"] == "path_error" and data["error"]["reason"] == "not_found" and "nope.txt" in data["error"]["message"]
    with pytest.raises(SystemExit) as info:
        main(["grep", "x", "--mode", "bogus", "--json", "--root", str(repo.root)])
    out, err = capsys.readouterr()
    assert info.value.code == 2 and json.loads(out)["error"]["type"] == "usage_error" and "bogus" in err
    code, out, err = run(capsys, "head", "nope.txt", "--root", str(repo.root))
    assert code == 2 and out == ""  # text mode: stderr only, as before


def test_issue_15_help_describes_each_subcommand_and_lists_no_dead_options(capsys):
    from jitctx.adapters.cli.commands import COMMANDS as _COMMANDS

    for name in _COMMANDS:
        with pytest.raises(SystemExit):
            main([name, "--help"])
        out = capsys.readouterr().out
        assert ("Prints " in out or "Serves " in out) and "exit status:" in out, name
        assert ("examples:" in out) or name == "mcp", name
        if name in ("tools", "mcp", "session"):
            assert "--json" not in out, name
    with pytest.raises(SystemExit):
        main(["tools", "--help"])
    assert "--root" not in capsys.readouterr().out


def test_issue_15_preload_says_what_it_cost_and_why_it_is_empty(repo, capsys, tmp_path):
    code, out, err = run(capsys, "preload", "--root", str(repo.root))
    assert code == 0 and out and err.startswith("jitctx: prefix: ") and " tokens of a 8,000-token budget" in err
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "x.txt").write_text("x\n")
    code, out, err = run(capsys, "preload", "--root", str(tmp_path / "bare"))
    assert code == 1 and out == "" and "nothing to preload: no instruction file (AGENTS.override.md, AGENTS.md" in err


def test_issue_15_preload_readme_cut_names_the_budget_that_cut_it(repo, capsys):
    repo.write("README.md", "".join(f"readme line {i} with a few words\n" for i in range(800)))
    code, out, _ = run(capsys, "preload", "--root", str(repo.root), "--budget", "200", "--json")
    notes = [f.get("note") for f in json.loads(out)["files"] if f["path"] == "README.md"]
    assert notes and notes[0].startswith("README.md cut to fit the preload budget")  # not "the README cap", no stray space


def test_a_subcommand_builds_only_its_own_parser(capsys):
    from jitctx.adapters.cli import parser

    sub = parser.build_parser("head")._subparsers._group_actions[0]  # type: ignore[union-attr]
    assert list(sub.choices) == ["head"]
    assert set(parser.build_parser()._subparsers._group_actions[0].choices) == set(parser.SUBCOMMANDS)  # type: ignore[union-attr]
    with pytest.raises(SystemExit):
        main(["bogus"])  # not a subcommand: the whole parser names every choice
    err = capsys.readouterr().err
    assert "'head'" in err and "'mcp'" in err
