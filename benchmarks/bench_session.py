"""Issue 22's figures: a scripted agent session on a real repository, features on and off.

    fetch github:redis/redis            # the tool leaves it at /work/.mirror/redis+redis/repo
    python benchmarks/bench_session.py [--mirror DIR] [--variants 100] [--histories 1000]

A clone of the mirror (its HEAD, history kept for the checkout) is worked by
a script of 60 turns (reads, re-reads, greps, outlines, notes, edits, a stash
and a checkout there and back), driven by this file, not by a model, twice:
in a session with the re-read rules on (``Workspace(rereads=True)``) and off.
Reported:

1. Tokens delivered: every result as the model reads it (the text
   rendering, counted with cl100k), on against off; target at most 0.5x.
2. Facts: after each read, what a model that saw every answer of the session
   knows of the lines it asked for (a simulated memory: numbered lines of
   excerpts, unified diffs applied by this file's own reading of them) must be
   the file's lines now, line for line: 0 stale answers (a line known wrong),
   0 missed changes (a line asked for and not known). Then the same over
   ``--variants`` randomized sessions on a few of the repository's files
   (random ranges, edits that insert, delete and replace lines, checkouts
   that restore old bytes, forced reads).
3. compact(): over ``--histories`` random histories, the prefix hash of an
   assembled window unchanged, no call split from its result, and the
   history within budget whenever compact says it fits.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from jitctx import Workspace  # noqa: E402
from jitctx.refs import Diff, Excerpt, Unchanged  # noqa: E402
from jitctx.render import render_text  # noqa: E402
from jitctx.tokens import get_tokenizer  # noqa: E402

MIRROR = "/work/.mirror/redis+redis/repo"


# -- the session script -------------------------------------------------------------------------

# (kind, arguments): read (head/tail/outline), search (grep/glob), notes, or an action on the tree
SCRIPT: list[tuple] = [
    ("glob", "*.c", "src"),
    ("grep", "sdsnewlen", {}),
    ("outline", "src/sds.c"),
    ("head", "src/sds.c", 1, 120),
    ("grep", "sdscatlen", {"mode": "content", "limit": 20}),
    ("head", "src/sds.c", 1, 120),
    ("head", "src/sds.c", 100, 80),
    ("outline", "src/sds.c"),
    ("head", "src/util.c", 1, 100),
    ("head", "src/util.c", 1, 100),
    ("edit", "src/util.c", 50, "/* a comment the agent added */"),
    ("head", "src/util.c", 1, 100),
    ("head", "src/util.c", 1, 100),
    ("grep", "ll2string", {"mode": "content", "limit": 20}),
    ("head", "src/t_string.c", 1, 150),
    ("tail", "src/t_string.c", 60),
    ("head", "src/t_string.c", 1, 150),
    ("note", "sdsnewlen allocates the header, len bytes and a NUL", ["src/sds.c"]),
    ("edit", "src/sds.c", 110, "    /* the agent's change */"),
    ("head", "src/sds.c", 1, 179),
    ("notes",),
    ("head", "src/networking.c", 1, 120),
    ("grep", "createClient", {}),
    ("head", "src/networking.c", 1, 120),
    ("shell", "git stash -q"),
    ("shell", "git checkout -q HEAD~30"),
    ("head", "src/networking.c", 1, 120),
    ("head", "src/util.c", 1, 100),
    ("head", "src/sds.c", 1, 179),
    ("grep", "ll2string", {"mode": "content", "limit": 20}),
    ("outline", "src/util.c"),
    ("head", "src/util.c", 100, 120),
    ("head", "src/util.c", 100, 120),
    ("shell", "git checkout -q -"),
    ("head", "src/util.c", 1, 100),
    ("head", "src/networking.c", 1, 120),
    ("head", "src/server.c", 1, 80),
    ("grep", "serverLog", {"mode": "count", "limit": 20}),
    ("head", "src/server.c", 1, 80),
    ("head", "src/server.c", 60, 80),
    ("tail", "src/server.c", 40),
    ("tail", "src/server.c", 40),
    ("edit", "src/server.c", -10, "/* near the end: the agent's edit */"),
    ("tail", "src/server.c", 40),
    ("head", "README.md", 1, 60),
    ("head", "README.md", 1, 60),
    ("glob", "*.h", "src"),
    ("head", "src/sds.h", 1, 80),
    ("head", "src/sds.h", 1, 80),
    ("edit", "src/sds.h", 40, "/* sds.h: the agent's edit */"),
    ("head", "src/sds.h", 1, 80),
    ("note", "sds.h line 40 holds the agent's edit", ["src/sds.h"]),
    ("notes",),
    ("head", "src/t_string.c", 1, 150),
    ("head", "src/t_string.c", 140, 120),
    ("outline", "src/t_string.c"),
    ("outline", "src/t_string.c"),
    ("head", "src/sds.c", 1, 179),
    ("grep", "sdsnewlen", {}),
    ("head", "src/util.c", 1, 100),
]


# -- what a model that saw every answer knows ---------------------------------------------------

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class Memory:
    """The lines a model knows of each file, from the answers it was given (this file's own
    reading of excerpts and unified diffs, independent of jitctx.reread)."""

    def __init__(self) -> None:
        self.files: dict[str, dict[int, str]] = {}

    def take(self, item) -> None:
        if isinstance(item, Excerpt) and item.start_line is not None:
            known = self.files.setdefault(item.path, {})
            if item.total_lines is not None:
                for k in [k for k in known if k > item.total_lines]:
                    del known[k]
            for k, text in enumerate(item.lines, item.start_line):
                known[k] = text
        elif isinstance(item, Diff):
            self.files[item.path] = _apply(self.files.get(item.path, {}), item.content)

    def check(self, path: str, a: int, b: int, truth: list[str]) -> tuple[int, int]:
        """(lines known wrong, lines not known) of ``a``-``b`` against the file's lines now."""
        known = self.files.get(path, {})
        wrong = missing = 0
        for k in range(a, min(b, len(truth)) + 1):
            if k not in known:
                missing += 1
            elif known[k] != truth[k - 1]:
                wrong += 1
        return wrong, missing


