"""Issue 30's figure: one CLI call on each of many temporary repositories, within a minute.

    python benchmarks/bench_many_roots.py [--roots 300] [--per-root 1] [--parallel 4] [--old CHECKOUT --old-roots 60]

What a test suite (or an agent touring repositories) does: ``--roots`` small git
repositories, ``--per-root`` ``jitctx`` calls in each, one after the other (the
console script, default server mode, stdout and stderr captured), ``--parallel``
repositories at a time. Then the jitctx
processes of those repositories still running and the inotify instances they
hold, at once and 70 s later (past a once-used server's 60 s idle exit), and
the inotify instances this user holds in all. With ``--old``, the same for
another checkout (``git archive`` of an earlier commit) on ``--old-roots``
repositories, first: its servers (one per repository, ~65 MB each, for 10
minutes) are stopped at the end. Each side has its own run folder and cache
under ``benchmarks/.data/many``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from common import PROJECT, console, installed_python  # noqa: E402

from jitctx import procs  # noqa: E402


def template(data: Path) -> Path:
    tpl = data / "template"
    if not tpl.exists():
        shutil.copytree(PROJECT / "fixtures_repo" / "basic", tpl)
        for p in sorted(tpl.rglob("dot-*"), reverse=True):
            p.rename(p.with_name("." + p.name[4:]))
        env = {**os.environ, "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00"}
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["-c", "user.name=m", "-c", "user.email=m@example.com", "commit", "-q", "-m", "t"]):
            subprocess.run(["git", *args], cwd=tpl, env=env, check=True, capture_output=True)
    return tpl


def inotify_of(pid: int) -> int:
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                    n += 1
            except OSError:
                pass
    except OSError:
        pass
    return n


def user_inotify() -> int:
    uid = os.getuid()
    total = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    total += inotify_of(int(name))
            except OSError:
                pass
    return total


def held(prefix: str) -> tuple[list[procs.Proc], int]:
    mine = [p for p in procs.find() if p.root is not None and os.path.realpath(p.root).startswith(prefix)]
    return mine, sum(inotify_of(p.pid) for p in mine)


def side(name: str, checkout: Path, roots: int, parallel: int, data: Path, per_root: int = 1) -> dict:
    base = data / name
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    tpl = template(data)
    repos = []
    for i in range(roots):
        dest = base / f"r{i:03}"
        shutil.copytree(tpl, dest, symlinks=True)
        repos.append(dest.resolve())
    py = installed_python(checkout, name="venv-installed" if checkout == PROJECT else "venv-installed-old")
    run_dir = tempfile.mkdtemp(prefix=f"jx-many-{name}-", dir="/tmp")
    env = {k: v for k, v in os.environ.items() if k not in ("JITCTX_SERVER", "JITCTX_SESSION", "JITCTX_ROOT")}
    env.update(XDG_RUNTIME_DIR=run_dir, JITCTX_CACHE_DIR=str(base / "cache"))
    argv = console(py, checkout)
    calls = [("glob", "*.md"), ("grep", "greet"), ("head", "README.md", "-n", "5"), ("locate", "--task", "make greet shout")]

    def one(i: int) -> int:
        return max(
            subprocess.run([*argv, *calls[(i + k) % len(calls)]], cwd=repos[i], env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=120, check=False).returncode
            for k in range(per_root)
        )

    before = user_inotify()
    started = time.monotonic()
    with ThreadPoolExecutor(parallel) as pool:
        codes = list(pool.map(one, range(roots)))
    wall = time.monotonic() - started
    prefix = str(base.resolve()) + os.sep
    now, now_inotify = held(prefix)  # a started server shows at once (its command line is set at exec)
    user_now = user_inotify()
    time.sleep(max(0.0, 70.0 - (time.monotonic() - started - wall)))
    later, later_inotify = held(prefix)
    left = procs.stop([p.pid for p in procs.find() if p.root is not None and os.path.realpath(p.root).startswith(prefix)])
    shutil.rmtree(run_dir, ignore_errors=True)
    return {
        "side": name,
        "checkout": str(checkout),
        "roots": roots,
        "calls_per_root": per_root,
        "wall_s": round(wall, 1),
        "exit_codes": {str(c): codes.count(c) for c in sorted(set(codes))},
        "user_inotify_before": before,
        "right_after": {"processes": len(now), "servers": sum(p.role == "server" for p in now), "inotify": now_inotify, "user_inotify": user_now},
        "70s_after": {"processes": len(later), "servers": sum(p.role == "server" for p in later), "inotify": later_inotify},
        "rss_mib_right_after": round(sum(p.rss_mib or 0 for p in now), 1),
        "left_after_stop": left,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--roots", type=int, default=300)
    ap.add_argument("--per-root", type=int, default=1, help="calls in each repository (a second one starts its server)")
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--old", type=Path, help="an earlier checkout to measure first (git archive of a commit)")
    ap.add_argument("--old-roots", type=int, default=60)
    args = ap.parse_args()
    data = Path(os.environ.get("JITCTX_BENCH_DATA") or HERE / ".data") / "many"
    data.mkdir(parents=True, exist_ok=True)
    print(f"load: {os.getloadavg()[0]:.2f}", flush=True)
    results = []
    if args.old is not None:
        results.append(side("old", args.old.resolve(), args.old_roots, args.parallel, data, args.per_root))
        print(json.dumps(results[-1], indent=2), flush=True)
    results.append(side("new", PROJECT, args.roots, args.parallel, data, args.per_root))
    print(json.dumps(results[-1], indent=2), flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
