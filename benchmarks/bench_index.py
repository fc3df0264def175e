"""The code index built from nothing on a big tree: its two parts, CPU, store (issue 32).

    python benchmarks/realtree.py MIRROR...        # once: the real ~100k-file tree
    python benchmarks/bench_index.py [--root DIR] [--against CHECKOUT] [--cache DIR]

Runs the builder's own body (``build.build_here``, not niced) in a fresh process
with an empty cache, this checkout's, then (``--against``, e.g. ``git archive
COMMIT | tar -x -C /tmp/old``) another's on the same tree, one after the other.
Reports per build: the wall time at which the words part ended (what ``locate``
needs: the lexical build) and the whole build's, the CPU of the builder and of
its worker processes (the machine is shared: CPU beside wall), the store's size
on disk (after a checkpoint) and per table (SQLite's ``dbstat``), rows, and
definitions. The load average before and after. No network.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("JITCTX_BENCH_DATA") or PROJECT / "benchmarks" / ".data")

_BUILD = """
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
from jitctx.code.build import build_here
from jitctx.cache.folders import index_file
import inspect
root = sys.argv[2]
path = index_file(root)
marks = {}
t = time.perf_counter()
def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(me.ru_utime + me.ru_stime, 1), round(kids.ru_utime + kids.ru_stime, 1)
def progress(phase, done, total):
    if phase + "_started" not in marks:
        marks[phase + "_started"] = time.perf_counter() - t
        marks[phase + "_cpu_at_start"] = cpu()  # the previous part's workers are reaped by then
    marks[phase + "_ended"] = time.perf_counter() - t
kw = {"progress": progress} if "progress" in inspect.signature(build_here).parameters else {}
code = build_here(root, path, nice=False, **kw)
wall = time.perf_counter() - t
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"exit": code, "path": path, "wall": wall, "marks": marks, "cpu_builder": me.ru_utime + me.ru_stime, "cpu_workers": kids.ru_utime + kids.ru_stime}))
"""


def _store(path: str) -> dict:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        tables = {name: round(size / 1e6, 1) for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()}
        files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        definitions = conn.execute("SELECT count(*) FROM definitions").fetchone()[0]
    finally:
        conn.close()
    size = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    return {"mb": round(size / 1e6, 1), "files": files, "definitions": definitions, "tables": tables}


def build(checkout: Path, root: Path, cache: Path) -> dict:
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "JITCTX_CACHE_DIR": str(cache), "JITCTX_SERVER": "0"}
    load = os.getloadavg()
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _BUILD, str(checkout), str(root)], env=env, capture_output=True, text=True, check=False)
    got = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {"error": proc.stderr[-800:]}
    got.update(checkout=str(checkout), process_wall=time.perf_counter() - t, load_before=load, load_after=os.getloadavg())
    if "path" in got:
        got["store"] = _store(got["path"])
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DATA / "realtree")
    ap.add_argument("--against", type=Path, help="another checkout, built after this one on the same tree")
    ap.add_argument("--cache", type=Path, default=DATA / "bench-index-cache")
    args = ap.parse_args()
    root = args.root.resolve()
    report = {"root": str(root), "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "builds": []}
    for checkout in [PROJECT, *([args.against] if args.against else [])]:
        b = build(checkout.resolve(), root, args.cache)
        report["builds"].append(b)
        marks = b.get("marks", {})
        words = marks.get("words_ended")
        print(
            f"{checkout}: exit {b.get('exit')}, words part ended {words:.1f} s, " if words else f"{checkout}: exit {b.get('exit')}, ",
            end="",
        )
        print(
            f"whole build {b.get('wall', 0):.1f} s; CPU builder {b.get('cpu_builder', 0):.1f} s + workers {b.get('cpu_workers', 0):.1f} s; load {b['load_before'][0]:.1f} -> {b['load_after'][0]:.1f}"
        )
        at_switch = marks.get("definitions_cpu_at_start")  # the CPU of the words part (and the listing)
        if at_switch:
            print(f"  words part CPU: builder {at_switch[0]:.1f} s + workers {at_switch[1]:.1f} s")
        print(f"  store: {json.dumps(b.get('store'))}")
    report["ended"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "bench-index.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
