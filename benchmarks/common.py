"""Small timing helpers shared by the benchmark scripts (not a test suite)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


def compile_project() -> None:
    """Compile the checkout's bytecode, as ``pip install`` does: with
    ``PYTHONDONTWRITEBYTECODE`` set, every edited module would otherwise be
    recompiled in every timed process (~1-3 ms each)."""
    import compileall

    compileall.compile_dir(PROJECT / "jitctx", quiet=1)


def env_with_project() -> dict:
    """The environment for child processes: this checkout first on the path (compiled)."""
    compile_project()
    return {**os.environ, "PYTHONPATH": str(PROJECT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def time_cmd(argv: list[str], *, cwd=None, env=None) -> float:
    """Wall seconds of one whole process, output discarded."""
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def interleaved(cases: dict[str, list[str]], runs: int, *, cwd=None, env=None, warmup: int = 1) -> dict[str, list[float]]:
    """Run each command ``runs`` times, interleaved so machine noise hits all alike."""
    out: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(warmup):
        for argv in cases.values():
            time_cmd(argv, cwd=cwd, env=env)
    for _ in range(runs):
        for name, argv in cases.items():
            out[name].append(time_cmd(argv, cwd=cwd, env=env))
    return out


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def fmt_ms(s: float) -> str:
    return f"{s * 1000:.1f} ms"


def python() -> str:
    return sys.executable
