"""Cold start on a big tree (issue 23): the first answer, the build, a checkout.

    python benchmarks/realtree.py MIRROR...          # once: the real ~100k-file tree
    python benchmarks/bench_coldstart.py [--root DIR] [--reps 3] [--only first,build,warm,checkout] [--against CHECKOUT]

Four parts, on ``--root`` (default ``benchmarks/.data/realtree``), each call
a whole process as a user runs it (``common.installed_python``: no editable
finder), in process (``JITCTX_SERVER=0``: the server would hide a cold start):

- ``first``: ``jitctx context --task T --budget 8000 --json`` with no index
  at all (an empty ``JITCTX_CACHE_DIR`` of its own each time): the wall time,
  the notice it gives, its first evidence files. The background builder it
  starts is killed and the cache removed after each call. Beside it, in the
  same run, ``rg --count-matches`` of the task's words over the tree (the
  reference: one read of the tree, nothing ranked).
- ``build``: the complete index built from nothing by the builder's own body
  (``build.build_here``, not niced): wall, the CPU of the builder and of its
  worker processes, the store's size on disk and per table (SQLite's
  ``dbstat``), files analysed.
- ``warm``: the same calls on that index, and ``rg`` again; with ``--against``
  another checkout's (``git worktree add /tmp/old COMMIT``) call beside each,
  on the same index, the two in turn.
- ``checkout``: a branch ``bench-checkout-500`` (made once, with git's plumbing,
  the worktree untouched: 500 tracked text files, every n-th by path, one line
  appended) is checked out; the next ``context --task`` (an answer partly old,
  its notice naming the files) is timed, then the background build it started
  is waited for (from the call's start: how long 500 files take), then the next call (current again)
  is timed. The tree is put back on its branch, and the index brought back to it.

Reports to stdout and ``benchmarks/.data/coldstart.json``. No network.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_locate import _kill_mentioning, evidence_files
from common import PROJECT, console, installed_python

DATA = Path(os.environ.get("JITCTX_BENCH_DATA") or PROJECT / "benchmarks" / ".data")
BRANCH = "bench-checkout-500"
CHANGED = 500
TASKS = (
    "fix the redis cluster failover timeout handling",
    "curl: retry the transfer when an HTTP/2 stream is refused by the server",
    "git rebase --autosquash ignores fixup commits whose subject has a trailing space",
    "vim: crash in the NFA regexp engine on a very long pattern",
    "ansible copy module loses the file mode with remote_src",
)
_STOP = frozenset("the a an of to in on by is are be when with whose has its and or for fix".split())


def _rg() -> str:
    rg = Path(sys.executable).with_name("rg")
    return str(rg) if rg.exists() else "rg"


def _rg_argv(task: str, root: Path) -> list[str]:
    words = [w for w in dict.fromkeys(re.findall(r"[A-Za-z0-9_]{3,}", task.lower())) if w not in _STOP]
    return [_rg(), "--count-matches", "--ignore-case", "--word-regexp", *(a for w in words for a in ("-e", w)), str(root)]


def _timed(argv: list[str], *, env: dict, cwd: Path | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    return time.perf_counter() - t, proc


def _context(cli: list[str], task: str, root: Path, env: dict) -> dict:
    seconds, proc = _timed([*cli, "context", "--task", task, "--budget", "8000", "--json", "--root", str(root)], env=env, cwd=root)
    out = json.loads(proc.stdout) if proc.stdout.strip() else {}
    text = out.get("text", "")
    said = [*out.get("warnings", []), *text.splitlines()]
    notes = [line for line in said if "index" in line and ("built" in line or "partly old" in line or "behind" in line)]
    return {
        "seconds": round(seconds, 3),
        "exit": proc.returncode,
        "tokens": out.get("tokens"),
        "files": evidence_files(text)[:5],
        "notice": notes[0][:300] if notes else None,
        "error": proc.stderr.strip()[-300:] or None,
    }


def _env(cache: Path) -> dict:
    return {**os.environ, "JITCTX_CACHE_DIR": str(cache), "JITCTX_SERVER": "0"}


def first(cli: list[str], root: Path, reps: int) -> dict:
    rows = []
    for _ in range(reps):
        for task in TASKS:
            cache = Path(tempfile.mkdtemp(prefix="jitctx-coldstart-"))
            try:
                got = _context(cli, task, root, _env(cache))
            finally:
                _kill_mentioning(str(cache))
                shutil.rmtree(cache, ignore_errors=True)
            rg_s, _ = _timed(_rg_argv(task, root), env=dict(os.environ))
            rows.append({"task": task, **got, "rg_seconds": round(rg_s, 3)})
    return _summary(rows)


def _summary(rows: list[dict]) -> dict:
    ours = [r["seconds"] for r in rows]
    rg = [r["rg_seconds"] for r in rows]
    return {
        "calls": rows,
        "median": statistics.median(ours),
        "max": max(ours),
        "rg_median": statistics.median(rg),
        "ratio_median": statistics.median(o / g for o, g in zip(ours, rg)),
    }


_BUILD = """
import json, os, resource, sys, time
from jitctx.code.build import build_here
from jitctx.cache.folders import index_file
root = sys.argv[1]
path = index_file(root)
t = time.perf_counter()
code = build_here(root, path, nice=False)
wall = time.perf_counter() - t
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"exit": code, "path": path, "wall": wall, "cpu_builder": me.ru_utime + me.ru_stime, "cpu_workers": kids.ru_utime + kids.ru_stime}))
"""


def _store(path: str) -> dict:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall())
        files, analysed = conn.execute("SELECT count(*), count(*) - count(skipped) FROM files").fetchone()
        definitions = conn.execute("SELECT count(*) FROM definitions").fetchone()[0]
    except sqlite3.Error as exc:
        return {"error": str(exc)}
    finally:
        conn.close()
    size = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    return {"bytes": size, "files": files, "analysed": analysed, "definitions": definitions, "tables": tables}


def build(py: Path, root: Path, cache: Path) -> dict:
    shutil.rmtree(cache, ignore_errors=True)
    t = time.perf_counter()
    proc = subprocess.run([str(py), "-c", _BUILD, str(root)], env=_env(cache), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    got = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {"error": proc.stderr[-500:]}
    got["process_wall"] = wall
    if "path" in got:
        got["store"] = _store(got["path"])
    return got


def warm(cli: list[str], root: Path, cache: Path, reps: int, against: list[str] | None = None) -> dict:
    """Warm calls on the built index; ``against``: another checkout's CLI, its call
    beside each of ours on the same index, the two in turn (which goes first
    alternates by repetition), reported as ``against``."""
    rows, theirs = [], []
    env = _env(cache)
    for each in (cli, against) if against else (cli,):
        _context(each, TASKS[0], root, env)  # the listing digest and the page cache, as a second call finds them
    for rep in range(reps):
        for task in TASKS:
            pair = [(rows, cli), (theirs, against)] if against else [(rows, cli)]
            for out, each in pair if rep % 2 == 0 else pair[::-1]:
                out.append({"task": task, **_context(each, task, root, env)})
            rg_s, _ = _timed(_rg_argv(task, root), env=dict(os.environ))
            for row in (rows[-1], *(theirs[-1:] if against else ())):
                row["rg_seconds"] = round(rg_s, 3)
    got = _summary(rows)
    if against:
        got["against"] = _summary(theirs)
    return got


def _git(root: Path, *args: str, env: dict | None = None, data: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, env=env, input=data, capture_output=True, check=True).stdout.decode().strip()


def _branch(root: Path) -> None:
    """``BRANCH``: HEAD with one line appended to ``CHANGED`` tracked text files (every n-th by path)."""
    if subprocess.run(["git", "rev-parse", "--verify", "-q", BRANCH], cwd=root, capture_output=True).returncode == 0:
        return
    names = [n for n in _git(root, "ls-files", "-s").splitlines() if n.startswith("100644")]
    texts = [n.split("\t", 1)[1] for n in names if n.split("\t", 1)[1].endswith((".c", ".h", ".py", ".md", ".cpp", ".pyi", ".vim", ".sh"))]
    step = max(1, len(texts) // CHANGED)
    chosen = texts[::step][:CHANGED]
    index = tempfile.NamedTemporaryFile(prefix="jitctx-bench-index-", delete=False).name
    env = {**os.environ, "GIT_INDEX_FILE": index}
    try:
        _git(root, "read-tree", "HEAD", env=env)
        lines = []
        for path in chosen:
            blob = subprocess.run(["git", "cat-file", "blob", f"HEAD:{path}"], cwd=root, capture_output=True, check=True).stdout
            sha = _git(root, "hash-object", "-w", "--stdin", data=blob + b"\nbench-checkout-500 edit\n")
            lines.append(f"100644 {sha}\t{path}\n")
        _git(root, "update-index", "--index-info", env=env, data="".join(lines).encode())
        tree = _git(root, "write-tree", env=env)
        stamp = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
        who = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
        commit = _git(root, "commit-tree", tree, "-p", "HEAD", "-m", f"{CHANGED} files changed", env={**os.environ, **stamp, **who})
        _git(root, "update-ref", f"refs/heads/{BRANCH}", commit)
    finally:
        os.unlink(index)


def _wait_build(cache: Path, limit: float = 600.0) -> None:
    """Until no builder of ``cache`` runs: none holds a build lock (the caller takes it
    before starting the builder, which holds it for its life)."""
    import fcntl

    end = time.perf_counter() + limit
    for lock in (cache / "index").glob("*.build.lock"):
        fd = os.open(lock, os.O_RDWR)
        try:
            while time.perf_counter() < end:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    break
                except OSError:
                    time.sleep(0.05)
        finally:
            os.close(fd)


def checkout(cli: list[str], root: Path, cache: Path) -> dict:
    _branch(root)
    start = _git(root, "rev-parse", "--abbrev-ref", "HEAD")
    env = _env(cache)
    out: dict = {}
    try:
        for name, target in (("to_branch", BRANCH), ("back", start)):
            _git(root, "checkout", "-q", target)
            t = time.perf_counter()
            after = _context(cli, TASKS[0], root, env)
            _wait_build(cache)
            built = time.perf_counter() - t
            again = _context(cli, TASKS[0], root, env)
            out[name] = {"next_answer": after, "build_seconds": round(built, 2), "answer_after_build": again}
    finally:
        _git(root, "checkout", "-q", start)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DATA / "realtree")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="first,build,warm,checkout")
    ap.add_argument("--against", type=Path, help="another checkout (a worktree of an older commit): its warm calls beside ours, in turn")
    args = ap.parse_args()
    root = args.root.resolve()
    if not (root / ".git").exists():
        sys.exit(f"no tree at {root}: build it first (python benchmarks/realtree.py MIRROR...)")
    parts = set(args.only.split(","))
    py = installed_python()
    cli = console(py)
    cache = DATA / "coldstart-cache"
    report: dict = {"root": str(root), "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "load": os.getloadavg()}
    if "first" in parts:
        report["first"] = first(cli, root, args.reps)
        _print("first context --task, no index", report["first"])
    if "build" in parts:
        report["build"] = build(py, root, cache)
        b = report["build"]
        print(f"build: wall {b.get('wall', 0):.1f} s (process {b['process_wall']:.1f} s), CPU builder {b.get('cpu_builder', 0):.1f} s + workers {b.get('cpu_workers', 0):.1f} s")
        print(f"store: {json.dumps(b.get('store'), indent=None)}")
    if "warm" in parts:
        other = console(installed_python(args.against, name="venv-against"), args.against) if args.against else None
        report["warm"] = warm(cli, root, cache, args.reps, other)
        _print("warm context --task", report["warm"])
        if other:
            _print(f"warm context --task, {args.against}", report["warm"]["against"])
    if "checkout" in parts:
        report["checkout"] = checkout(cli, root, cache)
        for name, c in report["checkout"].items():
            n, a = c["next_answer"], c["answer_after_build"]
            print(f"checkout {name}: next answer {n['seconds']:.2f} s ({n['notice']}); background build {c['build_seconds']:.1f} s; then {a['seconds']:.2f} s ({a['notice']})")
    report["ended"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    report["load_end"] = os.getloadavg()
    (DATA / "coldstart.json").write_text(json.dumps(report, indent=1))
    return 0


def _print(title: str, s: dict) -> None:
    print(f"{title}: median {s['median']:.2f} s, max {s['max']:.2f} s; rg median {s['rg_median']:.2f} s; ratio median {s['ratio_median']:.1f}x")
    for r in s["calls"][: len(TASKS)]:
        print(f"  {r['seconds']:.2f} s  {r['task'][:50]:50}  {', '.join(r['files'][:3])}  [{r['notice'] or ''}]"[:400])


if __name__ == "__main__":
    sys.exit(main())
