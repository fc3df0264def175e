"""Foundation figures (issue 2): glob vs its floor and peers, tail 1 GiB vs 1 MiB, start-up.

    python benchmarks/bench_foundation.py [--runs N]

- glob: ``jitctx glob '**/*.py' --json`` over the synthetic repo (105k files),
  whole process, against its floor (the same interpreter start-up running
  ``git ls-files --cached --others --exclude-standard``, keeping ``*.py`` and
  stat-ing each hit) and against ``rg --files -g '*.py'``. Target: at most
  1.5x the floor, faster than rg.
- the same glob on the same tree under one ``src/`` (reported: the layout
  of most real repositories, where the walk must be split below the top).
- a glob of one folder (``'*.py' pkg00``) against rg on that folder (reported).
- tail: ``Workspace.tail(path, 50)`` in-process on a 1 GiB and a 1 MiB file.
  Target: within 2x.
- head: ``Workspace.head(path, 20)`` in-process on the big repo (reported).
- start-up: ``jitctx --version`` against ``python -c pass``. Target: at most 4x.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from common import env_with_project, fmt_ms, interleaved, med, python  # noqa: E402
from synth import big_file, synth_repo, synth_src_repo  # noqa: E402

FLOOR = r"""
import os, subprocess, sys, json
out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], capture_output=True).stdout
hits = []
for p in out.decode("utf-8", "surrogateescape").split("\0"):
    if p.endswith(".py"):
        try:
            st = os.stat(p)
        except OSError:
            continue
        hits.append((p, st.st_size, st.st_mtime))
hits.sort(key=lambda h: -h[2])
sys.stdout.write(json.dumps(hits[:100]))
"""


def rg_binary() -> str:
    here = Path(sys.executable).parent / "rg"
    return str(here) if here.exists() else (shutil.which("rg") or "rg")


def jitctx_command() -> list[str]:
    """The installed console script when there is one (what users run), else ``python -m jitctx``."""
    script = Path(sys.executable).parent / "jitctx"
    return [str(script)] if script.exists() else [python(), "-m", "jitctx"]


def bench_glob(runs: int, repo: Path | None = None) -> dict:
    repo = repo or synth_repo()
    env = env_with_project()
    cases = {
        "jitctx glob --json": [*jitctx_command(), "glob", "**/*.py", "--json", "--root", str(repo)],
        "floor (ls-files + filter + stat)": [python(), "-c", FLOOR],
        "rg --files -g '*.py'": [rg_binary(), "--files", "-g", "*.py"],
        "rg --files --hidden -g '*.py'": [rg_binary(), "--files", "--hidden", "-g", "*.py"],
        "git ls-files alone": ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    }
    times = interleaved(cases, runs, cwd=repo, env=env)
    return {k: med(v) for k, v in times.items()}


def bench_tail(runs: int) -> dict:
    from jitctx import Workspace

    big = big_file(1024)
    small = big_file(1)
    ws = Workspace(big.parent)
    out = {}
    for p in (big, small):
        ws.tail(p.name, 50)  # warm the page cache and the tokenizer
    samples: dict[str, list[float]] = {big.name: [], small.name: []}
    for _ in range(runs):
        for p in (big, small):
            t = time.perf_counter()
            ws.tail(p.name, 50)
            samples[p.name].append(time.perf_counter() - t)
    for name, xs in samples.items():
        out[name] = statistics.median(xs)
    return out


def bench_head(runs: int) -> float:
    """``Workspace.head(path, 20)`` in-process on a tracked file of the big repo (its
    ``ignored`` verdict must not read the 100k-entry index each call)."""
    import subprocess

    from jitctx import Workspace

    repo = synth_repo()
    path = subprocess.run(["git", "ls-files", "--", "*.md"], cwd=repo, capture_output=True, text=True, check=True).stdout.split("\n")[0]
    ws = Workspace(repo)
    ws.head(path, 20)
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        ws.head(path, 20)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def bench_startup(runs: int) -> dict:
    script = Path(sys.executable).parent / "jitctx"
    env = env_with_project()
    if script.exists():
        jit = [str(script), "--version"]
    else:  # what the console script does
        jit = [python(), "-c", "import sys; sys.argv[1:] = ['--version']; from jitctx.adapters.cli import entry; entry()"]
    cases = {"jitctx --version": jit, "python -c pass": [python(), "-c", "pass"]}
    times = interleaved(cases, runs, env=env, warmup=2)
    return {k: med(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()

    g = bench_glob(args.runs)
    floor = g["floor (ls-files + filter + stat)"]
    print("glob '**/*.py' on the synthetic repo (median of", args.runs, "whole-process runs)")
    for k, v in g.items():
        print(f"  {k:36s} {fmt_ms(v):>10s}  {v / floor:5.2f}x floor")
    jit, rg = g["jitctx glob --json"], g["rg --files -g '*.py'"]
    print(f"  -> jitctx / floor = {jit / floor:.2f} (target <= 1.5); jitctx / rg = {jit / rg:.2f} (target < 1)")

    g = bench_glob(args.runs, synth_src_repo())
    jit, rg = g["jitctx glob --json"], g["rg --files -g '*.py'"]
    print(f"same tree under one src/: jitctx {fmt_ms(jit)}, rg {fmt_ms(rg)} -> jitctx / rg = {jit / rg:.2f} (reported)")

    repo = synth_repo()
    scoped = interleaved(
        {
            "jitctx": [*jitctx_command(), "glob", "*.py", "pkg00", "--json", "--root", str(repo)],
            "rg": [rg_binary(), "--files", "-g", "*.py", "pkg00"],
        },
        args.runs,
        cwd=repo,
        env=env_with_project(),
    )
    jit, rg = med(scoped["jitctx"]), med(scoped["rg"])
    print(f"glob '*.py' pkg00 (one folder of 30): jitctx {fmt_ms(jit)}, rg {fmt_ms(rg)} (reported; jitctx pays Python start-up and git's index read)")

    t = bench_tail(max(args.runs, 20))
    (big, tb), (small, ts) = list(t.items())
    print(f"tail -n 50 in-process: {big} {fmt_ms(tb)}, {small} {fmt_ms(ts)} -> ratio {tb / ts:.2f} (target <= 2)")

    h = bench_head(max(args.runs, 20))
    print(f"head -n 20 in-process on the big repo: {fmt_ms(h)} (reported; 18 ms while each call read the index)")

    s = bench_startup(max(args.runs, 20))
    print(
        f"start-up: jitctx --version {fmt_ms(s['jitctx --version'])}, python -c pass {fmt_ms(s['python -c pass'])}"
        f" -> ratio {s['jitctx --version'] / s['python -c pass']:.2f} (target <= 4)"
    )


if __name__ == "__main__":
    main()
