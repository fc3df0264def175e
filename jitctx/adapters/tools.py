"""Tool specs for agents: glob, grep, head, tail as schemas, and ``dispatch``.

Owns the four tool functions (one typed function per tool; the spec is
derived from its signature and docstring), the JSON Schema of each tool's
arguments, the export for OpenAI chat completions, OpenAI responses (strict)
and Anthropic messages, and ``dispatch``: validate a tool call's arguments,
run it on a Workspace, render it, and turn every failure into a structured
tool error (type, message naming the bad value, hint), never a traceback.

Does not own what the primitives do (the library) or any transport (the MCP
adapter). Imports neither the ``mcp`` SDK nor tiktoken at import time.

``dispatch`` returns a :class:`ToolOutput` carrying both forms: ``text`` (the
compact text a model reads; the default content of a tool result) and
``data`` (the JSON envelope of DESIGN section 3, or ``{"error": {...}}``).
"""

import inspect
import json
import os
import threading
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from ..errors import JitctxError, QueryError
from ..refs import Result
from ..workspace import Workspace

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "FORMATS",
    "TOOLS",
    "Range",
    "ToolOutput",
    "ToolSpec",
    "dispatch",
    "export_schemas",
    "glob",
    "grep",
    "head",
    "tail",
    "tool_error",
]

DEFAULT_MAX_TOKENS = 4000  # the tool and MCP surfaces live long: cap every result
FORMATS = ("openai", "openai-responses", "anthropic")
MAX_ARGUMENT_BYTES = 64 * 1024  # a tool call's arguments, as JSON
MAX_STRING = 4096  # any one string argument
MAX_ITEMS = 64  # any one list argument


@dataclass(frozen=True, slots=True)
class Range:
    """Bounds for an integer argument, used as ``Annotated[int, Range(1, 100)]``."""

    minimum: int
    maximum: int


Count = Annotated[int, Range(1, 1000)]
Lines = Annotated[int, Range(1, 2000)]
LineNo = Annotated[int, Range(1, 100_000_000)]
Context = Annotated[int, Range(0, 50)]
Offset = Annotated[int, Range(0, 1_000_000)]
Tokens = Annotated[int, Range(200, 50_000)]


# -- the tools ----------------------------------------------------------------
# Each docstring is the spec: the text before "Args:" is the tool description
# (what it does; when to use it; what it returns and its limits; one example),
# each "name: text" line under "Args:" describes one argument.


def glob(
    ws: Workspace,
    pattern: str,
    path: str = ".",
    sort: Literal["mtime", "path", "size"] = "mtime",
    limit: Count = 100,
    include_ignored: bool = False,
    ignore_case: bool = False,
    max_tokens: Tokens = DEFAULT_MAX_TOKENS,
) -> Result:
    """Find files by name with a gitignore-style glob, newest first.

    Use to locate files before reading them. Returns references (path, size, age), never contents; git-ignored files are skipped unless asked; cut at limit with a notice. Example: {"pattern": "src/**/*.py"}

    Args:
        pattern: glob; '*' stays in one folder, '**/' spans folders
        path: folder to search, repo-relative
        sort: mtime (newest first), path, or size
        limit: most files to list
        include_ignored: also list git-ignored files
        ignore_case: match case-insensitively
        max_tokens: cap on the rendered result
    """
    return ws.glob(pattern, path, sort=sort, limit=limit, include_ignored=include_ignored, ignore_case=ignore_case, max_tokens=max_tokens)


