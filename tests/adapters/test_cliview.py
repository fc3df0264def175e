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
            "cut to 3 of 9 items to fit max_tokens=4000; raise max_tokens, or narrow the request (offset/limit/path).",
            "cut to 3 of 9 items to fit --max-tokens 4000; raise --max-tokens, or narrow the request (--offset/--limit/PATH).",
        ),
        ("list it with glob pattern='*' path='src'", "list it with jitctx glob '*' .."),
        ("pass backend='python'", "pass --backend python"),
        ("a plain sentence, the limit is 4,096", "a plain sentence, the limit is 4,096"),
    ],
)
def test_issue_15_canonical_hints_become_command_lines(canonical, cli):
    assert CliView("src/util").hint(canonical) == cli


def test_paths_are_shown_from_the_working_directory():
    v = CliView("src/util")
    assert [v.path(p) for p in ("README.md", "src/util/x.py", "src/a.py", "src/util")] == ["../../README.md", "x.py", "../a.py", "."]
    assert CliView("").path("src/a.py") == "src/a.py"
