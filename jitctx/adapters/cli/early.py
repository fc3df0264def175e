"""The early glob: for ``jitctx glob``, git's listing starts before the rest of jitctx imports.

Owns the small scan of a glob's argv (not the parser: its options come from the
Queries, which import dataclasses) and handing the started listing to the real
call when both name the same root. Kept for speed: git walks while the parser and
the library load (~14 ms of a ~210 ms call; docs/benchmarks.md).
"""

from __future__ import annotations

import os

__all__ = ["GLOB_VALUE_FLAGS", "early_glob", "take_early"]


GLOB_VALUE_FLAGS = frozenset({"--sort", "--limit", "--max-tokens", "--root"})  # tests check this against FindQuery


def early_glob(argv: list[str]):
    """For ``jitctx glob``, start git's listing before the rest of jitctx imports.

    git then walks while the parser and the library load (it starts ~30 ms
    sooner; docs/benchmarks.md). The arguments are read by a small scan, not
    the parser (whose options come from the Queries, which import
    dataclasses): it is only a head start, and ``take_early`` drops it when
    the real parse disagrees. Returns the Repo holding the started listing,
    or ``None``.
    """
    if not argv or argv[0] != "glob":
        return None
    positionals: list[str] = []
    root = None
    include_ignored = ignore_case = False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            positionals += argv[i + 1 :]
            break
        if a in GLOB_VALUE_FLAGS:
            if a == "--root" and i + 1 < len(argv):
                root = argv[i + 1]
            i += 2
            continue
        if a.startswith("--root="):
            root = a[len("--root=") :]
        elif a == "--include-ignored":
            include_ignored = True
        elif a in ("-i", "--ignore-case"):
            ignore_case = True
        elif not a.startswith("-") or a == "-":
            positionals.append(a)
        i += 1
    if not positionals or not positionals[0].strip():
        return None  # an error to report, nothing to list
    path = positionals[1] if len(positionals) > 1 else "."
    return _prefetch(positionals[0], path, root, include_ignored, ignore_case)


def take_early(early, args):
    """The early listing's Repo when the real arguments name its root, else ``None``
    (its listing stopped). A listing for other arguments is stopped by the Repo itself."""
    from ...errors import JitctxError
    from ...repo.universe import find_root

    try:
        same = args.command == "glob" and find_root(args.root) == early.root
    except (JitctxError, OSError):
        same = False
    if not same:
        early.close()
        return None
    return early


def _prefetch(pattern: str, path: str, root: str | None, include_ignored: bool, ignore_case: bool):
    """Start git's listing for a glob of ``pattern`` under ``path``; the Repo holding
    it, or ``None`` (a bad root or path is left for the real call to report)."""
    from pathlib import Path

    from ...errors import JitctxError
    from ...repo.universe import Repo, find_root
    from ...text.globs import glob_suffix

    try:
        repo = Repo(find_root(root))
        here = Path(os.path.realpath(os.getcwd())) if repo.git is not None else repo.root
        if not here.is_relative_to(repo.root):
            here = repo.root
        folder = Path(os.path.realpath(here / path))
        if not folder.is_dir() or not folder.is_relative_to(repo.root):
            return repo  # the real call reports it
    except (JitctxError, OSError, ValueError):  # a bad root or path: left for the real call to report
        return None
    under = "" if folder == repo.root else folder.relative_to(repo.root).as_posix()
    try:
        repo.prefetch(include_ignored=include_ignored, suffix=glob_suffix(pattern, ignore_case), under=under)
    except JitctxError:
        pass
    return repo
