"""grep figures on the synthetic repo: jitctx (whole process) vs plain rg, git grep parity.

    JITCTX_BENCH_DATA=/work/main/benchmarks/.data python benchmarks/bench_grep.py [--reps 5] [--py-reps 1]

For each case (files and content mode, limit 100; a common literal, the rare
literal ``RARE`` and a regex) it times, interleaved and back to back:

- ``python -m jitctx grep PATTERN --mode M --limit 100`` (rg backend),
- plain ``rg --hidden -g '!.git'`` with the equivalent flags (``--count``
  for files mode, which shows per-file counts; ``-n`` for content mode,
  which has no page limit in rg and prints every line),
- the python backend (``--backend python``), fewer repetitions.

Output goes to a file (rg treats ``/dev/null`` specially). Reported: the
median wall time of each, and the median of the per-repetition ratios
jitctx/rg (robust on a shared, noisy machine). Then the matching-file set of
the rg backend is compared with ``git grep -I -l --untracked`` and every
difference is listed. ``--check-tokenizer`` verifies a default grep does not
import tiktoken.
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
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from common import env_with_project  # noqa: E402
from synth import RARE, synth_repo  # noqa: E402

PY = os.environ.get("JITCTX_PYTHON", sys.executable)
CASES = [("common", "result"), ("rare", RARE), ("regex", r"fn_\d+_1\b")]


def _rg() -> str:
    from jitctx.primitives.engines.rg import find_rg

    exe = find_rg()
    if exe is None:
        sys.exit("rg not found")
    return exe


def _time(cmd: list[str], cwd: Path, env: dict | None = None) -> float:
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.PIPE, env=env, check=False)
        dt = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {proc.stderr.decode(errors='replace')}")
    return dt


def run(reps: int, py_reps: int) -> None:
    repo = synth_repo()
    rg = _rg()
    env = env_with_project()
    print(f"repo: {repo}  reps: {reps} (python backend: {py_reps})  load: {os.getloadavg()[0]:.2f}")
    print(f"{'case':18} {'rg --hidden':>11} {'jitctx':>8} {'ratio':>6} {'python':>8} {'py/rg':>6}")
    for mode in ("files", "content"):
        for name, pattern in CASES:
            jit = [PY, "-m", "jitctx", "grep", pattern, "--mode", mode, "--limit", "100", "--root", str(repo)]
            plain = [rg, "--hidden", "-g", "!.git", "--count" if mode == "files" else "-n", "-e", pattern]
            t_rg, t_jit, ratios = [], [], []
            _time(plain, repo)  # warm the page cache
            for i in range(reps):  # back to back, alternating which goes first (the machine drifts)
                if i % 2:
                    b = _time(jit, repo, env)
                    a = _time(plain, repo)
                else:
                    a = _time(plain, repo)
                    b = _time(jit, repo, env)
                t_rg.append(a)
                t_jit.append(b)
                ratios.append(b / a)
            t_py = [_time([*jit, "--backend", "python"], repo, env) for _ in range(py_reps)]
            med_rg = statistics.median(t_rg)
            py = statistics.median(t_py) if t_py else float("nan")
            print(
                f"{mode + ' ' + name:18} {med_rg:10.3f}s {statistics.median(t_jit):7.3f}s {statistics.median(ratios):5.2f}x {py:7.2f}s {py / med_rg:5.1f}x",
                flush=True,
            )


def parity() -> None:
    """Matching files of the rg backend vs ``git grep -I -l --untracked``."""
    sys.path.insert(0, str(ROOT))
    from jitctx import Workspace
    from jitctx.primitives.engines import Spec
    from jitctx.primitives.engines.py import PythonBackend
    from jitctx.primitives.engines.rg import RgBackend
    from jitctx.primitives.engines.scope import Scope

    repo = synth_repo()
    ws = Workspace(repo)
    backend = RgBackend(_rg())

    def scope(pattern: str) -> Scope:
        return Scope(ws.repo, ws.policy, Spec(pattern, is_denied=ws.policy.is_denied))

    for name, pattern in CASES:
        ours = set(backend.count(scope(pattern)).counts)
        flavour = "-P" if name == "regex" else "-F"  # \d and \b: PCRE in git grep
        proc = subprocess.run(["git", "-c", "core.quotepath=off", "grep", "-I", "-l", "-z", "--untracked", flavour, "-e", pattern], cwd=repo, capture_output=True, check=False)
        theirs = {os.fsdecode(p) for p in proc.stdout.split(b"\0") if p}
        only_ours, only_git = sorted(ours - theirs), sorted(theirs - ours)
        print(f"{name:7} jitctx {len(ours):,} files, git grep {len(theirs):,}; only jitctx: {only_ours[:5]} ({len(only_ours)}), only git grep: {only_git[:5]} ({len(only_git)})")
        py = PythonBackend().count(scope(pattern)).counts
        rg_counts = backend.count(scope(pattern)).counts
        print(f"        python backend {len(py):,} files; same files and per-file line counts as rg: {py == rg_counts}")


def check_tokenizer() -> None:
    repo = synth_repo()
    code = (
        "import sys; from jitctx.adapters.cli import main; "
        f"main(['grep', {RARE!r}, '--root', {str(repo)!r}]); "
        "sys.stderr.write('tiktoken loaded: %s\\n' % ('tiktoken' in sys.modules))"
    )
    proc = subprocess.run([PY, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, check=False)
    print(proc.stderr.strip())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--py-reps", type=int, default=1)
    ap.add_argument("--skip-timing", action="store_true")
    args = ap.parse_args()
    if not args.skip_timing:
        run(args.reps, args.py_reps)
    parity()
    check_tokenizer()
