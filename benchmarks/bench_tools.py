"""Tools, dispatch and MCP: start-up to first result, per-call overhead.

Measures, in one run on the same machine:

- ``jitctx mcp`` start to first tool result (spawn, handshake, one ``glob``)
  through the SDK's stdio client, against a one-shot ``jitctx glob`` CLI run
  and a bare ``python -c pass`` as references;
- the per-call overhead of ``dispatch`` and of an MCP round trip (in memory
  and over stdio) over the bare library call, for ``head`` (cheap) and
  ``glob`` (on the 105k-file synthetic repo when present).

    JITCTX_BENCH_DATA=/work/main/benchmarks/.data python benchmarks/bench_tools.py [--reps N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from common import compile_project  # noqa: E402

from jitctx.adapters.mcp import build_server  # noqa: E402
from jitctx.session.workspace import Workspace  # noqa: E402
from jitctx.tools import dispatch  # noqa: E402

DATA = Path(os.environ.get("JITCTX_BENCH_DATA") or HERE / ".data")


def small_repo() -> Path:
    dest = Path(tempfile.mkdtemp(prefix="jitctx-bench-tools-")) / "basic"
    shutil.copytree(ROOT / "fixtures_repo" / "basic", dest, symlinks=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True, capture_output=True)
    return dest


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_sync(fn, reps: int) -> float:
    fn()  # warm
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return _median_ms(out)


def startup(root: Path, reps: int) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    env = {"PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "jitctx", "mcp", "--root", str(root)], env=env)

    async def one() -> float:
        t = time.perf_counter()
        async with Client(params) as c:
            r = await c.call_tool("glob", {"pattern": "**/*.md", "limit": 5})
            assert not r.is_error, r.content
            return time.perf_counter() - t

    def cli() -> None:
        subprocess.run([sys.executable, "-m", "jitctx", "glob", "**/*.md", "--limit", "5", "--root", str(root)], env={**os.environ, **env}, check=True, capture_output=True)

    def bare() -> None:
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    def sdk_import() -> None:
        subprocess.run([sys.executable, "-c", "import jitctx.adapters.mcp"], env={**os.environ, **env}, check=True)

    mcp_times = [anyio.run(one) for _ in range(reps)]
    return {"mcp_first_result_ms": _median_ms(mcp_times), "cli_glob_ms": time_sync(cli, reps), "python_pass_ms": time_sync(bare, reps), "import_ms": time_sync(sdk_import, reps)}


def overhead(root: Path, name: str, args: dict, reps: int, lib_call) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    ws = Workspace(root, max_tokens=4000)
    lib = time_sync(lambda: lib_call(ws), reps)
    disp = time_sync(lambda: dispatch(name, args, workspace=ws), reps)

    async def timed(server) -> float:
        async with Client(server) as c:
            await c.call_tool(name, args)  # warm-up
            out = []
            for _ in range(reps):
                t = time.perf_counter()
                await c.call_tool(name, args)
                out.append(time.perf_counter() - t)
            return _median_ms(out)

    in_memory = build_server(workspace=Workspace(root, max_tokens=4000)).server
    stdio = StdioServerParameters(command=sys.executable, args=["-m", "jitctx", "mcp", "--root", str(root)], env={"PYTHONPATH": str(ROOT)})
    return {"library_ms": lib, "dispatch_ms": disp, "mcp_memory_ms": anyio.run(timed, in_memory), "mcp_stdio_ms": anyio.run(timed, stdio)}


def main() -> int:
    parser = argparse.ArgumentParser()
    compile_project()
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--startup-reps", type=int, default=5)
    a = parser.parse_args()
    small = small_repo()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    s = startup(small, a.startup_reps)
    print(f"start-up, small repo (median of {a.startup_reps}): mcp spawn+handshake+first glob {s['mcp_first_result_ms']:.0f} ms; "
          f"one-shot CLI glob {s['cli_glob_ms']:.0f} ms; python -c pass {s['python_pass_ms']:.0f} ms; "
          f"python -c 'import jitctx.adapters.mcp' {s['import_ms']:.0f} ms")  # fmt: skip
    rows = [("head 20 lines, small repo", small, "head", {"path": "src/app.py", "n": 20}, lambda ws: ws.head("src/app.py", 20, max_tokens=4000), a.reps)]
    synth = DATA / "synth-1"
    if synth.is_dir():
        s2 = startup(synth, max(2, a.startup_reps // 2))
        print(f"start-up, synth repo: mcp first glob {s2['mcp_first_result_ms']:.0f} ms; one-shot CLI glob {s2['cli_glob_ms']:.0f} ms")
        rows.append(
            ("glob **/*.md limit 5, synth repo", synth, "glob", {"pattern": "**/*.md", "limit": 5}, lambda ws: ws.glob("**/*.md", limit=5, max_tokens=4000), max(3, a.reps // 10))
        )
    for label, root, name, args, lib_call, reps in rows:
        r = overhead(root, name, args, reps, lib_call)
        lib = r["library_ms"]
        print(f"{label} (median of {reps}): library {lib:.2f} ms; dispatch {r['dispatch_ms']:.2f} ms (+{r['dispatch_ms'] - lib:.2f}); "
              f"MCP in-memory {r['mcp_memory_ms']:.2f} ms (+{r['mcp_memory_ms'] - lib:.2f}); MCP stdio {r['mcp_stdio_ms']:.2f} ms (+{r['mcp_stdio_ms'] - lib:.2f})")  # fmt: skip
    shutil.rmtree(small.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
