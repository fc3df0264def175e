"""Build a file-localization task set from the history of real public repositories.

A task is one past commit: its message (subject and body) with the touched
files' names masked, the repository as it was at the commit's parent, and
the gold answer, the non-test source files the commit changed. A locator
that reads the task and the repository should rank the gold files first
(``bench_locate.py`` measures that).

Sources (snapshots used for docs/benchmarks.md)::

    fetch github:pytest-dev/pytest   # df87db7b0462  Python, 680 files at HEAD
    fetch github:pallets/flask       # 2ac89889f4cc  Python, 236
    fetch github:jqlang/jq           # 579e6f76cffd  C, 429
    fetch github:redis/redis         # 4f8cdc2a1ea5  C (+ Tcl tests), 1,623
    fetch github:curl/curl           # 5c61e168698a  C, 4,449

Set 2 (issue 24: other languages; never used for tuning, only measured)::

    fetch github:junegunn/fzf        # 956562daaa82  Go, 160 files at HEAD
    fetch github:urfave/cli          # 1305a08200f7  Go, 173
    fetch github:BurntSushi/ripgrep  # 3fce3b5bb023  Rust, 237
    fetch github:sharkdp/bat         # 2ba8db9c14e5  Rust (+ syntax assets), 1,006
    fetch github:colinhacks/zod      # e516c3baf226  TypeScript, 670
    fetch github:google/gson         # 9835b6f90192  Java, 313

The ``fetch`` tool leaves each at ``/work/.mirror/<owner>+<name>/repo``;
``git clone --mirror https://github.com/<owner>/<name> <name>.git`` gives
the same history (newer commits may then be sampled).

    python benchmarks/locate_tasks.py /work/.mirror/{pytest-dev+pytest,...}/repo
    JITCTX_LOCATE_MIRRORS="dir1 dir2" python benchmarks/locate_tasks.py [--per-repo 30] [--seed 1]
    python benchmarks/locate_tasks.py --data benchmarks/.data/locate2 \
        /work/.mirror/{junegunn+fzf,urfave+cli,BurntSushi+ripgrep,sharkdp+bat,colinhacks+zod,google+gson}/repo

Writes ``benchmarks/.data/locate/tasks.jsonl`` (one JSON object a line:
``id``, ``repo``, ``commit``, ``parent``, ``date``, ``root``, ``task``,
``gold``, ``touched``) and one small git repository per task at
``benchmarks/.data/locate/<name>/<parent sha>/`` (``--data DIR``: in
``DIR`` instead; set 2 in ``benchmarks/.data/locate2``, which
``bench_locate.py --data`` reads) (the parent's tree exactly
as committed, see ``common.export_tree``, in one commit), reused when
present. No network: it reads only the mirrors.

Which commits (every rule is in ``eligible``):
- non-merge commits reachable from HEAD, parent = first parent;
- they modify 1-3 *source* files (extension in ``SOURCE_EXT``, not a test
  or doc path: under a ``TEST_DIRS`` folder such as ``tests/``,
  ``__tests__/``, Java's ``src/test/``, Go's ``testdata/``, or a test's
  name: ``test_x.py``, ``x_test.go``, ``x.test.ts``, ``x.spec.ts``,
  ``FooTest.java``) and nothing else but tests and docs (no build, CI,
  config or data files); every source file already exists at the parent (no adds,
  deletes or renames of source files), and the source change is more than
  whitespace (``git diff -w`` is not empty);
- the parent tree holds at least ``MIN_FILES`` files, and the commit is
  not older than ``HISTORY_FROM`` for its repository (pytest: 2010-11-01;
  set 2: after the last first-parent commit whose tree holds fewer than
  ``MIN_FILES`` files, whose strata would all be dropped: fzf 2023-09-01,
  urfave/cli 2022-05-01, ripgrep 2017-04-01, bat 2018-10-01, zod
  2021-06-01; gson from its start);
- the message has 6+ words once masked, and its subject is not a merge,
  revert, release, version bump, typo, formatting, lint or style commit,
  nor a bot's (``SKIP_SUBJECT``).
From those, ``--per-repo`` are sampled across the history: the eligible
commits in date order are cut into that many equal strata and one is drawn
from each with ``random.Random(f"{seed}:{repo}")``.

Masking (``mask``): for every file the commit touched (sources, tests,
docs), its repository path, its basename and its basename without the last
extension are replaced by ``<file>`` wherever they occur as whole words
(case-sensitive; not preceded or followed by a letter, digit or ``_``),
longest first. Trailers (``Signed-off-by:`` and other ``*-by:`` lines,
``Change-Id:``, ``Cc:``) and "(cherry picked from ...)" lines are dropped.
Nothing else is changed: directory names, function names and issue numbers
stay, as a user's task would have them.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import export_tree

DATA = Path(os.environ.get("JITCTX_BENCH_DATA") or Path(__file__).resolve().parent / ".data")
MIRRORS_ENV = "JITCTX_LOCATE_MIRRORS"
MIN_FILES = 100
SOURCE_EXT = {
    ".py",
    ".pyi",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".hpp",
    ".hh",
    ".y",
    ".l",
}
SOURCE_EXT |= {
    ".js",
    ".mjs",
    ".cjs",
    ".jsx",
    ".ts",
    ".tsx",
    ".go",
    ".rs",
    ".java",
    ".tcl",
    ".lua",
    ".jq",
}
TEST_DIRS = {
    "test",
    "tests",
    "testing",
    "testsuite",
    "testdir",
    "t",
    "__tests__",
    "spec",
    "specs",
    "testdata",  # Go: the go tool ignores it, test inputs and golden files
}
DOC_DIRS = {"doc", "docs", "documentation", "changelog", "man", "examples", "example"}
DOC_EXT = {".md", ".rst", ".txt", ".adoc", ".1", ".3"}
BUILD_SCRIPTS = {
    "setup.py",
    "noxfile.py",
    "fabfile.py",
    "build.py",
}  # counted as build files, not source
DOC_NAMES = {
    "changes",
    "changelog",
    "news",
    "authors",
    "readme",
    "license",
    "copying",
    "thanks",
    "todo",
}
SKIP_SUBJECT = re.compile(
    r"^(revert|release|prepare|version|v?\d+\.\d+)\b|\bmerg(e|ed|ing)\b|\bbump|next release|typo|spelling"
    r"|\breformat|formatting"
    r"|\bformat(ted)? (code|with|using)|\bblack\b|isort|clang-format|whitespace|\blint|\bstyle\b"
    r"|pre-commit|dependabot|\[bot\]|copyright|changelog|cherry.pick",
    re.IGNORECASE,
)
TRAILER = re.compile(
    r"^\s*([A-Za-z-]+-by|Change-Id|Cc)\s*:|^\s*\(cherry picked from|^--HG--$|^branch : ",
    re.IGNORECASE,
)
# Where a repository's history starts to count. pytest: before, it was the py library, whose
# test framework lived under py/test/ (a test path by these rules).
# The others (set 2): before, the tree held fewer than MIN_FILES files at every commit, so
# every draw there would be dropped and its stratum wasted.
HISTORY_FROM = {
    "pytest-dev/pytest": "2010-11-01",
    "junegunn/fzf": "2023-09-01",
    "urfave/cli": "2022-05-01",
    "BurntSushi/ripgrep": "2017-04-01",
    "sharkdp/bat": "2018-10-01",
    "colinhacks/zod": "2021-06-01",
}
MASK = "<file>"
DATE = "1700000000 +0000"
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": DATE,
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_DATE": DATE,
}


def git(git_dir: Path | None, *args: str, cwd: Path | None = None) -> str:
    pre = [
        "git",
        "-c",
        "core.autocrlf=false",
        "-c",
        "gc.auto=0",
        "-c",
        "maintenance.auto=false",
    ]
    pre += ["--git-dir", str(git_dir)] if git_dir else []
    return subprocess.run(
        [*pre, *args],
        cwd=cwd,
        env=GIT_ENV,
        capture_output=True,
        text=True,
        check=True,
        errors="replace",
    ).stdout


def kind(path: str) -> str:
    """``source``, ``test``, ``doc`` or ``other`` (build, CI, config, data)."""
    p = PurePosixPath(path)
    parts = [s.lower() for s in p.parts[:-1]]
    name = p.name.lower()
    if any(s in TEST_DIRS for s in parts) or name == "conftest.py" or re.search(r"(^|[._-])tests?([._-]|$)", name):
        return "test"
    if re.search(r"[._-]spec\.[cm]?[jt]sx?$", name) or re.search(r"[a-z0-9]Tests?\.java$", p.name):
        return "test"  # JS/TS ``*.spec.ts`` (``*.test.ts`` above); Java ``FooTest.java`` outside ``src/test/``
    if any(s in DOC_DIRS for s in parts) or p.suffix.lower() in DOC_EXT:
        return "doc"
    if p.suffix.lower() in SOURCE_EXT and name not in BUILD_SCRIPTS:
        return "source"
    return "doc" if name.split(".")[0] in DOC_NAMES else "other"


def mask(message: str, touched: list[str]) -> str:
    """The message without trailers, the touched files' names replaced (see the module docstring)."""
    names = set()
    for path in touched:
        base = PurePosixPath(path).name
        names |= {path, base, base.rsplit(".", 1)[0] if "." in base[1:] else base}
    lines = [ln for ln in message.splitlines() if not TRAILER.search(ln)]
    text = "\n".join(lines).strip()
    for name in sorted(filter(None, names), key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", MASK, text)
    return text


def history(git_dir: Path) -> list[dict]:
    """Non-merge commits, oldest first, with their first parent, date, message and name-status."""
    sep = "\x1e"
    out = git(
        git_dir,
        "log",
        "--no-merges",
        "--reverse",
        "--no-renames",
        "--name-status",
        f"--format={sep}%H %P%n%ct%n%B{sep}",
    )
    commits = []
    chunks = out.split(sep)[1:]
    for head, files in zip(chunks[0::2], chunks[1::2]):
        shas, date, message = head.split("\n", 2)
        shas = shas.split()
        if len(shas) != 2:
            continue  # a root commit
        status = [ln.split("\t") for ln in files.strip().splitlines() if "\t" in ln]
        commits.append(
            {
                "commit": shas[0],
                "parent": shas[1],
                "date": int(date),
                "message": message.strip(),
                "status": status,
            }
        )
    return commits


def eligible(git_dir: Path, c: dict) -> dict | None:
    """The task for commit ``c``, or None when a rule of the module docstring excludes it."""
    kinds = {path: kind(path) for _, path, *_ in c["status"]}
    gold = sorted(p for p, k in kinds.items() if k == "source")
    if not 1 <= len(gold) <= 3 or "other" in kinds.values():
        return None
    if any(st[0] != "M" for st in c["status"] if kinds[st[1]] == "source"):
        return None
    subject = c["message"].splitlines()[0] if c["message"] else ""
    task = mask(c["message"], sorted(kinds))
    if SKIP_SUBJECT.search(subject) or len(re.findall(r"\w+", task.replace(MASK, ""))) < 6:
        return None
    if not git(git_dir, "diff", "-w", "--numstat", c["parent"], c["commit"], "--", *gold).strip():
        return None
    if len(git(git_dir, "ls-tree", "-r", "--name-only", c["parent"]).splitlines()) < MIN_FILES:
        return None
    return {"gold": gold, "touched": sorted(kinds), "task": task}


def sample(git_dir: Path, repo: str, n: int, seed: int) -> list[dict]:
    """``n`` eligible commits spread over the history (one a stratum), oldest first."""
    since = HISTORY_FROM.get(repo)
    start = datetime.datetime.fromisoformat(since).replace(tzinfo=datetime.timezone.utc).timestamp() if since else 0
    commits = [c for c in history(git_dir) if c["date"] >= start]
    rng = random.Random(f"{seed}:{repo}")
    # Cheap rules first over all commits, the costly ones (git calls) only on strata draws.
    cheap = [c for c in commits if _cheap_ok(c)]
    bounds = [round(i * len(cheap) / n) for i in range(n + 1)]
    picked = []
    for lo, hi in itertools.pairwise(bounds):
        stratum = cheap[lo:hi]
        rng.shuffle(stratum)
        for c in stratum:
            t = eligible(git_dir, c)
            if t:
                picked.append({**c, **t})
                break
    return picked


def _cheap_ok(c: dict) -> bool:
    kinds = [kind(st[1]) for st in c["status"]]
    subject = c["message"].splitlines()[0] if c["message"] else ""
    return 1 <= kinds.count("source") <= 3 and "other" not in kinds and not SKIP_SUBJECT.search(subject)


def materialize(git_dir: Path, parent: str, dest: Path) -> None:
    """The parent's tree as a one-commit repository at ``dest`` (kept when already there)."""
    marker = dest / ".git/jitctx-locate"
    if marker.is_file() and marker.read_text().strip() == parent:
        return
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    mtime = int(git(git_dir, "log", "-1", "--format=%ct", parent))
    export_tree(git_dir, parent, tmp, mtime=mtime)
    git(None, "-c", "init.defaultBranch=main", "init", "-q", cwd=tmp)
    (tmp / ".git/info/attributes").write_text("* -text -filter -ident\n")  # blobs as committed
    git(None, "add", "-A", "-f", cwd=tmp)
    git(
        None,
        "commit",
        "-q",
        "--no-verify",
        "--allow-empty",
        "-m",
        f"parent {parent}",
        cwd=tmp,
    )
    (tmp / ".git/info/attributes").unlink()
    (tmp / ".git/jitctx-locate").write_text(parent + "\n")
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)


