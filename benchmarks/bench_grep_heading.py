"""grep content text: tokens with each line led by its path (before) and grouped under its file (after).

    python benchmarks/bench_grep_heading.py DIR [DIR ...]

Each DIR is a checkout of a real repository (not a held-out one), e.g. from the
mirrors: ``git clone /work/.mirror/tokio-rs+tokio/repo /work/data/wt33/tokio``
(also fmtlib+fmt, marshmallow-code+marshmallow). For each repository it runs a
fixed set of lookups an agent makes (identifiers and phrases found in the tree
itself: the most frequent definitions' names, with and without ``-C 2``), each as
``Workspace.grep(pattern, mode="content", limit=100)``, and counts with the
cl100k encoding the tokens of the text a model reads:

- before: the rendering of d0427c2, every match and context line led by its
  path (``src/a.rs:12:text``, ``src/a.rs-13-text``), ``--`` between groups;
- after: ``render_text`` now, the path once per file as ``rg --heading`` prints it.

Both render the same Result, so only the layout differs. Reported per lookup and
in total; "multi-line" lookups are those whose results hold at least two lines
for some file (the case grouping helps), "one line a file" the rest.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from jitctx import Workspace  # noqa: E402
from jitctx.refs import LineRef  # noqa: E402
from jitctx.render import render_text  # noqa: E402
from jitctx.text.lines import show_name  # noqa: E402
from jitctx.tokens.tokenizer import get_tokenizer  # noqa: E402


def before(res) -> str:
    """The grep content text of d0427c2: the path on every line."""
    parts = [ln for ln in render_text(res).splitlines() if ln.startswith("[")]  # stale, instructions, notice
    head = [p for p in parts if not p.startswith(("[note]", "[truncated]"))]
    tail = [p for p in parts if p.startswith(("[note]", "[truncated]"))]
    lines: list[str] = []
    context = any(r.before or r.after for r in res.results)
    prev = None
    for r in res.results:
        path = show_name(r.path)
        if context and prev is not None:
            last = prev.after[-1]["line"] if prev.after else prev.line
            first = r.before[0]["line"] if r.before else r.line
            if r.path != prev.path or first > last + 1:
                lines.append("--")
        lines += [f"{path}-{c['line']}-{c['text']}" for c in r.before]
        lines.append(f"{path}:{r.line}:{r.text}" if r.symbol is None else f"{path}:{r.line} [{show_name(r.symbol)}]:{r.text}")
        lines += [f"{path}-{c['line']}-{c['text']}" for c in r.after]
        prev = r
    return "\n".join([*head, *lines, *tail])


_DEF = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:fn|def|class|struct|enum|trait)\s+([A-Za-z_]\w{3,})", re.M)


def lookups(root: Path) -> list[tuple[str, int]]:
    """Names defined most often in the tree (the names an agent greps for), each plain and with -C 2."""
    files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    names: Counter = Counter()
    for f in files:
        if f.endswith((".rs", ".py", ".h", ".cc", ".cpp")):
            try:
                names.update(_DEF.findall((root / f).read_text(errors="replace")))
            except OSError:
                continue
    common = [n for n, _ in names.most_common(40) if n not in ("main", "test", "self", "__init__", "new")][:6]
    return [(n, c) for n in common for c in (0, 2)]


def main(dirs: list[str]) -> None:
    tok = get_tokenizer()
    totals = {"multi": [0, 0, 0], "single": [0, 0, 0]}
    for d in dirs:
        root = Path(d).resolve()
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
        print(f"\n{root.name} @ {head}")
        print(f"  {'lookup':34} {'matches':>7} {'before':>7} {'after':>7} {'saved':>6}")
        with Workspace(root) as ws:
            for name, c in lookups(root):
                res = ws.grep(name, mode="content", context=c or None, limit=100)
                hits = [r for r in res.results if isinstance(r, LineRef)]
                if not hits:
                    continue
                b, a = tok.count(before(res)), tok.count(render_text(res))
                per_file = Counter(r.path for r in hits)
                multi = c > 0 or max(per_file.values()) >= 2
                kind = "multi" if multi else "single"
                totals[kind][0] += b
                totals[kind][1] += a
                totals[kind][2] += 1
                label = f"{name}{' -C 2' if c else ''}"
                print(f"  {label:34} {len(hits):>7} {b:>7} {a:>7} {1 - a / b:>6.1%}")
    print()
    for kind, (b, a, n) in totals.items():
        if n:
            what = "multi-line (several lines in a file)" if kind == "multi" else "one line a file"
            print(f"{what:38} {n:>3} lookups: {b:>7,} -> {a:>7,} tokens, {1 - a / b:.1%} fewer")
    b = sum(t[0] for t in totals.values())
    a = sum(t[1] for t in totals.values())
    print(f"{'all':38} {sum(t[2] for t in totals.values()):>3} lookups: {b:>7,} -> {a:>7,} tokens, {1 - a / b:.1%} fewer")


if __name__ == "__main__":
    main(sys.argv[1:])
