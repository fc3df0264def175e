"""Tool specs for agents: the tools (``TOOLS``: glob, grep, head, tail, outline, symbols, locate, notes) as schemas, and ``dispatch``.

Owns the tools (each a name, a description and the Query whose fields
are its arguments: the schema and the argument checks are derived from those
fields, the same ones the Python API validates and the CLI offers), the
export for OpenAI chat completions, OpenAI responses (strict) and Anthropic
messages, and ``dispatch``: validate a tool call's arguments, run it on a
Workspace, render it, and turn every failure into a structured tool error
(type, message naming the bad value, hint), never a traceback.

Does not own what the primitives do (the library) or any transport (the MCP
adapter). Imports neither the ``mcp`` SDK nor tiktoken at import time.

``dispatch`` returns a :class:`ToolOutput` carrying both forms: ``text`` (the
compact text a model reads; the default content of a tool result) and
``data`` (the JSON envelope of DESIGN section 3, or ``{"error": {...}}``).
"""

import json
import os
import threading
from dataclasses import dataclass

from ..errors import JitctxError, QueryError
from ..query import MAX_TOKENS, FindQuery, HeadQuery, LocateQuery, NotesQuery, OutlineQuery, Param, SearchQuery, SymbolsQuery, TailQuery, params
from ..refs import Result
from ..session.workspace import Workspace

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "FORMATS",
    "TOOLS",
    "ToolOutput",
    "ToolSpec",
    "dispatch",
    "export_schemas",
    "tool_error",
]

DEFAULT_MAX_TOKENS = 4000  # the tool and MCP surfaces live long: cap every result
FORMATS = ("openai", "openai-responses", "anthropic")
MAX_ARGUMENT_BYTES = 64 * 1024  # a tool call's arguments, as JSON
MAX_STRING = 4096  # any one string argument
MAX_ITEMS = 64  # any one list argument

_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "strs": "array"}


