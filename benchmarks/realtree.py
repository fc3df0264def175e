"""Build a real ~100,000-file git repository: public HEAD trees side by side, one commit.

The synthetic tree (``synth.py``) is regular; this one has the shapes real
repositories have: deep and shallow folders, thousands of tiny text files
(tldr pages, vcpkg ports, conan recipes), big C/C++ code bases, Python stubs,
symlinks, executables, a submodule entry and the trees' own ``.gitignore``
and ``.gitattributes`` files. Each source's HEAD tree goes under a folder of
its own name (``ansible/``, ``curl/``, ...), exactly as committed (see
``common.export_tree``; each folder's tree hash equals the source's, the
script checks), and everything is committed once with a fixed author and
date. Then a few untracked files and some ignored by the trees' real rules
(``node_modules``, ``*.o``, ``*.py[co]``, ``*.log``, conan's
``**/test_package/build/``) are added, so the universe is not only tracked
files.

Sources (snapshots used for docs/benchmarks.md; tree entries, 100,776 in all; the
folly snapshot lacks one 4 MiB+ blob, so 100,775 are tracked, with git's submodule)::

    fetch github:ansible/ansible               # c9ac477e53a9  5,053 files
    fetch github:conan-io/conan-center-index   # e9075254bbd8 14,535
    fetch github:microsoft/vcpkg               # 127402f1c75b 14,267
    fetch github:python/typeshed               # 21dff5c0ca9a  5,906
    fetch github:tldr-pages/tldr               # 08e345f42639 38,491
    fetch github:git/git                       # 1a3e64c6c4a6  4,847
    fetch github:curl/curl                     # 5c61e168698a  4,449
    fetch github:redis/redis                   # 4f8cdc2a1ea5  1,623
    fetch github:vim/vim                       # b3526a91b827  8,521
    fetch github:facebook/folly                # ff98381ea686  3,084

The ``fetch`` tool leaves each one at ``/work/.mirror/<owner>+<name>/repo``
(folder name: ``<name>``). Without that tool, ``git clone --mirror
https://github.com/<owner>/<name> <name>.git`` gives the same (folder name:
``<name>``; trees may differ as HEAD moves). The HEAD of each mirror is used.

    python benchmarks/realtree.py /work/.mirror/{ansible+ansible,...}/repo
    JITCTX_REALTREE_MIRRORS="dir1 dir2 ..." python benchmarks/realtree.py
    python benchmarks/realtree.py --dest DIR MIRROR...      # default benchmarks/.data/realtree

Idempotent: the sources (folder, commit) are recorded in the new
repository's ``.git/jitctx-realtree.json``; when they match, nothing is
rebuilt. Prints the file counts (tracked, untracked, ignored), the size and
the build time. No network: it reads only the mirrors.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import export_tree

VERSION = 2  # bump when the build or the extras change
DATA = Path(os.environ.get("JITCTX_BENCH_DATA") or Path(__file__).resolve().parent / ".data")
MIRRORS_ENV = "JITCTX_REALTREE_MIRRORS"
DATE = "1700000000 +0000"
EXTRAS_MTIME = 1_790_000_000  # newer than every source tree's commit: work in progress
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": DATE,
    "GIT_COMMITTER_DATE": DATE,
}


def _git(*args: str, cwd: Path | None = None, git_dir: Path | None = None) -> str:
    # no conversion on add, and no background gc still writing when the tree is moved
    cfg = [
        "core.autocrlf=false",
        "core.safecrlf=false",
        "gc.auto=0",
        "maintenance.auto=false",
    ]
    pre = ["git", *(x for c in cfg for x in ("-c", c))] + (["--git-dir", str(git_dir)] if git_dir else [])
    return subprocess.run([*pre, *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True).stdout.strip()


def folder_name(mirror: Path) -> str:
    """``/work/.mirror/owner+name/repo`` -> ``name``; ``name.git`` -> ``name``."""
    if mirror.name == "repo" and "+" in mirror.parent.name:
        return mirror.parent.name.split("+", 1)[1]
    return mirror.name.removesuffix(".git")


def sources(mirrors: list[Path]) -> list[dict]:
    out = []
    for m in mirrors:
        commit = _git("rev-parse", "HEAD^{commit}", git_dir=m)
        out.append(
            {
                "folder": folder_name(m),
                "mirror": str(m),
                "commit": commit,
                "tree": _git("rev-parse", commit + "^{tree}", git_dir=m),
            }
        )
    names = [s["folder"] for s in out]
    if len(set(names)) != len(names):
        raise SystemExit(f"two mirrors give the same folder name: {names}")
    return sorted(out, key=lambda s: s["folder"])


def _manifest(srcs: list[dict]) -> dict:
    return {
        "version": VERSION,
        "sources": [{k: s[k] for k in ("folder", "commit", "tree")} for s in srcs],
    }


def _extras(root: Path) -> None:
    """Untracked and ignored files, under the trees' own ignore rules (skipped when a folder is absent)."""

    def put(rel: str, text: str) -> None:
        if (root / rel.split("/", 1)[0]).is_dir():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
            os.utime(p, (EXTRAS_MTIME, EXTRAS_MTIME))

    def stems(folder: str, pattern: str, n: int) -> list[str]:
        return sorted(p.stem for p in (root / folder).glob(pattern))[:n]

    for i in range(40):  # tldr: `node_modules`
        for f in ("package.json", "index.js", "lib/util.js", "README.md", "LICENSE"):
            put(f"tldr/node_modules/pkg-{i:02d}/{f}", f"// pkg-{i:02d} {f}\n")
    for name in stems("curl/lib", "*.c", 120):  # curl: `*.o`, `.libs`
        put(f"curl/lib/{name}.o", "\0ELF object\n" * 20)
        put(f"curl/lib/.libs/{name}.lo", f"# libtool object {name}\n")
    for name in stems("redis/src", "*.c", 80):  # redis: `*.o`, `*.d`, `*.log`
        put(f"redis/src/{name}.o", "\0ELF object\n" * 20)
        put(f"redis/src/{name}.d", f"{name}.o: {name}.c server.h\n")
    put("redis/src/redis-server", "\0ELF executable\n" * 100)
    log = "1:M 01 Jan 2024 00:00:00.000 * Ready to accept connections tcp\n"
    put("redis/server.log", log * 20000)
    for name in stems("ansible/lib/ansible/module_utils", "*.py", 60):  # `*.py[co]`
        put(
            f"ansible/lib/ansible/module_utils/__pycache__/{name}.cpython-311.pyc",
            "\0pyc\n",
        )
    # conan: `**/test_package/build/`
    for pkg in ("zlib", "openssl", "boost", "fmt", "spdlog"):
        for f in ("CMakeCache.txt", "Makefile", "conan_toolchain.cmake"):
            put(
                f"conan-center-index/recipes/{pkg}/all/test_package/build/{f}",
                "# gen\n",
            )
    for i in range(8):  # untracked, not ignored: work in progress
        put(f"git/scratch/note-{i}.txt", f"todo {i}: look at the refs code\n")
        put(f"curl/docs/drafts/draft-{i}.md", f"# Draft {i}\n\nNot committed yet.\n")
    put(
        "redis/src/experiment.c",
        "/* untracked experiment */\nint experiment(void) { return 0; }\n",
    )
    put("vim/src/wip.patch", "--- a/src/main.c\n+++ b/src/main.c\n")


