"""Real-tree figures (issue 16): jitctx against rg and the interpreter, whole process.

    python benchmarks/bench_realtree.py [--reps 7] [--tree DIR] [--only NAME ...] [--skip-parity]

The tree is ``benchmarks/.data/realtree`` (``--tree`` or
``JITCTX_REALTREE`` to point elsewhere); when it is missing it is built
with ``realtree.py`` from the mirrors named in ``JITCTX_REALTREE_MIRRORS``
(the recipe: docs/benchmarks.md, "Real tree").

Each case pairs a jitctx command (what the console script runs, in the
interpreter of ``common.installed_python``: this checkout, compiled, as a
plain ``pip install`` would give it; an editable install's finder costs
~20 ms a process) with a reference command. Within one repetition every case runs
both, back to back, the order alternating between repetitions, so machine
noise hits both alike; output goes to a file (rg treats ``/dev/null``
specially). Reported: each side's median wall time and the median of the
per-repetition ratios, against the issue's targets.

- grep, files mode (the default), vs ``rg --hidden -g '!.git' -l -e PAT``:
  a common literal (``TODO``), a regex (``def [a-z_]+token``) and a pattern
  found nowhere (``zzqqxxnotfound``);
- grep ``--mode content --limit 100`` vs ``rg --hidden -g '!.git' -n -e PAT``
  (rg prints every matching line; it has no whole-search limit: ``-m`` is per
  file, and a pipe into ``head`` would stop it early while jitctx still
  counts every match for its ``total``);
- grep ``--mode count`` (files by match count, most first; first page of 100)
  vs ``rg --hidden -g '!.git' --count -e PAT`` (every file's count);
- glob ``'**/*.py' --json`` (size and mtime of each hit, newest first) vs
  ``rg --files -g '*.py'`` (and ``--hidden -g '!.git'``, as the issue measured);
- head and tail (``-n 40``) of a file whose excerpt was counted before (the
  count cache on disk) vs ``python -c pass``; and the same of a file never
  read before (cache emptied each time: the first read, which loads the
  tokenizer);
- a glob of one folder (``'*.py' ansible/lib/ansible/modules``) vs
  ``python -c pass`` (and rg on that folder).

Then the matching files of the three patterns are compared with
``git grep -I -l --untracked`` (differences listed), and a fresh interpreter
checks that a counted head does not import tiktoken.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))

from common import console, env_with_project, installed_python  # noqa: E402

DATA = Path(os.environ.get("JITCTX_BENCH_DATA") or HERE / ".data")
PY = sys.executable  # builds the tree, runs git grep; the timed processes run ``installed_python()``
FOLDER = "ansible/lib/ansible/modules"
HEAD_FILE = "curl/lib/url.c"  # any text file will do; these are in the recipe's tree
TAIL_FILE = "vim/src/eval.c"
PATTERNS = [("literal", "TODO", "-F"), ("regex", "def [a-z_]+token", "-E"), ("no match", "zzqqxxnotfound", "-F")]
TARGETS = {
    "grep files literal": 1.25,
    "grep files regex": 1.25,
    "grep files no match": 1.5,
    "grep content literal --limit 100": 1.25,
    "grep count literal": 1.25,  # the issue names no figure for count mode: files mode's
    "glob **/*.py --json": 1.0,
    "head -n 40 (counted before)": 4.0,
    "tail -n 40 (counted before)": 4.0,
    "glob '*.py' one folder": 3.0,
}


def rg_binary() -> str:
    here = Path(sys.executable).parent / "rg"
    return str(here) if here.exists() else (shutil.which("rg") or sys.exit("rg not found"))


def jitctx_command() -> list[str]:
    """What the console script does, in an interpreter that imports this checkout as
    a plain install would (no editable-install finder: ``common.installed_python``)."""
    return console(installed_python())


def tree_path(arg: str | None) -> Path:
    tree = Path(arg or os.environ.get("JITCTX_REALTREE") or DATA / "realtree")
    if not (tree / ".git").exists():
        mirrors = os.environ.get("JITCTX_REALTREE_MIRRORS")
        if not mirrors:
            sys.exit(f"no real tree at {tree}: build it with benchmarks/realtree.py (docs/benchmarks.md, 'Real tree') or set JITCTX_REALTREE_MIRRORS")
        subprocess.run([PY, str(HERE / "realtree.py"), "--dest", str(tree), *mirrors.split()], check=True)
    return tree


def _time(cmd: list[str], cwd: Path, env: dict) -> float:
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.PIPE, env=env, check=False)
        dt = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[:500]}")
    return dt


def cases(tree: Path, cache: str, fresh_cache: str) -> dict[str, tuple[list[str], list[str], dict | None]]:
    """name -> (jitctx argv, reference argv, extra environment for jitctx)."""
    jit = [*jitctx_command()]
    rg = rg_binary()
    rgw = [rg, "--hidden", "-g", "!.git"]
    root = ["--root", str(tree)]
    out: dict[str, tuple[list[str], list[str], dict | None]] = {}
    for name, pattern, _ in PATTERNS:
        out[f"grep files {name}"] = ([*jit, "grep", pattern, *root], [*rgw, "-l", "-e", pattern], None)
    out["grep content literal --limit 100"] = ([*jit, "grep", "TODO", "--mode", "content", "--limit", "100", *root], [*rgw, "-n", "-e", "TODO"], None)
    out["grep count literal"] = ([*jit, "grep", "TODO", "--mode", "count", *root], [*rgw, "--count", "-e", "TODO"], None)
    out["glob **/*.py --json"] = ([*jit, "glob", "**/*.py", "--json", *root], [rg, "--files", "-g", "*.py"], None)
    out["(rg --hidden) glob **/*.py --json"] = ([*jit, "glob", "**/*.py", "--json", *root], [*rgw, "--files", "-g", "*.py"], None)
    counted = {"JITCTX_CACHE_DIR": cache}
    out["head -n 40 (counted before)"] = ([*jit, "head", HEAD_FILE, "-n", "40", *root], [str(installed_python()), "-c", "pass"], counted)
    out["tail -n 40 (counted before)"] = ([*jit, "tail", TAIL_FILE, "-n", "40", *root], [str(installed_python()), "-c", "pass"], counted)
    out["head -n 40 (first read)"] = ([*jit, "head", HEAD_FILE, "-n", "40", *root], [str(installed_python()), "-c", "pass"], {"JITCTX_CACHE_DIR": fresh_cache})
    out["glob '*.py' one folder"] = ([*jit, "glob", "*.py", FOLDER, *root], [str(installed_python()), "-c", "pass"], None)
    out["(rg) glob '*.py' one folder"] = ([*jit, "glob", "*.py", FOLDER, *root], [rg, "--files", "--max-depth", "1", "-g", "*.py", FOLDER], None)
    return out


def run(tree: Path, reps: int, only: list[str], *, server: bool = False) -> list[tuple[str, float, float, float]]:
    """Medians per case; ``server``: jitctx through its warm server (``bench_server``), else in process."""
    env = env_with_project()
    jenv_base = {**env, "JITCTX_SERVER": "1"} if server else env
    cache = tempfile.mkdtemp(prefix="jitctx-bench-cache-")
    fresh = tempfile.mkdtemp(prefix="jitctx-bench-fresh-")
    table = cases(tree, cache, fresh)
    if only:
        table = {k: v for k, v in table.items() if any(o in k for o in only)}
    times: dict[str, tuple[list[float], list[float], list[float]]] = {k: ([], [], []) for k in table}
    for jit, ref, extra in table.values():  # warm the page cache, the count cache of "counted before", the servers
        _time(ref, tree, env)
        _time(jit, tree, {**jenv_base, **(extra or {}), **({"JITCTX_SERVER": "wait"} if server else {})})
        _time(jit, tree, {**jenv_base, **(extra or {})})
    if server:
        time.sleep(5)  # the servers' listings are built
    for i in range(reps):
        for name, (jit, ref, extra) in table.items():
            jenv = {**jenv_base, **(extra or {})}
            if "first read" in name:
                shutil.rmtree(fresh, ignore_errors=True)
            if i % 2:
                b = _time(jit, tree, jenv)
                a = _time(ref, tree, env)
            else:
                a = _time(ref, tree, env)
                b = _time(jit, tree, jenv)
            t_ref, t_jit, ratios = times[name]
            t_ref.append(a)
            t_jit.append(b)
            ratios.append(b / a)
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(fresh, ignore_errors=True)
    rows = []
    for name, (t_ref, t_jit, ratios) in times.items():
        rows.append((name, statistics.median(t_jit), statistics.median(t_ref), statistics.median(ratios)))
    return rows


def report(rows, table_cmds, targets: dict | None = None) -> None:
    print(f"{'call':40} {'jitctx':>9} {'reference':>9} {'ratio':>6}  target")
    for name, jit, ref, ratio in rows:
        target = (TARGETS if targets is None else targets).get(name)
        verdict = "" if target is None else f"<= {target:g}x {'met' if ratio <= target else 'NOT met'}"
        print(f"{name:40} {jit * 1000:7.1f}ms {ref * 1000:7.1f}ms {ratio:5.2f}x  {verdict}", flush=True)
    if not table_cmds:
        return
    print("\ncommands (cwd = the tree):")
    for name, (jit, ref, extra) in table_cmds.items():
        envs = " ".join(f"{k}=..." for k in (extra or {}))
        print(f"  {name}:\n    {envs + ' ' if envs else ''}{' '.join(jit)}\n    {' '.join(ref)}")


def parity(tree: Path) -> None:
    """Matching files of jitctx's grep (rg backend, whole universe) vs ``git grep -I -l --untracked``."""
    env = env_with_project()
    for name, pattern, flavour in PATTERNS:
        cmd = [*jitctx_command(), "grep", pattern, "--limit", "10000", "--json", "--root", str(tree)]
        proc = subprocess.run(cmd, cwd=tree, capture_output=True, env=env, check=False)
        res = json.loads(proc.stdout)
        ours = {r["path"] for r in res["results"]}
        if flavour == "-E":
            flavour = "-P"
        git = subprocess.run(["git", "-c", "core.quotepath=off", "grep", "-I", "-l", "-z", "--untracked", flavour, "-e", pattern], cwd=tree, capture_output=True, check=False)
        theirs = {os.fsdecode(p) for p in git.stdout.split(b"\0") if p}
        only_ours, only_git = sorted(ours - theirs), sorted(theirs - ours)
        print(
            f"{name:9} jitctx {len(ours):,} files (total {res['total']:,}), git grep {len(theirs):,}; only jitctx {len(only_ours)}: {only_ours[:8]}; only git grep {len(only_git)}: {only_git[:8]}"
        )
        if not res["results"]:
            print(f"          empty result's notice: {res['notice']}")


