"""``@path`` imports of instruction files (CLAUDE.md, AGENTS.md, GEMINI.md).

Owns finding ``@path`` references in an instruction file's lines (a word of
its own, outside code spans and fenced blocks) and resolving them inside
the root: relative to the importing file, followed up to ``MAX_DEPTH`` hops,
each file once (which stops cycles), at most ``MAX_IMPORTS`` per call.
Targets in the user's home (``@~/...``), outside the root, in git's
internals, on the deny list, links out, special, binary or empty files are
skipped with a reason, as links are in the prefix; a name that is no file
(``@alice`` in prose) is left alone quietly. Does not own reading a file
(``instructions``) or where the imported text goes (``preload``, ``nested``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ..errors import PathError
from ..repo.policy import Opener, PathPolicy
from .instructions import Candidate, examine

__all__ = ["MAX_DEPTH", "MAX_IMPORTS", "Imported", "references", "resolve"]

MAX_DEPTH = 5  # hops from the instruction file, as Claude Code follows them
MAX_IMPORTS = 50  # files one instruction file may bring in, all hops together
_AT = re.compile(r"(?:^|(?<=\s))@([^\s`]+)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_TRAIL = ".,;:!?)]}>'\""


@dataclass(frozen=True, slots=True)
class Imported:
    """A file an instruction file imports: ``cand`` (picked, or skipped with its
    ``reason``), ``by`` (the importing file's path) and ``depth`` (1: imported
    by the instruction file itself)."""

    cand: Candidate
    by: str
    depth: int


def references(lines: tuple[str, ...] | list[str]) -> list[str]:
    """The ``@path`` targets in ``lines``, in order, each once."""
    out: dict[str, None] = {}
    fence = None
    for line in lines:
        s = line.lstrip()
        if s.startswith(("```", "~~~")):
            mark = s[:3]
            fence = None if fence == mark else (fence or mark)
            continue
        if fence is not None or "@" not in line:
            continue
        for m in _AT.finditer(_CODE_SPAN.sub(" ", line)):
            target = m.group(1).rstrip(_TRAIL)
            if target and target not in out:
                out[target] = None
    return list(out)


def resolve(policy: PathPolicy, opener: Opener, root_file: Candidate, budget_tokens: int, seen: set[tuple[int, int]]) -> tuple[list[Imported], list[str]]:
    """The files ``root_file`` imports, depth first (each import directly followed
    by its own), and warnings. ``seen``: identities already delivered, extended
    with each file loaded here; a file met again is not repeated (a cycle ends)."""
    out: list[Imported] = []
    warnings: list[str] = []
    if root_file.identity is not None:
        seen.add(root_file.identity)

    def visit(cand: Candidate, depth: int) -> None:  # recursion at most MAX_DEPTH deep
        for target in references(cand.loaded.lines if cand.loaded is not None else ()):
            if depth >= MAX_DEPTH:
                warnings.append(f"{cand.path} imports @{target}: imports deeper than {MAX_DEPTH} levels are not followed")
                return
            if len(out) >= MAX_IMPORTS:
                warnings.append(f"{root_file.path}: more than {MAX_IMPORTS} imports; the rest are not followed")
                return
            got, warning = _one(policy, opener, cand.path, target, budget_tokens)
            if warning:
                warnings.append(warning)
            if got is None:
                continue
            if got.identity is not None:
                if got.identity in seen:
                    continue  # loaded already: an earlier file, or a cycle
                seen.add(got.identity)
            out.append(Imported(got, cand.path, depth + 1))
            if got.reason is None:
                visit(got, depth + 1)

    visit(root_file, 0)
    return out, list(dict.fromkeys(warnings))


def _one(policy: PathPolicy, opener: Opener, by: str, target: str, budget_tokens: int) -> tuple[Candidate | None, str | None]:
    """One ``@target`` of the file ``by``: the candidate (picked or skipped), a warning."""
    shown = f"{by} imports @{target}"
    if target.startswith("~"):
        return None, f"{shown}: a file in the home folder, outside the root; skipped"
    if target.startswith("/"):
        given = target
    else:
        base = posixpath.dirname(by)
        joined = posixpath.normpath(posixpath.join(base, target)) if base else posixpath.normpath(target)
        if joined == ".." or joined.startswith("../"):
            return None, f"{shown}: outside the root; skipped, as head refuses it"
        given = joined
    try:
        t = policy.resolve(given, want="any")
    except PathError as exc:
        if exc.reason in ("not_found", "empty", "invalid"):
            return None, None  # no such file: most often a name in prose (@alice)
        why = {
            "outside_root": "outside the root; skipped, as head refuses it",
            "git_internal": "inside git's internals; skipped",
            "symlink_loop": "a symlink loop; skipped",
        }.get(exc.reason, f"cannot be read ({exc.reason}); skipped")
        return None, f"{shown}: {why}"
    if t.is_dir:
        return None, f"{shown}: a folder, not a file; skipped"
    rel_dir, _, name = t.path.rpartition("/")
    cand, warning = examine(opener, rel_dir, name, budget_tokens, None, policy.is_denied)
    if cand is None:
        return None, None
    if cand.reason == "empty":
        return None, None
    if warning:
        return cand, f"{shown}: {warning}"
    return cand, None
