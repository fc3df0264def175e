"""Aligning rg's own walk with the file universe: what git lists that rg skips.

Owns the questions the rg backend asks git while rg runs: which tracked
files an ignore rule matches (git lists them as part of the universe, rg's
walk skips them), how many denied files are tracked in scope, and which
``core.excludesFile`` is configured (rg reads only the global one). Only
small answers come back to Python: one ``git ls-files`` output is scanned
with ``bytes.find`` for literals, and the few entries found are checked
exactly (the policy; the ignore rules, ``repo.ignore``). git runs through
``gitcmd``. Does not run rg (``rg``), decide what a rule ignores
(``repo.ignore``) or own the universe's definition (``repo``).
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...repo import gitcmd, ignore
from ...repo.policy import read_small
from ...repo.universe import Repo
from ...text.globs import entries_containing, literal_run
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


def tracked_extras(scope: Scope, excludes: str | None) -> Extras:
    """Runs beside rg: tracked files in scope -> denied count and tracked-but-ignored files.

    The tracked listing (``_tracked``: remembered while the index holds),
    then only ``bytes.find`` scans of it for literals (``.env``,
    ``.gitignore``, ``node_modules``...): the few entries found are decoded
    and checked exactly. rg is using both cores meanwhile, so every
    millisecond of CPU here shows in the wall time. Raises ``RepoError``
    when git fails in a way that would make the result wrong.
    """
    spec, policy = scope.spec, scope.policy
    listing = _tracked(scope)
    if listing is None:  # no git binary, or git failed: rg's walk is all there is
        return Extras()
    prefix = spec.prefix

    def in_scope(paths: list[str]) -> list[str]:
        return [p for p in paths if p.startswith(prefix) and spec.keep(p)]

    runs = [literal_run(d).lower() for d in policy.deny]
    if any(len(r) < 2 for r in runs):
        cands = _decoded(listing.split(b"\0"))
    else:  # deny names match in any case: scan the lower-cased listing (a count: the case of a name does not matter)
        cands = _decoded(entries_containing(listing.lower(), [r.encode("utf-8", "surrogateescape") for r in runs], b"\0"))
    denied = sum(1 for p in in_scope(cands) if spec.is_denied(p))
    # rg reads no ignore file where git would block on one: then it skips no tracked file
    ignored = () if spec.include_ignored or not scope.repo.ignores.by_git else tuple(in_scope(_remembered(scope, listing, excludes)))
    return Extras(listing, denied, ignored)


_CLASS = re.compile(r"\[(!|\^)?(\]?[^\]]*)\]")
_EXPANSIONS = 64  # a segment's bracket classes expanded into at most this many literals


def _expand(segment: str) -> list[str]:
    """``segment`` with escapes resolved and its small bracket classes
    expanded (``*.[ao]`` -> ``*.a``, ``*.o``); a negated or large class, or
    too many choices, stays a ``?`` (one unknown character)."""
    out = [""]
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "\\" and i + 1 < len(segment):
            out = [o + "\0" + segment[i + 1] for o in out]  # \0 marks an escaped (plain) character
            i += 2
            continue
        if c == "[":
            m = _CLASS.match(segment, i)
            if m is None:
                out = [o + "?" for o in out]
                i += 1
                continue
            body = m.group(2)
            chars: list[str] = []
            k = 0
            while k < len(body):
                if k + 2 < len(body) and body[k + 1] == "-":
                    chars += [chr(x) for x in range(ord(body[k]), ord(body[k + 2]) + 1)]
                    k += 3
                else:
                    chars.append(body[k])
                    k += 1
            if m.group(1) or not chars or len(out) * len(chars) > _EXPANSIONS or any(ch in "\\[]" for ch in chars):
                out = [o + "?" for o in out]
            else:
                out = [o + "\0" + ch for o in out for ch in dict.fromkeys(chars)]
            i = m.end()
            continue
        out = [o + c for o in out]
        i += 1
    return out


def _shape(segment: str) -> tuple[int, str, tuple[str, ...]] | None:
    """How a path component matching the gitignore glob ``segment`` can be
    recognised cheaply: ``(rank, kind, literals)``, kind ``name`` (the
    component is one of them), ``prefix``/``suffix`` (it starts/ends with
    one), ``inner`` (it contains one); ``None`` when some expansion has no
    plain run (``*``, ``?*``). Higher rank: fewer false candidates."""
    kinds: dict[str, list[str]] = {}
    for exp in _expand(segment):
        runs = [(m.start(), m.end()) for m in re.finditer(r"(?:\0.|[^*?\0])+", exp)]
        if not runs:
            return None

        def lit(a: int, b: int, exp: str = exp) -> str:
            return exp[a:b].replace("\0", "")

        a, b = runs[0]
        if a == 0 and b == len(exp):
            kinds.setdefault("name", []).append(lit(a, b))
        elif a == 0 and (runs[-1][1] != len(exp) or b - a >= runs[-1][1] - runs[-1][0]):
            kinds.setdefault("prefix", []).append(lit(a, b))
        elif runs[-1][1] == len(exp):
            kinds.setdefault("suffix", []).append(lit(*runs[-1]))
        else:
            kinds.setdefault("inner", []).append(lit(*max(runs, key=lambda r: r[1] - r[0])))
    if len(kinds) != 1:  # expansions of different shapes: the weakest, inner, covers them all
        return 0, "inner", tuple(x for xs in kinds.values() for x in xs)
    ((kind, lits),) = kinds.items()
    rank = {"name": 3, "prefix": 2, "suffix": 2, "inner": 1}[kind] * 1000 + min(len(x) for x in lits)
    return rank, kind, tuple(lits)


def _head(rule: str) -> str:
    """The plain start of an anchored rule, up to its first glob character."""
    m = re.search(r"[*?\[\\]", rule)
    return rule if m is None else rule[: m.start()]


def _range(paths: list[bytes], prefix: str) -> tuple[int, int]:
    """The slice of the sorted ``paths`` that start with ``prefix``."""
    pb = prefix.encode("utf-8", "surrogateescape")
    lo = bisect.bisect_left(paths, pb)
    hi = bisect.bisect_left(paths, pb + b"\xff" * 4) if pb else len(paths)
    while hi < len(paths) and paths[hi].startswith(pb):  # names with bytes past 0xff... never, but be exact
        hi += 1
    return lo, hi


def _matching(comps: set[bytes], shapes) -> set[bytes]:
    """The components among ``comps`` that some shape (``_shape``) recognises."""
    enc = lambda x: x.encode("utf-8", "surrogateescape")  # noqa: E731
    by: dict[str, set[bytes]] = {"name": set(), "prefix": set(), "suffix": set(), "inner": set()}
    for _, kind, lits in shapes:
        by[kind].update(map(enc, lits))
    hit = comps & by["name"]
    if by["prefix"]:
        starts = tuple(by["prefix"])
        hit.update(c for c in comps if c.startswith(starts))
    if by["suffix"]:
        ends = tuple(by["suffix"])
        hit.update(c for c in comps if c.endswith(ends))
    for x in by["inner"]:
        hit.update(c for c in comps if x in c)
    hit.discard(b"")
    return hit


def _holding(paths: list[bytes], hit: set[bytes], skip: int = 0) -> list[bytes]:
    """The ``paths`` with a component (after their first ``skip`` bytes) in ``hit``.

    A few components are looked for with ``bytes.find`` over the joined
    paths; many, path by path."""
    if not hit:
        return []
    if len(hit) > 16:
        return [p for p in paths if not hit.isdisjoint(p[skip:].split(b"/"))]
    joined = b"\0".join(p[skip:] for p in paths)
    found = entries_containing(joined, list(hit), b"\0")
    head = paths[0][:skip] if skip else b""
    return [head + r for r in found if not hit.isdisjoint(r.split(b"/"))]


def _sources(repo: Repo, listing: bytes) -> list[tuple[str, Path]]:
    """The ignore files that apply, each with the folder its rules are relative to."""
    found = _decoded(entries_containing(listing, [b".gitignore"], b"\0"))
    sources: list[tuple[str, Path]] = [("" if p == ".gitignore" else p[: -len(".gitignore")], repo.root / p) for p in found if p == ".gitignore" or p.endswith("/.gitignore")]
    sources += [("", p) for p in repo.ignores.outer_gitignores()]
    sources += [("", p) for p in repo.ignores.outside_files()]
    return sources


def _signature(repo: Repo, listing: bytes, excludes: str | None) -> bytes | None:
    """What the answer of ``_ignored_tracked`` depends on, by identity: the
    index (the tracked files) and every ignore file (path, inode, size,
    mtime, ctime); ``None`` when the index cannot be seen."""
    if repo.git is None:
        return None
    parts = [str(repo.root), str(excludes)]
    for path in [repo.git.git_dir / "index", *(p for _, p in _sources(repo, listing))]:
        try:
            st = os.stat(path)
        except OSError:
            if path.name == "index":
                return None
            parts.append(f"{path}:-")
            continue
        parts.append(f"{path}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
    return "\n".join(parts).encode("utf-8", "surrogateescape")


def _tracked(scope: Scope) -> bytes | None:
    """The raw ``git ls-files -z --cached`` output, remembered between calls.

    It depends on the index alone (git reads no other file for it, and
    jitctx's git never sees ``GIT_INDEX_FILE``), so it is kept in the cache
    directory under the index's identity (inode, size, mtime, ctime): git
    replaces the index by a rename on every write. A repeated grep reads
    one file instead of running git (~25 ms of CPU for 100k paths, taken
    from rg, which is busy on both cores meanwhile). ``None`` when git
    cannot list.
    """
    repo = scope.repo
    sig = None
    if repo.git is not None:
        try:
            st = os.stat(repo.git.git_dir / "index")
            sig = f"{repo.root}\n{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}".encode("utf-8", "surrogateescape")
        except OSError:
            pass
    kept = _kept(scope, "tracked", sig)
    if kept is not None:
        return kept
    try:
        proc = gitcmd.run(["ls-files", "-z", "--cached"], scope.root)
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    _keep(scope, "tracked", sig, proc.stdout)
    return proc.stdout


_KEPT_MAX = 256 << 20  # bytes of a kept answer (a 1M-file listing is ~80 MB)


def _kept_file(scope: Scope, kind: str, sig: bytes | None) -> str | None:
    """Where ``kind``'s answer for this repository is kept (``None``: nowhere: no
    signature, or the cache directory would lie inside the served root)."""
    import zlib

    from ...cache.folders import cache_dir

    folder = os.path.join(cache_dir(), "rg")
    if sig is None or scope.policy.inside(os.path.realpath(folder)):
        return None
    key = str(scope.repo.root).encode("utf-8", "surrogateescape")
    return os.path.join(folder, f"{kind}-{zlib.crc32(key):08x}-{len(key)}.list")


def _kept(scope: Scope, kind: str, sig: bytes | None) -> bytes | None:
    """The answer kept for ``sig``, or ``None`` (none kept, or kept for another signature)."""
    name = _kept_file(scope, kind, sig)
    if name is None:
        return None
    try:
        with open(name, "rb") as f:
            data = f.read(_KEPT_MAX + 1)
    except OSError:
        return None
    if len(data) > _KEPT_MAX:  # never a cut answer
        return None
    head, sep, body = data.partition(b"\n\0\n")
    return body if sep and head == sig else None


def _keep(scope: Scope, kind: str, sig: bytes | None, body: bytes) -> None:
    """Keep ``body`` as ``kind``'s answer for ``sig`` (atomically; quietly not when it cannot)."""
    name = _kept_file(scope, kind, sig)
    if name is None or sig is None:
        return
    if len(sig) + 3 + len(body) > _KEPT_MAX:
        return
    try:
        os.makedirs(os.path.dirname(name), exist_ok=True)
        tmp = f"{name}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(sig + b"\n\0\n" + body)
        os.replace(tmp, name)
    except OSError:
        pass


