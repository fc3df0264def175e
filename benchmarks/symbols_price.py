"""A definition's price against the cost of the read it names, on real repositories (issue 32).

    python benchmarks/symbols_price.py REPO... [--names 100] [--seed 32]

For each repository (a work tree; its index is built first, ``jitctx index``'s
body), ``--names`` definition names are drawn from the index (seeded, every kind),
and ``symbols NAME`` is asked for each; every definition it lists is priced
(``tokens``). Each is then read with the call it names, ``head PATH --symbol
QUALNAME --start LINE``, and the read is counted as the caller receives it:
rendered for a tool caller (paths as they are, hints as tool arguments) and for
the CLI from the root (hints as flags). Reports per repository: definitions
priced, the largest gap |price - cost| / cost, how many are within 5%, and the
total price against the total cost. A Workspace without re-read notes (each
read whole, as a first read is).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repos", nargs="+", type=Path)
    ap.add_argument("--names", type=int, default=100)
    ap.add_argument("--seed", type=int, default=32)
    args = ap.parse_args()
    from jitctx.adapters.cliview import CliView
    from jitctx.code import build
    from jitctx.render import render_text
    from jitctx.session.workspace import Workspace

    for root in args.repos:
        root = root.resolve()
        with Workspace(root, rereads=False) as ws:
            path = ws.code.index.path
        build.build_here(str(root), path, nice=False)
        with Workspace(root, rereads=False) as ws:
            conn = ws.code.index._conn
            names = sorted({r[0] for r in conn.execute("SELECT DISTINCT name FROM definitions")})
            rng = random.Random(args.seed)
            picked = rng.sample(names, min(args.names, len(names)))
            gaps: list[float] = []
            cli_gaps: list[float] = []
            price = cost = 0
            worst = None
            started = time.perf_counter()
            for name in picked:
                for s in ws.symbols(name, limit=50).results:
                    read = ws.head(s.path, symbol=s.qualname, start=s.start_line)
                    c = ws.tokenizer.count(render_text(read))
                    cli = ws.tokenizer.count(render_text(read, view=CliView("")))
                    gap = abs(s.tokens - c) / c
                    gaps.append(gap)
                    cli_gaps.append(abs(s.tokens - cli) / cli)
                    price += s.tokens
                    cost += c
                    if worst is None or gap > worst[0]:
                        worst = (gap, s.path, s.qualname, s.tokens, c)
            n = len(gaps)
            within = sum(g <= 0.05 for g in gaps)
            cli_within = sum(g <= 0.05 for g in cli_gaps)
            print(
                f"{root.name}: {len(picked)} names, {n} definitions priced; within 5%: {within}/{n} (tool view), {cli_within}/{n} (CLI view);"
                f" largest gap {max(gaps, default=0):.1%} (CLI {max(cli_gaps, default=0):.1%}); total price {price:,} vs cost {cost:,};"
                f" {time.perf_counter() - started:.1f} s"
            )
            if worst is not None and worst[0] > 0:
                print(f"   worst: {worst[1]} {worst[2]}: price {worst[3]:,}, cost {worst[4]:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
