"""Issue 34: preload and the just-in-time hook with every agent's rules read, against
the code before the change, on a big real tree, in the same run.

    python benchmarks/bench_rules.py /work/data/realtree [BASE_REF]

``BASE_REF`` (default ``3a62d75``, the commit before issue 34) is exported with
``git archive`` into a temporary folder; each case runs in a fresh process per
sample, the two versions interleaved (the machine is shared and noisy). Cases:
the prefix cold (a fresh process: import, root and one ``preload``; the token
encoding's load is timed apart and left out), the prefix warm (the median of 200
``preload`` calls on one Workspace), and the just-in-time hook: a ``glob``
returning 500 paths with every nested instruction file due (``on_paths``, which
now also looks for rules at each call). Times are CPU seconds of the timed
process (``time.process_time``): on a machine shared by several jobs, wall
time measures the neighbours more than the change.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
root, cwd, mode = sys.argv[2], sys.argv[3], sys.argv[4]
from jitctx.tokens.tokenizer import get_tokenizer
tok = get_tokenizer("cl100k_base"); tok.count("warm the encoding")
t0 = time.process_time()
from jitctx.session.workspace import Workspace
ws = Workspace(root, tokenizer=tok, record=False)
if mode == "cold":
    p = ws.preload(cwd)
    out = {"s": time.process_time() - t0, "tokens": p.tokens, "hash": p.prefix_hash}
elif mode == "warm":
    ws.preload(cwd)
    times = []
    for _ in range(200):
        t = time.process_time(); p = ws.preload(cwd); times.append(time.process_time() - t)
    times.sort()
    out = {"s": times[len(times) // 2], "tokens": p.tokens, "hash": p.prefix_hash}
else:
    res = ws.glob("**/*.md", limit=500, sort="path")
    paths = [r.path for r in res.results]
    from jitctx.preload.nested import NestedInstructions
    times = []
    for _ in range(15):
        jit = NestedInstructions(ws.policy, lambda: tok)
        t = time.process_time(); got, _ = jit.on_paths(paths, content=False); times.append(time.process_time() - t)
    times.sort()
    out = {"s": times[len(times) // 2], "tokens": len(got), "hash": ",".join(i["path"] for i in got)}
print(json.dumps(out))
"""


def export(ref: str, dest: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(PROJECT), "archive", ref, "jitctx"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    import compileall

    compileall.compile_dir(dest / "jitctx", quiet=1)
    compileall.compile_dir(PROJECT / "jitctx", quiet=1)
    return dest


def main() -> None:
    root = sys.argv[1] if len(sys.argv) > 1 else "/work/data/realtree"
    base = sys.argv[2] if len(sys.argv) > 2 else "3a62d75"
    runs = int(os.environ.get("RUNS", "15"))
    env = {**os.environ, "JITCTX_SERVER": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        before = export(base, Path(tmp))
        versions = {"before": str(before), "after": str(PROJECT)}
        rows = []
        for mode, cwd in (("cold", "."), ("cold", "typeshed"), ("warm", "."), ("warm", "git/po"), ("jit", ".")):
            got: dict[str, list[float]] = {v: [] for v in versions}
            seen: dict[str, tuple] = {}
            for _ in range(runs):
                for name, path in versions.items():
                    out = subprocess.run([sys.executable, "-c", _CHILD, path, root, cwd, mode], capture_output=True, text=True, env=env, check=True)
                    data = json.loads(out.stdout)
                    got[name].append(data["s"])
                    seen[name] = (data["tokens"], data["hash"])
            b, a = statistics.median(got["before"]), statistics.median(got["after"])
            same = seen["before"] == seen["after"]
            rows.append((mode, cwd, b * 1000, a * 1000, a / b, same))
        print(f"root {root}, base {base}, {runs} samples each, interleaved; medians")
        print(f"{'case':<6} {'cwd':<10} {'before ms':>10} {'after ms':>10} {'ratio':>7}  same answer")
        for mode, cwd, b, a, r, same in rows:
            print(f"{mode:<6} {cwd:<10} {b:>10.2f} {a:>10.2f} {r:>7.3f}  {same}")


if __name__ == "__main__":
    main()
