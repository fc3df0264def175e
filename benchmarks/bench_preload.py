"""Preload figures: a 5-level AGENTS.md chain + a 1 MB README, cold and warm.

    JITCTX_BENCH_DATA=/work/main/benchmarks/.data python benchmarks/bench_preload.py

Cold is the first ``preload`` in a fresh process (the token encoding loads
then; its share is shown apart). Warm repeats it on the same workspace
(token counts and file reads cached). References measured in the same run:
reading the six files' bytes, and one tiktoken encode of the README. Also:
a 50 MB instruction file (read only as far as the budget can use), and the
just-in-time hook over glob results from the 105k-file synthetic repo.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from common import compile_project  # noqa: E402

LEVELS = ["l1", "l2", "l3", "l4"]  # root + 4 = a 5-level chain


def _rules(level: str, n: int) -> str:
    return f"# Rules for {level}\n\n" + "".join(f"- {level} rule {i}: prefer small, well-named functions; run the tests.\n" for i in range(n))


def build(dest: Path, big_agents_mib: int = 0) -> Path:
    dest.mkdir(parents=True)
    (dest / "AGENTS.md").write_text(_rules("root", 40))
    d = dest
    for lv in LEVELS:
        d = d / lv
        d.mkdir()
        (d / "AGENTS.md").write_text(_rules(lv, 20))
    para = "This project does many things. " * 8 + "\n"
    readme = "# Project\n\n" + "".join(f"## Section {i}\n\n{para}\n" for i in range(1_000_000 // (len(para) + 16)))
    (dest / "README.md").write_text(readme[:1_000_000])
    if big_agents_mib:
        line = b"- a long list of rules that goes on and on, padded to a decent width.\n"
        with open(d / "AGENTS.md", "wb") as f:
            f.write(line * (big_agents_mib * 1024 * 1024 // len(line)))
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "bench"], cwd=dest, check=True, env=env)
    return dest


_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from jitctx.session.workspace import Workspace
from jitctx.tokens.tokenizer import get_tokenizer
ws = Workspace(sys.argv[1])
t1 = time.perf_counter()
get_tokenizer()
t2 = time.perf_counter()
p = ws.preload(sys.argv[2], budget=8000, readme_budget=2000)
t3 = time.perf_counter()
warm = []
for _ in range(int(sys.argv[3])):
    a = time.perf_counter(); q = ws.preload(sys.argv[2], budget=8000, readme_budget=2000); warm.append(time.perf_counter() - a)
    assert q.prefix_hash == p.prefix_hash
ws2 = Workspace(sys.argv[1])
a = time.perf_counter(); ws2.preload(sys.argv[2]); fresh_ws = time.perf_counter() - a
print(json.dumps({"import_ws": t1 - t0, "encoding": t2 - t1, "cold_preload": t3 - t2, "warm": warm, "fresh_ws": fresh_ws,
                  "tokens": p.tokens, "files": [(f.path, f.size, f.tokens, f.included_tokens, f.reason) for f in p.files]}))
"""


def _child(root: Path, cwd: str, reps: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(root), cwd, str(reps)], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


def _references(root: Path) -> dict:
    from jitctx.tokens.tokenizer import get_tokenizer

    paths = [root / "AGENTS.md"] + [root.joinpath(*LEVELS[: i + 1], "AGENTS.md") for i in range(4)] + [root / "README.md"]
    reads = []
    for _ in range(20):
        a = time.perf_counter()
        for p in paths:
            p.read_bytes()
        reads.append(time.perf_counter() - a)
    tok = get_tokenizer()
    text = (root / "README.md").read_text()
    a = time.perf_counter()
    tok._enc.encode(text, disallowed_special=())
    enc = time.perf_counter() - a
    return {"read_six_files": statistics.median(reads), "encode_readme_once": enc}


def _jit(reps: int = 3) -> dict | None:
    sys.path.insert(0, str(HERE))
    try:
        from synth import DATA, VERSION
    except ImportError:
        return None
    root = DATA / f"synth-{VERSION}"
    if not root.is_dir():
        return None
    from jitctx.session.workspace import Workspace

    ws = Workspace(root)
    paths = ws.repo.files()[:10_000]
    dirs = len({p.rsplit("/", 1)[0] for p in paths if "/" in p})
    a = time.perf_counter()
    first = ws.nested.on_paths(paths, content=False)[0]
    cold = time.perf_counter() - a
    again = []
    for _ in range(reps):
        a = time.perf_counter()
        ws.nested.on_paths(paths, content=False)[0]
        again.append(time.perf_counter() - a)
    hundred = []
    for _ in range(reps):
        a = time.perf_counter()
        ws.nested.on_paths(paths[:100], content=False)[0]
        hundred.append(time.perf_counter() - a)
    return {"paths": len(paths), "leaf_dirs": dirs, "delivered": len(first), "cold": cold, "warm": statistics.median(again), "warm_100": statistics.median(hundred)}


def main() -> None:
    compile_project()
    reps = 30
    with tempfile.TemporaryDirectory() as tmp:
        root = build(Path(tmp) / "chain")
        cwd = "/".join(LEVELS)
        res = _child(root, cwd, reps)
        ref = _references(root)
        big = build(Path(tmp) / "big", big_agents_mib=50)
        res_big = _child(big, cwd, 5)
    jit = _jit()
    ms = lambda s: f"{s * 1000:.2f} ms"  # noqa: E731
    warm = statistics.median(res["warm"])
    print(f"5-level chain + 1 MB README (cwd={cwd}), budget 8,000 / README cap 2,000; prefix {res['tokens']:,} tokens")
    for f in res["files"]:
        print(f"  {f[0]}: {f[1]:,} B, {f[2]:,} tokens, {f[3]:,} included, {f[4]}")
    print(f"cold: first preload in a process  {ms(res['cold_preload'])}  (+ encoding load {ms(res['encoding'])}, import {ms(res['import_ws'])})")
    print(f"warm: same workspace, median of {reps}  {ms(warm)}  (max {ms(max(res['warm']))})")
    print(f"warm: new Workspace, same process  {ms(res['fresh_ws'])}")
    print(f"reference: read the 6 files' bytes  {ms(ref['read_six_files'])}  -> warm/read = {warm / ref['read_six_files']:.1f}x")
    print(f"reference: one tiktoken encode of the README  {ms(ref['encode_readme_once'])}  -> cold/encode = {res['cold_preload'] / ref['encode_readme_once']:.1f}x")
    print(f"50 MB AGENTS.md at the deepest level: cold {ms(res_big['cold_preload'])}, warm {ms(statistics.median(res_big['warm']))}")
    for f in res_big["files"]:
        if f[1] > 10_000_000:
            print(f"  {f[0]}: {f[1]:,} B, tokens {f[2]}, {f[3]:,} included, {f[4]}")
    if jit:
        print(
            f"JIT over {jit['paths']:,} glob paths of the synthetic repo ({jit['leaf_dirs']:,} leaf dirs, {jit['delivered']} delivered): "
            f"first {ms(jit['cold'])}, again {ms(jit['warm'])}, 100 paths again {ms(jit['warm_100'])}"
        )


if __name__ == "__main__":
    main()
