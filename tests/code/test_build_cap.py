"""At most ``build.RUNNING_MAX`` background builds of one cache folder at once (issue 30's
spirit: a call on each of several large trees within a minute started a builder, and its
workers, for every one of them). The others start at a later call, and the answer says why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_build import big_repo, wait_built

from jitctx import Workspace
from jitctx.cache.folders import index_file
from jitctx.code import build

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="posix_spawn, /proc")

# stands in for a builder of another index: its command line is a builder's, it does nothing
FAKE_BUILDER = "# jitctx.code.build import _main (a stand-in)\nimport time\ntime.sleep(120)\n"


def _fake_builders(folder, n: int) -> list[subprocess.Popen]:
    folder.mkdir(parents=True, exist_ok=True)
    procs = []
    for i in range(n):
        p = subprocess.Popen([sys.executable, "-c", FAKE_BUILDER])
        deadline = time.monotonic() + 30
        while not build._is_builder(p.pid) and time.monotonic() < deadline:  # its command line is set once it runs
            time.sleep(0.01)
        (folder / f"other{i}.sqlite.build.json").write_text(json.dumps({"pid": p.pid, "done": 0, "total": 0, "updated": 0}))
        procs.append(p)
    return procs


def test_a_third_build_waits_for_a_later_call_and_says_so(make_repo):
    repo = big_repo(make_repo, files=300)
    path = index_file(repo.root)
    fakes = _fake_builders(Path(path).parent, build.RUNNING_MAX)
    try:
        assert build.others_running(path) == build.RUNNING_MAX
        with Workspace(repo.root) as ws:
            res = ws.locate("retry the handshake when it times out")
        assert res.results and res.results[0].path == "pkg/retry.py"  # the quick pass answers meanwhile
        assert f"{build.RUNNING_MAX} other indexes are being built (at most {build.RUNNING_MAX} at once)" in res.notice
        assert build.progress(path) is None  # and no builder of its own started
        gone = fakes.pop()
        gone.kill()
        gone.wait()
        assert build.others_running(path) == build.RUNNING_MAX - 1
        with Workspace(repo.root) as ws:
            again = ws.locate("retry the handshake when it times out")
        assert "being built in the background" in again.notice
        wait_built(repo.root)
    finally:
        for p in fakes:
            p.kill()
        for p in fakes:
            p.wait()
        build.stop(path)


def test_a_status_file_of_a_builder_that_ended_does_not_count(tmp_path):
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / "gone.sqlite.build.json").write_text(json.dumps({"pid": 2**22 + 7}))  # no such process
    (folder / "junk.sqlite.build.json").write_text("not json")
    (folder / "self.sqlite.build.json").write_text(json.dumps({"pid": os.getpid()}))  # not a builder
    assert build.others_running(str(folder / "mine.sqlite")) == 0
