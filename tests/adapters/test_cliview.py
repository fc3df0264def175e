"""The CLI's view: hints in command-line syntax, paths from the working directory (issue 15)."""

import pytest

from jitctx.adapters.cliview import CliView


@pytest.mark.parametrize(
    ("canonical", "cli"),
    [
        ("297 more lines; read on with head path=text/numbers.txt start=4.", "297 more lines; read on with jitctx head ../../text/numbers.txt --start 4."),
        ("read the end with tail path=src/util/a.py.", "read the end with jitctx tail a.py."),
        ("narrow with path=... or a more specific pattern, or raise limit.", "narrow with PATH or a more specific pattern, or raise --limit."),
        ("next page: offset=200; or narrow with path=... / glob=..., or raise limit.", "next page: --offset 200; or narrow with PATH / --glob GLOB, or raise --limit."),
        ("ignored files were not searched (include_ignored=true widens)", "ignored files were not searched (--include-ignored widens)"),
        ("or pass fixed_strings=true to search for it literally", "or pass --fixed-strings to search for it literally"),
        (
            "cut to 3 of 9 items to fit max_tokens=4000; raise max_tokens, or narrow the request.",
            "cut to 3 of 9 items to fit --max-tokens 4000; raise --max-tokens, or narrow the request.",
        ),
        ("list it with glob pattern='*' path='src'", "list it with jitctx glob '*' .."),
        ("pass backend='python'", "pass --backend python"),
        ("read it with head path=src/util/a.py symbol='Parser.parse'", "read it with jitctx head a.py --symbol Parser.parse"),
        ("find it with symbols query='Parser.' kind=method", "find it with jitctx symbols Parser. --kind method"),
        ("a plain sentence, the limit is 4,096", "a plain sentence, the limit is 4,096"),
        ("limit must be at least 1, got 0", "--limit must be at least 1, got 0"),
        ("pass limit>=1", "pass --limit 1 or more"),
        ("pass n<=2000", "pass -n 2000 or less"),
        ("read it with notes action=read id=3", "read it with jitctx notes read --id 3"),
        ("e.g. notes action=add text='what to remember'", "e.g. jitctx notes add 'what to remember'"),
        ("notes action=list shows each note's id", "jitctx notes list shows each note's id"),
        ("describe the change, e.g. task='retry timeout in the HTTP client'", "describe the change, e.g. --task 'retry timeout in the HTTP client'"),
        ("5 more (locate task='fix the parser' limit=100)", "5 more (jitctx locate --task 'fix the parser' --limit 100)"),
        ("pass a project directory as root=DIR", "pass a project directory as --root DIR"),
        ("the root is empty (root='')", "the root is empty (--root '')"),
        ("pass budget=116 or more, or a shorter task", "pass --budget 116 or more, or a shorter task"),
        ("path 'x' must be a file", "path 'x' must be a file"),
        ("find it with glob pattern='**/nope.py'", "find it with jitctx glob '**/nope.py'"),
    ],
)
def test_issue_15_canonical_hints_become_command_lines(canonical, cli):
    assert CliView("src/util").hint(canonical) == cli


def test_paths_are_shown_from_the_working_directory():
    v = CliView("src/util")
    assert [v.path(p) for p in ("README.md", "src/util/x.py", "src/a.py", "src/util")] == ["../../README.md", "x.py", "../a.py", "."]
    assert CliView("").path("src/a.py") == "src/a.py"


def test_issue_33_calls_in_a_prefix_are_translated_on_its_own_lines_only():
    """A cut marker, a label and the read-next block name calls; file content is left as it is."""
    text = (
        "==> AGENTS.md (instructions) <==\n"
        "run head path=x start=2 to see it\n"  # file content: as it is
        "[… AGENTS.md cut to fit the preload budget: kept lines 1-2 of 9; read on with head path=AGENTS.md start=3]\n"
        "==> src/a.py:1-3 (2 more lines; read them with head path=src/a.py start=4) <==\n"
        "--- read next (not in this window) ---\n"
        "head path=src/a.py symbol=main  # 40 tokens\n"
        "left out: 1 region; 3 more matching files not ranked here (locate task='fix it' limit=100)\n"
        "\n"
        "[Task]\nhead path=y\n"
    )
    assert CliView().calls(text) == (
        "==> AGENTS.md (instructions) <==\n"
        "run head path=x start=2 to see it\n"
        "[… AGENTS.md cut to fit the preload budget: kept lines 1-2 of 9; read on with jitctx head AGENTS.md --start 3]\n"
        "==> src/a.py:1-3 (2 more lines; read them with jitctx head src/a.py --start 4) <==\n"
        "--- read next (not in this window) ---\n"
        "jitctx head src/a.py --symbol main  # 40 tokens\n"
        "left out: 1 region; 3 more matching files not ranked here (jitctx locate --task 'fix it' --limit 100)\n"
        "\n"
        "[Task]\nhead path=y\n"
    )