def _schema(p: Param) -> dict:
    """One argument's JSON Schema (without nullability or default)."""
    a = p.arg
    s: dict = {"type": _TYPES[p.kind]}
    if a.choices:
        s["enum"] = list(a.choices)
    if p.kind == "strs":
        s["items"] = {"type": "string"}
    if p.kind == "int":
        lo = a.schema_minimum if a.schema_minimum is not None else a.minimum
        hi = a.schema_maximum if a.schema_maximum is not None else a.maximum
        if lo is not None:
            s["minimum"] = int(lo)
        if hi is not None and not a.clamp:  # above a clamped maximum: the most allowed, with a notice (not an error)
            s["maximum"] = int(hi)
    s["description"] = a.doc
    return s


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool: ``name`` (the Workspace method it calls), ``description`` and its
    arguments (``params``: its Query's fields plus ``max_tokens``, as the schema lists
    them). ``unlisted``: the rest of its Query's fields (and ``max_tokens`` where the
    schema leaves it out), accepted when a call passes them, as a hint may say to
    (``pass multiline=true``, ``raise limit``), but not in the schema, which stays
    under 2,000 tokens."""

    name: str
    description: str
    params: tuple[Param, ...]
    unlisted: tuple[Param, ...] = ()

    def schema(self, *, strict: bool = False) -> dict:
        """JSON Schema of the arguments.

        ``strict`` (OpenAI structured outputs): every property required,
        optional ones nullable (null means the default), no ``default``.
        """
        props: dict[str, dict] = {}
        for p in self.params:
            s = _schema(p)
            if strict:
                if not p.required:
                    s["type"] = [s["type"], "null"]
            else:
                if p.nullable and p.default is not None:  # a None default just means "absent"
                    s["type"] = [s["type"], "null"]
                if not p.required and p.default is not None and p.kind != "strs":
                    s["default"] = p.default
            props[p.name] = s
        required = [p.name for p in self.params if strict or p.required]
        return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


# Each description shares a template: what it does; when to use it; what it
# returns and its limits; one example.
_TOOLS: tuple[tuple[str, type, str], ...] = (
    (
        "glob",
        FindQuery,
        "Find files by glob, newest first. Use before reading. "
        "Returns references (path, size, age), no contents; git-ignored files skipped unless asked; cut at limit with a notice. "
        'Example: {"pattern": "src/**/*.py"}',
    ),
    (
        "grep",
        SearchQuery,
        "Search contents by regex (ripgrep syntax). Use to find text. "
        "Returns files with match counts (mode=files), numbered lines (content) or counts; binary and git-ignored files skipped; paged by limit/offset. "
        'Example: {"pattern": "def main", "mode": "content"}',
    ),
    (
        "head",
        HeadQuery,
        "Read a text file's lines from start. Use after glob or grep. "
        "Returns numbered lines; a notice gives the call that reads on; secret and binary files refused. "
        "In a session, unchanged lines shown before are a short note, a changed file may be a diff. "
        'Example: {"path": "src/app.py", "start": 120, "n": 40}',
    ),
    (
        "tail",
        TailQuery,
        'Read the last lines of a text file, cheap on huge files. Use for logs. Returns numbered lines, as head. Example: {"path": "CHANGELOG.md", "n": 30}',
    ),
    (
        "outline",
        OutlineQuery,
        "List a source file's definitions. Use before reading a long file, then head with symbol. "
        'Returns nested references with line ranges and token costs. Example: {"path": "src/app.py"}',
    ),
    (
        "symbols",
        SymbolsQuery,
        "Find where a name is defined. Use instead of grep for definitions. Returns references with lines and tokens: exact, Class.method, prefix. "
        'Example: {"query": "Parser.parse"}',
    ),
)
_TOOLS += (
    (
        "locate",
        LocateQuery,
        'Rank the files a task is about. Use first. Returns files, why, regions (lines, symbol, tokens). Example: {"task": "fix the retry timeout"}',
    ),
    (
        "notes",
        NotesQuery,
        "Keep notes outside the context. Use for findings and decisions. Returns notes, stale once their paths or symbols change. "
        'Example: {"action": "add", "text": "retry is in client.py", "paths": ["src/client.py"]}',
    ),
)
_TOOL_MAX_TOKENS = MAX_TOKENS.with_default(DEFAULT_MAX_TOKENS)

# these answer with references bounded by their limits: the default cap applies without an argument for it, and the tool list stays under 2,000 tokens
_UNCAPPED = {"locate", "notes", "outline", "symbols"}
TOOLS: dict[str, ToolSpec] = {
    name: ToolSpec(
        name,
        description,
        (*(p for p in params(query) if p.arg.tool), *(() if name in _UNCAPPED else (_TOOL_MAX_TOKENS,))),
        (*(p for p in params(query) if not p.arg.tool), *((_TOOL_MAX_TOKENS,) if name in _UNCAPPED else ())),
    )
    for name, query, description in _TOOLS
}


def export_schemas(format: str = "openai") -> list[dict]:
    """The tools in a provider's shape.

    ``openai``: chat completions ``tools`` entries (``{"type": "function",
    "function": {...}}``); ``openai-responses``: responses API entries with
    ``strict: true`` (all properties required, optional ones nullable, null
    meaning the default); ``anthropic``: messages API ``tools`` entries
    (``name``, ``description``, ``input_schema``).
    """
    if format == "openai":
        return [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema()}} for t in TOOLS.values()]
    if format == "openai-responses":
        return [{"type": "function", "name": t.name, "description": t.description, "parameters": t.schema(strict=True), "strict": True} for t in TOOLS.values()]
    if format == "anthropic":
        return [{"name": t.name, "description": t.description, "input_schema": t.schema()} for t in TOOLS.values()]
    raise QueryError(f"format must be one of {', '.join(FORMATS)}; got {format!r}", hint="pass format='openai', 'openai-responses' or 'anthropic'", field="format")


# -- dispatch --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool call returns: ``text`` for the model, ``data`` as JSON.

    ``data`` is the result envelope (DESIGN section 3), or for a failure
    ``{"error": {"type", "message", "hint", ...fields}}`` (plus ``stale``
    when delivered files changed). ``str(output)`` is ``text``.
    """

    text: str
    data: dict
    is_error: bool = False

    def __str__(self) -> str:
        return self.text


def _type_name(value: object) -> str:
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


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 80 else text[:77] + "..."


