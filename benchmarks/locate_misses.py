"""The misses at 5 of a localization run, by issue 24's classes (docs/benchmarks.md).

    python benchmarks/bench_locate.py [--data DIR] --method jitctx ...     # first: the run
    python benchmarks/locate_misses.py [--data DIR] [--report FILE] [--method jitctx]

Each task whose first five files hold no gold file is put in the first class
whose rule holds (a heuristic, the same for every run, so runs compare; it
reads the task, the gold files and the index as the ranking would):

1. a name defined in one place: a code-like name or capitalised word of the
   task that a gold file defines (the symbol index);
2. a file named by the task: ``locate.names_file`` names a gold file;
4. C behind another name: a rare task word that a name table (in a file that
   is not gold) binds to a function a gold file defines (``mentions.bound``);
5. registration sites: the task is about listing and a gold file lists one of
   its names (``mentions.lists``), or a gold file holds one of its words as a
   string in a table row (``"word",``);
3. hubs: a gold file in the first ten that would be in the first five
   without the hubs ranked above it (a hub: a file that is not gold, in the
   first five of 5 or more other tasks of its repository);
6. none of these: mostly messages that do not say where (``<file>: free mem
   properly``, the file's own name masked; "Fix types broken by previous type
   cleanup").

The index is the one jitctx keeps for each task's repository (``JITCTX_CACHE_DIR``
as the run had it; built when missing). Prints the counts, per repository, and
the task ids per class. No network.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from jitctx.locate import evidence as E  # noqa: E402
from jitctx.locate import mentions as M  # noqa: E402
from jitctx.locate import roles as R  # noqa: E402
from jitctx.locate import terms as T  # noqa: E402
from jitctx.session.workspace import Workspace  # noqa: E402

DATA = Path(os.environ.get("JITCTX_BENCH_DATA") or PROJECT / "benchmarks" / ".data") / "locate"
NAMES = {1: "a name defined in one place", 2: "a file named by the task", 3: "hub files", 4: "C behind another name", 5: "registration sites", 6: "none of these (vague)"}


def classify(task: dict, files: list[str], hub: collections.Counter, root: Path) -> int:
    """The class of one miss (see the module docstring)."""
    idx = Workspace(root).code.index
    try:
        terms = T.task_terms(task["task"])
    except Exception:  # a task of stop words: nothing to go on
        return 6
    gold = set(task["gold"])

    def text(path: str) -> str:
        try:
            return (root / path).read_text("utf-8", "replace")
        except OSError:
            return ""

    names = [*terms.names, *terms.proper]
    if any(h.path in gold for n in names for h in E.definitions(idx, n)):
        return 1
    if any(E.names_file(g, {E._singular(w): w for w in terms.wholes}) for g in gold):  # noqa: SLF001
        return 2
    words = [E._last(n) for n in names] + [w for w in terms.wholes if w.isalnum()]  # noqa: SLF001
    for w in words:
        for path in idx.paths():
            if path in gold or R.file_role(path) not in ("source", "other"):
                continue
            body = text(path)
            if w.lower() in body.lower() and any(h.path in gold for ident in M.bound(body, w) for h in E.definitions(idx, ident, exact_name=True)):
                return 4
    if any(terms.lists and M.lists(text(g), E._last(n)) for g in gold for n in names):  # noqa: SLF001
        return 5
    if any(re.search(r"[\"']" + re.escape(w) + r"[\"']\s*,", text(g), re.IGNORECASE) for g in gold for w in words if len(w) >= 4):
        return 5
    at = next((i for i, f in enumerate(files[:10]) if f in gold), None)
    ahead = sum(1 for f in files[: at or 0] if hub[(task["repo"], f)] >= 6)
    if at is not None and at - ahead < 5:
        return 3
    return 6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the task set's folder (default benchmarks/.data/locate)")
    ap.add_argument("--report", type=Path, help="bench_locate's report (default <data>/report.json)")
    ap.add_argument("--method", default="jitctx")
    args = ap.parse_args()
    report = json.loads((args.report or args.data / "report.json").read_text())
    rows = report["results"][args.method]
    tasks = {t["id"]: t for t in map(json.loads, (args.data / "tasks.jsonl").read_text().splitlines())}
    hub: collections.Counter = collections.Counter()
    for r in rows:
        for f in r["files"][:5]:
            if f not in r["gold"]:
                hub[(r["repo"], f)] += 1
    by_class: dict[int, list[str]] = collections.defaultdict(list)
    per_repo: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in rows:
        if r["hit5"]:
            continue
        task = tasks[r["id"]]
        k = classify(task, r["files"], hub, args.data / task["root"])
        by_class[k].append(r["id"])
        per_repo[r["repo"]][k] += 1
    misses = sum(len(v) for v in by_class.values())
    print(f"{args.method}: {misses} of {len(rows)} tasks missed at 5")
    for k in sorted(NAMES):
        print(f"  ({k}) {NAMES[k]}: {len(by_class.get(k, []))}")
    for repo, c in per_repo.items():
        print(f"  {repo}: " + ", ".join(f"({k}) {n}" for k, n in sorted(c.items())))
    for k in sorted(by_class):
        print(f"({k})", " ".join(by_class[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
