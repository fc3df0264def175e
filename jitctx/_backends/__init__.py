"""Search backends: the seam between ``search`` and a regex engine.

Owns the values a backend receives (``Spec``) and returns (``Outcome``,
``Match``), the ``SearchBackend`` protocol and picking a backend by name.
Does not own paging, context lines, long-line windows or notices (those are
``search``'s, shared by every backend so both give the same results), nor
the file universe (``repo``) or the deny list (``policy``).

Two backends implement the protocol: ``rg`` (the ripgrep binary, the only
place it is run) and ``python`` (``re`` over whole files, the fallback).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..errors import QueryError
from ..refs import Skipped

__all__ = [
    "BACKENDS", "Match", "Outcome", "SearchBackend", "Spec", "denied_among", "ignored_in_scope", "in_scope",
    "lines_containing", "pick_backend", "scope_ignored",
]

BACKENDS = ("auto", "rg", "python")


@dataclass(frozen=True, slots=True)
class Spec:
    """What to search, already validated and resolved.

    ``scope`` is ``"."`` or a repo-relative directory; ``file`` a single
    repo-relative file to search instead (then ``scope`` is unused).
    ``keep(path)`` applies the caller's glob filters; ``denied`` is the
    set of universe paths on the deny list (computed by ``search``), and
    ``is_denied`` the policy's rule for paths outside that set.
    ``deadline`` is a ``time.monotonic()`` value. ``facts`` caches what
    one request learns once and reuses (see ``in_scope``, ``ignored_in_scope``,
    ``scope_ignored``): a Spec is made per request, so it never goes stale.
    """

    pattern: str
    scope: str = "."
    file: str | None = None
    fixed_strings: bool = False
    ignore_case: bool = False
    multiline: bool = False
    include_ignored: bool = False
    keep: Callable[[str], bool] = lambda p: True
    has_filters: bool = False  # whether ``keep`` can say no (glob filters were given)
    is_denied: Callable[[str], bool] = lambda p: False
    deadline: float = float("inf")
    facts: dict = field(default_factory=dict, compare=False)

    @property
    def prefix(self) -> str:
        return "" if self.scope == "." else self.scope + "/"

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


@dataclass(frozen=True, slots=True)
class Match:
    """One matching line: 1-based ``line``, decoded ``text`` (no line end),
    ``spans`` as (start, end) char offsets of the matches within ``text``;
    ``replaced``: the line held invalid UTF-8, replaced with U+FFFD."""

    line: int
    text: str
    spans: tuple[tuple[int, int], ...] = ()
    replaced: bool = False


@dataclass(slots=True)
class Outcome:
    """A counting pass over the scope.

    ``counts``: path -> matching lines, for searchable (text, not denied,
    kept by the glob filters) files with at least one match. ``binary``:
    binary files in scope that contain a match (``None`` when not known).
    ``denied``: denied files in scope that were not searched (``None`` when
    not known). ``skipped``: files that vanished or could not be read.
    ``timed_out``: the time cap stopped the pass; ``counts`` is partial.
    """

    counts: dict[str, int] = field(default_factory=dict)
    binary: int | None = None
    denied: int | None = None
    skipped: list[Skipped] = field(default_factory=list)
    timed_out: bool = False


class SearchBackend(Protocol):
    """An interchangeable regex engine over the Workspace's file universe."""

    name: str

    def count(self, ws, spec: Spec) -> Outcome:
        """Matching-line counts per file in ``spec``'s scope."""

    def lines(self, ws, spec: Spec, paths: list[str], upto: int) -> tuple[dict[str, list[Match]], list[Skipped], bool]:
        """The first ``upto`` matching lines of each of ``paths``; (matches, skipped, timed_out)."""

    def binary_matches(self, ws, spec: Spec) -> int | None:
        """How many binary files in scope contain a match (for an empty result's notice)."""


def pick_backend(name: str) -> SearchBackend:
    """``"rg"``, ``"python"``, or ``"auto"`` (rg when its binary is found)."""
    from . import rg

    if name == "python":
        from .py import PythonBackend

        return PythonBackend()
    exe = rg.find_rg()
    if exe is not None:
        return rg.RgBackend(exe)
    if name == "rg":
        raise QueryError(
            "backend 'rg' was asked for but the ripgrep binary was not found",
            hint="install the 'ripgrep' wheel (pip install ripgrep) or pass backend='python'",
            field="backend",
        )
    from .py import PythonBackend

    return PythonBackend()


def _literal_runs(glob: str) -> str:
    """The longest run of plain characters in a basename glob ('' if none)."""
    import re

    runs = re.split(r"[*?\[\]]", glob)
    return max(runs, key=len) if runs else ""


