"""Ignore decisions: whether a path is ignored, and the rule that decided.

Owns git's ignore rules for a root, the one place jitctx decides with them:
where they live (the ``.gitignore`` files, ``info/exclude``, the excludes
file; which of them git would block on) and the decision for named paths
with the rule that decided it (:class:`Decision`, after pathspec's
``CheckResult``): asked of git (``check-ignore -v``) in a work tree, read
with pathspec (which enters jitctx here and nowhere else) outside git or
where git would block (a FIFO ``.gitignore``). Every user asks here:
``Repo.is_ignored`` and ``Repo.ignore_decision``, the walk outside git
(:class:`Rules`), a root inside a folder git ignores, ``listing``'s balance
(a large folder git would not walk), the warm server's kept listing (the
folders git walks) and the rg engine's ``rgwalk`` (tracked files a rule
matches). git's own listing (``ls-files --exclude-standard``) and rg's walk
apply the same files themselves; ``tests/repo/test_ignore.py`` holds every
user to this module's answer. Does not own starting git (``gitcmd``) or
what the universe is (``universe``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from ..errors import RepoError
from . import gitcmd
from .policy import read_small

__all__ = ["Decision", "Ignores", "Rule", "RuleFile", "Rules", "ask_git", "excludes_file", "matched"]


class Rule:
    """One line of an ignore file: ``source`` (root-relative when under the root,
    as ``pkg/.gitignore`` or ``.git/info/exclude``, else absolute), ``line``
    (1-based), ``pattern`` as written (``!keep.log``, ``build/``).

    A plain slotted class, not a dataclass: ``repo`` is imported on the CLI's
    early start, which pulls in no dataclasses.
    """

    __slots__ = ("line", "pattern", "source")

    def __init__(self, source: str, line: int, pattern: str) -> None:
        self.source = source
        self.line = line
        self.pattern = pattern

    @property
    def negated(self) -> bool:
        """A ``!`` rule: it re-includes what it matches (git prints a literal ``!`` as ``\\!``)."""
        return self.pattern.startswith("!")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rule) and (self.source, self.line, self.pattern) == (other.source, other.line, other.pattern)

    def __hash__(self) -> int:
        return hash((self.source, self.line, self.pattern))

    def __repr__(self) -> str:
        return f"Rule({self.source!r}, {self.line}, {self.pattern!r})"

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.pattern}"


class Decision:
    """Whether discovery leaves ``path`` out, and why.

    ``rule``: the rule that decided (the last matching one, deeper files
    first; a folder's rule for a path inside an ignored folder), ``None`` when
    no rule matches; ``tracked``: git tracks the path, so no rule ignores it.
    ``ignored`` = a rule decided, it is not a ``!`` rule, and it is not tracked.
    """

    __slots__ = ("path", "rule", "tracked")

    def __init__(self, path: str, rule: Rule | None = None, tracked: bool = False) -> None:
        self.path = path
        self.rule = rule
        self.tracked = tracked

    @property
    def ignored(self) -> bool:
        return self.rule is not None and not self.rule.negated and not self.tracked

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Decision) and (self.path, self.rule, self.tracked) == (other.path, other.rule, other.tracked)

    def __hash__(self) -> int:
        return hash((self.path, self.rule, self.tracked))

    def __repr__(self) -> str:
        return f"Decision({self.path!r}, {self.rule!r}, tracked={self.tracked})"


# -- asking git -------------------------------------------------------------------


def _source(top: Path, root: Path, said: str) -> str:
    """git names a rule file from the work tree's top (or absolute, the excludes file): from ``root``."""
    path = os.path.normpath(os.path.join(top, said))
    rel = os.path.relpath(path, root)
    return path if rel == ".." or rel.startswith("../") else rel.replace(os.sep, "/")


def ask_git(root: Path, paths: list[str], *, index: bool = True, top: Path | None = None) -> dict[str, Decision]:
    """git's decision on each of ``paths`` (root-relative; a folder ends with ``/``), with
    the rule that decided (``check-ignore -v --no-index``: the rules alone, ~2 ms).

    ``index``: the paths a rule ignores are asked again with the index, which
    exempts tracked files (reading a 100k-entry index costs ~15 ms, so only
    when a rule matched). ``top``: the work tree's top, where git names rule
    files from (``root`` when not given). A path git cannot answer about (no
    git, a time limit) gets no rule.
    """
    out = {p: Decision(p) for p in paths}
    try:
        said = gitcmd.check_ignore_rules(root, paths)
    except RepoError:
        return out
    top = root if top is None else top
    for path, (source, line, pattern) in said.items():
        if path in out:
            out[path] = Decision(path, Rule(_source(top, root, source), line, pattern))
    if index and (hit := [p for p, d in out.items() if d.ignored]):
        try:
            untracked = gitcmd.check_ignore(root, hit, no_index=False)
        except RepoError:
            untracked = set(hit)
        for p in hit:
            if p not in untracked:
                out[p] = Decision(p, out[p].rule, tracked=True)
    return out


def matched(root: Path, paths: list[str]) -> set[str]:
    """Which of ``paths`` git's rules alone ignore (no index: a tracked path a rule
    matches is in; a ``!`` rule's match is not). For folders git would not walk
    (``listing``, the kept listing) and tracked files rg's walk skips (``rgwalk``)."""
    if not paths:
        return set()
    return {p for p, d in ask_git(root, paths, index=False).items() if d.ignored}


def excludes_file(configured: str | None) -> Path:
    """The excludes file git reads: ``core.excludesFile`` when set, else
    ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``)."""
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(xdg) / "git" / "ignore"


# -- the rules without git (pathspec) --------------------------------------------------


class RuleFile:
    """One ``.gitignore`` read with pathspec: its rules apply below ``base``
    (root-relative folder, ``""`` for the root). A line pathspec rejects
    (``foo\\``, ``[z-a]``) is left out, as git leaves it; nothing of a rejected
    line is ever quoted."""

    __slots__ = ("base", "lines", "source", "spec")

    def __init__(self, source: str, base: str, text: str) -> None:
        from pathspec import GitIgnoreSpec
        from pathspec.patterns.gitignore import GitIgnorePatternError

        rejected = (GitIgnorePatternError, ValueError, IndexError, re.error)
        self.source = source
        self.base = base
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line]  # pathspec drops empty lines
        try:
            spec = GitIgnoreSpec.from_lines([line for _, line in lines])
        except rejected:
            kept = []
            for n, line in lines:
                try:
                    GitIgnoreSpec.from_lines([line])
                except rejected:
                    continue
                kept.append((n, line))
            lines = kept
            spec = GitIgnoreSpec.from_lines([line for _, line in lines])
        if len(spec.patterns) != len(lines):  # a pathspec that drops other lines: compile one by one
            spec = GitIgnoreSpec([p for _, line in lines for p in GitIgnoreSpec.from_lines([line]).patterns] if lines else [])
        self.lines = lines
        self.spec = spec

    def decide(self, rel: str) -> Rule | None:
        """The rule of this file that decides ``rel`` (root-relative, ``/`` ending a folder)."""
        res = self.spec.check_file(rel[len(self.base) + 1 :] if self.base else rel)
        if res.include is None or res.index is None:
            return None
        line, pattern = self.lines[res.index]
        return Rule(self.source, line, _trimmed(pattern))