def _bad(tool: str, name: str, message: str, hint: str) -> QueryError:
    return QueryError(f"{tool}: {message}", hint=hint, field=name, tool=tool)


def _check(tool: str, p: Param, value: object) -> object:
    """One argument against its schema; returns the value to pass on."""
    s = _schema(p)
    kind = s["type"]
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            example = p.default if isinstance(p.default, int) else s.get("minimum", 1)
            raise _bad(tool, p.name, f"{p.name} must be an integer, got {_type_name(value)} {_short(value)}", f"pass a JSON number without quotes, e.g. {p.name}: {example}")
        lo, hi = s.get("minimum"), s.get("maximum")
        if lo is not None and value < lo:
            raise _bad(tool, p.name, f"{p.name} must be at least {lo:,}, got {value:,}", f"pass {p.name} >= {lo}")
        if hi is not None and value > hi:
            more = " and page with start" if tool == "head" and p.name == "n" else ""
            raise _bad(tool, p.name, f"{p.name} must be at most {hi:,}, got {value:,}", f"pass {p.name} <= {hi}{more}")
        return value
    if kind == "number":  # an unlisted float (grep's timeout): the Query checks its range
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _bad(tool, p.name, f"{p.name} must be a number, got {_type_name(value)} {_short(value)}", f"pass a JSON number without quotes, e.g. {p.name}: {p.default}")
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise _bad(
                tool, p.name, f"{p.name} must be true or false, got {_type_name(value)} {_short(value)}", f"pass {p.name}: true or {p.name}: false (JSON booleans, no quotes)"
            )
        return value
    if kind == "string":
        if not isinstance(value, str):
            raise _bad(tool, p.name, f"{p.name} must be a string, got {_type_name(value)} {_short(value)}", f"pass {p.name} as a JSON string")
        if "enum" in s and value not in s["enum"]:
            raise _bad(tool, p.name, f"{p.name} must be one of {', '.join(s['enum'])}; got {_short(value)}", f"pass {p.name}: {s['enum'][0]!r} or leave it out")
        if len(value) > MAX_STRING:
            raise _bad(tool, p.name, f"{p.name} is {len(value):,} characters; the limit is {MAX_STRING:,}", f"pass a shorter {p.name}")
        return value
    if kind == "array":
        if isinstance(value, str):
            value = [value]  # a lone glob is a common, unambiguous slip
        if not isinstance(value, list):
            raise _bad(tool, p.name, f"{p.name} must be an array of strings, got {_type_name(value)} {_short(value)}", f'pass {p.name}: ["*.py"]')
        if len(value) > MAX_ITEMS:
            raise _bad(tool, p.name, f"{p.name} has {len(value):,} items; the limit is {MAX_ITEMS}", f"pass at most {MAX_ITEMS} {p.name} entries")
        for item in value:
            if not isinstance(item, str) or len(item) > MAX_STRING:
                raise _bad(tool, p.name, f"{p.name} entries must be strings, got {_type_name(item)} {_short(item)}", f'pass {p.name}: ["*.py"]')
        return value
    raise AssertionError(kind)  # pragma: no cover


def _example(spec: ToolSpec) -> str:
    """The tool's own example arguments (the end of its description)."""
    return spec.description.rsplit("Example: ", 1)[-1]