def check_tokenizer(tree: Path) -> None:
    """A head of content counted before, in a fresh interpreter: is tiktoken imported?"""
    cache = tempfile.mkdtemp(prefix="jitctx-bench-tok-")
    env = {**env_with_project(), "JITCTX_CACHE_DIR": cache}
    code = (
        "import sys; from jitctx.adapters.cli import main; "
        f"main(['head', {HEAD_FILE!r}, '-n', '40', '--root', {str(tree)!r}]); "
        "sys.stderr.write('tiktoken loaded: %s\\n' % ('tiktoken' in sys.modules))"
    )
    for when in ("first read", "counted before"):
        proc = subprocess.run([str(installed_python()), "-c", code], env=env, capture_output=True, text=True, check=False)
        print(f"head, {when}: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else '?'}")
    shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--tree")
    ap.add_argument("--only", nargs="*", default=[], help="run only the cases whose name contains one of these")
    ap.add_argument("--skip-parity", action="store_true")
    ap.add_argument("--commands", action="store_true", help="print the exact commands")
    args = ap.parse_args()
    tree = tree_path(args.tree)
    n = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=tree, capture_output=True, check=True).stdout.count(b"\0")
    print(f"tree: {tree} ({n:,} files in the universe)  reps: {args.reps}  load: {os.getloadavg()[0]:.2f}  python: {PY}")
    rows = run(tree, args.reps, args.only)
    report(rows, cases(tree, "$COUNTED", "$EMPTY") if args.commands else {})
    print(f"load after: {os.getloadavg()[0]:.2f}")
    if not args.skip_parity:
        parity(tree)
        check_tokenizer(tree)


if __name__ == "__main__":
    main()
