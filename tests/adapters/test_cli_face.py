"""Issue 35: the CLI package's face hands on only its entry points."""

from __future__ import annotations

import jitctx.adapters.cli as cli


def test_issue_35_the_cli_package_hands_on_only_its_entry_points():
    assert cli.__all__ == ["entry", "main"]
    assert {n for n in vars(cli) if not n.startswith("_") and callable(getattr(cli, n))} == {"entry", "main"}