def grep(
    ws: Workspace,
    pattern: str,
    path: str = ".",
    glob: list[str] | None = None,
    ignore_case: bool = False,
    fixed_strings: bool = False,
    multiline: bool = False,
    before: Context = 0,
    after: Context = 0,
    context: Context | None = None,
    mode: Literal["files", "content", "count"] = "files",
    limit: Count = 100,
    offset: Offset = 0,
    include_ignored: bool = False,
    max_tokens: Tokens = DEFAULT_MAX_TOKENS,
) -> Result:
    """Search file contents with a regex (ripgrep syntax).

    Use to find where a symbol or text occurs. Returns matching files with match counts (mode=files), matching lines with numbers (content), or counts; binary and git-ignored files skipped; paged by limit/offset. Example: {"pattern": "def main", "mode": "content"}

    Args:
        pattern: regex, or literal text with fixed_strings
        path: folder or file to search, repo-relative
        glob: only files matching these globs; '!glob' excludes
        ignore_case: case-insensitive match
        fixed_strings: pattern is literal text
        multiline: let matches span lines
        before: context lines before each match (content mode)
        after: context lines after each match (content mode)
        context: context lines before and after
        mode: files, content, or count
        limit: most results to show
        offset: results to skip (paging)
        include_ignored: also search git-ignored files
        max_tokens: cap on the rendered result
    """
    return ws.grep(
        pattern, path, glob=tuple(glob or ()), ignore_case=ignore_case, fixed_strings=fixed_strings, multiline=multiline,
        before=before, after=after, context=context, mode=mode, limit=limit, offset=offset,
        include_ignored=include_ignored, max_tokens=max_tokens,
    )  # fmt: skip


def head(ws: Workspace, path: str, n: Lines = 100, start: LineNo = 1, max_tokens: Tokens = DEFAULT_MAX_TOKENS) -> Result:
    """Read lines of a text file from the top, or from line start.

    Use to read a file found with glob or grep. Returns numbered lines and the file's line count; a notice gives the call that reads on. Binary and secret files are refused. Example: {"path": "src/app.py", "start": 120, "n": 40}

    Args:
        path: file to read, repo-relative
        n: number of lines (max 2000)
        start: first line to show, 1-based
        max_tokens: cap on the rendered result
    """
    return ws.head(path, n, start=start, max_tokens=max_tokens)


def tail(ws: Workspace, path: str, n: Lines = 100, max_tokens: Tokens = DEFAULT_MAX_TOKENS) -> Result:
    """Read the last lines of a text file.

    Use for logs, changelogs and the end of long files. Returns numbered lines, read from the end (cheap on huge files). Binary and secret files are refused. Example: {"path": "CHANGELOG.md", "n": 30}

    Args:
        path: file to read, repo-relative
        n: number of lines (max 2000)
        max_tokens: cap on the rendered result
    """
    return ws.tail(path, n, max_tokens=max_tokens)


# -- specs derived from the functions -------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    """One argument: its JSON Schema (without nullability) and default."""

    name: str
    schema: dict
    required: bool
    default: Any
    nullable: bool  # ``None`` is a meaningful value (not just "use the default")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool: ``name``, ``description``, argument ``params`` and the function."""

    name: str
    description: str
    params: tuple[Param, ...]
    fn: Any

    def schema(self, *, strict: bool = False) -> dict:
        """JSON Schema of the arguments.

        ``strict`` (OpenAI structured outputs): every property required,
        optional ones nullable (null means the default), no ``default``.
        """
        props: dict[str, dict] = {}
        for p in self.params:
            s = dict(p.schema)
            if strict:
                if not p.required:
                    s["type"] = [s["type"], "null"]
            else:
                if p.nullable:
                    s["type"] = [s["type"], "null"]
                if not p.required and p.default is not None:
                    s["default"] = p.default
            props[p.name] = s
        required = [p.name for p in self.params if strict or p.required]
        return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _docstring(fn) -> tuple[str, dict[str, str]]:
    doc = inspect.getdoc(fn) or ""
    text, _, args = doc.partition("\nArgs:\n")
    described = {}
    for line in args.splitlines():
        name, sep, what = line.strip().partition(": ")
        if sep:
            described[name] = what.strip()
    return " ".join(text.split()), described


def _param_schema(hint: Any) -> tuple[dict, bool]:
    """(schema, nullable) for a type hint."""
    nullable = False
    origin = typing.get_origin(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(hint))
        hint = args[0]
        origin = typing.get_origin(hint)
    bounds = None
    if origin is Annotated:
        hint, *extras = typing.get_args(hint)
        bounds = next((e for e in extras if isinstance(e, Range)), None)
        origin = typing.get_origin(hint)
    if origin is Literal:
        return {"type": "string", "enum": list(typing.get_args(hint))}, nullable
    if origin is list:
        return {"type": "array", "items": {"type": "string"}}, nullable
    if hint is bool:
        return {"type": "boolean"}, nullable
    if hint is int:
        s: dict = {"type": "integer"}
        if bounds:
            s.update(minimum=bounds.minimum, maximum=bounds.maximum)
        return s, nullable
    if hint is str:
        return {"type": "string"}, nullable
    raise TypeError(f"unsupported tool argument type {hint!r}")  # pragma: no cover - a programming error