def _apply(known: dict[int, str], diff: str) -> dict[int, str]:
    """The lines known after reading ``diff`` (old numbering -> new)."""
    new: dict[int, str] = {}
    lines = diff.split("\n")
    i = 0
    old_done, offset = 0, 0
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if not m:
            i += 1
            continue
        a, c = int(m.group(1)), int(m.group(3))
        a_len = int(m.group(2)) if m.group(2) is not None else 1
        start_old = a if a_len else a + 1  # "-0,0" / "-5,0": the hunk sits after old line a
        for k, text in known.items():
            if old_done < k < start_old:
                new[k + offset] = text
        oi, nj = start_old, c if int(m.group(4) if m.group(4) is not None else 1) else c + 1
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            ln = lines[i]
            if ln.startswith(" "):
                new[nj] = ln[1:]
                oi, nj = oi + 1, nj + 1
            elif ln.startswith("-"):
                oi += 1
            elif ln.startswith("+"):
                new[nj] = ln[1:]
                nj += 1
            i += 1
        old_done, offset = oi - 1, nj - oi
    for k, text in known.items():
        if k > old_done:
            new[k + offset] = text
    return new


# -- running a script ---------------------------------------------------------------------------


def _lines(root: Path, path: str) -> list[str]:
    return (root / path).read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n").split("\n")[:-1]


def _edit(root: Path, path: str, line: int, text: str) -> None:
    p = root / path
    lines = p.read_text(encoding="utf-8").split("\n")
    k = line if line > 0 else len(lines) + line
    lines[k - 1] = text
    p.write_text("\n".join(lines), encoding="utf-8")


def run(root: Path, script: list[tuple], *, rereads: bool, count) -> dict:
    """Tokens delivered and the facts checked, for one pass of ``script`` over ``root``."""
    out = {"tokens": 0, "turns": 0, "wrong": 0, "missing": 0, "reads": 0, "notes": 0, "diffs": 0, "unchanged": 0}
    mem = Memory()
    with Workspace(root, rereads=rereads) as ws:
        for step in script:
            kind = step[0]
            res = None
            if kind == "head":
                res = ws.head(step[1], start=step[2], n=step[3])
            elif kind == "tail":
                res = ws.tail(step[1], n=step[2])
            elif kind == "outline":
                res = ws.outline(step[1])
            elif kind == "grep":
                res = ws.grep(step[1], **step[2])
            elif kind == "glob":
                res = ws.glob(step[1], step[2])
            elif kind == "note":
                res = ws.notes("add", step[1], paths=step[2])
            elif kind == "notes":
                res = ws.notes("list")
            elif kind == "edit":
                _edit(root, step[1], step[2], step[3])
            elif kind == "shell":
                subprocess.run(step[1].split(), cwd=root, check=True, capture_output=True)
            elif kind == "force":
                res = ws.head(step[1], start=step[2], n=step[3], force=True)
            out["turns"] += 1
            if res is None:
                continue
            out["tokens"] += count(render_text(res))
            for item in res.results:
                mem.take(item)
                out["diffs"] += isinstance(item, Diff)
                out["unchanged"] += isinstance(item, Unchanged)
            if kind in ("head", "tail", "force"):
                _check_read(root, step, mem, out)
    return out