def parse_arguments(name: object, arguments: object) -> tuple[ToolSpec, dict]:
    """Validate a tool call: the tool exists, arguments parse and fit its schema.

    ``arguments`` is a dict, a JSON object string, or ``None`` (no
    arguments). ``null`` for an optional argument means its default.
    Returns the spec and the keyword arguments for its function.
    """
    if not isinstance(name, str) or name not in TOOLS:
        raise QueryError(f"unknown tool {_short(name)}", hint=f"call one of: {', '.join(TOOLS)}", field="name", tool=name if isinstance(name, str) else None)
    spec = TOOLS[name]
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, (str, bytes, bytearray)):
        if len(arguments) > MAX_ARGUMENT_BYTES:
            raise QueryError(f"{name}: arguments are {len(arguments):,} bytes; the limit is {MAX_ARGUMENT_BYTES:,}", hint="send a smaller request", field="arguments", tool=name)
        try:
            arguments = json.loads(arguments)
        except (ValueError, UnicodeDecodeError) as exc:
            raise QueryError(
                f"{name}: arguments are not valid JSON ({exc}): {_short(arguments if isinstance(arguments, str) else repr(arguments))}",
                hint=f"send a JSON object such as {_example(spec)}",
                field="arguments",
                tool=name,
            ) from None
    if not isinstance(arguments, dict):
        raise QueryError(
            f"{name}: arguments must be a JSON object, got {_type_name(arguments)} {_short(arguments)}",
            hint=f"send a JSON object such as {_example(spec)}",
            field="arguments",
            tool=name,
        )
    known = {p.name: p for p in spec.params}
    extra = sorted(k for k in arguments if k not in known and k not in {p.name for p in spec.unlisted})
    if extra:
        raise QueryError(
            f"{name}: unknown argument{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}",
            hint=f"{name} takes: {', '.join(known)}",
            field=extra[0],
            tool=name,
        )
    kwargs: dict[str, object] = {}
    for p in (*spec.params, *(p for p in spec.unlisted if p.name in arguments)):
        value = arguments.get(p.name)
        if value is None:
            if p.required:
                raise QueryError(f"{name}: missing required argument {p.name!r}", hint=f"pass {p.name} ({p.arg.doc})", field=p.name, tool=name)
            if p.nullable and p.name in arguments:
                kwargs[p.name] = None
            continue
        kwargs[p.name] = _check(name, p, value)
    return spec, kwargs


_DEFAULT: dict[str, Workspace] = {}
_DEFAULT_LOCK = threading.Lock()


def default_workspace(root: str | os.PathLike | None = None) -> Workspace:
    """One Workspace per root for this process (its session ledgers live on)."""
    from ..repo.universe import find_root

    key = str(find_root(root))
    with _DEFAULT_LOCK:
        ws = _DEFAULT.get(key)
        if ws is None:
            ws = _DEFAULT[key] = Workspace(key, max_tokens=DEFAULT_MAX_TOKENS)
        return ws


def tool_error(exc: BaseException, ws: Workspace | None = None) -> ToolOutput:
    """A failure as a ToolOutput: structured data and a short text for the model."""
    if isinstance(exc, JitctxError):
        err = exc.to_dict()
    else:
        err = {"type": "internal_error", "message": f"{type(exc).__name__}: {exc}", "hint": "this is a bug in jitctx; try another call and report it"}
    data: dict = {"error": err}
    lines = [f"error ({err['type']}): {err['message']}"]
    if err.get("hint"):
        lines.append(f"hint: {err['hint']}")
    if ws is not None:
        try:
            stale = ws.stale()
        except Exception:  # staleness is advisory: never let it mask the real error
            stale = []
        if stale:
            from ..render import stale_line

            data["stale"] = stale
            lines = [stale_line(s) for s in stale] + lines
    return ToolOutput("\n".join(lines), data, is_error=True)


def dispatch(name: str, arguments: dict | str | None = None, *, workspace: Workspace | None = None) -> ToolOutput:
    """Run a tool call; never raises.

    ``arguments``: a dict or a JSON object string (what a model produced).
    ``workspace``: the session to run in (default: one per root, from
    ``$JITCTX_ROOT`` or the working directory's git top level, capped at
    4,000 tokens per result). Results carry the stale notices and just-in-
    time instructions of the Workspace. Failures come back as a ToolOutput
    with ``is_error`` and ``data["error"]`` = type, message, hint.
    """
    from ..render import render_text

    ws = workspace
    ran = False
    try:
        spec, kwargs = parse_arguments(name, arguments)
        if ws is None:
            ws = default_workspace()
        if "max_tokens" not in kwargs:
            kwargs["max_tokens"] = ws.max_tokens or DEFAULT_MAX_TOKENS
        ran = True
        result: Result = getattr(ws, spec.name)(**kwargs)
        return ToolOutput(render_text(result) or f"{spec.name}: no results", result.to_dict())
    except Exception as exc:  # the one broad catch of the tool surface
        if workspace is not None and not ran:
            with workspace.call():  # a call refused here is still the caller's call: turn N stays its Nth (issue 29 item 11)
                pass
        return tool_error(exc, ws)
