"""Localization on real issue reports: does ``locate`` put the files an issue's fix changed first?

    python benchmarks/issues_dev.py                 # once: trees and indexes (see there)
    python benchmarks/bench_issues.py [--data DIR] [--code DIR] [--repo NAME] [--language L] [--window] [--out FILE]

Each report of ``<data>/tasks.jsonl`` (issue 31's dev set: 450 issue reports
from 35 repositories in 8 languages, the text as filed, the repository at the
base commit, the files the fix changed) is given to ``Workspace.locate``
in this process (``--limit 10``), on the index ``issues_dev.py`` built
(``JITCTX_CACHE_DIR=<data>/cache``). ``--code DIR``: import jitctx from that
checkout instead (the code before a change, on the same indexes: a
``git archive`` of it).

Figures, over all reports, per language and per repository: hit@1, hit@3,
hit@5, hit@10 (a gold file among the first k). The files a fix created are
not in the tree at its base: no ranker can find them, so they are counted as
unreachable (left out of the gold; every report keeps at least one file that
exists). all@10: every reachable gold file among the first 10. ``--window``:
also ``context --task`` at ``--budget`` (8,000) tokens, its evidence files
(the window's labels in order) scored alike, and whether every window is
within its budget.

Misses at 5, by class (the first rule that holds; a heuristic, the same for
every run, so runs compare):

- ``named``: the report names a gold file (its path, a path ending with it,
  or its file name);
- ``message``: a string the report quotes or shows in a code block (at least
  12 characters, three words) is in a gold file verbatim;
- ``defined``: a code-like name of the report is defined in a gold file (the
  symbol index);
- ``nonsource``: every reachable gold file is docs, build files or data;
- ``near``: a gold file is 6th to 10th;
- ``vague``: none of these.

Prints the tables and writes ``<data>/report.json`` (``--out``): per report
the files, the rank of the first gold file, the why of the gold files shown,
seconds, and the miss class. No network.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("JITCTX_ISSUES_DATA") or "/work/data/issues-dev")
KS = (1, 3, 5, 10)
_QUOTED = re.compile(r"\"([^\"\n]{12,200})\"|'([^'\n]{12,200})'|`([^`\n]{12,200})`")


def classify(task: dict, files: list[str], root: Path, ws) -> str:
    """The class of a miss at 5 (module docstring)."""
    from jitctx.locate import evidence as E
    from jitctx.locate import roles as R
    from jitctx.locate import terms as T

    gold = [g for g in task["gold"] if g not in task["created"]]
    text = task["task"]
    low = text.lower()
    for g in gold:
        name = g.rsplit("/", 1)[-1]
        if g.lower() in low or re.search(r"(?<![\w.-])" + re.escape(name.lower()) + r"(?![\w-])", low):
            return "named"
    bodies = {}
    for g in gold:
        try:
            bodies[g] = (root / g).read_text("utf-8", "replace")
        except OSError:
            bodies[g] = ""
    for m in _QUOTED.finditer(text):
        s = next(x for x in m.groups() if x)
        if len(s.split()) >= 3 and any(s in b for b in bodies.values()):
            return "message"
    try:
        terms = T.task_terms(text)
        names = [*terms.names, *terms.proper]
    except Exception:  # noqa: BLE001 - a report of stop words
        names = []
    for n in names:
        if any(h.path in gold for h in E.definitions(ws.code.index, n)):
            return "defined"
    if all(R.file_role(g) not in ("source",) for g in gold):
        return "nonsource"
    if any(f in gold for f in files[5:10]):
        return "near"
    return "vague"


def score(files: list[str], gold: set[str]) -> dict:
    rank = next((i + 1 for i, f in enumerate(files) if f in gold), None)
    return {"rank": rank, **{f"hit{k}": rank is not None and rank <= k for k in KS}, "all10": gold <= set(files[:10])}


def summarize(rows: list[dict]) -> dict:
    secs = sorted(r["seconds"] for r in rows)
    return {
        "tasks": len(rows),
        **{f"hit{k}": sum(r[f"hit{k}"] for r in rows) / len(rows) for k in KS},
        "all10": sum(r["all10"] for r in rows) / len(rows),
        "seconds_median": statistics.median(secs),
        "seconds_p90": secs[round(0.9 * (len(secs) - 1))],
        "errors": sum(1 for r in rows if r.get("error")),
    }


def table(groups: dict[str, dict]) -> str:
    cols = ("group", "tasks", *(f"hit@{k}" for k in KS), "all@10", "t med", "t p90", "err")
    out = [cols]
    for name, s in groups.items():
        out.append((name, str(s["tasks"]), *(f"{s[f'hit{k}']:.1%}" for k in KS), f"{s['all10']:.1%}", f"{s['seconds_median']:.2f}", f"{s['seconds_p90']:.2f}", str(s["errors"])))
    widths = [max(len(r[i]) for r in out) for i in range(len(cols))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in out]
    return "\n".join(lines[:1] + ["-" * len(lines[0])] + lines[1:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--code", type=Path, help="import jitctx from this checkout (default: this one)")
    ap.add_argument("--repo", action="append", help="only this repository (owner/name or name; repeatable)")
    ap.add_argument("--language", action="append", help="only this language (repeatable)")
    ap.add_argument("--id", action="append", help="only this report (repeatable)")
    ap.add_argument("--window", action="store_true", help="also context --task at --budget tokens")
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--out", type=Path, help="JSON report (default <data>/report.json)")
    ap.add_argument("--quiet", action="store_true", help="no line per report")
    args = ap.parse_args(argv)
    data = args.data.resolve()
    os.environ["JITCTX_CACHE_DIR"] = str(data / "cache")
    os.environ["JITCTX_SERVER"] = "0"
    sys.path.insert(0, str((args.code or PROJECT).resolve()))
    import jitctx
    from jitctx.session.workspace import Workspace

    tasks = [json.loads(line) for line in (data / "tasks.jsonl").read_text().splitlines() if line.strip()]
    if args.repo:
        tasks = [t for t in tasks if t["repo"] in args.repo or t["repo"].rsplit("/", 1)[-1] in args.repo]
    if args.language:
        tasks = [t for t in tasks if t["language"] in args.language]
    if args.id:
        tasks = [t for t in tasks if t["id"] in args.id]
    print(f"jitctx from {Path(jitctx.__file__).parent}; {len(tasks)} reports", flush=True)
    rows, windows = [], []
    for i, t in enumerate(tasks, 1):
        root = data / t["root"]
        gold = set(t["gold"]) - set(t["created"])
        row = {"id": t["id"], "repo": t["repo"], "language": t["language"], "gold": sorted(gold)}
        started = time.perf_counter()
        with Workspace(root) as ws:
            try:
                res = ws.locate(t["task"], limit=10)
                row["files"] = [f.path for f in res.results]
                row["why"] = {f.path: list(f.why) for f in res.results if f.path in gold}
                row["notices"] = list(res.notices) if hasattr(res, "notices") else []
            except Exception as exc:  # noqa: BLE001 - one report's failure is a miss
                row["files"], row["error"] = [], f"{type(exc).__name__}: {exc}"
            row["seconds"] = time.perf_counter() - started
            row |= score(row["files"], gold)
            if not row["hit5"]:
                row["miss"] = classify(t, row["files"], root, ws)
            if args.window:
                from jitctx.window.for_task import context_for_task

                sys.path.insert(0, str(PROJECT / "benchmarks"))
                from bench_locate import evidence_files

                try:
                    ctx = context_for_task(ws, t["task"], args.budget)
                    wfiles = evidence_files(ctx.text)
                    windows.append({"id": t["id"], "tokens": ctx.tokens, "over": ctx.tokens > args.budget, **score(wfiles, gold), "seconds": 0.0})
                except Exception as exc:  # noqa: BLE001
                    windows.append({"id": t["id"], "tokens": None, "over": False, "error": str(exc), **score([], gold), "seconds": 0.0})
        rows.append(row)
        if not args.quiet:
            mark = "1" if row["hit1"] else "5" if row["hit5"] else row.get("miss", "-")
            print(f"[{i}/{len(tasks)}] {t['id']:<36} {mark:<9} rank {row['rank']}  {row['seconds']:.2f} s", flush=True)
    groups = {"all": summarize(rows)}
    for key in ("language", "repo"):
        for name in sorted({r[key] for r in rows}):
            groups[name] = summarize([r for r in rows if r[key] == name])
    print()
    print(table(groups))
    misses = collections.Counter(r["miss"] for r in rows if "miss" in r)
    print(f"misses at 5: {sum(misses.values())} of {len(rows)}: " + ", ".join(f"{k} {n}" for k, n in misses.most_common()))
    report = {"summary": groups, "misses": dict(misses), "results": rows}
    if windows:
        ws_sum = summarize([{**w, "seconds": 0.0} for w in windows])
        over = sum(w["over"] for w in windows)
        biggest = max((w["tokens"] or 0) for w in windows)
        print(f"window ({args.budget:,} tokens): hit@1 {ws_sum['hit1']:.1%}  hit@5 {ws_sum['hit5']:.1%}  over budget {over}  largest {biggest:,}  errors {ws_sum['errors']}")
        report["window"] = {"summary": ws_sum, "over": over, "largest": biggest, "results": windows}
    out = args.out or data / "report.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"report: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