def _trimmed(pattern: str) -> str:
    """A rule as git prints it: trailing spaces dropped unless escaped (``foo\\ ``)."""
    kept = pattern.rstrip(" ")
    return kept + " " if kept.endswith("\\") and len(kept) < len(pattern) else kept


class Rules:
    """The ``.gitignore`` files that apply in one folder, outermost first; deeper
    files win, and within a file the last matching rule (git's order)."""

    __slots__ = ("chain",)

    def __init__(self, chain: tuple[RuleFile, ...] = ()) -> None:
        self.chain = chain

    def below(self, root: Path, folder: str) -> Rules:
        """The rules for ``folder`` (root-relative), given these are its parent's: its own
        ``.gitignore`` added when it has one."""
        text = read_small(root / folder / ".gitignore" if folder else root / ".gitignore", strip=False)
        if text is None:
            return self
        return Rules((*self.chain, RuleFile(f"{folder}/.gitignore" if folder else ".gitignore", folder, text)))

    def decide(self, rel: str) -> Rule | None:
        """The rule that decides ``rel`` among these files, ``None`` when none matches."""
        for rules in reversed(self.chain):
            rule = rules.decide(rel)
            if rule is not None:
                return rule
        return None

    def ignores(self, rel: str) -> bool:
        rule = self.decide(rel)
        return rule is not None and not rule.negated


