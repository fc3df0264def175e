"""Small timing helpers shared by the benchmark scripts (not a test suite)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


def compile_project() -> None:
    """Compile the checkout's bytecode, as ``pip install`` does: with
    ``PYTHONDONTWRITEBYTECODE`` set, every edited module would otherwise be
    recompiled in every timed process (~1-3 ms each)."""
    import compileall

    compileall.compile_dir(PROJECT / "jitctx", quiet=1)


def env_with_project() -> dict:
    """The environment for child processes: this checkout first on the path (compiled),
    calls in process (``JITCTX_SERVER=0``) unless a script asks for the server."""
    compile_project()
    return {**os.environ, "PYTHONPATH": str(PROJECT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "JITCTX_SERVER": "0"}


def installed_python(checkout: Path = PROJECT, *, name: str = "venv-installed") -> Path:
    """An interpreter that sees ``checkout`` as a user's ``pip install`` would.

    An editable install (``pip install -e``) makes every process import its
    finder at start-up (~20 ms on this machine, more than ``import jitctx``
    for a head), which no user pays. So the timed processes run a small venv
    of their own, ``benchmarks/.data/<name>``, without pip or setuptools,
    whose one ``.pth`` file puts ``checkout`` and this interpreter's
    site-packages (the dependencies) on ``sys.path``: plain path lines, no
    import at start-up. ``rg`` from the ``ripgrep`` wheel is linked beside it
    (jitctx looks there first). The checkout is compiled first.
    """
    import site
    import sysconfig

    data = Path(os.environ.get("JITCTX_BENCH_DATA") or PROJECT / "benchmarks" / ".data")
    venv = data / name
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (purelib,) = {sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})}
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    Path(purelib, "jitctx-bench.pth").write_text("\n".join([str(Path(checkout).resolve()), *deps]) + "\n")
    rg = Path(sys.executable).parent / "rg"
    link = venv / "bin" / "rg"
    if rg.exists() and not link.exists():
        link.symlink_to(rg)
    import compileall

    compileall.compile_dir(Path(checkout) / "jitctx", quiet=1)
    return py


def console(py: Path, checkout: Path = PROJECT) -> list[str]:
    """What the console script ``jitctx`` does, run by ``py`` (its argv follows): the thin
    client (``jitctx.client``) where ``checkout`` has one, else the CLI's entry."""
    if (Path(checkout) / "jitctx" / "client.py").exists():
        return [str(py), "-c", "import sys; sys.argv[0] = 'jitctx'; from jitctx.client import main; main()"]
    return [str(py), "-c", "import sys; sys.argv[0] = 'jitctx'; from jitctx.adapters.cli import entry; entry()"]


def time_cmd(argv: list[str], *, cwd=None, env=None) -> float:
    """Wall seconds of one whole process, output discarded."""
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def interleaved(cases: dict[str, list[str]], runs: int, *, cwd=None, env=None, warmup: int = 1) -> dict[str, list[float]]:
    """Run each command ``runs`` times, interleaved so machine noise hits all alike."""
    out: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(warmup):
        for argv in cases.values():
            time_cmd(argv, cwd=cwd, env=env)
    for _ in range(runs):
        for name, argv in cases.items():
            out[name].append(time_cmd(argv, cwd=cwd, env=env))
    return out


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def fmt_ms(s: float) -> str:
    return f"{s * 1000:.1f} ms"


def python() -> str:
    return sys.executable


def export_tree(git_dir: Path | str, commit: str, dest: Path, *, mtime: float | None = None) -> tuple[int, list[str]]:
    """Write the tree of ``commit`` from a bare git directory into ``dest``.

    Returns the number of files written and the paths whose blobs the git
    directory lacks (snapshots may omit files of 4 MiB and more): those are
    not written.

    Blobs are written as committed (no eol or filter conversion), symlinks as
    symlinks, executables with their mode, submodules as empty folders (an
    uninitialised checkout). Unlike ``git archive``, no ``export-ignore`` or
    ``export-subst`` attribute applies: the files are exactly the tree's.
    ``mtime`` (epoch seconds) is given to every file, for stable listings.
    """
    git = ["git", "--git-dir", str(git_dir)]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", "--full-tree", commit],
        capture_output=True,
        check=True,
    ).stdout
    entries = []
    for rec in listing.split(b"\0"):
        if rec:
            meta, path = rec.split(b"\t", 1)
            mode, kind, sha = meta.split()
            entries.append((mode, kind, sha, os.fsdecode(path)))
    blobs = [e for e in entries if e[1] == b"blob"]
    cat = subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def feed() -> None:  # in a thread: git's output pipe would fill while we write the requests
        cat.stdin.write(b"".join(e[2] + b"\n" for e in blobs))
        cat.stdin.close()

    feeder = threading.Thread(target=feed)
    feeder.start()
    made: set[Path] = set()
    missing: list[str] = []
    for mode, _, _, path in blobs:
        header = cat.stdout.readline().split()
        if header[1] == b"missing":
            missing.append(path)
            continue
        size = int(header[2])
        data = cat.stdout.read(size)
        cat.stdout.read(1)  # the newline after each object
        target = dest / path
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        if mode == b"120000":
            os.symlink(os.fsdecode(data), target)
            continue
        target.write_bytes(data)
        if mode == b"100755":
            target.chmod(0o755)
        if mtime is not None:
            os.utime(target, (mtime, mtime))
    feeder.join()
    if cat.wait() != 0:
        raise RuntimeError(f"git cat-file failed in {git_dir}")
    for _, kind, _, path in entries:
        if kind == b"commit":
            (dest / path).mkdir(parents=True, exist_ok=True)
    return len(blobs) - len(missing), missing
