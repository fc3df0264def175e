"""Queries: each primitive defined once: its parameters, descriptions and checks.

Owns the frozen Query values (``FindQuery`` for glob, ``SearchQuery`` for
grep, ``HeadQuery``, ``TailQuery``, ``OutlineQuery``, ``SymbolsQuery``,
``LocateQuery``, ``NotesQuery``; ``PRIMITIVES`` lists them) and the one
place each primitive is defined: its name on every surface, its descriptions
(the tool's and the CLI's help line) and, on the dataclass fields
(:func:`arg`), each parameter's type, default, bounds, one-line description
and command-line flags. Also the one validator (:func:`check`): the Python
API checks through :meth:`Query.make`, a tool call's arguments
(``adapters/tools``) through the same function worded for a JSON caller; the
tool schemas (``adapters/tools``) and the CLI's options (``adapters/cli``)
are derived from the same fields. And the shared ``check_*`` rules for loosely
typed input, with errors that name the bad value. No I/O.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field, fields

from .errors import QueryError
from .text.hints import call

__all__ = [
    "MAX_TOKENS",
    "PRIMITIVES",
    "Arg",
    "FindQuery",
    "HeadQuery",
    "LocateQuery",
    "OutlineQuery",
    "Param",
    "Query",
    "SearchQuery",
    "NotesQuery",
    "SymbolsQuery",
    "TailQuery",
    "arg",
    "check",
    "check_bool",
    "check_choice",
    "check_count",
    "check_pattern",
    "check_tokens",
    "clamp_tokens",
    "json_type",
    "missing_argument",
    "params",
    "short_json",
    "unknown_arguments",
]

SORTS = ("mtime", "path", "size")
MODES = ("files", "content", "count")
BACKENDS = ("auto", "rg", "python")
MAX_LINES = 2000  # head/tail lines
MAX_LIMIT = 10_000  # grep results a page
MAX_CONTEXT = 100
MAX_TIMEOUT = 600.0
DEFAULT_TIMEOUT = 20.0
MIN_TOKENS = 200  # max_tokens is held to this range on every surface (clamp_tokens)
MAX_TOKEN_CAP = 50_000
MAX_STRING = 4096  # any one string argument of a tool call
MAX_ITEMS = 64  # any one list argument of a tool call


# -- the one validator ------------------------------------------------------------------

# How each surface words a bad value, per failure: (message, hint). The rules are
# check's alone. The Python API names values as Python does (``limit=10``); a tool
# call names them as JSON (``limit: 10``), and its errors name the tool.
_PYTHON = {
    "integer": ("{name} must be an integer, got {value!r}", "pass a whole number such as {name}={ten}"),
    "at_least": ("{name} must be at least {minimum}, got {value}", "pass {name}>={minimum}"),
    "at_most": ("{name} must be at most {maximum:,}, got {value:,}", "pass {name}<={maximum}"),
    "seconds": ("{name} must be a number of seconds in ({low:g}, {high:g}], got {value!r}", "pass {name}={default:g}"),
    "boolean": ("{name} must be true or false, got {value!r}", None),
    "choice": ("{name} must be one of {choices}; got {value!r}", None),
    "string": ("{name} must be a string, got {value!r}", "pass {name} as text ({doc})"),
    "strings": ("{name} must be a list of strings, got {value!r}", "pass {name}=['*.py'] ('!GLOB' excludes)"),
    "missing": ("missing required argument {name!r}", "pass {name} ({doc})"),
    "unknown": ("unknown argument{s} {names}", "pass {known}"),
}
_PYTHON["number"] = _PYTHON["seconds"]  # a float of the wrong type or out of range: one message
_TOOL = {
    "integer": ("{name} must be an integer, got {got}", "pass a JSON number without quotes, e.g. {name}: {example}"),
    "at_least": ("{name} must be at least {minimum:,}, got {value:,}", "pass {name} >= {minimum}"),
    "at_most": ("{name} must be at most {maximum:,}, got {value:,}", "pass {name} <= {maximum}"),
    "number": ("{name} must be a number, got {got}", "pass a JSON number without quotes, e.g. {name}: {default}"),
    "boolean": ("{name} must be true or false, got {got}", "pass {name}: true or {name}: false (JSON booleans, no quotes)"),
    "choice": ("{name} must be one of {choices}; got {short}", "pass {name}: {first!r} or leave it out"),
    "string": ("{name} must be a string, got {got}", "pass {name} as a JSON string"),
    "long": ("{name} is {length:,} characters; the limit is {limit:,}", "pass a shorter {name}"),
    "strings": ("{name} must be an array of strings, got {got}", 'pass {name}: ["*.py"]'),
    "items": ("{name} has {length:,} items; the limit is {limit}", "pass at most {limit} {name} entries"),
    "item": ("{name} entries must be strings, got {got}", 'pass {name}: ["*.py"]'),
    "missing": ("missing required argument {name!r}", "pass {name} ({doc})"),
    "unknown": ("unknown argument{s} {names}", "{tool} takes: {known}"),
}


def json_type(value: object) -> str:
    """What a JSON value is, as an error names it: ``a string``, ``an array``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__  # pragma: no cover


