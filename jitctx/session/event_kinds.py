"""File-system events sorted: "HEAD may have moved", "a delivered file may have changed", noise.

Owns where git keeps what decides HEAD (:class:`GitPaths`: this work tree's
git dir, the common dir with ``refs/heads/`` and ``packed-refs``, and whether
a git operation is half-way) and sorting one event by the paths it touches (a
pure function, :func:`classify`). Does not own listening for events
(``watcher``) or judging staleness (``ledger``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["GitPaths", "classify"]


@dataclass(frozen=True, slots=True)
class GitPaths:
    """Absolute, resolved places git keeps what decides HEAD.

    ``git_dir`` holds this work tree's HEAD (a linked worktree's is under the
    common dir's ``worktrees/``; a submodule's under the superproject's
    ``.git/modules/``); ``common_dir`` holds ``refs/heads/`` and ``packed-refs``.
    """

    git_dir: str
    common_dir: str

    @property
    def heads(self) -> str:
        return os.path.join(self.common_dir, "refs", "heads")

    def busy(self) -> bool:
        """A git operation is half-way: HEAD or the index locked, a rebase running."""
        g = self.git_dir
        return any(os.path.exists(os.path.join(g, name)) for name in ("HEAD.lock", "index.lock", "rebase-merge", "rebase-apply"))


_HEAD_NAMES = frozenset({"HEAD", "HEAD.lock", "rebase-merge", "rebase-apply"})
_COMMON_NAMES = frozenset({"packed-refs", "packed-refs.lock"})


def classify(paths: Iterable[str], git: GitPaths | None, delivered: Mapping[str, str] | frozenset[str]) -> str | None:
    """Sort one event by the paths it touches (source, and destination for a move).

    ``"head"``: HEAD, a branch ref, ``packed-refs`` (or their ``.lock``, which
    git writes just before renaming it over the real file), or the end of a
    rebase; ``"file"``: a delivered file or a directory holding one;
    ``None``: noise (the index, ORIG_HEAD, FETCH_HEAD, logs, other files).
    """
    kind = None
    for p in paths:
        if not p:
            continue
        parent, name = os.path.split(p)
        if git is not None:
            if parent == git.git_dir and name in _HEAD_NAMES:
                return "head"
            if parent == git.common_dir and name in _COMMON_NAMES:
                return "head"
            if p.startswith(git.heads + os.sep):
                return "head"
        if p in delivered:
            kind = "file"
        elif kind is None and any(r.startswith(p + os.sep) for r in delivered):
            kind = "file"  # a directory holding delivered files came or went
    return kind
