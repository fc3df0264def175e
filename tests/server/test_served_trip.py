"""Issue 35: the modules a CLI glob crosses through a warm server, counted as it runs.

``served_trip.py`` traces the second of two served ``jitctx glob '**/*.py'``
calls in the server (``sys.setprofile``): the jitctx modules whose functions
run. The server's own part (taking the call, the caller's streams, its
Workspaces and kept listing) is counted apart from the CLI glob's trip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_support import subprocess_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the server's socket checks (SO_PEERCRED) are Linux's")

SERVER = {  # the server's part: the call taken, the caller's streams, the Workspace and listing it hands over
    "server/serve.py",
    "server/answer.py",
    "server/request.py",
    "server/sessions.py",
    "server/kept_listing.py",
    "session/tree_watch.py",
    "call.py",
    "cancel.py",
}
TRIP = {  # the CLI glob's own trip (docs/benchmarks.md, issue 35)
    "adapters/cli/run.py",
    "adapters/cli/parser.py",
    "adapters/cli/commands.py",
    "adapters/cliview.py",
    "session/workspace.py",
    "query.py",
    "primitives/find.py",
    "repo/universe.py",
    "repo/policy.py",
    "repo/ignore.py",
    "text/globs.py",
    "text/redact.py",
    "preload/formats.py",
    "preload/nested.py",
    "preload/instructions.py",
    "refs.py",
    "render.py",
    "text/hints.py",
}


def test_issue_35_a_served_glob_runs_these_modules_and_answers_the_same(make_repo):
    repo = make_repo("basic")
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("served_trip.py")), str(repo.root), "glob", "**/*.py"],
        env=subprocess_env(),
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    got = json.loads(proc.stdout)
    assert got["same"] and got["calls"] == 2
    ran = set(got["modules"])
    assert ran - SERVER == TRIP  # not text/lines (show_name is render's) nor session/events (no watch: no streams made)
    assert ran & SERVER == SERVER
