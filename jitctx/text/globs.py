"""Pure matching: gitignore-style globs with braces, deny names, literal scans.

Owns turning a glob into a regex (``*`` stays in one folder, ``**/`` spans
folders, ``[...]`` classes, ``\\`` escapes, ``{a,b}`` choices, a pattern
without ``/`` matching the name at any depth unless rooted, a trailing ``/`` or ``/**``
matching everything below), the literal a glob's matches must end with, the
deny list's name rules, and scanning a joined listing for literals. No I/O,
no third-party imports.

Braces become regex alternations, so their cost is linear in the pattern's
length: ``{a,b}`` repeated 18 times is one small regex, not 262,144 globs.
Only a choice that holds ``/`` or ``**`` (``{src,lib/x}/*.py``: each choice
anchors differently) is expanded, and that expansion is bounded.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..errors import QueryError

__all__ = [
    "MAX_EXPANSIONS",
    "MAX_PATTERN",
    "DenyRules",
    "compile_glob",
    "entries_containing",
    "expand_braces",
    "glob_suffix",
    "literal_run",
    "segment_regex",
]

MAX_PATTERN = 4096  # characters in one glob
MAX_EXPANSIONS = 1024  # globs one pattern may expand into (only choices holding '/' or '**' expand)
_GLOB_CHARS = frozenset("*?[")


def _bad(pattern: str, why: str, hint: str = "use gitignore-style globs such as '**/*.py'") -> QueryError:
    shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
    return QueryError(f"invalid glob {shown!r}: {why}", hint=hint, pattern=shown)


def glob_suffix(pattern: str, ignore_case: bool = False) -> str | None:
    """``*.py`` / ``**/*.py`` -> ``.py``: the literal every match ends with, when
    that is the whole pattern (else ``None``). Listing and matching use it."""
    pattern = pattern.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    if ignore_case:
        return None
    for head in ("**/*", "*"):
        if pattern.startswith(head):
            rest = pattern[len(head) :]
            if rest and not (set(rest) & {"*", "?", "[", "/", "\\", "!", "{"}):
                return rest
    return None


# -- braces -------------------------------------------------------------------------


def _brace_groups(pattern: str) -> list[tuple[int, int, list[str]]]:
    """Top-level ``{...}`` groups with at least two choices: (start, end, choices)."""
    out = []
    depth, start, i = 0, -1, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                choices = _split_choices(pattern[start + 1 : i])
                if len(choices) > 1:  # "{x}" is not a choice: it stays literal
                    out.append((start, i, choices))
        i += 1
    return out


def _split_choices(body: str) -> list[str]:
    parts, level, last, i = [], 0, 0, 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            level += 1
        elif c == "}":
            level -= 1
        elif c == "," and level == 0:
            parts.append(body[last:i])
            last = i + 1
        i += 1
    parts.append(body[last:])
    return parts


def expand_braces(pattern: str, limit: int = MAX_EXPANSIONS) -> list[str]:
    """``src/*.{ts,tsx}`` -> ``['src/*.ts', 'src/*.tsx']``; nested braces work, ``\\{`` is literal.

    Raises ``QueryError`` past ``limit`` globs (the count is checked before
    anything is built, so an absurd pattern costs nothing).
    """
    groups = _brace_groups(pattern)
    if not groups:
        return [pattern]
    count = 1
    for _, _, choices in groups:
        count *= len(choices)
        if count > limit:
            raise _bad(pattern, f"its braces expand to more than {limit:,} globs", "use fewer {a,b} choices, or several calls")
    start, end, choices = groups[0]
    head, tail = pattern[:start], pattern[end + 1 :]
    out: list[str] = []
    for choice in choices:
        out.extend(expand_braces(head + choice + tail, limit))
        if len(out) > limit:
            raise _bad(pattern, f"its braces expand to more than {limit:,} globs", "use fewer {a,b} choices, or several calls")
    return out


# -- globs --------------------------------------------------------------------------


