"""Code-structure figures (issue 13): outline, the symbol index, token economy.

    fetch github:ansible/ansible ; git clone -q /work/.mirror/ansible+ansible/repo benchmarks/.data/ansible
    python benchmarks/bench_symbols.py [--repo benchmarks/.data/ansible] [--file PATH] [--runs 5] [--big DIR]

On a real checkout (default ``benchmarks/.data/ansible``: 5,053 files, 1,564
Python), whole processes of the installed ``jitctx`` beside this interpreter:

- outline of the repository's longest Python file: output tokens against the
  file's, and wall time against ``jitctx head FILE -n 100`` (interleaved).
  Targets: at most 1/10 of the file's tokens, within 1.5x of head's time.
- cold build: ``jitctx symbols NAME`` with an empty cache directory (the
  whole index built), then the store's size. Target: 2,000 Python files in 6 s.
- warm lookup: ``jitctx symbols NAME`` against ``jitctx glob '**/*.py'``
  (interleaved). Target: within 1.5x.
- incremental: 10 files changed (appended a function), then one lookup:
  how many files were analysed again (``RefreshStats.analyzed``, in process).
- token economy: for definitions picked across the repository, "show me the
  definition of X" done as symbols + head --symbol against grep for
  ``def X``/``class X`` + head windows of 40 lines from the match until the
  definition's end is in view (the text-only way): tokens and calls.
- ``--big DIR``: a large tree (e.g. the real 100k-file tree of
  ``realtree.py``): cold build time, store size, and a warm lookup.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from common import compile_project, fmt_ms, interleaved, med  # noqa: E402

DATA = Path(__file__).resolve().parent / ".data"


def jitctx() -> str:
    return str(Path(sys.executable).with_name("jitctx"))


def run(argv, cwd, env) -> str:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False).stdout


def longest_python(repo: Path) -> str:
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    return max(files, key=lambda f: (repo / f).stat().st_size if (repo / f).is_file() else 0)


def cold_build(repo: Path, env: dict, name: str) -> tuple[float, int]:
    cache = Path(tempfile.mkdtemp(prefix="jitctx-bench-cache-"))
    e = {**env, "JITCTX_CACHE_DIR": str(cache)}
    t = time.perf_counter()
    subprocess.run([jitctx(), "symbols", name], cwd=repo, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    took = time.perf_counter() - t
    size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
    shutil.rmtree(cache, ignore_errors=True)
    return took, size


def economy(repo: Path, samples: int, seed: int) -> dict:
    """Tokens and calls for "show me the definition of X", both ways, in process."""
    from jitctx.session.workspace import Workspace

    ws = Workspace(repo)
    ws.symbols("x")
    rnd = random.Random(seed)
    conn = ws.code.index._conn
    rows = conn.execute(
        "SELECT f.path, d.name, d.start_line, d.end_line FROM definitions d JOIN files f ON f.id = d.file_id "
        "WHERE d.kind IN ('function', 'class', 'method') AND f.path LIKE '%.py' AND d.end_line - d.start_line >= 5"
    ).fetchall()
    picked = rnd.sample(rows, min(samples, len(rows)))
    count = ws.tokenizer.count
    from jitctx.render import render_text

    ours = {"tokens": 0, "calls": 0}
    text = {"tokens": 0, "calls": 0}
    for path, name, start, end in picked:
        found = ws.symbols(name, limit=10)
        ours["calls"] += 2
        ours["tokens"] += count(render_text(found))
        hit = next((s for s in found.results if s.path == path and s.start_line == start), found.results[0])
        try:
            ours["tokens"] += count(render_text(ws.head(hit.path, symbol=hit.qualname)))
        except Exception:  # an ambiguous qualname (overloads): one more call, by lines
            ours["calls"] += 1
            ours["tokens"] += count(render_text(ws.head(hit.path, hit.end_line - hit.start_line + 1, start=hit.start_line)))
        # the text-only way: grep the definition line, then 40-line windows until its end is shown
        g = ws.grep(rf"^\s*(async\s+)?(def|class)\s+{name}\b", mode="content", limit=20)
        text["calls"] += 1
        text["tokens"] += count(render_text(g))
        line = next((r.line for r in g.results if r.path == path), start)
        shown = line - 1
        while shown < end:
            text["calls"] += 1
            text["tokens"] += count(render_text(ws.head(path, 40, start=shown + 1)))
            shown += 40
    return {"samples": len(picked), "ours": ours, "text": text}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=DATA / "ansible")
    ap.add_argument("--file", help="the file to outline (default: the longest Python file)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--big", type=Path, help="a large tree for the cold-build figure")
    args = ap.parse_args()
    repo = args.repo.resolve()
    if not (repo / ".git").exists():
        sys.exit(f"{repo} is not a git checkout; see the docstring for the recipe")
    compile_project()
    env = {**os.environ}
    py = subprocess.run(["git", "ls-files", "*.py"], cwd=repo, capture_output=True, text=True, check=True).stdout.count("\n")
    total = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout.count("\n")
    print(f"repo {repo.name}: {total:,} files, {py:,} Python")

    took, size = cold_build(repo, env, "main")
    print(f"cold build (symbols main, empty cache): {took:.2f} s, store {size / 1e6:.1f} MB")

    run([jitctx(), "symbols", "main"], repo, env)  # the warm index for what follows
    target = args.file or longest_python(repo)
    from jitctx.tokens.tokenizer import get_tokenizer

    count = get_tokenizer().count
    outline_text = run([jitctx(), "outline", target], repo, env)
    file_tokens = count((repo / target).read_text(encoding="utf-8", errors="replace"))
    lines = (repo / target).read_bytes().count(b"\n")
    out_tokens = count(outline_text)
    print(f"outline {target} ({lines:,} lines): {out_tokens:,} tokens of {file_tokens:,} = 1/{file_tokens / max(out_tokens, 1):.1f}")
    times = interleaved({"outline": [jitctx(), "outline", target], "head -n 100": [jitctx(), "head", target, "-n", "100"]}, args.runs, cwd=repo, env=env)
    o, h = med(times["outline"]), med(times["head -n 100"])
    print(f"  outline {fmt_ms(o)} vs head -n 100 {fmt_ms(h)}: {o / h:.2f}x")

    times = interleaved({"symbols": [jitctx(), "symbols", "Task"], "glob": [jitctx(), "glob", "**/*.py"]}, args.runs, cwd=repo, env=env)
    s, g = med(times["symbols"]), med(times["glob"])
    print(f"warm symbols Task {fmt_ms(s)} vs glob '**/*.py' {fmt_ms(g)}: {s / g:.2f}x")

    from jitctx.session.workspace import Workspace

    ws = Workspace(repo)
    ws.symbols("main")
    changed = subprocess.run(["git", "ls-files", "*.py"], cwd=repo, capture_output=True, text=True, check=True).stdout.split()[:10]
    saved = {f: (repo / f).read_bytes() for f in changed}
    try:
        for f in changed:
            (repo / f).write_bytes(saved[f] + b"\n\ndef added_by_bench():\n    return 1\n")
        ws.symbols("added_by_bench")
        stats = ws.code.last
        print(f"after 10 files changed: {stats.analyzed} analysed, {stats.unchanged:,} trusted unread, {stats.rehashed_same} re-hashed")
    finally:
        for f, data in saved.items():
            (repo / f).write_bytes(data)
    ws.symbols("main")

    e = economy(repo, args.samples, 1)
    ours, text = e["ours"], e["text"]
    print(
        f"definition lookups ({e['samples']}): symbols + head --symbol {ours['tokens']:,} tokens in {ours['calls']} calls; "
        f"grep + 40-line windows {text['tokens']:,} tokens in {text['calls']} calls ({text['tokens'] / max(ours['tokens'], 1):.2f}x)"
    )

    if args.big:
        big = args.big.resolve()
        cache = Path(tempfile.mkdtemp(prefix="jitctx-bench-cache-"))
        e = {**env, "JITCTX_CACHE_DIR": str(cache)}
        t = time.perf_counter()
        subprocess.run([jitctx(), "symbols", "main"], cwd=big, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        took = time.perf_counter() - t
        size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
        times = interleaved({"symbols": [jitctx(), "symbols", "parse"], "glob": [jitctx(), "glob", "**/*.py"]}, args.runs, cwd=big, env=e)
        s, g = med(times["symbols"]), med(times["glob"])
        shutil.rmtree(cache, ignore_errors=True)
        print(f"big tree {big.name}: cold build {took:.1f} s, store {size / 1e6:.0f} MB; warm symbols {fmt_ms(s)} vs glob {fmt_ms(g)}: {s / g:.2f}x")


if __name__ == "__main__":
    main()