def short_json(value: object) -> str:
    """``value`` as JSON, cut to 80 characters (an error quotes it)."""
    import json  # only for an error: every CLI call imports this module

    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 80 else text[:77] + "..."


def _bad(failure: str, name: str, tool: str | None, value: object = None, *, hint: str | None = None, **words: object) -> QueryError:
    """The error for one failure, worded for the surface (``tool``: a tool call's)."""
    message, default_hint = (_TOOL if tool is not None else _PYTHON)[failure]
    if tool is not None:
        words.update(got=f"{json_type(value)} {short_json(value)}", short=short_json(value), tool=tool)
    words.update(name=name, value=value)
    hint = hint or (default_hint.format(**words) if default_hint else None)
    if tool is None:
        return QueryError(message.format(**words), hint=hint, field=name)
    return QueryError(f"{tool}: {message.format(**words)}", hint=hint, field=name, tool=tool)


def check(p: Param, value: object, tool: str | None = None) -> tuple[object, str | None]:
    """One parameter's value, checked by its definition: the one validator of every
    surface. Returns the value to use and a notice (a count above a clamped maximum
    is clamped, and the notice says so).

    ``tool``: the tool call the value came in, as JSON (``None``: the Python API).
    Its errors are worded for a JSON caller and name the tool; it checks what the
    tool's schema states: JSON types (a whole float is an integer), choices,
    minimums, and the size of strings and lists (``MAX_STRING``, ``MAX_ITEMS``).
    What the schema does not state (a clamped maximum, a float's range, the rules
    across fields) is left for the Query, which applies it when the Workspace makes
    it, with the same notice as for any caller.
    """
    a = p.arg
    if value is None and (p.nullable or p.default is None):
        return None, None
    if value is None and p.kind in ("str", "strs") and not p.required:  # no path given: the default
        return p.default, None
    if p.kind == "bool":
        if not isinstance(value, bool):
            raise _bad("boolean", p.name, tool, value)
        return value, None
    if p.kind == "int":
        if tool is not None and isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON has one number type
        top = int(a.maximum) if a.maximum is not None and not (tool is not None and a.clamp) else None
        example = p.default if isinstance(p.default, int) else int(a.minimum) if a.minimum is not None else 1
        return _count(p.name, value, minimum=int(a.minimum or 0), maximum=top, clamp=a.clamp, tool=tool, example=example)
    if p.kind == "float":
        low = float(a.minimum or 0.0)
        high = float(a.maximum) if a.maximum is not None else math.inf
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _bad("number", p.name, tool, value, low=low, high=high, default=p.default)
        if tool is not None:
            return value, None  # as sent: the Query checks the range and converts
        if not low < value <= high:
            raise _bad("seconds", p.name, tool, value, low=low, high=high, default=p.default)
        return float(value), None
    if p.kind == "strs":
        return _strs(p, value, tool), None
    if a.choices and value not in a.choices and (tool is None or isinstance(value, str)):
        raise _bad("choice", p.name, tool, value, choices=", ".join(a.choices), first=a.choices[0])
    if not isinstance(value, str):
        raise _bad("string", p.name, tool, value, doc=a.doc)
    if tool is not None and len(value) > MAX_STRING:
        raise _bad("long", p.name, tool, value, length=len(value), limit=MAX_STRING)
    return value, None