def segment_regex(seg: str) -> str:
    """One path segment of a glob (no ``/``) as a regex: ``*`` -> ``[^/]*``,
    ``?`` -> ``[^/]``, ``[!a]`` -> ``[^a]``, ``{a,b}`` -> ``(?:a|b)``.

    Raises ``ValueError`` for a segment that is not a glob (a lone trailing
    backslash); an invalid class range (``[z-a]``) shows when compiled.
    """
    out: list[str] = []
    groups = {start: (end, choices) for start, end, choices in _brace_groups(seg)}
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "\\":
            if i + 1 >= n:
                raise ValueError("it ends with a lone backslash")
            out.append(re.escape(seg[i + 1]))
            i += 2
        elif c == "*":
            while i < n and seg[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = _closing_bracket(seg, i)
            if end is None:  # no closing ']': a literal '['
                out.append(re.escape(c))
                i += 1
                continue
            out.append(_class_regex(seg[i + 1 : end]))
            i = end + 1
        elif c == "{" and i in groups:
            end, choices = groups[i]
            out.append("(?:" + "|".join(segment_regex(ch) for ch in choices) + ")")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _closing_bracket(seg: str, start: int) -> int | None:
    """Index of the ``]`` closing the class opened at ``start`` (a ``]`` first in it is literal)."""
    j = start + 1
    if j < len(seg) and seg[j] in "!^":
        j += 1
    if j < len(seg) and seg[j] == "]":
        j += 1
    while j < len(seg) and seg[j] != "]":
        j += 2 if seg[j] == "\\" else 1
    return j if j < len(seg) else None


def _class_regex(body: str) -> str:
    """A glob class body (between ``[`` and ``]``) as a regex class."""
    out = ["["]
    i = 0
    if body[:1] in ("!", "^"):
        out.append("^")
        i = 1
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(re.escape(body[i + 1]))
            i += 2
            continue
        if c in "[&~|\\" or (c == "-" and out[-1] == "-"):
            out.append("\\" + c)  # never a nested set or a set operation to re
        elif c == "]" and i == (1 if out[-1] == "^" else 0):
            out.append("\\]")
        else:
            out.append(c)
        i += 1
    out.append("]")
    return "".join(out)


def _strip(pattern: str) -> str:
    """Trailing spaces go unless escaped (git's rule)."""
    end = len(pattern)
    while end and pattern[end - 1] == " " and not (end >= 2 and pattern[end - 2] == "\\"):
        end -= 1
    return pattern[:end]


def _one_regex(pattern: str, rooted: bool = False) -> str | None:
    """One glob (braces only inside segments) as a regex; ``None`` when it matches nothing."""
    pattern = _strip(pattern)
    if not pattern or pattern.startswith("#") or pattern.startswith("!"):
        return None
    if pattern == "**" or (pattern == "*" and not rooted):
        return "."
    dir_only = pattern.endswith("/")
    body = pattern.rstrip("/") if dir_only else pattern
    anchored = rooted or body.startswith("/") or "/" in body.lstrip("/")
    segs = body.lstrip("/").split("/")
    if segs == [""]:
        return None
    segs = [seg for k, seg in enumerate(segs) if not (seg == "**" and k and segs[k - 1] == "**")]  # '**/**' is '**'
    if all(seg == "**" for seg in segs):
        return "^[^/]+/" if dir_only else "."  # every folder: everything below one
    out = ["^" if anchored else "^(?:.+/)?"]
    last = len(segs) - 1
    for k, seg in enumerate(segs):
        if seg == "**":
            if k == 0:
                out.append("(?:.+/)?")  # zero or more folders
            elif k == last:
                return "".join(out) + "/"  # everything below
            else:
                out.append("(?:/.+)?")
            continue
        if k and not (k == 1 and segs[0] == "**"):
            out.append("/")
        out.append(segment_regex(seg))
    out.append("/" if dir_only else "$")
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str, ignore_case: bool = False, rooted: bool = False) -> re.Pattern[str]:
    """Compile a gitignore-style glob into a regex matched against a path.

    ``*`` does not cross ``/``; ``**/`` matches zero or more directories; a
    pattern without ``/`` matches the name at any depth (ripgrep's ``-g``),
    or only at the top when ``rooted`` (glob's pattern: ``*.md`` is the top
    level of the search path, as agents' glob tools and pathlib read it); a
    trailing ``/`` or ``/**`` matches everything below; ``{a,b}`` chooses,
    as in ripgrep's globs and the glob tools agents know.
    """
    if len(pattern) > MAX_PATTERN:
        raise _bad(pattern, f"it is {len(pattern):,} characters; the limit is {MAX_PATTERN:,}", "pass a shorter glob")
    regexes = []
    for one in _split_slash_choices(pattern):
        try:
            regex = _one_regex(one, rooted)
        except ValueError as exc:
            raise _bad(pattern, str(exc)) from None
        if regex is None:
            raise _bad(pattern, "it matches nothing", "use a positive glob such as 'src/**/*.ts'")
        regexes.append(regex)
    try:
        return re.compile("|".join(f"(?:{r})" for r in regexes), re.IGNORECASE if ignore_case else 0)
    except (re.error, RecursionError, OverflowError) as exc:
        raise _bad(pattern, str(exc)) from None


