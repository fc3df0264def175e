"""The first ``symbols`` on a big tree with no index (issue 30 item 6, issue 32).

    python benchmarks/bench_symbols_cold.py [--root DIR] [--reps 1] [NAME...]

Each NAME is looked up by ``jitctx symbols NAME`` as a process, in process
(``JITCTX_SERVER=0``), with an empty cache of its own: the wall time of the
answer, its first hits and its notice. The background build it starts is
stopped and the cache removed after each call. Default names: one definition
of each source tree of the real tree (``realtree.py``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
NAMES = ("cmd_maintenance", "curl_easy_perform", "nfa_regmatch", "clusterCron", "AtomicHashMap", "load_list_of_blocks")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--root", type=Path, default=PROJECT / "benchmarks" / ".data" / "realtree")
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    sys.path.insert(0, str(PROJECT))
    from jitctx.code import build

    for name in args.names or NAMES:
        for _ in range(args.reps):
            cache = tempfile.mkdtemp(prefix="jitctx-symbols-cold-")
            env = {**os.environ, "JITCTX_CACHE_DIR": cache, "JITCTX_SERVER": "0", "PYTHONPATH": str(PROJECT)}
            t = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-c", "from jitctx.client import main; main()", "symbols", name], cwd=args.root, env=env, capture_output=True, text=True, check=False
            )
            wall = time.perf_counter() - t
            lines = proc.stdout.splitlines()
            for index in Path(cache, "index").glob("*.sqlite"):
                build.stop(str(index))
            shutil.rmtree(cache, ignore_errors=True)
            hits = [line for line in lines if not line.startswith("[")]
            note = next((line for line in lines if line.startswith("[")), "")
            print(f"{name}: {wall:.2f} s, exit {proc.returncode}, {len(hits)} hits; first: {hits[0] if hits else '-'}")
            print(f"   {note[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