def repo_name(git_dir: Path) -> str:
    """``/work/.mirror/owner+name/repo`` -> ``owner/name``; ``name.git`` -> ``name``."""
    if git_dir.name == "repo" and "+" in git_dir.parent.name:
        return git_dir.parent.name.replace("+", "/", 1)
    return git_dir.name.removesuffix(".git")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "mirrors",
        nargs="*",
        type=Path,
        help=f"bare git directories (default: ${MIRRORS_ENV})",
    )
    ap.add_argument("--per-repo", type=int, default=30, help="tasks per repository (default 30)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--data",
        type=Path,
        default=DATA / "locate",
        help="output folder (default benchmarks/.data/locate)",
    )
    args = ap.parse_args(argv)
    mirrors = args.mirrors or [Path(p) for p in os.environ.get(MIRRORS_ENV, "").split()]
    if not mirrors:
        ap.error(f"give the mirror directories as arguments or in ${MIRRORS_ENV}")
    tasks = []
    for m in mirrors:
        repo = repo_name(m)
        name = repo.rsplit("/", 1)[-1]
        picked = sample(m, repo, args.per_repo, args.seed)
        for c in picked:
            root = args.data / name / c["parent"]
            materialize(m, c["parent"], root)
            tasks.append(
                {
                    "id": f"{name}-{c['commit'][:10]}",
                    "repo": repo,
                    "commit": c["commit"],
                    "parent": c["parent"],
                    "date": c["date"],
                    "root": str(root.relative_to(args.data)),
                    "task": c["task"],
                    "gold": c["gold"],
                    "touched": c["touched"],
                }
            )
        print(f"{repo}: {len(picked)} tasks", flush=True)
    keep = {t["root"] for t in tasks}
    for old in args.data.glob("*/*"):  # tasks no longer sampled: their repository and what sits beside it
        if f"{old.parent.name}/{old.name.split('.')[0]}" not in keep:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    out = args.data / "tasks.jsonl"
    out.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks))
    print(f"{len(tasks)} tasks -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