def _split_slash_choices(pattern: str) -> list[str]:
    """Expand only the brace groups whose choices hold ``/`` or ``**`` (they anchor
    differently); every other group stays for ``segment_regex`` to alternate."""
    groups = [g for g in _brace_groups(pattern) if any("/" in c or "**" in c for c in g[2])]
    if not groups:
        return [pattern]
    start, end, choices = groups[0]
    head, tail = pattern[:start], pattern[end + 1 :]
    out: list[str] = []
    for choice in choices:
        out.extend(_split_slash_choices(head + choice + tail))
        if len(out) > MAX_EXPANSIONS:
            raise _bad(pattern, f"its braces expand to more than {MAX_EXPANSIONS:,} globs", "use fewer {a,b} choices, or several calls")
    return out


def has_glob_chars(pattern: str) -> bool:
    return bool(_GLOB_CHARS & set(pattern))


# -- deny names -----------------------------------------------------------------------


class DenyRules:
    """The deny list: name globs whose files' content is never shown, and
    allow globs that win over them (``.env.example``).

    Names match case-insensitively (``.ENV``, ``KEY.PEM``: a case-insensitive
    file system serves them as the same file), and a folder whose name is
    denied (``.env/``) denies everything below it.
    """

    def __init__(self, deny: tuple[str, ...], allow: tuple[str, ...]) -> None:
        self.deny = tuple(deny)
        self.allow = tuple(allow)
        # one regex each: this runs on every listed file
        self._deny = _names_regex(self.deny)
        self._allow = _names_regex(self.allow)

    def is_denied(self, path: str) -> bool:
        """Whether the file's content must never be shown (by its name or a folder's)."""
        return any(self._deny.match(name) is not None and self._allow.match(name) is None for name in path.split("/"))


@lru_cache(maxsize=64)  # a server makes a policy per call: translate once
def _names_regex(globs: tuple[str, ...]) -> re.Pattern[str]:
    from fnmatch import translate

    if not globs:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{translate(g)})" for g in globs), re.IGNORECASE)


# -- literal scans --------------------------------------------------------------------


def literal_run(glob: str) -> str:
    """The longest run of plain characters in a basename glob ('' if none)."""
    runs = re.split(r"[*?\[\]{}]", glob)
    return max(runs, key=len) if runs else ""


def entries_containing(joined, literals, sep) -> list:
    """The ``sep``-separated entries of ``joined`` that contain any of ``literals``, in order.

    ``find`` per literal (a C-level scan) is many times faster than one regex
    alternation over a 100k-path listing. Works on ``str`` and ``bytes`` alike.
    """
    found: dict = {}
    for lit in set(literals):
        pos = joined.find(lit)
        while pos >= 0:
            start = joined.rfind(sep, 0, pos) + 1
            end = joined.find(sep, pos)
            end = len(joined) if end < 0 else end
            found[start] = joined[start:end]
            pos = joined.find(lit, end)
    return [found[k] for k in sorted(found)]
