"""Working trees and indexes for the issue-report dev set (issue 31): each report's repository at its base commit.

    fetch github:<owner>/<name>       # each of the 35 repositories of tasks.jsonl (its README lists them)
    python benchmarks/issues_dev.py [--tasks FILE] [--data DIR] [--repo NAME ...]
    python benchmarks/bench_issues.py ...          # then: the figures (see there)

The set is ``/work/shared/issues-dev/tasks.jsonl`` (450 real issue reports
from 35 repositories in 8 languages; each row: ``repo``, ``instance_id``,
``base_commit``, ``problem_statement``, ``gold_files``, ``language``; its
README says where they come from). For each distinct (repository, base
commit), in commit-date order per repository, this writes:

- a working tree at ``<data>/trees/<owner>+<name>/<base 12>/<name>`` (the
  folder is the repository's name, as a user's clone is: its own name is
  then dropped from a task's terms, as it would be): ``git clone --shared
  --no-checkout`` of the mirror ``/work/.mirror/<owner>+<name>/repo``
  (``--mirrors DIR`` for another folder of them), the blobs the snapshot
  lacks (files of 4 MiB and more) left out by a sparse checkout, then the
  base commit checked out (the README's recipe);
- its jitctx index in ``<data>/cache`` (the ``JITCTX_CACHE_DIR`` the
  benchmark sets), built by ``build.build_here`` at nice 19, starting from a
  copy of the index of the same repository's previous base commit (a refresh
  then re-analyses only the files whose content differs: the trees share
  most of it);
- ``<data>/tasks.jsonl``: per report ``id``, ``repo``, ``language``,
  ``base``, ``root`` (relative to ``<data>``), ``task`` (the report),
  ``gold`` (the files its fix changed), ``created`` (those the fix created:
  not in the tree, so no ranker can find them; ``git cat-file -e``).

Trees and indexes present are reused (a tree at the wrong commit is checked
out again). No network: it reads only the mirrors. ~2.7 GB of trees and
~1 GB of indexes; the first run takes about an hour on two busy cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
TASKS = Path("/work/shared/issues-dev/tasks.jsonl")
DATA = Path(os.environ.get("JITCTX_ISSUES_DATA") or "/work/data/issues-dev")
MIRRORS = Path("/work/.mirror")


def git(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)


def tree_root(data: Path, repo: str, base: str) -> Path:
    return data / "trees" / repo.replace("/", "+") / base[:12] / repo.rsplit("/", 1)[-1]


def checkout(mirror: Path, root: Path, base: str) -> None:
    """``root`` as a shared clone of ``mirror`` at ``base`` (the README's recipe)."""
    if (root / ".git").exists():
        head = git("rev-parse", "HEAD", cwd=root, check=False).stdout.strip()
        if head == base:
            return
        shutil.rmtree(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    git("clone", "-q", "--shared", "--no-checkout", str(mirror), str(root))
    listing = git("ls-tree", "-r", "-z", base, cwd=root).stdout
    blobs = [(meta.split()[2], path) for meta, _, path in (rec.partition("\t") for rec in listing.split("\0") if rec) if meta.split()[1] == "blob"]
    probe = subprocess.run(["git", "cat-file", "--batch-check"], cwd=root, input="".join(b + "\n" for b, _ in blobs), capture_output=True, text=True, check=True)
    missing = [path for (_, path), line in zip(blobs, probe.stdout.splitlines()) if line.endswith(" missing")]
    if missing:
        git("sparse-checkout", "set", "--no-cone", "/*", *("!/" + p for p in missing), cwd=root, check=False)
    git("-c", "advice.detachedHead=false", "checkout", "-q", base, cwd=root)


def build_index(root: Path, seed: Path | None, cache: Path) -> tuple[int, float]:
    """The jitctx index of ``root`` in ``cache``, from a copy of ``seed``'s when given; (exit, seconds)."""
    os.environ["JITCTX_CACHE_DIR"] = str(cache)
    from jitctx.cache.folders import index_file
    from jitctx.code.build import build_here

    path = Path(index_file(root))
    if path.exists():
        return 0, 0.0
    if seed is not None and (old := Path(index_file(seed))).exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(old, path)
    t = time.perf_counter()
    code = build_here(str(root), str(path), nice=True)
    return code, time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=Path, default=TASKS)
    ap.add_argument("--data", type=Path, default=DATA, help=f"where trees, indexes and tasks.jsonl go (default {DATA})")
    ap.add_argument("--mirrors", type=Path, default=MIRRORS, help="folder of <owner>+<name>/repo git dirs (default /work/.mirror)")
    ap.add_argument("--repo", action="append", help="only this repository (owner/name or name; repeatable)")
    ap.add_argument("--no-index", action="store_true", help="trees only")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(PROJECT))
    rows = [json.loads(line) for line in args.tasks.read_text().splitlines() if line.strip()]
    if args.repo:
        rows = [r for r in rows if r["repo"] in args.repo or r["repo"].rsplit("/", 1)[-1] in args.repo]
    data = args.data.resolve()
    cache = data / "cache"
    by_repo: dict[str, list[dict]] = {}
    for r in rows:
        by_repo.setdefault(r["repo"], []).append(r)
    out = []
    for repo, its in by_repo.items():
        mirror = args.mirrors / repo.replace("/", "+") / "repo"
        bases = list(dict.fromkeys(r["base_commit"] for r in its))
        dates = {b: int(git("--git-dir", str(mirror), "show", "-s", "--format=%ct", b).stdout.strip() or 0) for b in bases}
        seed = None
        for base in sorted(bases, key=lambda b: (dates[b], b)):
            root = tree_root(data, repo, base)
            t = time.perf_counter()
            checkout(mirror, root, base)
            took = time.perf_counter() - t
            code, built = (0, 0.0) if args.no_index else build_index(root, seed, cache)
            print(f"{repo:<34} {base[:12]}  checkout {took:5.1f} s  index {built:6.1f} s{'' if code == 0 else f'  (build exit {code})'}", flush=True)
            seed = root
        for r in its:
            root = tree_root(data, repo, r["base_commit"])
            created = [g for g in r["gold_files"] if git("cat-file", "-e", f"{r['base_commit']}:{g}", cwd=root, check=False).returncode != 0]
            out.append(
                {
                    "id": r["instance_id"],
                    "repo": repo,
                    "language": r["language"],
                    "base": r["base_commit"],
                    "root": str(root.relative_to(data)),
                    "task": r["problem_statement"],
                    "gold": r["gold_files"],
                    "created": created,
                }
            )
    name = "tasks.jsonl" if not args.repo else "tasks.partial.jsonl"
    (data / name).write_text("".join(json.dumps(o) + "\n" for o in out))
    print(f"{len(out)} tasks -> {data / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