def _count(
    name: str, value: object, *, minimum: int, maximum: int | None, clamp: bool, tool: str | None = None, example: int = 1, hint: str | None = None
) -> tuple[int, str | None]:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad("integer", name, tool, value, hint=hint, ten=max(minimum, 1) * 10, example=example)
    if value < minimum:
        raise _bad("at_least", name, tool, value, hint=hint, minimum=minimum)
    if maximum is not None and value > maximum:
        if clamp:
            return maximum, f"{name}={value} is above the maximum; clamped to {maximum:,}."
        raise _bad("at_most", name, tool, value, maximum=maximum)
    return value, None


def _strs(p: Param, value: object, tool: str | None) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]  # a lone glob is a common, unambiguous slip
    if not isinstance(value, (list, tuple) if tool is None else list):  # JSON has arrays, Python tuples too
        raise _bad("strings", p.name, tool, value)
    if tool is not None:
        if len(value) > MAX_ITEMS:
            raise _bad("items", p.name, tool, value, length=len(value), limit=MAX_ITEMS)
        for item in value:
            if not isinstance(item, str) or len(item) > MAX_STRING:
                raise _bad("item", p.name, tool, item)
    return tuple(value)


def missing_argument(p: Param, tool: str | None = None) -> QueryError:
    """The error for a required parameter not given."""
    return _bad("missing", p.name, tool, doc=p.arg.doc)


def unknown_arguments(names: list[str], known: list[str], tool: str | None = None) -> QueryError:
    """The error for arguments no parameter takes (``names``, sorted); ``known``: what it takes."""
    return _bad("unknown", names[0], tool, s="s" if len(names) > 1 else "", names=", ".join(map(repr, names)), known=", ".join(known))


# -- the shared rules ---------------------------------------------------------------


def check_count(name: str, value: object, *, minimum: int = 1, maximum: int | None = None, clamp: bool = False, hint: str | None = None) -> tuple[int, str | None]:
    """An integer count; returns (value, notice). Booleans and floats are refused.

    Above ``maximum``: clamped with a notice when ``clamp``, else an error.
    ``hint`` replaces the generic advice in the errors.
    """
    return _count(name, value, minimum=minimum, maximum=maximum, clamp=clamp, hint=hint)


def check_tokens(value: object) -> int | None:
    """``max_tokens``: ``None`` (no cap) or a positive integer (see :func:`clamp_tokens`)."""
    if value is None:
        return None
    return check_count("max_tokens", value, minimum=1)[0]


def clamp_tokens(value: int) -> tuple[int, str | None]:
    """The one rule for ``max_tokens`` on every surface: held to
    ``MIN_TOKENS``..``MAX_TOKEN_CAP``, with a notice when moved (below the
    floor no result with its notices fits; above the cap a result floods a window)."""
    if value < MIN_TOKENS:
        return MIN_TOKENS, f"max_tokens={value} is below the minimum; raised to {MIN_TOKENS}."
    if value > MAX_TOKEN_CAP:
        return MAX_TOKEN_CAP, f"max_tokens={value} is above the maximum; clamped to {MAX_TOKEN_CAP}."
    return value, None