def _spec(fn) -> ToolSpec:
    description, described = _docstring(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    params = []
    for name, p in list(inspect.signature(fn).parameters.items())[1:]:  # the first is the Workspace
        schema, nullable = _param_schema(hints[name])
        schema = {**schema, "description": described[name]}
        required = p.default is inspect.Parameter.empty
        # A None default with a non-nullable type (grep's glob) just means "absent".
        params.append(Param(name, schema, required, None if required else p.default, nullable and p.default is not None))
    return ToolSpec(fn.__name__, description, tuple(params), fn)


TOOLS: dict[str, ToolSpec] = {fn.__name__: _spec(fn) for fn in (glob, grep, head, tail)}


def export_schemas(format: str = "openai") -> list[dict]:
    """The four tools in a provider's shape.

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
    s = p.schema
    kind = s["type"]
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(tool, p.name, f"{p.name} must be an integer, got {_type_name(value)} {_short(value)}", f"pass a JSON number without quotes, e.g. {p.name}: {p.default if isinstance(p.default, int) else s.get('minimum', 1)}")
        lo, hi = s.get("minimum"), s.get("maximum")
        if lo is not None and value < lo:
            raise _bad(tool, p.name, f"{p.name} must be at least {lo:,}, got {value:,}", f"pass {p.name} >= {lo}")
        if hi is not None and value > hi:
            more = " and page with start" if tool == "head" and p.name == "n" else ""
            raise _bad(tool, p.name, f"{p.name} must be at most {hi:,}, got {value:,}", f"pass {p.name} <= {hi}{more}")
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise _bad(tool, p.name, f"{p.name} must be true or false, got {_type_name(value)} {_short(value)}", f"pass {p.name}: true or {p.name}: false (JSON booleans, no quotes)")
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
            raise QueryError(f"{name}: arguments are not valid JSON ({exc}): {_short(arguments if isinstance(arguments, str) else repr(arguments))}", hint='send a JSON object such as {"pattern": "**/*.py"}', field="arguments", tool=name) from None
    if not isinstance(arguments, dict):
        raise QueryError(f"{name}: arguments must be a JSON object, got {_type_name(arguments)} {_short(arguments)}", hint='send a JSON object such as {"path": "README.md"}', field="arguments", tool=name)
    known = {p.name: p for p in spec.params}
    extra = sorted(k for k in arguments if k not in known)
    if extra:
        raise QueryError(
            f"{name}: unknown argument{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}",
            hint=f"{name} takes: {', '.join(known)}",
            field=extra[0],
            tool=name,
        )
    kwargs = {}
    for p in spec.params:
        value = arguments.get(p.name)
        if value is None:
            if p.required:
                raise QueryError(f"{name}: missing required argument {p.name!r}", hint=f"pass {p.name} ({p.schema['description']})", field=p.name, tool=name)
            if p.nullable and p.name in arguments:
                kwargs[p.name] = None
            continue
        kwargs[p.name] = _check(name, p, value)
    return spec, kwargs


_DEFAULT: dict[str, Workspace] = {}
_DEFAULT_LOCK = threading.Lock()


def default_workspace(root: str | os.PathLike | None = None) -> Workspace:
    """One Workspace per root for this process (its session ledgers live on)."""
    from ..repo import find_root

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
    elif isinstance(exc, ImportError):
        err = {"type": "unavailable", "message": f"this tool is not available in this build: {exc}", "hint": "use glob, head and tail instead"}
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
    try:
        spec, kwargs = parse_arguments(name, arguments)
        if ws is None:
            ws = default_workspace()
        if "max_tokens" not in kwargs:
            kwargs["max_tokens"] = ws.max_tokens or DEFAULT_MAX_TOKENS
        result = spec.fn(ws, **kwargs)
        return ToolOutput(render_text(result) or f"{spec.name}: no results", result.to_dict())
    except Exception as exc:  # the one broad catch of the tool surface
        return tool_error(exc, ws)
