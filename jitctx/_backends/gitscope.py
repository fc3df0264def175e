"""Aligning rg's own walk with the Workspace's file universe, using git.

Owns the questions the rg backend asks git while rg runs: which tracked
files an ignore rule matches (git lists them as part of the universe, rg's
walk skips them), how many denied files are tracked in scope, and which
``core.excludesFile`` is configured. Only small answers come back to Python:
one ``git ls-files`` output is scanned with ``bytes.find`` for literals, and
the few entries found are checked exactly (the policy, ``git check-ignore``).
Does not run rg (``rg``) or own the universe's definition (``repo``).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ..errors import BackendError
from ..repo import git_env
from . import Spec, _literal_runs as _literal_run

__all__ = ["configured_excludes", "tracked_extras"]


_SEG = r"\[[^\]]*\]|\*+|\?|[^*?\[]+"


def _segment_regex(seg: str) -> str:
    """One gitignore path segment (``*.log``, ``build``) as a regex for a path component."""
    parts = []
    for tok in re.findall(_SEG, seg):
        if tok.startswith("["):
            body = tok[1:-1]
            if body.startswith("!"):
                body = "^" + body[1:]
            parts.append("[" + body.replace("\\", "\\\\") + "]")
        elif tok.startswith("*"):
            parts.append("[^/]*")
        elif tok == "?":
            parts.append("[^/]")
        else:
            parts.append(re.escape(tok))
    return "".join(parts)


def _entries_containing(listing: bytes, literals) -> list[bytes]:
    """The NUL-separated entries of ``listing`` containing any of ``literals`` (in order)."""
    found: dict[int, bytes] = {}
    for lit in {x.encode("utf-8", "surrogateescape") for x in literals}:
        pos = listing.find(lit)
        while pos >= 0:
            start = listing.rfind(b"\0", 0, pos) + 1
            end = listing.find(b"\0", pos)
            end = len(listing) if end < 0 else end
            found[start] = listing[start:end]
            pos = listing.find(lit, end)
    return [found[k] for k in sorted(found)]


def _decoded(entries) -> list[str]:
    return [e.decode("utf-8", "surrogateescape") for e in entries if e]


def configured_excludes(ws) -> str | None:
    """``core.excludesFile`` when some config file sets it (any level), else ``None``.

    ``git config`` is only run when a config file mentions ``excludesFile``
    (spawning git costs CPU that rg, busy on both cores, would feel). rg
    itself reads only the global setting, so a repository-level one is
    passed to it as an ``--ignore-file``.
    """
    git = ws.repo.git
    configs = [git.common_dir / "config"] if git is not None else []
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"))
    configs += [xdg / "git" / "config", Path(os.path.expanduser("~/.gitconfig"))]
    if os.environ.get("GIT_CONFIG_GLOBAL"):
        configs.append(Path(os.environ["GIT_CONFIG_GLOBAL"]))
    for c in configs:
        try:
            text = c.read_text("utf-8", "replace").lower()
        except OSError:
            continue
        if "excludesfile" in text or "[include" in text:
            proc = subprocess.run(["git", "config", "--path", "--get", "core.excludesFile"], cwd=ws.root, env=git_env(), capture_output=True, text=True, check=False)
            value = proc.stdout.strip()
            return os.path.expanduser(value) if value else None
    return None


def _exclude_files(ws, configured: str | None) -> list[Path]:
    """``info/exclude`` and the global excludes file (git's default unless configured)."""
    out = []
    if ws.repo.git is not None:
        out.append(ws.repo.git.common_dir / "info" / "exclude")
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"))
    out.append(Path(configured) if configured else xdg / "git" / "ignore")
    return out


def _outer_gitignores(ws) -> list[Path]:
    """``.gitignore`` at the root and in every directory above it up to the git top.

    The listing holds only files at or below the root, and an untracked
    ``.gitignore`` still applies; rules above the root (a root that is a
    subfolder of the repository) apply to the files below it too.
    """
    out = []
    top = ws.repo.git.top if ws.repo.git is not None else ws.root
    d = Path(ws.root)
    while True:
        if (d / ".gitignore").is_file():
            out.append(d / ".gitignore")
        if d == top or d.parent == d:
            return out
        d = d.parent


def tracked_extras(ws, spec: Spec, excludes: str | None, box: dict) -> None:
    """Runs beside rg: tracked files in scope -> denied count and tracked-but-ignored files.

    One ``git ls-files`` (~25 ms of git's CPU for 100k paths), then only
    ``bytes.find`` scans of its raw output for literals (``.env``,
    ``.gitignore``, ``node_modules``...): the few entries found are decoded
    and checked exactly. rg is using both cores meanwhile, so every
    millisecond of CPU here shows in the wall time.
    """
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=off", "ls-files", "-z", "--cached"],
            cwd=ws.root, env=git_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False,
        )
        if proc.returncode != 0:
            return
        listing = proc.stdout
        box["listing"] = listing
        prefix = "" if spec.scope == "." else spec.scope + "/"

        def in_scope(paths):
            return [p for p in paths if p.startswith(prefix) and spec.keep(p)]

        runs = [_literal_run(d) for d in ws.policy.deny]
        if any(len(r) < 2 for r in runs):
            cands = _decoded(listing.split(b"\0"))
        else:
            cands = _decoded(_entries_containing(listing, runs))
        box["denied"] = sum(1 for p in in_scope(cands) if spec.is_denied(p))
        if not spec.include_ignored:
            box["ignored_tracked"] = _ignored_tracked(ws, listing, in_scope, excludes)
    except Exception as exc:  # reported by count() on the calling thread
        box["error"] = BackendError(f"listing tracked files failed: {exc}", backend="rg")

def _ignored_tracked(ws, listing: bytes, in_scope, excludes: str | None) -> list[str]:
    """Tracked files an ignore rule matches (rg's traversal skips them; git lists them).

    A cheap superset first (a path component matching the last segment of
    any ignore pattern), then git itself decides (``check-ignore --no-index``).
    """
    found = _decoded(_entries_containing(listing, [".gitignore"]))
    sources = [ws.root / p for p in found if p == ".gitignore" or p.endswith("/.gitignore")]
    sources += _outer_gitignores(ws)
    sources += _exclude_files(ws, excludes)
    segs: set[str] = set()
    for src in sources:
        try:
            text = src.read_text("utf-8", "replace")
        except OSError:
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
    rx = re.compile(r"(?:^|/)(?:" + "|".join(sorted(_segment_regex(s) for s in segs)) + r")(?:/|$)")
    literals = [_literal_run(s) for s in segs]
    if all(len(lit) >= 2 for lit in literals):  # a literal every match must contain: scan with bytes.find
        entries = _entries_containing(listing, literals)
    else:
        entries = listing.split(b"\0")
    cands = [p for p in in_scope(_decoded(entries)) if rx.search(p)]
    if not cands:
        return []
    # a leading ':' would read as pathspec magic: such a path goes in (and comes back) as './:...'
    asked = ["./" + p if p.startswith(":") else p for p in cands]
    proc = subprocess.run(
        ["git", "-c", "core.quotepath=off", "check-ignore", "--no-index", "-z", "--stdin"],
        cwd=ws.root, env=git_env(), input="\0".join(asked).encode("utf-8", "surrogateescape") + b"\0", capture_output=True, check=False,
    )
    hits = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [p[2:] if p.startswith("./:") else p for p in hits if p]
