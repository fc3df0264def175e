"""The repository: its root, git layout, HEAD and file universe.

Owns root resolution, reading HEAD cheaply from git's files, listing the
files that discovery may see (tracked plus untracked-not-ignored, or a
``.gitignore``-aware walk outside git) and compiling gitignore-style globs.
gitpython and pathspec enter jitctx here and nowhere else. Does not own what
may be *read* (``policy``) or any primitive.

Listing uses the ``git ls-files`` subprocess: it is many times faster than
GitPython's own index parser, and ``import git`` alone costs ~90 ms, so
GitPython is only imported for the rare fallback (resolving HEAD when the
files cannot be read, e.g. a reftable repository).
"""

from __future__ import annotations

import os
import re
import stat as _stat
import subprocess
from collections import namedtuple
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing costs start-up time; annotations are strings here
if TYPE_CHECKING:  # pragma: no cover
    from typing import Iterator

from .errors import QueryError, RepoError

__all__ = ["Repo", "compile_glob", "drop_prefetched", "expand_braces", "find_root", "glob_suffix", "prefetch_listing", "walk_groups"]

ROOT_ENV = "JITCTX_ROOT"
# git ls-files processes walking for untracked files; measured best at the
# core count on 2 cores (105k files: 0.20 s in one process, 0.14 s in two)
_WALKERS = max(1, min(4, os.cpu_count() or 1))


def _git_marker(d: Path) -> Path | None:
    marker = d / ".git"
    return marker if marker.exists() else None


def find_root(root: str | os.PathLike | None = None, *, cwd: str | os.PathLike | None = None) -> Path:
    """Resolve the served root: ``root`` > ``$JITCTX_ROOT`` > git top > cwd.

    A ``.git`` file (worktree, submodule) counts as a git top level. Refuses
    ``/`` and the home directory itself.
    """
    start = Path(cwd or os.getcwd())
    chosen = root if root not in (None, "") else os.environ.get(ROOT_ENV) or None
    if chosen is not None:
        path = Path(os.path.expanduser(str(chosen)))
        if not path.is_absolute():
            path = start / path
        if not path.exists():
            raise RepoError(f"root {str(chosen)!r} does not exist", hint="pass --root with an existing directory")
        if not path.is_dir():
            raise RepoError(f"root {str(chosen)!r} is not a directory", hint="pass --root with a directory")
        resolved = path.resolve()
    else:
        resolved = start.resolve()
        for d in (resolved, *resolved.parents):
            if _git_marker(d):
                resolved = d
                break
    if resolved == Path(resolved.anchor):
        raise RepoError(f"refusing to serve the filesystem root {str(resolved)!r}", hint="pass --root with a project directory")
    home = Path.home().resolve()
    if resolved == home:
        raise RepoError(f"refusing to serve the home directory {str(resolved)!r}", hint="pass --root with a project directory")
    return resolved


def glob_suffix(pattern: str, ignore_case: bool = False) -> str | None:
    """``*.py`` / ``**/*.py`` -> ``.py``: the literal every match ends with, when
    that is the whole pattern (else ``None``). Listing and matching use it."""
    pattern = pattern.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    if ignore_case:
        return None
    for head in ("**/*", "*"):
        if pattern.startswith(head):
            rest = pattern[len(head):]
            if rest and not (set(rest) & {"*", "?", "[", "/", "\\", "!", "{"}):
                return rest
    return None


def expand_braces(pattern: str) -> list[str]:
    """``src/*.{ts,tsx}`` -> ``['src/*.ts', 'src/*.tsx']``; nested braces work, ``\\{`` is literal."""
    depth, start = 0, -1
    for i, ch in enumerate(pattern):
        if ch == "\\":
            continue
        if i and pattern[i - 1] == "\\":
            continue
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                body, parts, level, last = pattern[start + 1 : i], [], 0, 0
                for j, c in enumerate(body):
                    if c == "{":
                        level += 1
                    elif c == "}":
                        level -= 1
                    elif c == "," and level == 0:
                        parts.append(body[last:j])
                        last = j + 1
                parts.append(body[last:])
                if len(parts) == 1:
                    continue  # "{x}" is not a choice: keep it literal
                head, tail = pattern[:start], pattern[i + 1 :]
                return [q for part in parts for q in expand_braces(head + part + tail)]
    return [pattern]