def check_pattern(value: object, name: str = "pattern") -> str:
    if not isinstance(value, str):
        raise QueryError(f"{name} must be a string, got {value!r}", hint=f"pass a {name} such as '**/*.py'", field=name)
    if not value.strip():
        raise QueryError(f"{name} is empty", hint=f"pass a non-empty {name}", field=name, value=value)
    return value


def check_bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise _bad("boolean", name, None, value)


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise _bad("choice", name, None, value, choices=", ".join(choices))
    return str(value)


# -- parameter definitions ------------------------------------------------------------


class Arg:
    """How one parameter is described and bounded on every surface.

    ``doc``: the one-line description (tool schema and CLI help). ``flags``:
    the CLI's option strings; none makes it a positional argument.
    ``minimum``/``maximum`` bound the value (above the maximum: clamped with
    a notice when ``clamp``, else an error; a clamped maximum is never in the
    tool schema: the tool surface clamps too, one rule on every surface).
    ``choices``: the allowed strings. ``tool``/``cli``: whether the surface
    offers it. ``metavar``: the CLI's placeholder.
    """

    __slots__ = ("choices", "clamp", "cli", "doc", "flags", "maximum", "metavar", "minimum", "tool")

    def __init__(
        self,
        doc: str,
        flags: tuple[str, ...] = (),
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        clamp: bool = False,
        choices: tuple[str, ...] = (),
        tool: bool = True,
        cli: bool = True,
        metavar: str | None = None,
    ) -> None:
        # a plain class, like Param: every CLI call builds these, and a dataclass costs ~1 ms to define
        self.doc, self.flags, self.minimum, self.maximum, self.clamp = doc, flags, minimum, maximum, clamp
        self.choices, self.tool, self.cli, self.metavar = choices, tool, cli, metavar


def arg(doc: str, default: object = MISSING, **kw: object):
    """A Query field with its :class:`Arg` (see there for the keywords)."""
    meta = {"arg": Arg(doc, **kw)}  # type: ignore[arg-type]
    return field(metadata=meta) if default is MISSING else field(default=default, metadata=meta)


class Param:
    """One parameter as the surfaces see it: ``kind`` is ``str``, ``int``,
    ``float``, ``bool`` or ``strs`` (a list of strings); ``nullable`` means
    ``None`` is a value of its own (not just "the default")."""

    __slots__ = ("arg", "default", "kind", "name", "nullable", "required")

    def __init__(self, name: str, kind: str, default: object, required: bool, nullable: bool, arg: Arg) -> None:
        self.name, self.kind, self.default, self.required, self.nullable, self.arg = name, kind, default, required, nullable, arg

    def with_default(self, default: object) -> Param:
        return Param(self.name, self.kind, default, self.required, self.nullable, self.arg)


_KINDS = {"str": "str", "int": "int", "float": "float", "bool": "bool", "tuple[str, ...]": "strs"}


def params(cls: type) -> tuple[Param, ...]:
    """The parameters of a Query class, in field order (cached on the class)."""
    cached = cls.__dict__.get("_params_cache")
    if cached is not None:
        return cached
    out = []
    for f in fields(cls):
        a = f.metadata.get("arg")
        if a is None:
            continue
        kind = str(f.type).replace(" | None", "")
        out.append(Param(f.name, _KINDS[kind], None if f.default is MISSING else f.default, f.default is MISSING, str(f.type).endswith("| None"), a))
    result = tuple(out)
    type.__setattr__(cls, "_params_cache", result)
    return result


MAX_TOKENS = Param(
    "max_tokens", "int", None, False, False,
    Arg(f"token cap ({MIN_TOKENS}-{MAX_TOKEN_CAP:,})", ("--max-tokens",), minimum=1, metavar="N"),
)  # fmt: skip


