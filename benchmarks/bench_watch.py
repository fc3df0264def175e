"""Watcher figures: checkout -> stale latency, memory and idle CPU on the large repo.

    JITCTX_BENCH_DATA=/work/main/benchmarks/.data python benchmarks/bench_watch.py [--tries 20] [--idle 10]

1. Latency: in a small temporary repo whose two branches differ in AGENTS.md,
   the time from ``git checkout <other>`` returning to the ``stale`` event
   arriving from ``Workspace.watch`` (native observer, then polling).
2. Memory and idle CPU: a child process serves the 105k-file synthetic repo
   (read-only) with 200 delivered files in 200 directories; RSS is compared
   without and with the watcher running, and CPU time is summed over an idle
   period (native and polling, each in its own child).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

ENV = {
    **os.environ,
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "b@example.com",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True)


def make_repo(base: Path) -> Path:
    root = base / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "AGENTS.md").write_text("# rules on main\n")
    for i in range(50):
        (root / f"f{i}.py").write_text(f"x = {i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "main")
    git(root, "checkout", "-q", "-b", "other")
    (root / "AGENTS.md").write_text("# rules on other, quite different\n")
    git(root, "commit", "-q", "-am", "other")
    git(root, "checkout", "-q", "main")
    return root


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, round(p / 100 * len(xs) + 0.5) - 1))
    return xs[k]


def latency(tries: int, poll: bool) -> dict:
    from jitctx.session.workspace import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        root = make_repo(Path(tmp))
        ws = Workspace(root)
        ws.ledger.record("AGENTS.md", (root / "AGENTS.md").resolve(), "preload", ws.head_sha())
        q: queue.Queue = queue.Queue()
        events = ws.watch(poll=poll, refresh=False)

        def drain():
            for ev in events:
                q.put((time.monotonic(), ev))

        t = threading.Thread(target=drain, daemon=True)
        t.start()
        kind = ws.events.watcher.observer_kind
        out = []
        rng = random.Random(5)
        branches = ["other", "main"]
        time.sleep(0.3)
        for i in range(tries):
            subprocess.run(["git", "checkout", "-q", branches[i % 2]], cwd=root, env=ENV, check=True)
            returned = time.monotonic()
            while True:
                at, ev = q.get(timeout=10)
                if ev["event"] == "stale":
                    break
            out.append((at - returned) * 1000)
            time.sleep(0.3 + rng.random() * 0.5)  # quiet first; random so tries do not lock onto the polling phase
        ws.close()
        t.join(5)
    return {
        "observer": kind,
        "tries": tries,
        "median_ms": round(statistics.median(out), 1),
        "p95_ms": round(pct(out, 95), 1),
        "min_ms": round(min(out), 1),
        "max_ms": round(max(out), 1),
    }


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def child(mode: str, idle: float) -> None:
    """Runs in a subprocess: RSS without / with the watcher, then idle CPU."""
    import gc

    from synth import synth_repo

    from jitctx.session.workspace import Workspace

    root = synth_repo()
    ws = Workspace(root)
    picked = []
    for d in sorted(p for p in (root / "pkg00").iterdir() if p.is_dir())[:20]:
        for part in sorted(p for p in d.iterdir() if p.is_dir())[:10]:
            f = next(iter(sorted(p for p in part.iterdir() if p.is_file())))
            picked.append(f)
    for f in picked:
        ws.ledger.record(f.relative_to(root).as_posix(), f.resolve(), "read", ws.head_sha())
    ws.stale()
    gc.collect()
    time.sleep(0.5)
    before = _rss_kib()
    w = ws.start_watching(poll=(mode == "polling"))
    time.sleep(2.0)  # the first polling snapshots are taken, inotify watches armed
    gc.collect()
    after = _rss_kib()
    watched = len(w.watched())
    c0, t0 = time.process_time(), time.monotonic()
    time.sleep(idle)
    cpu = time.process_time() - c0
    wall = time.monotonic() - t0
    ws.close()
    print(
        json.dumps(
            {
                "observer": w.observer_kind,
                "delivered_files": len(picked),
                "watched_dirs": watched,
                "rss_without_mib": round(before / 1024, 1),
                "rss_with_mib": round(after / 1024, 1),
                "delta_mib": round((after - before) / 1024, 2),
                "idle_s": round(wall, 1),
                "idle_cpu_ms": round(cpu * 1000, 1),
                "idle_cpu_pct": round(100 * cpu / wall, 3),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tries", type=int, default=20)
    ap.add_argument("--idle", type=float, default=10.0)
    ap.add_argument("--child", choices=("native", "polling"))
    args = ap.parse_args()
    if args.child:
        child(args.child, args.idle)
        return
    print(f"git {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.split()[-1]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    for poll in (False, True):
        print("latency", json.dumps(latency(args.tries, poll)))
    for mode in ("native", "polling"):
        proc = subprocess.run([sys.executable, __file__, "--child", mode, "--idle", str(args.idle)], capture_output=True, text=True)
        if proc.returncode:
            print(proc.stderr, file=sys.stderr)
        print("memory+idle", proc.stdout.strip())


if __name__ == "__main__":
    main()
