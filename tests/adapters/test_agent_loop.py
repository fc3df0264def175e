"""examples/agent_loop.py: the scripted loop runs end to end on a fixture repo."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from jitctx.session.workspace import Workspace

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


@pytest.fixture(scope="module")
def loop():
    spec = importlib.util.spec_from_file_location("agent_loop", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_loop_finds_and_reads_a_file(loop, repo):
    repo.write("src/newest.py", "import os\nprint(os.getcwd())\n", mtime=1_800_000_000)
    msgs = loop.run("explore", loop.ScriptedModel(), Workspace(repo.root, max_tokens=4000))
    roles = [m["role"] for m in msgs]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    glob_call = msgs[1]["tool_calls"][0]["function"]
    assert glob_call == {"name": "glob", "arguments": json.dumps({"pattern": "**/*.py", "limit": 5})}
    lines = msgs[2]["content"].splitlines()
    assert lines[0].startswith("[instructions] src/util/AGENTS.md")  # just in time, before the refs
    assert lines[1].startswith("src/newest.py  ")  # newest first
    assert msgs[3]["tool_calls"][0]["function"]["arguments"] == json.dumps({"path": "src/newest.py", "n": 20})
    assert msgs[4]["content"].splitlines()[1:] == ["     1\timport os", "     2\tprint(os.getcwd())"]
    assert msgs[5]["content"].startswith("Read src/newest.py (lines 1-2 of 2, ")


def test_loop_with_no_match_answers(loop, repo):
    msgs = loop.run("explore", loop.ScriptedModel("**/*.rs"), Workspace(repo.root))
    assert msgs[-1] == {"role": "assistant", "content": "No files match **/*.rs."}


def test_loop_tool_error_reaches_the_model(loop, repo):
    class BadModel(loop.ScriptedModel):
        def __call__(self, messages, tools):
            self.turn += 1
            if self.turn == 1:
                return loop._call("c1", "head", {"path": "../outside.txt"})
            return {"role": "assistant", "content": messages[-1]["content"]}

    msgs = loop.run("read", BadModel(), Workspace(repo.root))
    assert msgs[2]["role"] == "tool" and msgs[2]["content"].startswith("error (path_error): path '../outside.txt' is outside the root")


def test_loop_stops_after_max_turns(loop, repo):
    class Forever(loop.ScriptedModel):
        def __call__(self, messages, tools):
            return loop._call("x", "glob", {"pattern": "Makefile"})

    msgs = loop.run("spin", Forever(), Workspace(repo.root), max_turns=3)
    assert msgs[-1] == {"role": "assistant", "content": "Stopped after 3 turns."}
    assert sum(m["role"] == "tool" for m in msgs) == 3


def test_example_main_prints_transcript(loop, repo, capsys):
    assert loop.main(["--root", str(repo.root)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--- user\nFind a Python file")
    assert "--- tool\n" in out


def test_example_main_bad_root_is_a_message_not_a_traceback(loop, tmp_path, capsys):
    missing = tmp_path / "nope"
    assert loop.main(["--root", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("agent_loop: error: ") and str(missing) in err
    assert "\n  hint: " in err and "Traceback" not in err


def test_example_script_bad_root_exits_2(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(EXAMPLE.parents[1])}
    proc = subprocess.run([sys.executable, str(EXAMPLE), "--root", str(tmp_path / "nope")], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("agent_loop: error: ") and "Traceback" not in proc.stderr
