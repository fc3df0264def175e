"""Rules from every agent's format: the formats setting, one rule model, finding them.

Owns which formats are read (the setting, all by default), where each format
keeps its rule files (at the root: ``.claude/rules/``, ``.cursor/rules/`` and
``.cursorrules``, ``.github/copilot-instructions.md`` and
``.github/instructions/``, ``.windsurf/rules/`` and ``.windsurfrules``,
``.clinerules``), the rule model (a source file, its format, its scope:
``always``, ``path`` globs or on ``request``, its text without front matter),
each file's scope from its front matter, and their precedence order. Rule
files pass the same trust checks as instruction files (``instructions.examine``:
read through the policy's opener; links out, special, denied, binary and huge
files skipped with a reason), and the walk is bounded. Does not own the
AGENTS.md chain (``instructions``), the prefix (``preload``) or the
just-in-time record (``nested``).
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from pathlib import Path

from ..errors import JitctxError, QueryError
from ..repo.policy import PathPolicy
from ..text.globs import compile_glob
from .instructions import Candidate, examine

__all__ = [
    "FORMATS",
    "MAX_RULE_BYTES",
    "MAX_RULE_FILES",
    "Rule",
    "RuleSet",
    "chain_fallbacks",
    "check_formats",
    "find_rules",
]

# the formats, in precedence order: the AGENTS.md chain first (with its CLAUDE.md and
# GEMINI.md fallbacks), then each agent's rule files
FORMATS = ("agents", "claude", "gemini", "cursor", "copilot", "windsurf", "cline")
TITLES = {"claude": "Claude Code", "cursor": "Cursor", "copilot": "GitHub Copilot", "windsurf": "Windsurf", "cline": "Cline"}
_FALLBACK_FORMAT = {"CLAUDE.md": "claude", "GEMINI.md": "gemini"}
MAX_RULE_BYTES = 256 * 1024  # a larger rule file is skipped unread (~64k tokens: no rule is that long)
MAX_RULE_FILES = 200  # rule files read per repository, all formats together
MAX_RULE_DEPTH = 4  # folders below a rule folder walked
MAX_RULE_ENTRIES = 5000  # names looked at in rule folders (a folder linked to a big tree stays cheap)
MAX_DESCRIPTION = 200  # characters of a description shown in the prefix's list


def check_formats(value: object) -> tuple[str, ...]:
    """The formats setting: ``None`` or ``"all"`` for all, ``"none"`` for none, else
    names (a list, or a string with commas), returned in precedence order."""
    if value is None:
        return FORMATS
    if isinstance(value, str):
        names = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        names = [v.strip() for v in value]
    else:
        raise QueryError(f"formats must be a list of format names, got {value!r}", hint=f"pass names among {', '.join(FORMATS)}, or 'all'", field="formats")
    if names == ["all"]:
        return FORMATS
    if names == ["none"]:
        return ()
    for name in names:
        if name not in FORMATS:
            raise QueryError(f"unknown format {name!r}", hint=f"formats are {', '.join(FORMATS)} (or 'all', 'none'); separate several with commas", field="formats")
    return tuple(f for f in FORMATS if f in names)


def chain_fallbacks(fallbacks: tuple[str, ...], formats: tuple[str, ...]) -> tuple[str, ...]:
    """The fallback names of the AGENTS.md chain the formats keep: ``CLAUDE.md`` with
    ``claude``, ``GEMINI.md`` with ``gemini``; a name of no format stays."""
    return tuple(n for n in fallbacks if n not in _FALLBACK_FORMAT or _FALLBACK_FORMAT[n] in formats)


# -- the model ----------------------------------------------------------------------------


class Rule:
    """One rule file (a plain slotted class: a frozen dataclass costs ~3 ms to
    define, and every preload imports this module; docs/benchmarks.md).

    ``path``: repo-relative; ``format``: claude | cursor | copilot | windsurf |
    cline; ``scope``: ``always`` (in the prefix), ``path`` (delivered with the
    first result showing a path that ``globs`` match) or ``request`` (listed
    with its ``description``; the agent reads it when it applies); ``cand``:
    the file as examined (stat, loaded text); ``body``: its lines without front
    matter; ``offset``: how many file lines precede ``body`` (a ``head`` reads
    on at ``offset + k + 1``); ``digest``: ``instructions.text_digest`` of ``body``;
    ``pattern``: its globs as one regex (``None``: no globs).
    """

    __slots__ = ("body", "cand", "description", "digest", "format", "globs", "offset", "path", "pattern", "scope")

    def __init__(
        self,
        path: str,
        format: str,
        scope: str,
        globs: tuple[str, ...],
        description: str | None,
        cand: Candidate,
        body: tuple[str, ...],
        offset: int,
        digest: str,
        pattern: re.Pattern[str] | None = None,
    ) -> None:
        self.path, self.format, self.scope, self.globs, self.description = path, format, scope, globs, description
        self.cand, self.body, self.offset, self.digest, self.pattern = cand, body, offset, digest, pattern

    def __repr__(self) -> str:
        return f"Rule({self.path!r}, {self.format!r}, {self.scope!r}, {self.globs!r})"

    @property
    def text(self) -> str:
        return "".join(line + "\n" for line in self.body)

    def matches(self, path: str) -> bool:
        """Whether this rule applies to the repo-relative ``path``."""
        return self.pattern is not None and self.pattern.match(path) is not None

    def describe(self) -> dict:
        """The JSON form: path, format, scope, globs, description."""
        return {"path": self.path, "format": self.format, "scope": self.scope, "globs": list(self.globs), "description": self.description}


class RuleSet:
    """The rule files of a repository in precedence order (format, then path),
    the ones skipped (a ``Candidate`` with its ``reason``, and its format) and
    warnings."""

    __slots__ = ("rules", "skipped", "warnings")

    def __init__(self, rules: tuple[Rule, ...] = (), skipped: tuple[tuple[Candidate, str], ...] = (), warnings: tuple[str, ...] = ()) -> None:
        self.rules, self.skipped, self.warnings = rules, skipped, warnings

    def scoped(self, scope: str) -> list[Rule]:
        return [r for r in self.rules if r.scope == scope]


# -- where each format keeps its rules ----------------------------------------------------


class _Source:
    """Where a format keeps rules: ``path`` at the root; in a folder, the names
    ending with ``suffixes`` (``()``: a file of its own, whose scope is ``fixed``)."""

    __slots__ = ("fixed", "format", "path", "suffixes")

    def __init__(self, format: str, path: str, suffixes: tuple[str, ...], fixed: str | None = None) -> None:
        self.format, self.path, self.suffixes, self.fixed = format, path, suffixes, fixed


_SOURCES = (
    _Source("claude", ".claude/rules", (".md",)),
    _Source("cursor", ".cursor/rules", (".mdc", ".md")),
    _Source("cursor", ".cursorrules", (), "always"),
    _Source("copilot", ".github/copilot-instructions.md", (), "always"),
    _Source("copilot", ".github/instructions", (".instructions.md",)),
    _Source("windsurf", ".windsurf/rules", (".md",)),
    _Source("windsurf", ".windsurfrules", (), "always"),
    _Source("cline", ".clinerules", (".md", ".txt")),  # a folder, or a file of its own
)
# a glob without '/' matches at the root only (Claude Code's and Copilot's documented
# meaning of '*.md'), or at any depth (gitignore's; Cursor, Windsurf and Cline users write
# '*.tsx' for every .tsx file)
_ROOTED = {"claude": True, "copilot": True, "cursor": False, "windsurf": False, "cline": False}


def find_rules(policy: PathPolicy, formats: tuple[str, ...], root_listing: set[str] | None = None) -> RuleSet:
    """The rule files of the ``formats`` at the root, in precedence order.

    Costs an ``lstat`` per location when a repository has none, or nothing when
    the caller passes the root's names (``root_listing``; the preload lists it).
    """
    sources = [s for s in _SOURCES if s.format in formats]
    if not sources:
        return RuleSet()
    rules: list[Rule] = []
    skipped: list[tuple[Candidate, str]] = []
    warnings: list[str] = []
    count = 0
    root = str(policy.root)
    if root_listing is not None:
        sources = [s for s in sources if s.path.partition("/")[0] in root_listing]
    present = [s for s in sources if os.path.lexists(f"{root}/{s.path}")]  # strings: pathlib's joins cost more than the lstat
    if not present:
        return RuleSet()
    with policy.opener() as opener:
        for source in present:
            for rel_dir, name, listing in _files(policy, source, warnings):
                if count >= MAX_RULE_FILES:
                    warnings.append(f"more than {MAX_RULE_FILES} rule files; the rest are not read")
                    return RuleSet(tuple(rules), tuple(skipped), tuple(dict.fromkeys(warnings)))
                count += 1
                cand, warning = examine(opener, rel_dir, name, 0, listing, policy.is_denied, max_bytes=MAX_RULE_BYTES)
                if warning:
                    warnings.append(warning)
                if cand is None or cand.reason == "empty":
                    continue
                if cand.reason is not None:
                    skipped.append((cand, source.format))
                    continue
                rule, problems = _rule(cand, source)
                warnings += problems
                if rule is not None:
                    rules.append(rule)
    return RuleSet(tuple(rules), tuple(skipped), tuple(dict.fromkeys(warnings)))


def _files(policy: PathPolicy, source: _Source, warnings: list[str]):
    """(folder, name, folder listing) of each file a source holds, sorted by path.

    The source is resolved first: a link on the way out of the root (the rule
    folder, or a folder above it) is skipped with a warning, so no name from
    outside is ever listed; a link inside the root is followed (the files are
    shown under their real path).
    """
    root = policy.root
    lexical = f"{root}/{source.path}"
    real = os.path.realpath(lexical)
    if not policy.inside(real):
        warnings.append(f"{source.path} is, or is under, a symlink to a folder or file outside the root; skipped, as head refuses it")
        return
    rel = policy.relative(Path(real))
    if ".git" in rel.split("/"):
        warnings.append(f"{source.path} is a symlink into git's internals; skipped")
        return
    if os.path.isdir(real):
        if source.suffixes:  # else a folder where a file belongs
            yield from _walk(root, rel, source.suffixes, 0, warnings, [MAX_RULE_ENTRIES])
        return
    if source.suffixes and source.format != "cline":  # a file where a folder belongs (.clinerules may be either)
        return
    # a link itself is examined by its name (``examine`` follows it inside the root); a link above it by the real path
    rel_dir, _, name = (source.path if os.path.islink(lexical) else rel).rpartition("/")
    yield rel_dir, name, None


def _walk(root: Path, rel_dir: str, suffixes: tuple[str, ...], depth: int, warnings: list[str], left: list[int]):
    """Files with these suffixes below ``rel_dir``, sorted; at most ``MAX_RULE_DEPTH``
    folders deep and ``MAX_RULE_ENTRIES`` entries looked at (``left``), symlinked
    folders not followed."""
    try:
        with os.scandir(root / rel_dir) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    left[0] -= len(entries)
    if left[0] < 0:
        warnings.append(f"{rel_dir}/ holds more than {MAX_RULE_ENTRIES:,} entries; rule files past them are not read")
        entries = entries[: max(0, len(entries) + left[0])]
    listing = {e.name for e in entries}
    for e in entries:
        if e.name.startswith("."):
            continue
        try:
            is_dir = e.is_dir(follow_symlinks=False)
            is_link = e.is_symlink()
        except OSError:
            continue
        if is_dir:
            if depth >= MAX_RULE_DEPTH:
                warnings.append(f"{rel_dir}/{e.name}/ is more than {MAX_RULE_DEPTH} folders deep in a rule folder; not read")
            else:
                yield from _walk(root, f"{rel_dir}/{e.name}", suffixes, depth + 1, warnings, left)
        elif e.name.endswith(suffixes):
            if is_link and os.path.isdir(e.path):
                warnings.append(f"{rel_dir}/{e.name} is a symlink to a folder; not followed")
                continue
            yield rel_dir, e.name, listing


# -- one file's scope -----------------------------------------------------------------------

_parsed: OrderedDict[tuple, tuple[Rule | None, tuple[str, ...]]] = OrderedDict()
_parsed_lock = threading.Lock()


def _rule(cand: Candidate, source: _Source) -> tuple[Rule | None, tuple[str, ...]]:
    """The rule a file holds and what was wrong with its front matter (cached by the
    file's identity and ``stat``)."""
    st = cand.st
    assert st is not None and cand.loaded is not None  # a picked file was read
    key = (str(cand.real), cand.path, source.path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _parsed_lock:
        hit = _parsed.get(key)
    if hit is not None:
        return hit
    got = _parse(cand, source)
    with _parsed_lock:
        _parsed[key] = got
        if len(_parsed) > 512:
            _parsed.popitem(last=False)
    return got


def _parse(cand: Candidate, source: _Source) -> tuple[Rule | None, tuple[str, ...]]:
    from .frontmatter import split  # only where a rule file exists

    lines = cand.loaded.lines  # type: ignore[union-attr]
    fm = split(lines)
    problems = [f"{cand.path}: front matter {p}" for p in fm.problems]
    start = fm.body_start
    while start < len(lines) and not lines[start].strip():
        start += 1
    body = tuple(lines[start:])
    if not body:
        return None, tuple(problems)  # front matter only: nothing to deliver
    fields = fm.fields
    scope, globs, description = _scope(source, fields, cand.path)
    pattern = None
    if globs:
        good = []
        rooted = _ROOTED[source.format]
        for g in globs:
            g = g[2:] if g.startswith("./") else g
            try:
                good.append(compile_glob(g, rooted=rooted).pattern)
            except JitctxError:
                problems.append(f"{cand.path}: glob {g!r} cannot be read; left out")
        if good:
            pattern = re.compile("|".join(f"(?:{p})" for p in good))
        elif scope == "path":
            problems.append(f"{cand.path}: none of its globs can be read; listed to read on request instead")
            scope = "request"
    return Rule(cand.path, source.format, scope, globs, description, cand, body, start, cand.loaded.digest(start), pattern), tuple(problems)  # type: ignore[union-attr]


def _text(value) -> str | None:
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())
    return None


def _scope(source: _Source, fields: dict, path: str) -> tuple[str, tuple[str, ...], str | None]:
    """(scope, globs, description) of a rule file, by its format's front matter."""
    from .frontmatter import split_list

    description = _text(fields.get("description"))
    if source.fixed is not None:
        return source.fixed, (), description
    fmt = source.format
    if fmt in ("claude", "cline"):
        globs = split_list(fields.get("paths"))
        return ("path" if globs else "always"), globs, description
    if fmt == "cursor":
        globs = split_list(fields.get("globs"))
        if fields.get("alwaysApply") is True:
            return "always", (), description
        return ("path" if globs else "request"), globs, description
    if fmt == "copilot":
        globs = split_list(fields.get("applyTo"))
        if any(g in ("**", "**/*", "/**") for g in globs):
            return "always", (), description
        return ("path" if globs else "request"), globs, description
    # windsurf: trigger always_on | glob | model_decision | manual
    trigger = fields.get("trigger")
    globs = split_list(fields.get("globs"))
    if trigger == "always_on" or (trigger is None and not globs):
        return "always", (), description
    if trigger in ("glob", None) and globs:
        return "path", globs, description
    return "request", (), description