def lines_containing(joined: str, literals, sep: str = "\n") -> list[str]:
    """The ``sep``-separated entries of ``joined`` that contain any of ``literals``.

    ``str.find`` per literal (a C-level scan) is many times faster than one
    regex alternation over a 100k-path listing.
    """
    found: dict[int, str] = {}
    for lit in set(literals):
        pos = joined.find(lit)
        while pos >= 0:
            start = joined.rfind(sep, 0, pos) + 1
            end = joined.find(sep, pos)
            end = len(joined) if end < 0 else end
            found[start] = joined[start:end]
            pos = joined.find(lit, end)
    return [found[k] for k in sorted(found)]


def denied_among(policy, paths: list[str]) -> set[str]:
    """The paths the policy denies, without calling its matcher on every path.

    A path can only be denied if it contains the longest literal run of some
    deny glob (``.env``, ``.pem``...): a scan of the NUL-joined listing (a
    file name may hold a line break, never a NUL) finds those candidates, and
    the policy's own rule decides each one.
    """
    if not paths or not policy.deny:
        return set()
    runs = [_literal_runs(d) for d in policy.deny]
    if any(len(r) < 2 or "\0" in r for r in runs):  # a deny glob without a useful literal: check everything
        return {p for p in paths if policy.is_denied(p)}
    return {p for p in lines_containing("\0".join(paths), runs, "\0") if policy.is_denied(p)}


# -- per-request facts (cached in ``Spec.facts``) -------------------------------------


def scope_ignored(ws, spec: Spec) -> bool:
    """A directory git ignores named as ``path`` (its universe is only its tracked files)."""
    if "scope_ignored" not in spec.facts:
        spec.facts["scope_ignored"] = spec.scope != "." and not spec.include_ignored and ws.repo.is_ignored(spec.scope)
    return spec.facts["scope_ignored"]


def in_scope(ws, spec: Spec) -> list[str]:
    """The universe's paths under ``spec.scope`` that the glob filters keep.

    In git, a tracked listing the backend already read (``facts["tracked_listing"]``)
    is reused, and the untracked walk covers only the scope.
    """
    if "in_scope" in spec.facts:
        return spec.facts["in_scope"]
    prefix, keep = spec.prefix, spec.keep
    raw = spec.facts.get("tracked_listing")  # ``git ls-files -z --cached`` output
    others = _git_others(ws, spec, ignored=False) if raw is not None else None
    if others is not None:
        tracked = raw.decode("utf-8", "surrogateescape").split("\0")[:-1]
        names = [*dict.fromkeys(tracked), *others]  # an unmerged path is listed once per stage
    else:
        names = ws.repo.files(include_ignored=spec.include_ignored)
    spec.facts["in_scope"] = out = [p for p in names if p.startswith(prefix) and keep(p)]
    return out


def ignored_in_scope(ws, spec: Spec) -> int:
    """How many ignored files (left out of the universe) are under the scope and kept."""
    prefix, keep = spec.prefix, spec.keep
    ignored = _git_others(ws, spec, ignored=True)
    if ignored is not None:  # the universe with ignored files differs from it only by these
        return sum(1 for p in ignored if p.startswith(prefix) and keep(p))
    everything = sum(1 for p in ws.repo.files(include_ignored=True) if p.startswith(prefix) and keep(p))
    return max(everything - len(in_scope(ws, spec)), 0)


_WALKERS = 2  # as ``repo``: the walk split over two git processes (``repo.walk_groups``)


def _git_others(ws, spec: Spec, *, ignored: bool) -> list[str] | None:
    """Untracked files in scope (``ignored``: only the ignored ones, else only the
    others), as ``repo`` lists them; ``None`` outside git or when git fails."""
    import subprocess

    from ..errors import RepoError
    from ..repo import git_env, walk_groups

    if ws.repo.git is None:
        return None
    base = ["git", "--literal-pathspecs", "-c", "core.quotepath=off", "ls-files", "-z", "--others"]
    if ignored:
        base += ["--ignored", "--exclude-standard"]
    elif not spec.include_ignored:
        base.append("--exclude-standard")
    if spec.scope != ".":
        commands = [[*base, "--", spec.scope]]
    else:
        try:
            groups = walk_groups(ws.root, _WALKERS, balance=ws.repo.is_large())
        except RepoError:
            return None
        commands = [[*base, "--", *g] if g else base for g in groups]
    try:
        procs = [subprocess.Popen(c, cwd=ws.root, env=git_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) for c in commands]
    except OSError:
        return None
    names: list[str] = []
    failed = False
    for p in procs:
        out, _ = p.communicate()
        failed |= p.returncode != 0
        names += out.decode("utf-8", "surrogateescape").split("\0")[:-1]
    return None if failed else names