def build(dest: Path, srcs: list[dict]) -> None:
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for s in srcs:
        mtime = int(_git("log", "-1", "--format=%ct", s["commit"], git_dir=Path(s["mirror"])))
        n, s["missing"] = export_tree(s["mirror"], s["commit"], tmp / s["folder"], mtime=mtime)
        lacking = f" (the mirror lacks {', '.join(s['missing'])})" if s["missing"] else ""
        print(
            f"  {s['folder']:<22} {s['commit'][:12]}  {n:>6,} files{lacking}",
            flush=True,
        )
    _git("-c", "init.defaultBranch=main", "init", "-q", cwd=tmp)
    # No eol or filter conversion while adding (the trees' .gitattributes would apply): blobs stay as committed.
    (tmp / ".git/info/attributes").write_text("* -text -filter -ident\n")
    _git("add", "-A", "-f", cwd=tmp)  # -f: files the trees track under their own ignore rules stay tracked
    for s in srcs:  # submodule entries, as in the source trees
        raw = _git("ls-tree", "-r", "-z", s["commit"], git_dir=Path(s["mirror"]))
        for rec in filter(None, raw.split("\0")):
            meta, path = rec.split("\t", 1)
            if meta.split()[0] == "160000":
                _git(
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    f"160000,{meta.split()[2]},{s['folder']}/{path}",
                    cwd=tmp,
                )
    _git(
        "commit",
        "-q",
        "--no-verify",
        "-m",
        "Real tree: " + ", ".join(f"{s['folder']}@{s['commit'][:12]}" for s in srcs),
        cwd=tmp,
    )
    (tmp / ".git/info/attributes").unlink()
    for s in srcs:
        got = _git("rev-parse", f"HEAD:{s['folder']}", cwd=tmp)
        if got != s["tree"] and not s["missing"]:
            raise SystemExit(f"{s['folder']}: tree {got} differs from the source's {s['tree']}")
    _extras(tmp)
    (tmp / ".git/jitctx-realtree.json").write_text(json.dumps(_manifest(srcs), indent=1) + "\n")
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)


