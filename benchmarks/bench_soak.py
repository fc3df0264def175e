"""Issue 30's soak: many mixed CLI calls through warm servers, run as a harness runs them.

    python benchmarks/bench_soak.py [--calls 2000] [--files 1500] [--seed 30] [--every 50]

Three synthetic git repositories (``--files`` modules each, and a branch per
repository on which a fifth of them differ) under a private folder of
``benchmarks/.data/soak``, with a private run folder and cache. Every call is
the console script (``jitctx.client``, ``common.installed_python``) run with
``subprocess.run(capture_output=True)``'s pipes read to their end, through the
root's server (``JITCTX_SERVER=wait``), a random subcommand on a random root;
every ``--every`` calls one root switches branch (``git checkout``), so calls
meet index builds, refreshes and listing changes. Reported:

- wall time, calls per second, exit codes;
- hangs: a call whose process or pipes outlive 60 s (it is killed), and the
  largest gap between a call's process ending and its pipes ending (a caller
  reading to end-of-file waits that long; over 1 s counts as held);
- peak server memory (``VmHWM`` of each server, sampled every 100 calls);
- processes left: jitctx processes of the three roots when the calls end, and
  after ``jitctx serve --stop`` of each root (0 expected).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from common import console, installed_python  # noqa: E402

from jitctx import procs  # noqa: E402

HANG = 60.0
WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega retry handshake parse token".split()


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00"}
    subprocess.run(["git", "-c", "user.name=soak", "-c", "user.email=soak@example.com", *args], cwd=root, env=env, check=True, capture_output=True)


def make_repo(root: Path, files: int, seed: int) -> None:
    rng = random.Random(seed)
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text(f"# soak {seed}\n\nA synthetic repository.\n")
    (root / "AGENTS.md").write_text("# notes\n\nRun the tests.\n")
    for i in range(files):
        d = root / f"pkg{i % 20}"
        d.mkdir(exist_ok=True)
        body = "".join(f"def f{i}_{j}(x):\n    '''{' '.join(rng.sample(WORDS, 4))}.'''\n    return x + {j}\n\n" for j in range(6))
        (d / f"m{i:05}.py").write_text(body)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "other")
    for i in rng.sample(range(files), files // 5):
        (root / f"pkg{i % 20}" / f"m{i:05}.py").write_text(f"def other_{i}(y):\n    '''{' '.join(rng.sample(WORDS, 5))}.'''\n    return y * {i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "other")
    git(root, "checkout", "-q", "main")


def calls_for(rng: random.Random, files: int) -> list[str]:
    i = rng.randrange(files)
    path = f"pkg{i % 20}/m{i:05}.py"
    word = rng.choice(WORDS)
    return rng.choice(
        [
            ["glob", "**/*.py", "--limit", "20"],
            ["glob", "*.md"],
            ["grep", word, "--limit", "20"],
            ["grep", f"def f{i}_", "--mode", "content"],
            ["head", path, "-n", "20"],
            ["tail", path, "-n", "5"],
            ["outline", path],
            ["symbols", f"f{i}_1"],
            ["locate", "--task", f"where is the {word} {rng.choice(WORDS)} handled"],
            ["notes", "list"],
            ["preload"],
            ["context", "--task", f"fix {word}", "--budget", "3000"],
            ["tools", "--format", "anthropic"],
        ]
    )


def call(argv: list[str], cwd: Path, env: dict) -> tuple[int | None, float, float]:
    """(exit code or None when it hung, seconds, gap between the process's end and its pipes')."""
    started = time.monotonic()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ended: list[float] = []

    def drain(f) -> None:
        f.read()
        ended.append(time.monotonic())

    readers = [threading.Thread(target=drain, args=(f,), daemon=True) for f in (p.stdout, p.stderr)]
    for r in readers:
        r.start()
    exited = None
    while time.monotonic() - started < HANG:
        if os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
            exited = time.monotonic()
            break
        time.sleep(0.002)
    for r in readers:
        r.join(max(0.0, HANG - (time.monotonic() - started)))
    hung = exited is None or any(r.is_alive() for r in readers)
    if hung:
        p.kill()
    code = p.wait()
    for f in (p.stdout, p.stderr):
        f.close()  # type: ignore[union-attr]
    return (None if hung else code), time.monotonic() - started, (max(ended) - exited) if not hung and exited else float("inf")


def ours(roots: list[Path]) -> list[procs.Proc]:
    names = {str(r) for r in roots}
    found = procs.find()
    mine = {p.pid for p in found if p.root is not None and os.path.realpath(p.root) in names}
    return [p for p in found if p.pid in mine or p.parent in mine]


def peak_mib(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--files", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--every", type=int, default=50, help="calls between two checkouts")
    args = ap.parse_args()

    data = Path(os.environ.get("JITCTX_BENCH_DATA") or HERE / ".data") / "soak"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    roots = [(data / f"root{k}").resolve() for k in range(3)]
    for k, root in enumerate(roots):
        make_repo(root, args.files, args.seed + k)
    run_dir = tempfile.mkdtemp(prefix="jx-soak-", dir="/tmp")
    py = installed_python()
    env = {**os.environ, "JITCTX_SERVER": "wait", "XDG_RUNTIME_DIR": run_dir, "JITCTX_CACHE_DIR": str(data / "cache"), "HOME": str(data / "home")}
    (data / "home").mkdir()
    for key in [k for k in env if k.startswith("GIT_") or k in ("JITCTX_ROOT", "JITCTX_SESSION")]:
        env.pop(key)
    jitctx = console(py)
    rng = random.Random(args.seed)
    codes: dict[str, int] = {}
    hangs: list[str] = []
    gaps: list[float] = []
    seconds: list[float] = []
    peak = 0.0
    branch = {str(r): "main" for r in roots}
    checkouts = 0
    started = time.monotonic()
    for n in range(args.calls):
        if n and n % args.every == 0:
            root = rng.choice(roots)
            branch[str(root)] = "other" if branch[str(root)] == "main" else "main"
            git(root, "checkout", "-q", branch[str(root)])
            checkouts += 1
        root = rng.choice(roots)
        argv = calls_for(rng, args.files)
        code, took, gap = call([*jitctx, *argv], root, env)
        seconds.append(took)
        if code is None:
            hangs.append(" ".join(argv))
        else:
            codes[str(code)] = codes.get(str(code), 0) + 1
            gaps.append(gap)
        if n % 100 == 99:
            for p in ours(roots):
                if p.role == "server":
                    peak = max(peak, peak_mib(p.pid) or 0.0)
    wall = time.monotonic() - started
    for p in ours(roots):
        if p.role == "server":
            peak = max(peak, peak_mib(p.pid) or 0.0)
    running = ours(roots)
    for root in roots:
        subprocess.run([*jitctx, "serve", "--stop", "--root", str(root)], cwd=root, env=env, capture_output=True, check=False)
    deadline = time.monotonic() + 15
    while ours(roots) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = ours(roots)
    shutil.rmtree(run_dir, ignore_errors=True)
    seconds.sort()
    gaps.sort()
    report = {
        "calls": args.calls,
        "roots": 3,
        "files_per_root": args.files,
        "checkouts": checkouts,
        "wall_s": round(wall, 1),
        "calls_per_s": round(args.calls / wall, 1),
        "median_call_ms": round(1000 * seconds[len(seconds) // 2], 1),
        "p99_call_ms": round(1000 * seconds[int(len(seconds) * 0.99)], 1),
        "exit_codes": codes,
        "hangs": len(hangs),
        "hung_calls": hangs[:10],
        "max_gap_ms": round(1000 * gaps[-1], 1) if gaps else None,
        "gaps_over_1s": sum(g > 1.0 for g in gaps),
        "peak_server_mib": round(peak, 1),
        "running_at_end": sorted(f"{p.role} {p.pid}" for p in running),
        "left_after_stop": sorted(f"{p.role} {p.pid} {p.root}" for p in left),
    }
    print(json.dumps(report, indent=2))
    procs.stop([p.pid for p in left], grace=2.0)


if __name__ == "__main__":
    main()
