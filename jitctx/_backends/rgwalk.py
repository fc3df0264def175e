"""Aligning rg's own walk with the file universe: what git lists that rg skips.

Owns the questions the rg backend asks git while rg runs: which tracked
files an ignore rule matches (git lists them as part of the universe, rg's
walk skips them), how many denied files are tracked in scope, and which
``core.excludesFile`` is configured (rg reads only the global one). Only
small answers come back to Python: one ``git ls-files`` output is scanned
with ``bytes.find`` for literals, and the few entries found are checked
exactly (the policy, ``git check-ignore``). git runs through ``gitcmd``.
Does not run rg (``rg``) or own the universe's definition (``repo``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .. import gitcmd
from ..errors import RepoError
from ..match import entries_containing, literal_run, segment_regex
from ..policy import read_small
from ..repo import Repo
from .scope import Scope

__all__ = ["Extras", "tracked_extras"]


@dataclass(frozen=True, slots=True)
class Extras:
    """What git knows of the scope that rg's walk does not say.

    ``listing``: the raw ``git ls-files -z --cached`` output (``None`` when
    git could not list); ``denied``: tracked denied files in scope;
    ``ignored_tracked``: tracked files in scope that an ignore rule matches
    (rg's walk skips them: they are searched by name).
    """

    listing: bytes | None = None
    denied: int | None = None
    ignored_tracked: tuple[str, ...] = ()


def _decoded(entries) -> list[str]:
    return [e.decode("utf-8", "surrogateescape") for e in entries if e]


def _exclude_files(repo: Repo, configured: str | None) -> list[Path]:
    """``info/exclude`` and the global excludes file (git's default unless configured)."""
    out = []
    if repo.git is not None:
        out.append(repo.git.common_dir / "info" / "exclude")
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"))
    out.append(Path(configured) if configured else xdg / "git" / "ignore")
    return out


def _outer_gitignores(repo: Repo) -> list[Path]:
    """``.gitignore`` at the root and in every directory above it up to the git top.

    The listing holds only files at or below the root, and an untracked
    ``.gitignore`` still applies; rules above the root (a root that is a
    subfolder of the repository) apply to the files below it too.
    """
    out = []
    top = repo.git.top if repo.git is not None else repo.root
    d = Path(repo.root)
    while True:
        if (d / ".gitignore").is_file():
            out.append(d / ".gitignore")
        if d == top or d.parent == d:
            return out
        d = d.parent


def tracked_extras(scope: Scope, excludes: str | None) -> Extras:
    """Runs beside rg: tracked files in scope -> denied count and tracked-but-ignored files.

    One ``git ls-files`` (~25 ms of git's CPU for 100k paths), then only
    ``bytes.find`` scans of its raw output for literals (``.env``,
    ``.gitignore``, ``node_modules``...): the few entries found are decoded
    and checked exactly. rg is using both cores meanwhile, so every
    millisecond of CPU here shows in the wall time. Raises ``RepoError``
    when git fails in a way that would make the result wrong.
    """
    spec, policy = scope.spec, scope.policy
    try:
        proc = gitcmd.run(["ls-files", "-z", "--cached"], scope.root)
    except OSError:  # no git binary: rg's walk is all there is
        return Extras()
    if proc.returncode != 0:
        return Extras()
    listing = proc.stdout
    prefix = spec.prefix

    def in_scope(paths: list[str]) -> list[str]:
        return [p for p in paths if p.startswith(prefix) and spec.keep(p)]

    runs = [literal_run(d).lower() for d in policy.deny]
    if any(len(r) < 2 for r in runs):
        cands = _decoded(listing.split(b"\0"))
    else:  # deny names match in any case: scan the lower-cased listing (a count: the case of a name does not matter)
        cands = _decoded(entries_containing(listing.lower(), [r.encode("utf-8", "surrogateescape") for r in runs], b"\0"))
    denied = sum(1 for p in in_scope(cands) if spec.is_denied(p))
    ignored = () if spec.include_ignored else tuple(_ignored_tracked(scope.repo, listing, in_scope, excludes))
    return Extras(listing, denied, ignored)


def _ignored_tracked(repo: Repo, listing: bytes, in_scope, excludes: str | None) -> list[str]:
    """Tracked files an ignore rule matches (rg's traversal skips them; git lists them).

    A cheap superset first (a path component matching the last segment of
    any ignore pattern), then git itself decides (``check-ignore --no-index``).
    A rule whose segment is not a valid pattern (``[z-a]``: git accepts and
    never matches it) only widens the superset: every tracked path is asked.
    """
    found = _decoded(entries_containing(listing, [b".gitignore"], b"\0"))
    sources = [repo.root / p for p in found if p == ".gitignore" or p.endswith("/.gitignore")]
    sources += _outer_gitignores(repo)
    sources += _exclude_files(repo, excludes)
    segs: set[str] = set()
    for src in sources:
        text = read_small(src, 16 << 20)
        if text is None:
            continue
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("!"):
                continue
            parts = [s for s in line.lstrip("\\").strip("/").split("/") if s and s != "**"]
            if parts:
                segs.add(parts[-1])
    if not segs:
        return []
    try:
        rx = re.compile(r"(?:^|/)(?:" + "|".join(sorted(segment_regex(s) for s in segs)) + r")(?:/|$)")
        literals = [literal_run(s) for s in segs]
    except (ValueError, re.error):  # a rule git never matches: ask git about every tracked path
        rx, literals = None, [""]
    if all(len(lit) >= 2 for lit in literals):  # a literal every match must contain: scan with bytes.find
        entries = entries_containing(listing, [lit.encode("utf-8", "surrogateescape") for lit in literals], b"\0")
    else:
        entries = listing.split(b"\0")
    cands = [p for p in in_scope(_decoded(entries)) if rx is None or rx.search(p)]
    if not cands:
        return []
    try:
        return sorted(gitcmd.check_ignore(repo.root, cands, no_index=True))
    except RepoError:
        return []