def decide_without_git(root: Path, paths: Iterable[str]) -> dict[str, Decision]:
    """The ``.gitignore`` files' decision on each path (outside git, or where git would
    block): a folder a rule ignores decides everything below it, as in git."""
    found: dict[str, Rules] = {}

    def rules_for(folder: str) -> Rules:
        if folder not in found:
            parent = folder.rpartition("/")[0] if folder else None
            found[folder] = (Rules() if parent is None else rules_for(parent)).below(root, folder)
        return found[folder]

    out = {}
    for path in paths:
        parts = path.rstrip("/").split("/")
        rule = None
        for i in range(1, len(parts)):  # each folder above it, outermost first
            folder = "/".join(parts[:i])
            rule = rules_for("/".join(parts[: i - 1])).decide(folder + "/")
            if rule is not None and not rule.negated:
                break
        else:
            rule = rules_for("/".join(parts[:-1])).decide(path)
        out[path] = Decision(path, rule)
    return out


# -- one root's rules -------------------------------------------------------------------


class Ignores:
    """One root's ignore rules: where they live, which git would block on, and the
    decision on named paths (git's in a work tree, pathspec's otherwise)."""

    __slots__ = ("_blocking", "_excludes", "common_dir", "root", "top")

    def __init__(self, root: Path, top: Path | None = None, common_dir: Path | None = None) -> None:
        """``top`` and ``common_dir``: the work tree's top and git's common dir (``GitLayout``),
        ``None`` outside git."""
        self.root = root
        self.top = top
        self.common_dir = common_dir
        self._blocking: str | None | bool = False  # not looked yet
        self._excludes: str | None | bool = False

    @property
    def by_git(self) -> bool:
        """Whether git decides (a work tree, no rule file git would block on)."""
        return self.top is not None and not self.blocking()

    def decide(self, paths: list[str], *, index: bool = True) -> dict[str, Decision]:
        """The decision on each of ``paths`` (root-relative) and the rule that made it;
        ``index=False``: the rules alone (a tracked path a rule matches is ignored)."""
        if self.by_git:
            return ask_git(self.root, paths, index=index, top=self.top)
        return decide_without_git(self.root, paths)

    def configured_excludes(self) -> str | None:
        """``core.excludesFile`` when some config file sets it (any level), else
        ``None``; asked once.

        ``git config`` is only run when a config file mentions ``excludesFile``
        (spawning git costs CPU that rg, busy on both cores, would feel). rg
        itself reads only the global setting, so a repository-level one is
        passed to it as an ``--ignore-file``.
        """
        if self._excludes is False:
            self._excludes = self._find_excludes()
        return self._excludes  # type: ignore[return-value]

    def _find_excludes(self) -> str | None:
        configs = [self.common_dir / "config"] if self.common_dir is not None else []
        xdg = Path(os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"))
        configs += [xdg / "git" / "config", Path(os.path.expanduser("~/.gitconfig"))]
        if os.environ.get("GIT_CONFIG_GLOBAL"):
            configs.append(Path(os.environ["GIT_CONFIG_GLOBAL"]))
        for c in configs:
            text = (read_small(c, 16 << 20) or "").lower()
            if "excludesfile" in text or "[include" in text:
                value = gitcmd.config_get(self.root, "core.excludesFile", path=True)
                return os.path.expanduser(value) if value else None
        return None

    def outside_files(self) -> list[Path]:
        """The rule files outside the tree: ``info/exclude`` and the excludes file."""
        out = [self.common_dir / "info" / "exclude"] if self.common_dir is not None else []
        return [*out, excludes_file(self.configured_excludes())]

    def outer_gitignores(self) -> list[Path]:
        """``.gitignore`` at the root and in every folder above it up to the git top
        (a root that is a folder of the repository: rules above it apply below)."""
        out = []
        top = self.top or self.root
        d = Path(self.root)
        while True:
            if (d / ".gitignore").is_file():
                out.append(d / ".gitignore")
            if d == top or d.parent == d:
                return out
            d = d.parent

    def blocking(self) -> str | None:
        """The rule file git would block on (``.gitignore`` at the root,
        ``info/exclude``, the excludes file) when one is there but not a regular
        file (a FIFO: git's ``open`` waits for a writer), else ``None``. Three
        ``lstat`` calls, once; a FIFO deeper down is caught by git's time limit
        instead."""
        if self._blocking is False:
            self._blocking = None
            candidates = [(".gitignore", self.root / ".gitignore")]
            if self.common_dir is not None:
                candidates.append(("info/exclude", self.common_dir / "info" / "exclude"))
                candidates.append(("the excludes file", excludes_file(self.configured_excludes())))
            for name, p in candidates:
                try:
                    mode = os.stat(p).st_mode
                except OSError:
                    continue
                if not stat.S_ISREG(mode):
                    self._blocking = name
                    break
        return self._blocking  # type: ignore[return-value]