def _remembered(scope: Scope, listing: bytes, excludes: str | None) -> list[str]:
    """``_ignored_tracked`` for the whole repository, remembered between calls.

    The answer only changes with the index or an ignore file, so it is kept
    in the cache directory (never inside the root) under the repository's
    name, with the signature it was computed for, and reused while that
    signature holds: a repeated grep on an unchanged tree reads one small
    file instead of the superset and ``git check-ignore`` (~0.1 s of CPU on
    the 101k-file real tree, beside rg). A file rewritten in place with the
    same size inside one mtime tick is the blind spot (as the ledger's).
    """
    repo = scope.repo
    sig = _signature(repo, listing, excludes)
    kept = _kept(scope, "ignored", sig)
    if kept is not None:
        return _decoded(kept.split(b"\0")) if kept else []
    found = _ignored_tracked(repo, listing, lambda ps: ps, excludes)
    _keep(scope, "ignored", sig, b"\0".join(p.encode("utf-8", "surrogateescape") for p in found))
    return found


def _ignored_tracked(repo: Repo, listing: bytes, in_scope, excludes: str | None) -> list[str]:
    """Tracked files an ignore rule matches (rg's traversal skips them; git lists them).

    A cheap superset first, then git itself decides (``check-ignore
    --no-index``) on those few paths. A rule anchored to its ``.gitignore``'s
    folder (a ``/`` at its start or middle) can only match paths starting
    with that folder and the rule's plain head: found by bisection in the
    sorted listing. Any other rule matches a path only if a component of it
    matches one of the rule's segments, so the listing's distinct components
    are tested once (a set of names, ``startswith``/``endswith`` tuples: C
    loops) against the most selective segment of each rule, and the paths
    holding a matching component are kept. A rule no component can be
    recognised by (``*``, ``?*``) keeps every path under its folder. A rule
    git never matches (``[z-a]``) only widens the superset.
    Measured on the 101k-file real tree: ~0.6 s before (53k paths asked of
    git), docs/benchmarks.md.
    """
    sources = _sources(repo, listing)
    rules: dict[str, list[tuple[int, str, tuple[str, ...]]]] = {}  # folder -> shapes of its unanchored rules
    anchored: list[tuple[str, tuple[int, str, tuple[str, ...]] | None]] = []  # (path prefix, shape of the last segment)
    everything: set[str] = set()  # folders whose every path is a candidate
    for base, src in sources:
        text = read_small(src, 16 << 20)
        if text is None:
            continue
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("!"):
                continue
            rule = line.rstrip("/")
            if rule.startswith("\\"):
                rule = rule[1:]
            parts = [s for s in rule.split("/") if s and s != "**"]
            if not parts:
                continue
            # the last segment names what is ignored: usually the most telling one
            last = next((sh for sh in map(_shape, reversed(parts)) if sh is not None), None)
            if "/" in rule and not rule.startswith("**/"):
                anchored.append((base + _head(rule.lstrip("/")), last))
            elif last is None:
                everything.add(base)
            else:
                rules.setdefault(base, []).append(last)
    if not rules and not anchored and not everything:
        return []
    paths = listing.split(b"\0")[:-1]  # git lists in byte order: a folder's paths are one range
    if "" in everything:
        cands = in_scope(_decoded(paths))
    else:
        keep: set[bytes] = set()
        for base, shapes in rules.items():
            lo, hi = _range(paths, base)
            if lo == hi:
                continue
            n = len(base.encode("utf-8", "surrogateescape"))
            joined = b"\0".join(p[n:] for p in paths[lo:hi])
            keep.update(_holding(paths[lo:hi], _matching(set(joined.replace(b"/", b"\0").split(b"\0")), shapes), n))
        for head, shape in anchored:
            lo, hi = _range(paths, head)
            if shape is None:
                keep.update(paths[lo:hi])
            elif lo < hi:
                joined = b"\0".join(paths[lo:hi])
                keep.update(_holding(paths[lo:hi], _matching(set(joined.replace(b"/", b"\0").split(b"\0")), [shape])))
        for base in everything:
            lo, hi = _range(paths, base)
            keep.update(paths[lo:hi])
        cands = in_scope(sorted(_decoded(keep)))
    return sorted(ignore.matched(repo.root, cands))
