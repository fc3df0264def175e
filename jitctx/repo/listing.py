"""Listing a git work tree fast: tracked paths first, the untracked walk split.

Owns the ``git ls-files`` processes behind ``Repo.file_chunks``: one reads
the index (tracked paths, fast), a few walk the work tree for untracked ones
(the cost: a readdir of every folder), split by :func:`walk_groups` so that
both cores walk. This is a speed trick that earns its place (105k files: one
walker 0.20 s, two 0.14 s; a tree under one ``src/`` 190 ms -> 110 ms with
balancing; docs/benchmarks.md). Processes start through ``gitcmd``. Does not
own what the universe is (``repo``).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

from ..errors import RepoError
from . import gitcmd, ignore

__all__ = ["LARGE_INDEX", "MAX_UNITS", "WALKERS", "Listing", "walk_groups"]

# git ls-files processes walking for untracked files; measured best at the
# core count on 2 cores (105k files: 0.20 s in one process, 0.14 s in two)
WALKERS = max(1, min(4, os.cpu_count() or 1))
LARGE_INDEX = 2 << 20  # bytes of .git/index (~20k files): below it, walks take a few ms and are not balanced
MAX_UNITS = 128  # pathspecs over all walkers: git tests each one in every folder it reads


def walk_groups(root: Path, workers: int, *, balance: bool = True, under: str = "") -> list[list[str]]:
    """Pathspecs splitting the walk of ``root`` (of its folder ``under``) over ``workers`` processes.

    Top-level entries, dealt round-robin. A folder holding a large share of
    the folders seen (``src/`` next to ``docs/`` and ``tests/``) is replaced
    by its entries, the largest first, while the pathspecs stay under
    ``MAX_UNITS``: otherwise its walker does most of the work (105k files
    under one ``src/``: a 190 ms walk instead of 110 ms). Shares are the
    folders' link counts (one ``lstat`` each); a large folder git ignores
    (``node_modules/``) is not walked at all, so it is asked about
    (``check-ignore --no-index``) and left whole. Nested repositories and
    submodules are never split (git refuses a pathspec inside a submodule).
    ``[[]]`` (one process, no pathspec; ``[[under]]`` under a folder) for one
    worker, a folder of one entry or of more than ``MAX_UNITS``.
    ``balance=False`` (a small repository, whose walk costs a few ms) deals
    the folder's entries only.
    """
    folder = root / under if under else root
    try:
        top = [(e.name, _plain_dir(e)) for e in os.scandir(folder)]
    except OSError as exc:
        raise RepoError(f"cannot list {str(folder)!r}: {exc.strerror}") from None
    nested = under and any(name == ".git" for name, _ in top)  # a nested repository: git lists nothing inside
    top = [(f"{under}/{name}" if under else name, is_dir) for name, is_dir in top if name != ".git"]
    if workers <= 1 or len(top) <= 1 or nested or len(top) > MAX_UNITS:
        # one walk: nothing to split, or so many entries that git's per-folder
        # pathspec tests (and the command line) would cost more than they save
        return [[under] if under else []]
    units = sorted(name for name, _ in top)
    counts = {name: 0 for name, is_dir in top if not is_dir}  # folders inside each unit
    asked: set[str] = set()
    whole: set[str] = set()  # ignored (git does not walk them) or not to be split
    for _ in range(8 if balance else 0):
        for u in units:
            if u not in counts:
                counts[u] = _subfolders(root / u)
        shares = {u: 0 if u in whole else counts[u] for u in units}
        total = sum(shares.values())
        big = [u for u in units if shares[u] and shares[u] * 4 * workers >= total]
        if not big:
            break  # no folder holds a large share: round-robin balances
        if unasked := [u for u in big if u not in asked]:
            asked.update(unasked)
            said = {p.rstrip("/") for p in ignore.matched(root, [u + "/" for u in unasked])}
            whole |= {u for u in unasked if u in said}
            continue
        split = max(big, key=lambda u: shares[u])
        kids = _folder_entries(root / split)
        if kids is None:
            whole.add(split)
            continue
        if len(units) - 1 + len(kids) > MAX_UNITS:
            break
        i = units.index(split)
        units[i : i + 1] = [f"{split}/{name}" for name, _ in kids]
        counts.update({f"{split}/{name}": 0 for name, is_dir in kids if not is_dir})
    return [units[i::workers] for i in range(min(workers, len(units)))]


SMALL_FOLDER = 16  # sub-folders within two levels: below it, a folder's listing is one process


def _small(d: Path) -> bool:
    """Whether the folder ``d`` looks small enough to list in one process: at
    most ``SMALL_FOLDER`` folders within its first two levels (link counts:
    one ``lstat`` per sub-folder)."""
    try:
        with os.scandir(d) as it:
            subs = [e.path for e in it if _plain_dir(e)]
    except OSError:
        return False
    seen = len(subs)
    for sub in subs:
        if seen > SMALL_FOLDER:
            return False
        seen += _subfolders(Path(sub))
    return seen <= SMALL_FOLDER


def _subfolders(d: Path) -> int:
    """How many folders ``d`` holds: its link count (2 + sub-folders) where the
    file system keeps one, else counted with ``scandir``."""
    try:
        st = os.lstat(d)
    except OSError:
        return 0
    if not stat.S_ISDIR(st.st_mode):
        return 0
    if st.st_nlink >= 2:
        return st.st_nlink - 2
    try:
        with os.scandir(d) as it:
            return sum(1 for e in it if _plain_dir(e))
    except OSError:
        return 0


def _plain_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _folder_entries(d: Path) -> list[tuple[str, bool]] | None:
    """(name, is a folder) of a folder's entries; ``None`` when it may not be
    split: a nested repository or submodule, or unreadable."""
    try:
        with os.scandir(d) as it:
            entries = sorted((e.name, _plain_dir(e)) for e in it)
    except OSError:
        return None
    return None if any(name == ".git" for name, _ in entries) else entries


class Listing:
    """The ``git ls-files`` processes listing one root: tracked paths, then untracked ones.

    ``key`` says what was asked (root, include_ignored, suffix, folder), so a
    listing started early (the CLI's glob) is only taken by a call asking
    the same.
    """

    def __init__(self, key: tuple, procs: list[subprocess.Popen], *, tagged: bool = False) -> None:
        self.key = key
        self.procs = procs
        self.tagged = tagged  # one ``ls-files -t --cached --others`` process: "? " marks the untracked

    @classmethod
    def start(cls, root: Path, include_ignored: bool, suffix: str | tuple[str, ...] | None, *, balance: bool = True, under: str = "") -> Listing | None:
        """Spawn the processes; ``None`` when there is no git binary (the caller walks).
        ``balance``, ``under``: see :func:`walk_groups` (paths stay root-relative)."""
        base = ["--literal-pathspecs", "ls-files", "-z"]
        others = [*base, "--others"] + ([] if include_ignored else ["--exclude-standard"])
        if under and _small(root / under):
            # a small folder: one process lists both (each process reads the whole
            # index: ~15 ms of CPU for 100k entries; three did for a 73-file folder)
            one = [*base, "-t", "--cached", "--deduplicate", *others[len(base) :], "--", under]
            listing = cls((str(root), include_ignored, suffix, under), [], tagged=True)
            try:
                listing.procs.append(gitcmd.spawn(one, root))
            except OSError:
                return None
            return listing
        groups = walk_groups(root, WALKERS, balance=balance, under=under)
        if under:  # the caller tests the suffix: a folder's listing is small
            cached = [*base, "--cached", "--deduplicate", "--", under]  # unmerged entries once
        else:
            cached = ["ls-files", "-z", "--cached", "--deduplicate"]
            if suffix:
                # let git drop the tracked paths that cannot match (fewer to
                # decode and test); a plain pathspec's '*' crosses '/', and git
                # matches '*<literal>' a third cheaper than ':(glob)**/*<literal>'
                cached += ["--", *(f"*{x}" for x in ((suffix,) if isinstance(suffix, str) else suffix))]
        commands = [cached] + [[*others, "--", *g] if g else others for g in groups]
        listing = cls((str(root), include_ignored, suffix, under), [])
        try:
            for c in commands:
                listing.procs.append(gitcmd.spawn(c, root))
        except OSError:
            listing.close()
            return None
        return listing

    def chunks(self) -> Iterator[list[str]] | None:
        """The tracked paths as soon as git has them, then each walker's; ``None``
        when git cannot list (not really a work tree: bare, broken)."""
        first, rest = self.procs[0], self.procs[1:]
        try:
            out = gitcmd.wait_for(first, "ls-files")
        except RepoError:
            self.close()
            raise
        if first.returncode != 0:
            self.close()
            return None
        return self._drain(out, rest)

    def _drain(self, first_out: bytes, rest: list[subprocess.Popen]) -> Iterator[list[str]]:
        try:
            if self.tagged:
                entries = gitcmd.split_z(first_out)
                yield [e[2:] for e in dict.fromkeys(entries) if not e.startswith("? ")]
                yield [e[2:] for e in entries if e.startswith("? ")]
                return
            yield gitcmd.split_z(first_out)
            for p in rest:
                yield gitcmd.split_z(gitcmd.wait_for(p, "ls-files --others"))
        finally:
            self.close()

    def close(self) -> None:
        """Stop the processes still running (a listing nobody reads to the end)."""
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            if p.stdout is not None:
                p.stdout.close()


def untracked(root: Path, *, scope: str = ".", include_ignored: bool = False, balance: bool = False) -> list[str] | None:
    """Untracked files under ``scope`` (not the ignored ones unless
    ``include_ignored``), as the universe lists them; ``None`` when git fails."""
    base = ["--literal-pathspecs", "ls-files", "-z", "--others"]
    if not include_ignored:
        base.append("--exclude-standard")
    if scope != ".":
        commands = [[*base, "--", scope]]
    else:
        try:
            groups = walk_groups(root, WALKERS, balance=balance)
        except RepoError:
            return None
        commands = [[*base, "--", *g] if g else base for g in groups]
    try:
        procs = [gitcmd.spawn(c, root) for c in commands]
    except OSError:
        return None
    names: list[str] = []
    failed = False
    try:
        for p in procs:
            names += gitcmd.split_z(gitcmd.wait_for(p, "ls-files --others"))
            failed |= p.returncode != 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            if p.stdout is not None:
                p.stdout.close()  # one that timed out leaves the others' pipes open
    return None if failed else names
