"""Tool specs for agents: the tools (``TOOLS``: glob, grep, head, tail, outline, symbols, locate, notes) as schemas, and ``dispatch``.

Owns the tools, each derived from its primitive's one definition (the Query
class in ``jitctx.query``: its name, description and fields): the schema from
the fields, the argument checks through the same validator the Python API uses
(``query.check``, worded for a JSON caller), as the CLI's options come from the
same fields. Also the
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
from ..query import MAX_TOKENS, PRIMITIVES, Param, Query, check, json_type, missing_argument, params, short_json, unknown_arguments
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
        if a.minimum is not None:
            s["minimum"] = int(a.minimum)
        if a.maximum is not None and not a.clamp:  # above a clamped maximum: the most allowed, with a notice (not an error)
            s["maximum"] = int(a.maximum)
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


_TOOL_MAX_TOKENS = MAX_TOKENS.with_default(DEFAULT_MAX_TOKENS)


def _spec(query: type[Query]) -> ToolSpec:
    """A primitive's tool: its name and description, its fields as the schema lists them
    (``max_tokens`` too where it is ``capped``), the rest accepted but unlisted."""
    cap = (_TOOL_MAX_TOKENS,)
    listed = tuple(p for p in params(query) if p.arg.tool)
    unlisted = tuple(p for p in params(query) if not p.arg.tool)
    return ToolSpec(query.name, query.description, (*listed, *cap) if query.capped else listed, unlisted if query.capped else (*unlisted, *cap))


TOOLS: dict[str, ToolSpec] = {q.name: _spec(q) for q in PRIMITIVES}


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
        raise QueryError(f"unknown tool {short_json(name)}", hint=f"call one of: {', '.join(TOOLS)}", field="name", tool=name if isinstance(name, str) else None)
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
                f"{name}: arguments are not valid JSON ({exc}): {short_json(arguments if isinstance(arguments, str) else repr(arguments))}",
                hint=f"send a JSON object such as {_example(spec)}",
                field="arguments",
                tool=name,
            ) from None
    if not isinstance(arguments, dict):
        raise QueryError(
            f"{name}: arguments must be a JSON object, got {json_type(arguments)} {short_json(arguments)}",
            hint=f"send a JSON object such as {_example(spec)}",
            field="arguments",
            tool=name,
        )
    listed = [p.name for p in spec.params]
    extra = sorted(k for k in arguments if k not in listed and k not in {p.name for p in spec.unlisted})
    if extra:
        raise unknown_arguments(extra, listed, tool=name)
    kwargs: dict[str, object] = {}
    for p in (*spec.params, *(p for p in spec.unlisted if p.name in arguments)):
        value = arguments.get(p.name)
        if value is None:  # null for an optional argument: its default
            if p.required:
                raise missing_argument(p, tool=name)
            if p.nullable and p.name in arguments:
                kwargs[p.name] = None
            continue
        kwargs[p.name] = check(p, value, tool=name)[0]  # what a clamp would change, the Query clamps and says so
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
