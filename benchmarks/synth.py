"""Build the large synthetic repository the benchmarks run on.

Deterministic: the same files, contents and mtimes every time. 105,000+
files in 15,000+ folders, mixed languages, hidden files (.github/, .config/,
dotfiles), ignored files (node_modules/, dist/, *.log) and some untracked
ones. Built once into ``benchmarks/.data/synth-<version>/`` and reused.

    python benchmarks/synth.py            # build (if missing) and print the path
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

VERSION = 1
DATA = Path(os.environ.get("JITCTX_BENCH_DATA") or Path(__file__).resolve().parent / ".data")
RARE = "XYZZY_RARE_TOKEN"  # in exactly 25 files
MTIME0 = 1_600_000_000

_LANGS = {
    "py": 'def {name}(value):\n    """Return {name} of value."""\n    result = value * {n}\n    return result\n',
    "ts": "export function {name}(value: number): number {{\n  const result = value * {n};\n  return result;\n}}\n",
    "go": "package pkg\n\nfunc {name}(value int) int {{\n\tresult := value * {n}\n\treturn result\n}}\n",
    "rs": "pub fn {name}(value: i64) -> i64 {{\n    let result = value * {n};\n    result\n}}\n",
    "java": "class C{n} {{\n  static int {name}(int value) {{\n    int result = value * {n};\n    return result;\n  }}\n}}\n",
    "md": "# {name}\n\nNotes about {name}; see the code for details ({n}).\n",
}
_EXTS = list(_LANGS)


def _body(rng: random.Random, ext: str, i: int) -> str:
    parts = []
    for k in range(rng.randint(2, 12)):
        parts.append(_LANGS[ext].format(name=f"fn_{i}_{k}", n=rng.randint(1, 999)))
    return "\n".join(parts)


def build(dest: Path, layout: str = "flat") -> Path:
    """``layout="flat"``: 30 package folders at the top; ``"src"``: the same
    tree under one ``src/`` (most real repositories: one folder holds most
    of the files, which a walk split by top-level entry cannot share)."""
    rng = random.Random(42)
    base = "src/" if layout == "src" else ""
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    files: list[Path] = []
    i = 0
    rare_every = 4200
    for a in range(30):
        for b in range(25):
            for c in range(20):  # 15,000 leaf folders
                d = tmp / f"{base}pkg{a:02d}" / f"mod{b:02d}" / f"part{c:02d}"
                d.mkdir(parents=True)
                for _ in range(7):
                    ext = _EXTS[rng.randrange(len(_EXTS))]
                    p = d / f"file{i:06d}.{ext}"
                    text = _body(rng, ext, i)
                    if i % rare_every == 7:
                        text += f"\n# {RARE}\n"
                    p.write_text(text)
                    files.append(p)
                    i += 1
    # hidden files and folders (part of the universe)
    for k in range(50):
        p = tmp / ".github" / "workflows" / f"wf{k}.yml"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"name: wf{k}\non: [push]\njobs:\n  t:\n    steps:\n      - run: make test{k}\n")
        files.append(p)
    for k in range(30):
        p = tmp / f"{base}pkg{k:02d}" / ".config.py"
        p.write_text(f"SETTING_{k} = {k}\n")
        files.append(p)
    # ignored files
    (tmp / ".gitignore").write_text("node_modules/\ndist/\n*.log\n")
    for k in range(2000):
        p = tmp / "node_modules" / f"lib{k % 100}" / f"index{k}.js"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"module.exports = function f{k}() {{ return {k}; }};\n")
    for k in range(200):
        (tmp / f"{base}pkg{k % 30:02d}" / f"run{k}.log").write_text(f"log line {k}\n")
    (tmp / "dist").mkdir()
    (tmp / "dist" / "bundle.py").write_text("# built\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
        "GIT_AUTHOR_NAME": "synth",
        "GIT_AUTHOR_EMAIL": "synth@example.com",
        "GIT_COMMITTER_NAME": "synth",
        "GIT_COMMITTER_EMAIL": "synth@example.com",
    }
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=tmp, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "synthetic"], cwd=tmp, check=True, env=env)
    # untracked, not ignored (part of the universe)
    for k in range(100):
        p = tmp / "scratch" / f"draft{k}.py"
        p.parent.mkdir(exist_ok=True)
        p.write_text(f"def draft{k}():\n    return {k}  # {RARE if k == 3 else 'draft'}\n")
        files.append(p)
    for n, p in enumerate(files):
        t = MTIME0 + n * 37 % 10_000_000
        os.utime(p, (t, t))
    tmp.rename(dest)
    return dest


def synth_repo() -> Path:
    """The synthetic repo's path, built on first use."""
    dest = DATA / f"synth-{VERSION}"
    if not (dest / ".git").is_dir():
        shutil.rmtree(dest, ignore_errors=True)
        build(dest)
    return dest


def synth_src_repo() -> Path:
    """The same repo with its packages under one ``src/``, built on first use."""
    dest = DATA / f"synth-src-{VERSION}"
    if not (dest / ".git").is_dir():
        shutil.rmtree(dest, ignore_errors=True)
        build(dest, layout="src")
    return dest


def big_file(size_mib: int) -> Path:
    """A text file of ``size_mib`` MiB of numbered lines (built once)."""
    p = DATA / f"lines-{size_mib}MiB.txt"
    if not p.exists() or p.stat().st_size < size_mib << 20:
        DATA.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        line_block = "".join(f"line {i:08d} of the big file, some words to pad it out\n" for i in range(16384))
        block = line_block.encode()
        with open(tmp, "wb") as f:
            written = 0
            while written < size_mib << 20:
                f.write(block)
                written += len(block)
        tmp.rename(p)
    return p


if __name__ == "__main__":
    print(synth_repo())
