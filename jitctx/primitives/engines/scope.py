"""One grep's scope (the repository, policy and spec, and what the request
learns once) and the engine interface over it.

Owns the facts a grep asks about its scope, each computed lazily and at most
once per request (a ``Scope`` is made per request, so nothing goes stale):
whether the named folder is one git ignores, the universe's files in scope
(for the python backend's search), which paths are denied; and a matching
file read whole, to ``CONTEXT_READ``, for what is judged around its matches
(context lines, a secret's lines). Does not own the universe's definition
(``repo``) or the deny rules (``policy``).
"""

from __future__ import annotations

from ...refs import Skipped
from ...repo.policy import Opener, PathPolicy
from ...repo.universe import Repo
from ...text.globs import entries_containing, literal_run
from ...text.lines import decode, split_lines
from . import Match, Outcome, Spec

__all__ = ["CONTEXT_READ", "Scope", "SearchBackend", "denied_among", "read_lines"]

CONTEXT_READ = 64 << 20  # a matching file read whole (for context lines, or to judge its secrets) is cut here


def read_lines(opener: Opener, path: str) -> tuple[list[str], set[int]] | None:
    """A matching file's decoded lines (its first ``CONTEXT_READ`` bytes), and the 1-based
    numbers of those that held invalid UTF-8; ``None`` when it cannot be read."""
    try:
        data, _ = opener.read(path, CONTEXT_READ)
    except OSError:
        return None
    text, replaced = decode(data)
    bad: set[int] = set()
    if replaced:  # which lines: a line end is ASCII, so no bad sequence spans two lines
        for k, raw in enumerate(data.split(b"\n"), 1):
            if decode(raw)[1]:
                bad.add(k)
    return split_lines(text), bad


def denied_among(policy: PathPolicy, paths: list[str]) -> set[str]:
    """The paths the policy denies, without calling its matcher on every path.

    A path can only be denied if it contains the longest literal run of some
    deny glob (``.env``, ``.pem``...), in any case: a scan of the lower-cased,
    NUL-joined listing (a file name may hold a line break, never a NUL) finds
    those candidates, and the policy's own rule decides each one.
    """
    if not paths or not policy.deny:
        return set()
    runs = [literal_run(d).lower() for d in policy.deny]
    if any(len(r) < 2 for r in runs):  # a deny glob without a useful literal: check everything
        return {p for p in paths if policy.is_denied(p)}
    hits = set(entries_containing("\0".join(paths).lower(), runs, "\0"))
    if not hits:  # the common case: no path holds a deny glob's literal
        return set()
    return {p for p in paths if p.lower() in hits and policy.is_denied(p)}


class Scope:
    """The repository, policy and spec of one grep, with its facts cached.

    ``tracked_listing`` is the raw ``git ls-files -z --cached`` output when a
    backend already read it (the rg backend does, beside rg): then ``files``
    reuses it instead of listing the index again.
    """

    def __init__(self, repo: Repo, policy: PathPolicy, spec: Spec) -> None:
        self.repo = repo
        self.policy = policy
        self.spec = spec
        self.root = repo.root
        self.tracked_listing: bytes | None = None
        self._ignored_folder: bool | None = None
        self._files: list[str] | None = None

    def ignored_folder(self) -> bool:
        """A directory git ignores named as ``path`` (its universe is only its tracked files)."""
        if self._ignored_folder is None:
            spec = self.spec
            self._ignored_folder = spec.scope != "." and not spec.include_ignored and self.repo.is_ignored(spec.scope)
        return self._ignored_folder

    def files(self) -> list[str]:
        """The universe's paths under the scope that the glob filters keep."""
        if self._files is not None:
            return self._files
        spec = self.spec
        prefix, keep = spec.prefix, spec.keep
        others = self.repo.untracked(scope=spec.scope, include_ignored=spec.include_ignored) if self.tracked_listing is not None else None
        if others is not None:
            tracked = self.tracked_listing.decode("utf-8", "surrogateescape").split("\0")[:-1]  # type: ignore[union-attr]
            names = [*dict.fromkeys(tracked), *others]  # an unmerged path is listed once per stage
        else:
            names = self.repo.files(include_ignored=spec.include_ignored)
        self._files = [p for p in names if p.startswith(prefix) and keep(p)]
        return self._files

    def denied_among(self, paths: list[str]) -> set[str]:
        return denied_among(self.policy, paths)


class SearchBackend:
    """An interchangeable regex engine over the file universe of a ``Scope``
    (a base class rather than a ``typing.Protocol``: every grep imports this,
    and ``typing`` costs ~3 ms of a call)."""

    name: str

    def count(self, scope: Scope) -> Outcome:
        """Matching-line counts per file in the scope."""
        raise NotImplementedError

    def lines(self, scope: Scope, paths: list[str], upto: int) -> tuple[dict[str, list[Match]], list[Skipped], bool]:
        """The first ``upto`` matching lines of each of ``paths``; (matches, skipped, timed_out)."""
        raise NotImplementedError