@lru_cache(maxsize=256)
def compile_glob(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """Compile a gitignore-style glob into a regex matched against a path.

    ``*`` does not cross ``/``; ``**/`` matches zero or more directories; a
    pattern without ``/`` matches the name at any depth; a trailing ``/``
    or ``/**`` matches everything below; ``{a,b}`` chooses, as in ripgrep's
    globs and the glob tools agents know.
    """
    from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern, GitIgnorePatternError

    regexes = []
    for one in expand_braces(pattern):
        try:
            regex, include = GitIgnoreBasicPattern.pattern_to_regex(one)
        except (GitIgnorePatternError, ValueError) as exc:
            raise QueryError(f"invalid glob {pattern!r}: {exc}", hint="use gitignore-style globs such as '**/*.py'", pattern=pattern) from None
        if regex is None or not include:
            raise QueryError(f"invalid glob {pattern!r}: it matches nothing", hint="use a positive glob such as 'src/**/*.ts'", pattern=pattern)
        if regex.endswith("(?:/|$)"):
            regex = regex[: -len("(?:/|$)")] + "$"
        regexes.append(regex)
    try:
        return re.compile("|".join(f"(?:{r})" for r in regexes), re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise QueryError(f"invalid glob {pattern!r}: {exc}", pattern=pattern) from None


def _read(p: Path) -> str | None:
    try:
        return p.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


class GitLayout(namedtuple("GitLayout", "top git_dir common_dir")):
    """Where git keeps its state for a work tree.

    ``top``: the work tree's top level; ``git_dir``: this work tree's git dir
    (HEAD lives here); ``common_dir``: shared refs and packed-refs (the same
    as ``git_dir`` unless a linked worktree). A named tuple, not a dataclass:
    the CLI imports this module before it starts git (``prefetch_listing``),
    and importing dataclasses costs ~8 ms.
    """

    __slots__ = ()


def _git_layout(root: Path) -> GitLayout | None:
    for d in (root, *root.parents):
        marker = d / ".git"
        if marker.is_dir():
            git_dir = marker
        elif marker.is_file():
            text = _read(marker) or ""
            if not text.startswith("gitdir:"):
                continue
            git_dir = Path(text[len("gitdir:"):].strip())
            if not git_dir.is_absolute():
                git_dir = d / git_dir
        else:
            continue
        git_dir = git_dir.resolve()
        common = _read(git_dir / "commondir")
        common_dir = (git_dir / common).resolve() if common else git_dir
        return GitLayout(d, git_dir, common_dir)
    return None


class Repo:
    """A root directory and, when it is inside git, its git layout."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git = _git_layout(root)  # without a git binary, listing falls back to a walk
        if self.git is not None and self.git.top != root and _ignored_by_git(self.git.top, root):
            # a root inside a directory git ignores (a tool's data dir, an
            # installed tree): git lists nothing there, so serve it as plain files
            self.git = None

    @property
    def is_git(self) -> bool:
        return self.git is not None

    # -- HEAD ---------------------------------------------------------------

    def head(self) -> str | None:
        """HEAD as a sha, read from git's files (~50 µs); ``None`` if unborn or not git."""
        if self.git is None:
            return None
        text = _read(self.git.git_dir / "HEAD")
        for _ in range(5):  # symbolic refs may chain
            if text is None:
                break
            if not text.startswith("ref:"):
                return text if re.fullmatch(r"[0-9a-f]{40,64}", text) else self._head_slow()
            ref = text[4:].strip()
            text = _read(self.git.git_dir / ref) if (self.git.git_dir / ref).is_file() else _read(self.git.common_dir / ref)
            if text is None:
                return self._packed_ref(ref)
        return self._head_slow()

    def _packed_ref(self, ref: str) -> str | None:
        packed = _read(self.git.common_dir / "packed-refs")  # type: ignore[union-attr]
        if packed:
            for line in packed.splitlines():
                parts = line.split(" ", 1)
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0]
        return None  # unborn branch

    def _head_slow(self) -> str | None:
        try:
            import git  # gitpython: only here, only for odd layouts

            return git.Repo(self.root, search_parent_directories=True).head.commit.hexsha
        except Exception:  # unborn HEAD, broken repo: no HEAD to report
            return None

    # -- file universe --------------------------------------------------------

    def files(self, *, include_ignored: bool = False) -> list[str]:
        """Repo-relative POSIX paths discovery may see.

        Tracked plus untracked files git does not ignore (``include_ignored``
        adds the ignored ones); hidden files in, ``.git/`` never. Tracked files
        deleted from the work tree are listed; callers ``stat`` and skip them.
        """
        return [p for chunk in self.file_chunks(include_ignored=include_ignored) for p in chunk]

    def file_chunks(self, *, include_ignored: bool = False, suffix: str | None = None, under: str = "") -> Iterator[list[str]]:
        """The same paths as ``files``, in chunks as soon as each is listed.

        In git, tracked files come first (from the index, fast) while the
        walk for untracked files still runs: a caller can work on them in the
        meantime. The walk is split over a few ``git ls-files`` processes
        (it is the cost: a readdir of every folder). ``suffix`` (no glob
        characters) and ``under`` (a root-relative folder, "" for all) are
        hints: git walks only ``under`` and may leave out tracked paths not
        ending with ``suffix``; paths stay root-relative and callers still
        test every one.
        """
        if self.git is not None:
            chunks = self._git_chunks(include_ignored, suffix, under)
            if chunks is not None:
                yield from chunks
                return
            # not really a work tree (bare, broken): fall back to a walk
        yield list(self._walk(include_ignored))

    def _git_chunks(self, include_ignored: bool, suffix: str | None = None, under: str = "") -> Iterator[list[str]] | None:
        listing = _take_prefetched(self.root, include_ignored, suffix, under) or _Listing.start(
            self.root, include_ignored, suffix, balance=self.is_large(), under=under
        )
        return listing.chunks() if listing is not None else None

    def is_large(self) -> bool:
        """Whether git's index holds tens of thousands of files (~100 bytes an
        entry): then a walk is worth balancing over the walkers."""
        if self.git is None:
            return False
        try:
            return os.stat(self.git.git_dir / "index").st_size >= _LARGE_INDEX
        except OSError:
            return False

    def _walk(self, include_ignored: bool):
        from pathspec import GitIgnoreSpec

        root = self.root
        specs: dict[str, list] = {"": []}  # dir -> chain of (dir, spec), outermost first
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
            rel_dir = "" if rel_dir == "." else rel_dir
            chain = specs.pop(rel_dir, [])
            if not include_ignored and ".gitignore" in filenames:
                try:
                    lines = (Path(dirpath) / ".gitignore").read_text("utf-8", "replace").splitlines()
                    chain = [*chain, (rel_dir, GitIgnoreSpec.from_lines(lines))]
                except OSError:
                    pass
            prefix = f"{rel_dir}/" if rel_dir else ""
            keep = []
            for name in sorted(dirnames):
                if name == ".git":
                    continue
                rel = prefix + name
                if include_ignored or not _ignored(chain, rel + "/"):
                    keep.append(name)
                    specs[rel] = chain
            dirnames[:] = keep
            for name in sorted(filenames):
                rel = prefix + name
                if include_ignored or not _ignored(chain, rel):
                    yield rel

    def is_ignored(self, rel: str) -> bool:
        """Whether discovery would leave ``rel`` out (git's rules, or ``.gitignore``)."""
        if self.git is not None:
            return _check_ignore(self.root, rel)
        from pathspec import GitIgnoreSpec

        parts = rel.split("/")
        chain = []
        for i in range(len(parts)):
            d = "/".join(parts[:i])
            gi = self.root / d / ".gitignore"
            if gi.is_file():
                chain.append((d, GitIgnoreSpec.from_lines(gi.read_text("utf-8", "replace").splitlines())))
            if i and _ignored(chain, d + "/"):
                return True
        return _ignored(chain, rel)


_LARGE_INDEX = 2 << 20  # bytes of .git/index (~20k files): below it, walks take a few ms and are not balanced
_MAX_UNITS = 128  # pathspecs over all walkers: git tests each one in every folder it reads


def walk_groups(root: Path, workers: int, *, balance: bool = True, under: str = "") -> list[list[str]]:
    """Pathspecs splitting the walk of ``root`` (of its folder ``under``) over ``workers`` processes.

    Top-level entries, dealt round-robin. A folder holding a large share of
    the folders seen (``src/`` next to ``docs/`` and ``tests/``) is replaced
    by its entries, the largest first, while the pathspecs stay under
    ``_MAX_UNITS``: otherwise its walker does most of the work (105k files
    under one ``src/``: a 190 ms walk instead of 110 ms). Shares are the
    folders' link counts (one ``lstat`` each); a large folder git ignores
    (``node_modules/``) is not walked at all, so it is asked about
    (``check-ignore --no-index``) and left whole. Nested repositories and
    submodules are never split (git refuses a pathspec inside a submodule).
    ``[[]]`` (one process, no pathspec; ``[[under]]`` under a folder) for one
    worker, a folder of one entry or of more than ``_MAX_UNITS``. ``balance=False`` (a small repository,
    whose walk costs a few ms) deals the folder's entries only.
    """
    folder = root / under if under else root
    try:
        top = [(e.name, _plain_dir(e)) for e in os.scandir(folder)]
    except OSError as exc:
        raise RepoError(f"cannot list {str(folder)!r}: {exc.strerror}") from None
    nested = under and any(name == ".git" for name, _ in top)  # a nested repository: git lists nothing inside
    top = [(f"{under}/{name}" if under else name, is_dir) for name, is_dir in top if name != ".git"]
    if workers <= 1 or len(top) <= 1 or nested or len(top) > _MAX_UNITS:
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
            whole |= _ignored_folders(root, unasked)
            continue
        split = max(big, key=lambda u: shares[u])
        kids = _folder_entries(root / split)
        if kids is None:
            whole.add(split)
            continue
        if len(units) - 1 + len(kids) > _MAX_UNITS:
            break
        i = units.index(split)
        units[i:i + 1] = [f"{split}/{name}" for name, _ in kids]
        counts.update({f"{split}/{name}": 0 for name, is_dir in kids if not is_dir})
    return [units[i::workers] for i in range(min(workers, len(units)))]


def _subfolders(d: Path) -> int:
    """How many folders ``d`` holds: its link count (2 + sub-folders) where the
    file system keeps one, else counted with ``scandir``."""
    try:
        st = os.lstat(d)
    except OSError:
        return 0
    if not _stat.S_ISDIR(st.st_mode):
        return 0
    if st.st_nlink >= 2:
        return st.st_nlink - 2
    try:
        with os.scandir(d) as it:
            return sum(1 for e in it if _plain_dir(e))
    except OSError:
        return 0


def _ignored_folders(root: Path, folders: list[str]) -> set[str]:
    """Which of ``folders`` git's ignore rules match (the index is not read)."""
    asked = [("./" if f.startswith(":") else "") + f + "/" for f in folders]
    try:
        proc = subprocess.run(
            ["git", "check-ignore", "--no-index", "-z", "--stdin"], cwd=root, env=git_env(),
            input="\0".join(asked).encode("utf-8", "surrogateescape") + b"\0", capture_output=True, check=False,
        )
    except OSError:
        return set()
    said = {p.removeprefix("./").rstrip("/") for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p}
    return {f for f in folders if f in said}


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


class _Listing:
    """The ``git ls-files`` processes listing one root: tracked paths, then untracked ones.

    One process reads the index (fast); the walk for untracked files, which
    is the cost (a readdir of every folder), is split over a few processes
    (:func:`walk_groups`).
    """

    def __init__(self, key: tuple, procs: list[subprocess.Popen]) -> None:
        self.key = key
        self.procs = procs

    @classmethod
    def start(cls, root: Path, include_ignored: bool, suffix: str | None, *, balance: bool = True, under: str = "") -> _Listing | None:
        """Spawn the processes; ``None`` when there is no git binary (the caller walks).
        ``balance``, ``under``: see :func:`walk_groups` (paths stay root-relative)."""
        base = ["git", "--literal-pathspecs", "-c", "core.quotepath=off", "ls-files", "-z"]
        others = [*base, "--others"] + ([] if include_ignored else ["--exclude-standard"])
        groups = walk_groups(root, _WALKERS, balance=balance, under=under)
        if under:  # the caller tests the suffix: a folder's listing is small
            cached = [*base, "--cached", "--deduplicate", "--", under]  # unmerged entries once
        else:
            cached = ["git", "-c", "core.quotepath=off", "ls-files", "-z", "--cached", "--deduplicate"]
            if suffix:
                # let git drop the tracked paths that cannot match (fewer to
                # decode and test); a plain pathspec's '*' crosses '/', and git
                # matches '*<literal>' a third cheaper than ':(glob)**/*<literal>'
                cached += ["--", f"*{suffix}"]
        commands = [cached] + [[*others, "--", *g] if g else others for g in groups]
        listing = cls((str(root), include_ignored, suffix, under), [])
        try:
            for c in commands:
                listing.procs.append(subprocess.Popen(c, cwd=root, env=git_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
        except OSError:
            listing.close()
            return None
        return listing

    def chunks(self) -> Iterator[list[str]] | None:
        """The tracked paths as soon as git has them, then each walker's; ``None``
        when git cannot list (not really a work tree: bare, broken)."""
        first, rest = self.procs[0], self.procs[1:]
        out, _ = first.communicate()
        if first.returncode != 0:
            self.close()
            return None
        return self._drain(out, rest)

    def _drain(self, first_out: bytes, rest: list[subprocess.Popen]) -> Iterator[list[str]]:
        try:
            yield _split_z(first_out)
            for p in rest:
                out, _ = p.communicate()
                yield _split_z(out)
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


# One listing started ahead of its use (``prefetch_listing``), by root.
_prefetched: dict[str, _Listing] = {}


def prefetch_listing(
    root: str | os.PathLike | None, *, include_ignored: bool = False, suffix: str | None = None, cwd: str | None = None, path: str = "."
) -> None:
    """Start listing ``root``'s files now, for the next ``file_chunks`` on that root.

    The CLI's ``glob`` calls this right after parsing its arguments: git then
    walks while the rest of jitctx imports (it starts ~14 ms sooner). A
    later listing with other arguments stops it and starts afresh, and
    ``drop_prefetched`` stops one nobody took. Bad roots are left for the
    real call to report. ``path`` is the glob's folder as the CLI takes it:
    from ``cwd`` when that is inside the root, else from the root.
    """
    from .errors import JitctxError

    try:
        repo = Repo(find_root(root))
    except (JitctxError, OSError):
        return
    if repo.git is None:
        return
    here = Path(os.path.realpath(cwd)) if cwd is not None else repo.root
    if not here.is_relative_to(repo.root):
        here = repo.root
    folder = Path(os.path.realpath(here / path))
    if not folder.is_dir() or not folder.is_relative_to(repo.root):
        return  # the real call reports it
    under = "" if folder == repo.root else folder.relative_to(repo.root).as_posix()
    drop_prefetched()
    try:
        listing = _Listing.start(repo.root, include_ignored, suffix, balance=repo.is_large(), under=under)
    except JitctxError:
        return
    if listing is not None:
        _prefetched[str(repo.root)] = listing


def _take_prefetched(root: Path, include_ignored: bool, suffix: str | None, under: str) -> _Listing | None:
    listing = _prefetched.pop(str(root), None)
    if listing is not None and listing.key != (str(root), include_ignored, suffix, under):
        listing.close()
        return None
    return listing


def drop_prefetched() -> None:
    """Stop any prefetched listing nobody took."""
    while _prefetched:
        _prefetched.popitem()[1].close()


# What would make git look at another repository than the one at the root, or
# read jitctx's pathspecs another way: a git hook exports some of these, a
# user's shell may set the others.
_FOREIGN_GIT_ENV = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
    "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
)


def git_env() -> dict[str, str] | None:
    """The environment for a git subprocess run at the root: ``None`` (inherit)
    unless some of ``_FOREIGN_GIT_ENV`` is set, else a copy without them."""
    environ = os.environ
    if not any(k in environ for k in _FOREIGN_GIT_ENV):
        return None
    return {k: v for k, v in environ.items() if k not in _FOREIGN_GIT_ENV}


def _check_ignore(cwd: Path, rel: str) -> bool:
    """git's verdict on one path: ignored by a rule and not tracked.

    The rules alone first (``--no-index``, ~2 ms): most paths match none.
    Only a path a rule matches is asked again with the index, which exempts
    tracked files; reading a 100k-entry index costs ~15 ms a call.
    """
    # a leading ':' would read as pathspec magic (check-ignore takes no --literal-pathspecs)
    arg = "./" + rel if rel.startswith(":") else rel
    for extra in (["--no-index"], []):
        try:
            proc = subprocess.run(["git", "check-ignore", *extra, "-q", "--", arg], cwd=cwd, env=git_env(), capture_output=True, check=False)
        except OSError:
            return False
        if proc.returncode != 0:
            return False
    return True


def _ignored_by_git(top: Path, root: Path) -> bool:
    return _check_ignore(top, root.relative_to(top).as_posix() + "/")


def _split_z(out: bytes) -> list[str]:
    names = out.decode("utf-8", "surrogateescape").split("\0")
    names.pop()  # after the last NUL
    return names


def _ignored(chain: list, rel: str) -> bool:
    """Last matching rule wins, deeper ``.gitignore`` files first."""
    for base, spec in reversed(chain):
        sub = rel[len(base) + 1:] if base else rel
        res = spec.check_file(sub)
        if res.include is not None:
            return bool(res.include)
    return False