def _du(top: Path, *, skip_git: bool) -> int:
    total = 0
    for d, dirs, files in os.walk(top):
        if skip_git and ".git" in dirs:
            dirs.remove(".git")
        total += sum(os.lstat(os.path.join(d, f)).st_size for f in files)
    return total


def report(dest: Path) -> dict:
    def count(*args: str) -> int:
        return sum(1 for p in _git("ls-files", "-z", *args, cwd=dest).split("\0") if p)

    tracked, untracked = count("--cached"), count("--others", "--exclude-standard")
    ignored = count("--others", "--ignored", "--exclude-standard")
    files = tracked + untracked + ignored
    return {
        "tracked": tracked,
        "untracked": untracked,
        "ignored": ignored,
        "files": files,
        "bytes": _du(dest, skip_git=True),
        "git_bytes": _du(dest / ".git", skip_git=False),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "mirrors",
        nargs="*",
        type=Path,
        help=f"bare git directories (default: ${MIRRORS_ENV}, whitespace-separated)",
    )
    ap.add_argument(
        "--dest",
        type=Path,
        default=DATA / "realtree",
        help="where the repository goes (default benchmarks/.data/realtree)",
    )
    args = ap.parse_args(argv)
    mirrors = args.mirrors or [Path(p) for p in os.environ.get(MIRRORS_ENV, "").split()]
    if not mirrors:
        ap.error(f"give the mirror directories as arguments or in ${MIRRORS_ENV}")
    srcs = sources(mirrors)
    marker = args.dest / ".git/jitctx-realtree.json"
    t = time.perf_counter()
    if marker.is_file() and json.loads(marker.read_text()) == _manifest(srcs):
        print(f"{args.dest}: up to date, not rebuilt")
    else:
        print(f"building {args.dest} from {len(srcs)} trees")
        build(args.dest, srcs)
        print(f"built in {time.perf_counter() - t:.1f} s")
    r = report(args.dest)
    print(
        f"{args.dest}: {r['files']:,} files ({r['tracked']:,} tracked, {r['untracked']:,} untracked, {r['ignored']:,} ignored), {r['bytes'] / 2**20:,.0f} MiB of files, .git {r['git_bytes'] / 2**20:,.0f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