def _check_read(root: Path, step: tuple, mem: Memory, out: dict) -> None:
    """What the memory knows of the lines a read step asked for, against the file now."""
    truth = _lines(root, step[1])
    a, b = (step[2], step[2] + step[3] - 1) if step[0] != "tail" else (max(1, len(truth) - step[2] + 1), len(truth))
    wrong, missing = mem.check(step[1], a, b, truth)
    out["wrong"] += wrong
    out["missing"] += missing
    out["reads"] += 1


def _clone(mirror: str, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", mirror, str(dest)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.com")):
        subprocess.run(["git", "config", key, value], cwd=dest, check=True)
    return dest


# -- randomized variants ------------------------------------------------------------------------


def variant(root: Path, rng: random.Random, files: list[str], steps: int) -> list[tuple]:
    """A random script over ``files``: reads of random ranges (some forced), edits that insert,
    delete or replace lines, commits, and checkouts back to committed bytes."""
    script: list[tuple] = []
    for _ in range(steps):
        path = rng.choice(files)
        r = rng.random()
        if r < 0.55:
            start = rng.randint(1, 60)
            script.append(("head", path, start, rng.randint(5, 60)))
        elif r < 0.62:
            script.append(("tail", path, rng.randint(5, 40)))
        elif r < 0.67:
            script.append(("force", path, rng.randint(1, 40), rng.randint(5, 40)))
        elif r < 0.90:
            script.append(("mutate", path, rng.randrange(1 << 30)))
        elif r < 0.95:
            script.append(("shell", f"git checkout -q -- {path}"))
        else:
            script.append(("shell", "git stash -q"))
    return script


def run_variant(root: Path, script: list[tuple], count) -> dict:
    """``run`` with ``mutate`` steps (insert, delete or replace a few lines, same size or not)."""
    expanded = []
    for step in script:
        if step[0] != "mutate":
            expanded.append(step)
            continue
        expanded.append(("mutated", step[1], step[2]))
    out = {"wrong": 0, "missing": 0, "reads": 0}
    mem = Memory()
    with Workspace(root) as ws:
        for step in expanded:
            kind = step[0]
            if kind == "mutated":
                _mutate(root / step[1], random.Random(step[2]))
                continue
            if kind == "shell":
                subprocess.run(step[1].split(), cwd=root, check=False, capture_output=True)
                continue
            res = ws.tail(step[1], n=step[2]) if kind == "tail" else ws.head(step[1], start=step[2], n=step[3], force=kind == "force")
            for item in res.results:
                mem.take(item)
            _check_read(root, step, mem, out)
    return out


def _mutate(p: Path, rng: random.Random) -> None:
    lines = p.read_text(encoding="utf-8", errors="replace").split("\n")
    k = rng.randrange(max(1, min(len(lines), 80)))
    how = rng.random()
    if how < 0.4:
        lines[k] = lines[k][::-1] if lines[k] else "x"  # often the same size
    elif how < 0.7:
        lines[k:k] = [f"/* inserted {rng.randrange(1000)} */" for _ in range(rng.randint(1, 4))]
    else:
        del lines[k : k + rng.randint(1, 4)]
    st = p.stat()
    p.write_text("\n".join(lines), encoding="utf-8")
    if rng.random() < 0.3:
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # an edit that keeps the mtime


# -- compact() over random histories -----------------------------------------------------------


