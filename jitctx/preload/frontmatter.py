"""Front matter: the small, bounded subset of YAML that agents' rule files use.

Owns splitting a rule file's lines into its front matter (between a first
line ``---`` and the next ``---``) and its body, and reading the front matter's
top-level ``key: value`` pairs: plain, single- or double-quoted strings,
booleans, flow lists (``[a, "b"]``), block lists (``- a`` lines), and block
scalars (``|``, ``>``). Does not own what a key means to a format (``rules``).

Written by hand rather than with a YAML library (docs/design.md, "Rules from
every agent's format"): there are no anchors, aliases, tags, merges or nested
mappings to expand, so no input can grow (billion laughs), recurse or name a
Python object; one pass over at most ``MAX_LINES`` lines of at most
``MAX_BYTES``; whatever is outside the subset is left out and said in
``problems``, never raised. Cursor writes globs unquoted (``globs: *.ts``),
which a YAML loader reads as an alias: here it is the string it looks like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_BYTES", "MAX_LINES", "FrontMatter", "split", "split_list"]

MAX_LINES = 200  # lines of front matter read; past them there is none (the body starts at line 1)
MAX_BYTES = 16 * 1024  # bytes of front matter read, likewise
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})

Value = str | bool | tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A rule file's front matter and where its body starts.

    ``fields``: each top-level key read (a string, a boolean, a tuple of
    strings, or ``None`` for an empty value); ``body_start``: the 0-based index
    of the body's first line in the file's lines (0: no front matter);
    ``problems``: what was left out, in words (no file content quoted).
    """

    fields: dict[str, Value]
    body_start: int = 0
    problems: tuple[str, ...] = ()


def split(lines: tuple[str, ...] | list[str]) -> FrontMatter:
    """The front matter of ``lines`` (a file's lines, BOM and CRLF already gone)."""
    if not lines or lines[0].rstrip() != "---":
        return FrontMatter({})
    end = None
    size = 0
    for i in range(1, min(len(lines), MAX_LINES + 1)):
        size += len(lines[i]) + 1
        if size > MAX_BYTES:
            break
        if lines[i].rstrip() in ("---", "..."):
            end = i
            break
    if end is None:
        return FrontMatter({}, 0, (f"front matter not closed by '---' within {MAX_LINES} lines or {MAX_BYTES // 1024} KiB: read as text",))
    fields, problems = _read(lines[1:end], 2)
    return FrontMatter(fields, end + 1, tuple(problems))


def _read(lines, first: int) -> tuple[dict[str, Value], list[str]]:
    """Top-level keys of front-matter ``lines`` (``first``: the file line number of lines[0])."""
    fields: dict[str, Value] = {}
    problems: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        if line[0] in " \t":
            problems.append(f"line {first + i}: indented line outside a list; left out")
            i += 1
            continue
        m = _KEY.match(line.rstrip())
        if m is None:
            problems.append(f"line {first + i}: not a 'key: value' line; left out")
            i += 1
            continue
        key, raw = m.group(1), (m.group(2) or "").strip()
        i += 1
        if raw in ("|", ">", "|-", ">-", "|+", ">+"):
            block = []
            while i < n and (not lines[i].strip() or lines[i][0] in " \t"):
                block.append(lines[i].strip())
                i += 1
            fields[key] = ("\n" if raw[0] == "|" else " ").join(block).strip()
            continue
        if raw == "" or raw.startswith("#"):
            items: list[str] = []
            while i < n and (not lines[i].strip() or lines[i][0] in " \t"):
                item = lines[i].strip()
                i += 1
                if not item or item.startswith("#"):
                    continue
                if item == "-" or item.startswith("- "):
                    value, why = _scalar(item[1:].strip())
                    if why is None and isinstance(value, str):
                        items.append(value)
                    elif why is not None:
                        problems.append(f"line {first + i - 1}: {key}: {why}; item left out")
                else:
                    problems.append(f"line {first + i - 1}: {key}: nested mappings are not read; left out")
            fields[key] = tuple(items) if items else None
            continue
        value, why = _value(raw)
        if why is not None:
            problems.append(f"line {first + i - 1}: {key}: {why}; left out")
            continue
        fields[key] = value
    return fields, problems


def _value(raw: str) -> tuple[Value, str | None]:
    """One inline value: a flow list or a scalar."""
    if raw.startswith("["):
        end = _closing(raw)
        if end is None:
            return None, "a flow list that does not close on its line"
        if raw[end + 1 :].strip() and not raw[end + 1 :].strip().startswith("#"):
            return None, "text after a flow list"
        items = []
        for part in _split_commas(raw[1:end]):
            value, why = _scalar(part.strip())
            if why is not None:
                return None, why
            if isinstance(value, str) and value:
                items.append(value)
        return tuple(items), None
    if raw.startswith("{"):
        return None, "flow mappings are not read"
    return _scalar(raw)


def _scalar(raw: str) -> tuple[Value, str | None]:
    """A plain, quoted or boolean scalar; anchors (``&``) and tags (``!``) are refused."""
    if not raw:
        return None, None
    if raw[0] in "&!":
        return None, "anchors and tags are not read"
    if raw[0] in "\"'":
        return _quoted(raw)
    cut = raw.find(" #")
    if cut >= 0:
        raw = raw[:cut].rstrip()
    if raw in _TRUE:
        return True, None
    if raw in _FALSE:
        return False, None
    if raw in ("~", "null", "Null", "NULL"):
        return None, None
    return raw, None


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "0": "\0", "r": "\r"}


def _quoted(raw: str) -> tuple[Value, str | None]:
    q = raw[0]
    out: list[str] = []
    i = 1
    while i < len(raw):
        ch = raw[i]
        if q == "'" and ch == "'":
            if raw[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            break
        if q == '"' and ch == "\\" and i + 1 < len(raw):
            out.append(_ESCAPES.get(raw[i + 1], raw[i + 1]))
            i += 2
            continue
        if q == '"' and ch == '"':
            break
        out.append(ch)
        i += 1
    else:
        return None, "a quoted string that does not close on its line"
    rest = raw[i + 1 :].strip()
    if rest and not rest.startswith("#"):
        return None, "text after a closing quote"
    return "".join(out), None


def _closing(raw: str) -> int | None:
    """Where the flow list opened at ``raw[0]`` closes (quotes and a glob's ``[...]`` respected)."""
    quote, depth = None, 0
    for i, ch in enumerate(raw):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return i
    return None


def _split_commas(text: str) -> list[str]:
    """Split on commas outside quotes and braces (``src/**/*.{ts,tsx}`` stays whole)."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def split_list(value: Value) -> tuple[str, ...]:
    """A field that holds globs: a list as is, a string split on commas outside braces."""
    if isinstance(value, tuple):
        out: list[str] = []
        for v in value:
            out += [p.strip() for p in _split_commas(v)]
        return tuple(p for p in out if p)
    if isinstance(value, str):
        return tuple(p.strip().strip("\"'").strip() for p in _split_commas(value) if p.strip().strip("\"'").strip())
    return ()
