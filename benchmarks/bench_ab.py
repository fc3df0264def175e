"""Whole-process A/B of two checkouts of jitctx on the same commands (no regression checks).

    python benchmarks/bench_ab.py OLD_CHECKOUT [--runs 9] [--tree synth|realtree|DIR] [--server]

``OLD_CHECKOUT`` is another work tree of this repository (``git worktree add
--detach /tmp/pre <commit>``). Each checkout runs in an interpreter of its own
that imports it as a plain install would (``common.installed_python``), the
console script's ``entry()``; the commands run interleaved (old, new, new,
old, ...) so machine noise hits both alike. Reported: each side's median and
the median of the per-pair ratios new/old. Commands: glob ``**/*.py --json``,
glob ``'*.py'`` of one folder, grep files mode (a rare literal, a common
one), head ``-n 20`` of a file read before, ``--version``. With ``--server`` every call
goes through its checkout's warm server (``JITCTX_SERVER=wait``, a run folder of its
own per side, started and warmed before timing, stopped after): the thin client and
the socket protocol against the other checkout's.
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

from common import PROJECT, console, installed_python  # noqa: E402


def _time(argv: list[str], cwd: Path, env: dict) -> float:
    with tempfile.TemporaryFile() as out:
        t = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL, check=False)
        return time.perf_counter() - t


def commands(tree: Path, synthetic: bool) -> dict[str, list[str]]:
    if synthetic:
        folder, rare, common, head = "pkg00", "RARE", "result", None
    else:
        folder, rare, common, head = "ansible/lib/ansible/modules", "zzqqxxnotfound", "TODO", "curl/lib/url.c"
    if head is None:
        head = subprocess.run(["git", "ls-files", "--", "*.md"], cwd=tree, capture_output=True, text=True, check=True).stdout.split("\n")[0]
    root = ["--root", str(tree)]
    return {
        "glob **/*.py --json": ["glob", "**/*.py", "--json", *root],
        f"glob '*.py' {folder}": ["glob", "*.py", folder, *root],
        f"grep {rare}": ["grep", rare, *root],
        f"grep {common}": ["grep", common, *root],
        f"head {head} -n 20": ["head", head, "-n", "20", *root],
        "--version": ["--version"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", help="the other checkout (a git work tree of this repository)")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--tree", default="synth", help="synth (benchmarks/synth.py's 105k-file repo), realtree, or a directory")
    ap.add_argument("--server", action="store_true", help="every call through its checkout's warm server")
    args = ap.parse_args()
    if args.tree == "synth":
        from synth import synth_repo

        tree, synthetic = synth_repo(), True
    elif args.tree == "realtree":
        from bench_realtree import tree_path

        tree, synthetic = tree_path(None), False
    else:
        tree, synthetic = Path(args.tree), False
    new_py = installed_python(PROJECT)
    old_py = installed_python(Path(args.old), name="venv-installed-old")
    cache = tempfile.mkdtemp(prefix="jitctx-ab-cache-")
    env = {**os.environ, "JITCTX_CACHE_DIR": cache, "JITCTX_SERVER": "0"}  # the in-process path
    envs = {"old": env, "new": env}
    if args.server:
        envs = {side: {**env, "JITCTX_SERVER": "wait", "XDG_RUNTIME_DIR": tempfile.mkdtemp(prefix=f"jx-ab-{side}-", dir="/tmp")} for side in ("old", "new")}
    cmds = commands(tree, synthetic)
    print(f"tree: {tree}  runs: {args.runs}  server: {args.server}  load: {os.getloadavg()[0]:.2f}\n  new: {PROJECT}\n  old: {Path(args.old).resolve()}")
    print(f"{'command':44} {'old':>9} {'new':>9} {'new/old':>8}")
    for name, argv in cmds.items():
        old, new = [*console(old_py, Path(args.old)), *argv], [*console(new_py), *argv]
        for _ in range(3 if args.server else 1):  # the server started, its listing and caches warm
            _time(old, tree, envs["old"])
            _time(new, tree, envs["new"])
        t_old, t_new, ratios = [], [], []
        for i in range(args.runs):
            if i % 2:
                b, a = _time(new, tree, envs["new"]), _time(old, tree, envs["old"])
            else:
                a, b = _time(old, tree, envs["old"]), _time(new, tree, envs["new"])
            t_old.append(a)
            t_new.append(b)
            ratios.append(b / a)
        print(f"{name:44} {statistics.median(t_old) * 1e3:7.1f}ms {statistics.median(t_new) * 1e3:7.1f}ms {statistics.median(ratios):7.2f}x", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    if args.server:
        for side, py, checkout in (("old", old_py, Path(args.old)), ("new", new_py, PROJECT)):
            subprocess.run([*console(py, checkout), "serve", "--stop", "--root", str(tree)], cwd=tree, env=envs[side], capture_output=True, check=False)


if __name__ == "__main__":
    main()
