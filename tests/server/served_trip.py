"""The jitctx modules whose functions run in the server during one served call.

    python tests/server/served_trip.py ROOT [ARGV ...]     (default: glob '**/*.py')

Runs a warm server of ``ROOT`` in this process (on a thread, with a private
run folder), sends it the call twice from a client process (``python -m
jitctx``, ``JITCTX_SERVER=wait``), the first to warm it up and start its kept
listing, waits for that listing, and traces the second with
``sys.setprofile`` on the thread that answers it: every Python function of
the jitctx package entered, by module. Prints one JSON object: ``modules``
(repo-relative file names in the order first entered), ``same`` (whether both
served answers and the same call with ``--no-server`` wrote the same bytes).
Issue 35's count of the modules a CLI glob crosses (docs/benchmarks.md);
``test_served_trip.py`` pins it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path


def trace(root: Path, argv: list[str]) -> dict:
    import jitctx
    from jitctx.server import serve

    package = str(Path(jitctx.__file__).resolve().parent) + os.sep
    entered: dict[str, None] = {}
    tracing = threading.Event()
    plain = serve.Server._answer

    def profile(frame, event, arg):
        name = frame.f_code.co_filename
        if event == "call" and name.startswith(package):
            entered.setdefault(name[len(package) :], None)

    def answer(self, call):
        if not tracing.is_set():
            return plain(self, call)
        sys.setprofile(profile)
        try:
            return plain(self, call)
        finally:
            sys.setprofile(None)

    serve.Server._answer = answer  # type: ignore[method-assign]
    run_dir = tempfile.mkdtemp(prefix="jx-", dir="/tmp")  # a socket path holds ~100 bytes
    env = {**os.environ, "JITCTX_SERVER": "wait", "XDG_RUNTIME_DIR": run_dir}
    env.pop("JITCTX_SESSION", None)
    os.environ.update(env)  # the server's fingerprint is the client's
    server = serve.Server(str(root.resolve()), idle=120)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    command = [sys.executable, "-m", "jitctx", *argv]
    try:
        first = subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=120)
        if server.live is not None:
            server.live.wait(60.0)
        tracing.set()
        second = subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=120)
        tracing.clear()
        alone = subprocess.run([*command, "--no-server"], cwd=root, env=env, capture_output=True, timeout=120)
    finally:
        server.stop(builder=True, why="traced")
        thread.join(60.0)
        shutil.rmtree(run_dir, ignore_errors=True)
    same = first.stdout == second.stdout == alone.stdout and first.stderr == second.stderr == alone.stderr
    return {"modules": list(entered), "same": same, "calls": server.calls}


if __name__ == "__main__":
    print(json.dumps(trace(Path(sys.argv[1]), sys.argv[2:] or ["glob", "**/*.py"])))
