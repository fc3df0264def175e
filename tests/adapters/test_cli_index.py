"""Issue 32 item 6: ``jitctx index`` builds in the foreground, ``--status``, ``--stop``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time

import pytest

from jitctx.adapters.cli import main
from jitctx.adapters.progress import Reporter
from jitctx.cache.folders import index_file
from jitctx.code import build

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="posix_spawn, flock")


def _many(make_repo, files: int):
    repo = make_repo("code")
    for i in range(files):
        repo.write(f"pkg/m{i:04}.py", "".join(f"def f{i}_{j}(x):\n    return x + {j}\n\n" for j in range(30)))
    repo.commit("many")
    return repo


def test_issue_32_index_builds_in_the_foreground_then_status_says_current(make_repo, capsys, monkeypatch):
    repo = _many(make_repo, 30)
    monkeypatch.chdir(repo.root)
    assert main(["index"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"index of {repo.root}: ") and " files, " in out
    assert "jitctx index: paths and words: " in err and "jitctx index: definitions: " in err and "(100%)" in err  # plain lines: stderr is no terminal
    assert main(["index", "--status"]) == 0
    assert f"index of {repo.root}: current" in capsys.readouterr().out
    repo.write("pkg/m0001.py", "def changed():\n    return 1\n")
    assert main(["index", "--status", "--json"]) == 1
    st = json.loads(capsys.readouterr().out)
    assert st["built"] and st["behind"] == 1 and st["building"] is None and st["bytes"] > 0
    assert main(["index"]) == 0 and main(["index", "--status"]) == 0


@pytest.mark.slow
def test_issue_32_index_stop_stops_a_background_build(make_repo, capsys, monkeypatch):
    repo = _many(make_repo, 400)
    monkeypatch.chdir(repo.root)
    assert main(["index", "--stop"]) == 1 and "no background build runs" in capsys.readouterr().out
    path = index_file(repo.root)
    assert build.start(str(repo.root), path)
    pid = build.progress(path).pid
    assert main(["index", "--status"]) == 1 and "building in the background" in capsys.readouterr().out
    assert main(["index", "--stop"]) == 0
    assert f"stopped the background build (pid {pid})" in capsys.readouterr().out
    assert build.progress(path) is None  # its lock is free
    left = b"?"
    for _ in range(100):  # its workers went with it (they exit on the signal; init reaps them)
        left = subprocess.run(["pgrep", "-g", str(pid)], capture_output=True).stdout
        if not left:
            break
        time.sleep(0.05)
    assert left == b""
    assert main(["index"]) == 0  # the next build goes on from what it wrote
    capsys.readouterr()


def test_issue_32_progress_is_a_bar_on_a_terminal_and_plain_lines_elsewhere():
    plain = io.StringIO()
    r = Reporter(plain, tty=False)
    for done in range(0, 101, 5):
        r("words", done, 100)
    r("definitions", 0, 10)
    r.close()
    lines = plain.getvalue().splitlines()
    assert lines[0] == "jitctx index: paths and words: 0 of 100 files (0%)" and len(lines) == 12  # each tenth once, and the next phase
    bar = io.StringIO()
    r = Reporter(bar, tty=True)
    r("words", 50, 100)
    r.close()
    assert "paths and words" in bar.getvalue() and "50/100" in bar.getvalue()


def test_help_does_not_import_tqdm():
    code = "import sys\nfrom jitctx.adapters import cli\ntry:\n    cli.main(['index', '--help'])\nexcept SystemExit:\n    pass\nsys.stderr.write(repr('tqdm' in sys.modules))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stderr == "False"