def histories(n: int, seed: int = 22) -> dict:
    """compact() over ``n`` random histories: prefix hash, pairs, budget."""
    from jitctx.assemble import AssembleConfig, assemble
    from jitctx.compact import compact
    from jitctx.sources import Message, Source, ToolCall, history_sources, system_source, task_source

    rng = random.Random(seed)
    tok = get_tokenizer()
    out = {"histories": n, "prefix_changed": 0, "split_pairs": 0, "over_budget": 0, "fits": 0, "cleared": 0, "saved": 0}
    words = "read the file grep for the symbol then edit it and run the tests again".split()
    for _ in range(n):
        msgs: list[Message] = []
        k = 0
        for _turn in range(rng.randint(1, 12)):
            msgs.append(Message("user", " ".join(rng.choices(words, k=rng.randint(3, 30)))))
            for _call_round in range(rng.randint(0, 3)):
                calls = tuple(
                    ToolCall(f"c{k + i}", rng.choice(["head", "grep", "glob", "other_tool"]), f'{{"path": "src/f{rng.randrange(9)}.c"}}') for i in range(rng.randint(1, 3))
                )
                k += len(calls)
                msgs.append(Message("assistant", rng.choice(["", "looking"]), calls))
                for c in rng.sample(calls, len(calls)):
                    msgs.append(Message("tool", "\n".join(f"{j}: " + " ".join(rng.choices(words, k=8)) for j in range(rng.randint(1, 60))), tool_call_id=c.id))
            msgs.append(Message("assistant", " ".join(rng.choices(words, k=rng.randint(2, 20)))))
        budget = rng.randint(0, 4000)
        done = compact(msgs, budget, keep_recent=rng.randint(0, 4), tokenizer=tok)
        stable = [system_source("You are a coding agent."), Source("preload", "preload", "# AGENTS.md\nrun make test\n")]
        before = assemble([*stable, *history_sources(msgs)[0], task_source("next")], 200_000, config=AssembleConfig(), tokenizer=tok)
        after = assemble([*stable, *history_sources(list(done.messages))[0], task_source("next")], 200_000, config=AssembleConfig(), tokenizer=tok)
        out["prefix_changed"] += before.prefix_hash != after.prefix_hash
        try:
            history_sources(list(done.messages))
        except Exception:  # noqa: BLE001 - a split pair is what is counted
            out["split_pairs"] += 1
        out["fits"] += done.fits
        out["over_budget"] += done.fits and done.tokens_after > budget
        out["cleared"] += len(done.cleared)
        out["saved"] += done.tokens_saved
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", default=os.environ.get("JITCTX_SESSION_MIRROR", MIRROR))
    ap.add_argument("--variants", type=int, default=100)
    ap.add_argument("--histories", type=int, default=1000)
    args = ap.parse_args()
    if not os.path.isdir(args.mirror):
        sys.exit(f"no mirror at {args.mirror}: fetch github:redis/redis (or pass --mirror)")
    count = get_tokenizer().count
    work = Path(tempfile.mkdtemp(prefix="jitctx-session-"))
    os.environ.setdefault("JITCTX_CACHE_DIR", str(work / "cache"))
    try:
        t = time.perf_counter()
        results = {}
        for mode in (True, False):
            root = _clone(args.mirror, work / ("on" if mode else "off"))
            results[mode] = run(root, SCRIPT, rereads=mode, count=count)
        on, off = results[True], results[False]
        print(
            f"session script: {len(SCRIPT)} turns on a clone of {args.mirror} (HEAD {subprocess.run(['git', '-C', str(work / 'on'), 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()})"
        )
        print(f"  tokens delivered: on {on['tokens']:,}, off {off['tokens']:,}: {on['tokens'] / off['tokens']:.2f}x (target <= 0.5x)")
        print(f"  on: {on['unchanged']} unchanged notes, {on['diffs']} diffs over {on['reads']} reads")
        for name, r in (("on", on), ("off", off)):
            print(f"  facts ({name}): {r['wrong']} lines known wrong, {r['missing']} lines asked for and not known, over {r['reads']} reads")
        files = ["src/sds.c", "src/util.c", "src/adlist.c", "src/zmalloc.c", "README.md"]
        vroot = _clone(args.mirror, work / "variants")
        rng = random.Random(2222)
        total = {"wrong": 0, "missing": 0, "reads": 0}
        for _ in range(args.variants):
            subprocess.run(["git", "checkout", "-q", "--", *files], cwd=vroot, check=True)
            got = run_variant(vroot, variant(vroot, rng, files, 40), count)
            for k in total:
                total[k] += got[k]
        print(f"randomized: {args.variants} variants, {total['reads']:,} reads: {total['wrong']} lines known wrong, {total['missing']} lines asked for and not known")
        h = histories(args.histories)
        print(
            f"compact(): {h['histories']:,} histories: prefix hash changed {h['prefix_changed']}, split pairs {h['split_pairs']}, "
            f"fits {h['fits']:,} (over budget while fitting: {h['over_budget']}), {h['cleared']:,} results cleared, {h['saved']:,} tokens saved"
        )
        print(f"({time.perf_counter() - t:.0f} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