class Query:
    """A primitive's definition, and the validation every Query shares: ``make``
    checks each field by its kind and bounds (:func:`check`), then ``_checked``
    (per query) applies rules across fields.

    A primitive's class names it once for every surface: ``name`` (the CLI
    subcommand, the tool, the result's kind), ``summary`` (the CLI's help line),
    ``description`` (the tool's; each shares a template: what it does; when to use
    it; what it returns and its limits; one example), ``capped`` (its tool lists
    ``max_tokens``; the others answer with references bounded by their limits, are
    capped without an argument for it, and keep the tool list under 2,000 tokens)
    and ``writes`` (it writes, outside the tree: not a read-only tool).
    """

    __slots__ = ()
    name = ""
    summary = ""
    description = ""
    capped = True
    writes = False

    @classmethod
    def make(cls, **values: object):
        """A checked Query from loosely typed values; bad input raises ``QueryError``
        naming it. Unknown names are refused."""
        known = {p.name: p for p in params(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise unknown_arguments(unknown, list(known))
        checked: dict[str, object] = {}
        notices: list[str] = []
        for p in known.values():
            if p.name in values:
                value = values[p.name]
            elif p.required:
                raise missing_argument(p)
            else:
                value = p.default
            checked[p.name], notice = check(p, value)
            if notice:
                notices.append(notice)
        return cls._checked(checked, " ".join(notices) or None)

    @classmethod
    def _checked(cls, values: dict, notice: str | None):
        return cls(**values)


# -- the queries ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FindQuery(Query):
    """Validated glob input."""

    name = "glob"
    summary = "list files matching a glob ('**/' spans folders), newest first"
    description = (
        "Find files by glob, newest first. Use before reading. "
        "Returns references (path, size, age), no contents; git-ignored files skipped unless asked; cut at limit with a notice. "
        'Example: {"pattern": "src/**/*.py"}'
    )

    pattern: str = arg("glob relative to path: '*.md' is its top level, '**/*.md' every level")
    path: str = arg("folder to search, repo-relative", ".")
    sort: str = arg("order; mtime is newest first", "mtime", flags=("--sort",), choices=SORTS)
    limit: int = arg("most files to list", 100, flags=("--limit",), minimum=1, metavar="N")
    include_ignored: bool = arg("also list git-ignored files", False, flags=("--include-ignored",))
    ignore_case: bool = arg("match case-insensitively", False, flags=("-i", "--ignore-case"))

    @classmethod
    def _checked(cls, values: dict, notice: str | None) -> FindQuery:
        pattern = check_pattern(values["pattern"]).strip()
        values["pattern"] = pattern[2:] if pattern.startswith("./") else pattern
        return cls(**values)


@dataclass(frozen=True, slots=True)
class SearchQuery(Query):
    """Validated grep input. ``notice`` carries a clamp message.

    ``context`` sets both ``before`` and ``after`` unless those are given.
    Whitespace is a valid pattern; the empty string is not.
    """

    name = "grep"
    summary = "search file contents (ripgrep regex syntax)"
    description = (
        "Search contents by regex (ripgrep syntax). Use to find text. "
        "Returns files with match counts (mode=files), numbered lines (content) or counts; binary and git-ignored files skipped; paged by limit/offset. "
        'Example: {"pattern": "def main", "mode": "content"}'
    )

    pattern: str = arg("regex, or literal text with fixed_strings")
    path: str = arg("folder or file to search, repo-relative", ".")
    glob: tuple[str, ...] = arg("only files matching these rg -g globs ('*.py': any depth; '!x' excludes)", (), flags=("-g", "--glob"), metavar="GLOB")
    ignore_case: bool = arg("case-insensitive match", False, flags=("-i", "--ignore-case"))
    fixed_strings: bool = arg("pattern is literal text", False, flags=("-F", "--fixed-strings"))
    multiline: bool = arg("let matches span lines", False, flags=("-U", "--multiline"), tool=False)  # rare for a model; the tool list stays under 2,000 tokens
    before: int = arg(
        "context lines before each match (content mode; max 100)", 0, flags=("-B", "--before"), minimum=0, maximum=MAX_CONTEXT, clamp=True, tool=False, metavar="N"
    )  # tools: context (the list stays under 2,000 tokens)
    after: int = arg("context lines after each match (content mode; max 100)", 0, flags=("-A", "--after"), minimum=0, maximum=MAX_CONTEXT, clamp=True, tool=False, metavar="N")
    context: int | None = arg("context lines before and after (max 100)", None, flags=("-C", "--context"), minimum=0, maximum=MAX_CONTEXT, clamp=True, metavar="N")
    mode: str = arg("files, content, or count", "files", flags=("--mode",), choices=MODES)
    limit: int = arg("most results (max 10,000)", 100, flags=("--limit",), minimum=1, maximum=MAX_LIMIT, clamp=True, metavar="N")
    offset: int = arg("results to skip (paging)", 0, flags=("--offset",), minimum=0, metavar="N")
    include_ignored: bool = arg("also search git-ignored files", False, flags=("--include-ignored",))
    backend: str = arg("search engine; auto is rg when present, else python", "auto", flags=("--backend",), choices=BACKENDS, tool=False)
    timeout: float = arg(
        "time cap; past it, partial results marked truncated", DEFAULT_TIMEOUT, flags=("--timeout",), minimum=0.0, maximum=MAX_TIMEOUT, tool=False, metavar="SECONDS"
    )
    notice: str | None = field(default=None, compare=False)

    @classmethod
    def make(cls, **values: object):
        """As :meth:`Query.make`; context lines without a ``mode`` mean content mode, as in rg."""
        if values.get("mode") is None and any(values.get(k) for k in ("before", "after", "context")):
            values["mode"] = "content"
        return Query.make.__func__(cls, **values)  # type: ignore[attr-defined]  # slots=True makes a new class: no zero-argument super()

    @classmethod
    def _checked(cls, values: dict, notice: str | None) -> SearchQuery:
        from .text.globs import compile_glob

        pattern = values["pattern"]
        if not isinstance(pattern, str):
            raise QueryError(f"pattern must be a string, got {pattern!r}", hint="pass a regex such as 'def main'", field="pattern")
        if pattern == "":
            raise QueryError("pattern is empty", hint="pass a non-empty regex, e.g. pattern='TODO'", field="pattern", value=pattern)
        if "\0" in pattern:
            raise QueryError("pattern contains a NUL byte", hint="binary files are not searched; pass a text pattern", field="pattern")
        if "\n" in pattern and not values["multiline"]:
            raise QueryError(
                f"pattern {pattern!r} contains a line break, which never matches line by line",
                hint="pass multiline=true to let matches span lines",
                field="pattern",
                pattern=pattern,
            )
        globs = []
        for g in values["glob"]:
            if not isinstance(g, str) or not g.strip() or g.strip() == "!":
                raise QueryError(f"glob filter {g!r} is empty or not a string", hint="pass gitignore-style globs such as '*.py' or '!tests/**'", field="glob", pattern=g)
            g = g.strip()
            compile_glob(g[1:] if g.startswith("!") else g)  # raises QueryError naming the glob
            globs.append(g)
        values["glob"] = tuple(globs)
        context = values.pop("context")
        if context is not None:
            values["before"] = values["before"] or context
            values["after"] = values["after"] or context
        return cls(**values, notice=notice)


# in a session, a re-read of unchanged content is a short note, of changed content maybe a diff (issue 22)
_FORCE = "in a session: show again even if unchanged"
_DIFF = "in a session: a changed file as a diff against what was shown (CLI --diff, API diff=True)"


@dataclass(frozen=True, slots=True)
class HeadQuery(Query):
    """Validated head input. ``n`` above 2,000 is clamped with a notice."""

    name = "head"
    summary = "first lines of a file, numbered (--symbol NAME: exactly one definition)"
    description = (
        "Read a text file's lines from start. Use after glob or grep. "
        "Returns numbered lines; a notice gives the call that reads on; secret and binary files refused. "
        "In a session, unchanged lines shown before are a short note, a changed file may be a diff. "
        'Example: {"path": "src/app.py", "start": 120, "n": 40}'
    )

    path: str = arg("file to read, repo-relative")
    n: int = arg("number of lines (max 2000)", 100, flags=("-n", "--lines"), minimum=1, maximum=MAX_LINES, clamp=True, metavar="N")
    start: int = arg("first line to show, 1-based", 1, flags=("--start",), minimum=1, metavar="LINE")
    symbol: str | None = arg("one definition (name or Class.method) instead of lines", None, flags=("--symbol",), metavar="NAME")
    force: bool = arg(_FORCE, False, flags=("--force",))
    diff: bool = arg(_DIFF, False, flags=("--diff",), tool=False)  # auto when smaller; the tool list stays under 2,000 tokens
    notice: str | None = field(default=None, compare=False)

    @classmethod
    def _checked(cls, values: dict, notice: str | None) -> HeadQuery:
        symbol = values.get("symbol")
        if symbol is not None and not symbol.strip():
            raise QueryError(
                "symbol is empty",
                hint=f"name one of its definitions ({call('outline', path=values['path'])} lists them), or read it by lines: {call('head', path=values['path'])}",
                field="symbol",
            )
        return cls(**values, notice=notice)


# code.outline.KINDS, written out so that the Queries import no code structure (a test keeps them equal)
KINDS = ("class", "constructor", "destructor", "enum", "function", "impl", "interface", "macro", "method", "module", "namespace", "struct", "trait", "type", "union")


@dataclass(frozen=True, slots=True)
class OutlineQuery(Query):
    """Validated outline input."""

    name = "outline"
    summary = "a file's definitions as an indented tree: lines, kind, signature, tokens"
    description = (
        "List a source file's definitions. Use before reading a long file, then head with symbol. "
        'Returns nested references with line ranges and token costs. Example: {"path": "src/app.py"}'
    )
    capped = False

    path: str = arg("file to outline, repo-relative")
    limit: int = arg("most definitions to list", 500, flags=("--limit",), minimum=1, maximum=MAX_LIMIT, clamp=True, tool=False, metavar="N")
    force: bool = arg(_FORCE, False, flags=("--force",))


@dataclass(frozen=True, slots=True)
class SymbolsQuery(Query):
    """Validated symbols input: definitions across the repository by name."""

    name = "symbols"
    summary = "find definitions by name across the repository (exact, Class.method, prefix)"
    description = (
        "Find where a name is defined. Use instead of grep for definitions. Returns references with lines and tokens: exact, Class.method, prefix. "
        'Example: {"query": "Parser.parse"}'
    )
    capped = False

    query: str = arg("name, Class.method, or a prefix ending in '.' (Class.)")
    path: str = arg("folder to search, repo-relative", ".")
    kind: str | None = arg(
        "only this kind: class, function, method, struct...", None, flags=("--kind",), tool=False, metavar="KIND"
    )  # CLI and API only: the tool list stays under 2,000 tokens
    limit: int = arg("most definitions to list", 50, flags=("--limit",), minimum=1, maximum=MAX_LIMIT, clamp=True, metavar="N")

    @classmethod
    def _checked(cls, values: dict, notice: str | None) -> SymbolsQuery:
        values["query"] = check_pattern(values["query"], "query").strip()
        if values["kind"] is not None:  # checked here, not listed in the schema: the tool list stays small
            values["kind"] = check_choice("kind", values["kind"], KINDS)
        return cls(**values)


@dataclass(frozen=True, slots=True)
class TailQuery(Query):
    """Validated tail input. ``n`` above 2,000 is clamped with a notice."""

    name = "tail"
    summary = "last lines of a file, read from the end"
    description = 'Read the last lines of a text file, cheap on huge files. Use for logs. Returns numbered lines, as head. Example: {"path": "CHANGELOG.md", "n": 30}'

    path: str = arg("file to read, repo-relative")
    n: int = arg("number of lines (max 2000)", 100, flags=("-n", "--lines"), minimum=1, maximum=MAX_LINES, clamp=True, metavar="N")
    force: bool = arg(_FORCE, False, flags=("--force",))
    diff: bool = arg(_DIFF, False, flags=("--diff",), tool=False)
    notice: str | None = field(default=None, compare=False)

    @classmethod
    def _checked(cls, values: dict, notice: str | None) -> TailQuery:
        return cls(**values, notice=notice)


MAX_LOCATE = 100  # files a locate call ranks and shows


@dataclass(frozen=True, slots=True)
class LocateQuery(Query):
    """Validated locate input: a task in words; the files and regions it is about."""

    name = "locate"
    summary = "rank the files and regions a task is about, as references with token costs"
    description = 'Rank the files a task is about. Use first. Returns files, why, regions (lines, symbol, tokens). Example: {"task": "fix the retry timeout"}'
    capped = False

    task: str = arg("the task", flags=("--task",), metavar="TEXT")
    limit: int = arg(
        "most files to show", 10, flags=("--limit",), minimum=1, maximum=MAX_LOCATE, clamp=True, tool=False, metavar="N"
    )  # not a tool argument: the tool list stays under 2,000 tokens
    notice: str | None = field(default=None, compare=False)

    @classmethod
    def _checked(cls, values: dict, notice: str | None) -> LocateQuery:
        task = values["task"]
        if not isinstance(task, str) or not task.strip():
            raise QueryError(f"the task must be non-empty text, got {task!r}"[:200], hint="describe the change, e.g. task='retry timeout in the HTTP client'", field="task")
        return cls(**values, notice=notice)


NOTE_ACTIONS = ("add", "list", "read", "delete")


@dataclass(frozen=True, slots=True)
class NotesQuery(Query):
    """Validated notes input (issue 22): add (text, optionally tied to paths and symbols),
    list, read one, delete one."""

    name = "notes"
    summary = "keep notes outside the window: add, list, read, delete (per repository, kept outside the tree)"
    description = (
        "Keep notes outside the context. Use for findings and decisions. Returns notes, stale once their paths or symbols change. "
        'Example: {"action": "add", "text": "retry is in client.py", "paths": ["src/client.py"]}'
    )
    capped = False
    writes = True

    action: str = arg("what to do", choices=NOTE_ACTIONS)
    text: str | None = arg("the note (add)", None)
    id: int | None = arg("which note (read, delete)", None, flags=("--id",), minimum=1, metavar="N")
    paths: tuple[str, ...] = arg("files it is about (add)", (), flags=("--path",), metavar="PATH")
    symbols: tuple[str, ...] = arg("definitions it is about (add)", (), flags=("--symbol",), metavar="NAME")

    @classmethod
    def _checked(cls, values: dict, notice: str | None) -> NotesQuery:
        action = values["action"]
        if action == "add" and (not isinstance(values.get("text"), str) or not values["text"].strip()):
            raise QueryError("notes add needs the note's text", hint=f"e.g. {call('notes', action='add', text='what to remember')}", field="text")
        if action in ("read", "delete") and values.get("id") is None:
            raise QueryError(f"notes {action} needs the note's id", hint=f"{call('notes', action='list')} shows each note's id", field="id")
        if action != "add" and (values.get("paths") or values.get("symbols")):
            raise QueryError(f"paths and symbols tie a note when it is added, not with {action}", hint="give them when you add the note", field="paths")
        return cls(**values)


# every primitive, in the order the tool list and the CLI's help show them
PRIMITIVES: tuple[type[Query], ...] = (FindQuery, SearchQuery, HeadQuery, TailQuery, OutlineQuery, SymbolsQuery, LocateQuery, NotesQuery)
