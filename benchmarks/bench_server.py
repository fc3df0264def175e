"""Issue 21's figures: the CLI through the root's warm server, on the real tree.

    python benchmarks/bench_server.py [--reps 11] [--tree DIR] [--only NAME ...] [--skip-first]

The real tree is ``benchmarks/realtree.py``'s (see docs/benchmarks.md, "Real
tree"). Every process is what the console script runs (``jitctx.client``) in
an interpreter that imports this checkout as a plain install would
(``common.installed_python``), with a private ``XDG_RUNTIME_DIR`` for the
servers. Three parts:

1. Warm: ``bench_realtree``'s cases through the server (started and its
   listing built before timing), each paired with its reference in the same
   run, interleaved: head/tail ``-n 40`` and a one-folder glob against
   ``python -c pass``; glob ``**/*.py --json`` against ``rg --files -g
   '*.py'``; grep files mode against ``rg --hidden -g '!.git' -l``.
2. First call: the server stopped before each sample; the call (which starts
   the server and answers in its own process) against the same call with
   ``JITCTX_SERVER=0``, interleaved.
3. The server's resident memory on the tree, from ``jitctx serve --status``,
   after the runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_realtree  # noqa: E402
from common import console, env_with_project, installed_python  # noqa: E402

TARGETS = {
    "head -n 40 (counted before)": 1.5,
    "tail -n 40 (counted before)": 1.5,
    "glob '*.py' one folder": 1.5,
    "glob **/*.py --json": 0.5,
    "grep files literal": 1.0,
}
FIRST_CALLS = {
    "head -n 40": ["head", bench_realtree.HEAD_FILE, "-n", "40"],
    "glob '*.py' one folder": ["glob", "*.py", bench_realtree.FOLDER],
    "grep files literal": ["grep", "TODO"],
}


def status(tree: Path, env: dict) -> str:
    proc = subprocess.run([*console(installed_python()), "serve", "--status", "--root", str(tree)], cwd=tree, env=env, capture_output=True, text=True, check=False)
    return proc.stdout


def stop(tree: Path, env: dict) -> None:
    subprocess.run([*console(installed_python()), "serve", "--stop", "--root", str(tree)], cwd=tree, env=env, capture_output=True, check=False)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "no server runs" not in status(tree, env):
        time.sleep(0.02)


def first_calls(tree: Path, reps: int, env: dict) -> list[tuple[str, float, float, float]]:
    rows = []
    for name, argv in FIRST_CALLS.items():
        cmd = [*console(installed_python()), *argv, "--root", str(tree)]
        a_s, b_s, ratios = [], [], []
        for i in range(reps):
            stop(tree, env)
            if i % 2:
                b = bench_realtree._time(cmd, tree, {**env, "JITCTX_SERVER": "1"})
                stop(tree, env)
                a = bench_realtree._time(cmd, tree, {**env, "JITCTX_SERVER": "0"})
            else:
                a = bench_realtree._time(cmd, tree, {**env, "JITCTX_SERVER": "0"})
                b = bench_realtree._time(cmd, tree, {**env, "JITCTX_SERVER": "1"})
            a_s.append(a)
            b_s.append(b)
            ratios.append(b - a)
        rows.append((name, statistics.median(b_s), statistics.median(a_s), statistics.median(ratios)))
    stop(tree, env)
    return rows


def stop_all(runtime: str) -> None:
    """End every server this run started, then remove their folder."""
    import shutil
    import signal

    from jitctx.server.registry import running

    for pid in running(os.path.join(runtime, "jitctx")):
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    shutil.rmtree(runtime, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--tree")
    ap.add_argument("--only", nargs="*", default=[], help="warm cases whose name contains one of these")
    ap.add_argument("--skip-first", action="store_true", help="leave out the first-call part")
    args = ap.parse_args()
    tree = bench_realtree.tree_path(args.tree)
    runtime = tempfile.mkdtemp(prefix="jx-bench-", dir="/tmp")
    os.environ["XDG_RUNTIME_DIR"] = runtime
    env = env_with_project()
    print(f"tree: {tree}  reps: {args.reps}  load: {os.getloadavg()[0]:.2f}")
    only = args.only or list(TARGETS) + ["head -n 40 (first read)", "grep files", "grep content", "grep count", "(rg"]
    try:
        rows = bench_realtree.run(tree, args.reps, only, server=True)
        print("\nwarm server:")
        bench_realtree.report(rows, {}, TARGETS)
        print("\nservers after the warm runs (one per environment: the counted-before cases use a cache of their own):")
        for line in status(tree, env).splitlines():
            print("  " + line)
        if not args.skip_first:
            print("\nfirst call (no server running) vs the same call in process (JITCTX_SERVER=0):")
            print(f"{'call':40} {'first':>9} {'in proc':>9} {'extra':>8}  target")
            for name, first, inproc, extra in first_calls(tree, args.reps, env):
                print(f"{name:40} {first * 1000:7.1f}ms {inproc * 1000:7.1f}ms {extra * 1000:+6.1f}ms  <= +50 ms {'met' if extra <= 0.05 else 'NOT met'}", flush=True)
        print(f"load after: {os.getloadavg()[0]:.2f}")
    finally:
        stop_all(runtime)


if __name__ == "__main__":
    main()
