"""Assembler inputs: sources, chat history with tool calls, evidence items.

Owns the :class:`Source` value (kind, priority, stability, relevance,
timestamp, content), turning a chat history into atomic groups (a tool call
is never apart from its results, parallel calls included), building sources
from primitive results (refs, matching lines, excerpts) and from a preload,
and the text each source shows inside its section. Does not own selection,
layout, budgets or provider requests (``assemble``).

Kinds and their defaults (``priority``, ``stable``, ``protected``)::

    system    100  stable   protected   role and rules, never dropped
    preload    90  stable               AGENTS.md / README prefix
    notes      60                       working notes, one item each
    history    50                       one group of chat messages
    evidence   40                       a ref, matching lines or an excerpt
    task      100           protected   what the agent is asked to do
    output    100  stable   protected   how to answer (the assembler adds one)
    <other>    30                       lands in the general [Context] section
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..errors import QueryError
from ..refs import Excerpt, FileRef, LineRef, Result
from ..render import human_size
from ..text.hints import call

__all__ = [
    "KINDS",
    "Message",
    "Source",
    "ToolCall",
    "evidence_sources",
    "history_sources",
    "item_text",
    "note_source",
    "preload_source",
    "system_source",
    "task_source",
]

# kind -> (priority, stable, protected)
KINDS: dict[str, tuple[int, bool, bool]] = {
    "system": (100, True, True),
    "preload": (90, True, False),
    "notes": (60, False, False),
    "history": (50, False, False),
    "evidence": (40, False, False),
    "task": (100, False, True),
    "output": (100, True, True),
}
_OTHER = (30, False, False)


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True, slots=True)
class Source:
    """One candidate for the window.

    ``name`` identifies it in the report (``evicted``, section ``sources``).
    ``kind`` picks the section; an unknown kind goes to the general
    ``[Context]`` section. ``priority`` breaks score ties (higher first);
    ``stable`` puts it in the cached prefix; ``protected`` means it is never
    dropped (if protected sources alone do not fit, assembling fails).
    ``relevance`` is 0..1; ``timestamp`` (epoch seconds, or ``None`` =
    oldest) gives recency. ``label`` heads the item (evidence: path and line
    range). ``messages`` holds the chat messages of a history group.
    ``None`` for priority/stable/protected means the kind's default.
    """

    name: str
    kind: str
    content: str
    # ``None`` in: the kind's default, filled in by ``__post_init__``
    priority: int = None  # type: ignore[assignment]
    stable: bool = None  # type: ignore[assignment]
    protected: bool = None  # type: ignore[assignment]
    relevance: float = 1.0
    timestamp: float | None = None
    label: str | None = None
    messages: tuple = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise QueryError(f"a source needs a non-empty name, got {self.name!r}", hint="name every source, e.g. name='notes:plan'", field="name")
        if not isinstance(self.kind, str) or not self.kind:
            raise QueryError(
                f"source {self.name!r}: kind must be a non-empty string, got {self.kind!r}",
                hint=f"use one of {', '.join(KINDS)} (any other kind goes to the general section)",
                field="kind",
                source=self.name,
            )
        if not isinstance(self.content, str):
            raise QueryError(
                f"source {self.name!r}: content must be text, got {type(self.content).__name__}",
                hint="decode bytes first (e.g. data.decode('utf-8', 'replace')) or pass a reference instead",
                field="content",
                source=self.name,
            )
        prio, stable, protected = KINDS.get(self.kind, _OTHER)
        if self.priority is None:
            object.__setattr__(self, "priority", prio)
        elif isinstance(self.priority, bool) or not isinstance(self.priority, int):
            raise QueryError(
                f"source {self.name!r}: priority must be an integer, got {self.priority!r}", hint="pass e.g. priority=50 (higher wins ties)", field="priority", source=self.name
            )
        if self.stable is None:
            object.__setattr__(self, "stable", stable)
        if self.protected is None:
            object.__setattr__(self, "protected", protected)
        if self.kind in ("task", "history") and self.stable:
            raise QueryError(
                f"source {self.name!r}: a {self.kind} source cannot be stable",
                hint="only sources that stay the same across turns belong in the cached prefix",
                field="stable",
                source=self.name,
            )
        if not _is_number(self.relevance) or not 0.0 <= self.relevance <= 1.0:
            raise QueryError(
                f"source {self.name!r}: relevance must be a number from 0 to 1, got {self.relevance!r}", hint="pass e.g. relevance=0.5", field="relevance", source=self.name
            )
        if self.timestamp is not None and not _is_number(self.timestamp):
            raise QueryError(
                f"source {self.name!r}: timestamp must be epoch seconds or None, got {self.timestamp!r}",
                hint="pass e.g. timestamp=time.time()",
                field="timestamp",
                source=self.name,
            )

    @property
    def section(self) -> str:
        """The section key: the kind, or ``context`` for an unknown kind."""
        return self.kind if self.kind in KINDS else "context"


def _norm(text: str) -> str:
    """Leading blank lines and trailing whitespace stripped, one final newline.

    Every item then starts with a non-blank line and ends with ``\\n``, so
    token counts of consecutive items add up exactly (a BPE token never
    spans a line end followed by a non-blank line).
    """
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    body = "\n".join(lines[i:]).rstrip()
    return body + "\n" if body else ""


def item_text(source: Source) -> str:
    """The text ``source`` shows inside its section (no section header)."""
    body = _norm(source.content)
    if source.kind == "evidence":
        return f"==> {source.label or source.name} <==\n{body}"
    if source.kind == "notes":
        if source.label:
            return f"- {source.label}:\n{body}" if body else ""
        return f"- {body}" if body else ""
    if source.kind in KINDS:
        return body
    head = f"--- {source.label} ---\n" if source.kind == "context" and source.label else f"--- {source.label or source.name} ({source.kind}) ---\n"
    return head + body


# -- simple constructors ---------------------------------------------------------


def system_source(text: str, *, name: str = "system") -> Source:
    """The role and rules: protected and stable."""
    return Source(name, "system", text)


def task_source(text: str, *, name: str = "task") -> Source:
    """What the agent is asked to do: protected, last in the window."""
    if not isinstance(text, str) or not text.strip():
        raise QueryError(f"the task must be non-empty text, got {text!r}", hint="pass the request, e.g. task='fix the failing test in src/app.py'", field="task")
    return Source(name, "task", text)


def note_source(text: str, *, name: str, relevance: float = 1.0, timestamp: float | None = None, label: str | None = None) -> Source:
    """A working note (plan, decision, scratch): dynamic."""
    return Source(name, "notes", text, relevance=relevance, timestamp=timestamp, label=label)


def preload_source(preload: object, *, name: str = "preload") -> list[Source]:
    """The Workspace preload (anything with ``.text``) as one stable source; none if empty."""
    text = getattr(preload, "text", None)
    if not isinstance(text, str):
        raise QueryError(f"preload has no text (got {type(preload).__name__})", hint="pass the object Workspace.preload() returns", field="preload")
    return [Source(name, "preload", text)] if text.strip() else []


# -- history ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call an assistant message made: ``id``, tool ``name``, JSON ``arguments`` text."""

    id: str
    name: str
    arguments: str = "{}"

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise QueryError(f"a tool call needs a non-empty id, got {self.id!r}", hint="pass the id the model gave the call", field="tool_call_id")
        if not isinstance(self.name, str) or not self.name:
            raise QueryError(f"tool call {self.id!r} needs a tool name, got {self.name!r}", field="name", tool_call_id=self.id)
        if isinstance(self.arguments, dict):
            object.__setattr__(self, "arguments", json.dumps(self.arguments, ensure_ascii=False, sort_keys=True))
        elif not isinstance(self.arguments, str):
            raise QueryError(f"tool call {self.id!r}: arguments must be JSON text or a dict, got {type(self.arguments).__name__}", field="arguments", tool_call_id=self.id)


_ROLES = ("user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class Message:
    """A chat message: ``user``, ``assistant`` (may carry ``tool_calls``) or ``tool`` (a result).

    A ``tool`` message answers the call whose id is ``tool_call_id``;
    ``name`` is the tool's name (filled from the call when grouping).
    """

    role: str
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    timestamp: float | None = None

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            hint = "put system text in a system source" if self.role == "system" else "use user, assistant or tool"
            raise QueryError(f"history message role must be one of {', '.join(_ROLES)}, got {self.role!r}", hint=hint, field="role")
        if self.content is None:
            object.__setattr__(self, "content", "")
        if not isinstance(self.content, str):
            raise QueryError(
                f"history message content must be text, got {type(self.content).__name__}", hint="decode bytes or join content blocks into one string first", field="content"
            )
        calls = tuple(c if isinstance(c, ToolCall) else _call_from_dict(c) for c in self.tool_calls)
        object.__setattr__(self, "tool_calls", calls)
        if calls and self.role != "assistant":
            raise QueryError(f"only assistant messages make tool calls, got a {self.role} message with tool_calls", field="tool_calls")
        if self.role == "tool" and not self.tool_call_id:
            raise QueryError("a tool result message needs tool_call_id (the id of the call it answers)", hint="pass tool_call_id='<id of the call>'", field="tool_call_id")
        if self.timestamp is not None and not _is_number(self.timestamp):
            raise QueryError(f"message timestamp must be epoch seconds or None, got {self.timestamp!r}", field="timestamp")

    @classmethod
    def from_dict(cls, d: dict) -> Message:
        """An OpenAI chat message dict (``role``, ``content``, ``tool_calls``, ``tool_call_id``)."""
        if not isinstance(d, dict):
            raise QueryError(f"a history message must be a Message or a dict, got {type(d).__name__}", field="history")
        # every value is checked in __post_init__
        return cls(d.get("role"), d.get("content") or "", tuple(d.get("tool_calls") or ()), d.get("tool_call_id"), d.get("name"), d.get("timestamp"))  # type: ignore[arg-type]

    def render(self) -> str:
        """The message as text lines for the ``[History]`` section."""
        out = []
        if self.role == "tool":
            out.append(f"tool {self.name or '?'} [{self.tool_call_id}] returned:")
            out.append(self.content.rstrip() or "(empty)")
            return "\n".join(out)
        if self.content.strip():
            out.append(f"{self.role}: {self.content.strip()}")
        for c in self.tool_calls:
            out.append(f"{self.role} called {c.name} [{c.id}] {c.arguments}")
        return "\n".join(out) if out else f"{self.role}: (empty)"


def _call_from_dict(d: object) -> ToolCall:
    if not isinstance(d, dict):
        raise QueryError(f"a tool call must be a ToolCall or an OpenAI-style dict, got {type(d).__name__}", field="tool_calls")
    fn = d.get("function") or {}
    return ToolCall(d.get("id"), fn.get("name") or d.get("name"), fn.get("arguments", d.get("arguments", "{}")))  # type: ignore[arg-type]  # checked in __post_init__


def history_sources(messages: Iterable[Message | dict], *, repair: bool = False) -> tuple[list[Source], list[str]]:
    """Split a chat history into atomic groups, one ``history`` source each.

    An assistant message with tool calls and the results of all its calls
    (parallel calls included) form one group: selection keeps or drops it
    whole, so a call is never separated from its result. A result without
    a call before it, or a call without a result, is an error; with
    ``repair=True`` the unmatched result or call is dropped instead and a
    warning says so. Returns ``(sources, warnings)``; sources are named
    ``history:<index of the group's first message>``.
    """
    msgs = [m if isinstance(m, Message) else Message.from_dict(m) for m in messages]
    warnings: list[str] = []
    groups: list[tuple[int, list[Message]]] = []
    current: list[Message] = []  # an open tool-call group (empty: none)
    open_calls: dict[str, ToolCall] = {}
    start = 0

    def unanswered(at: int) -> None:
        nonlocal current
        if open_calls:
            ids = ", ".join(sorted(open_calls))
            if not repair:
                raise QueryError(
                    f"history: tool call(s) {ids} at message {start} have no result before message {at}",
                    hint="add the tool result message(s), drop the call, or pass repair_history=True to drop unanswered calls with a warning",
                    field="history",
                    tool_call_ids=sorted(open_calls),
                    index=start,
                )
            call_msg = current[0]
            kept = tuple(c for c in call_msg.tool_calls if c.id not in open_calls)
            warnings.append(f"history: dropped tool call(s) {ids} at message {start}: no result (repair)")
            fixed = Message(call_msg.role, call_msg.content, kept, timestamp=call_msg.timestamp)
            current[0] = fixed
            if not kept and not call_msg.content.strip():
                current.pop(0)
            open_calls.clear()
        if current:
            groups.append((start, current))
        current = []

    answered_ids: set[str] = set()
    for i, m in enumerate(msgs):
        if m.role == "tool":
            call = open_calls.pop(m.tool_call_id or "", None)
            if call is None:
                if not repair:
                    why = "answers a call that already has a result" if m.tool_call_id in answered_ids else "has no matching tool call before it"
                    raise QueryError(
                        f"history: tool result for call id {m.tool_call_id!r} at message {i} {why}",
                        hint="pass the assistant message that made the call before its result, drop the result, or pass repair_history=True to drop unmatched results with a warning",
                        field="history",
                        tool_call_id=m.tool_call_id,
                        index=i,
                    )
                warnings.append(f"history: dropped tool result {m.tool_call_id!r} at message {i}: no matching call (repair)")
                continue
            answered_ids.add(m.tool_call_id or "")
            current.append(m if m.name else Message("tool", m.content, (), m.tool_call_id, call.name, m.timestamp))
            continue
        unanswered(i)
        if m.role == "assistant" and m.tool_calls:
            ids = [c.id for c in m.tool_calls]
            if len(set(ids)) != len(ids):
                raise QueryError(f"history: message {i} repeats a tool call id ({', '.join(ids)})", hint="give each call its own id", field="history", index=i)
            current, start = [m], i
            open_calls.update((c.id, c) for c in m.tool_calls)
        else:
            groups.append((i, [m]))
    unanswered(len(msgs))

    sources = []
    for idx, group in groups:
        stamps = [m.timestamp for m in group if m.timestamp is not None]
        sources.append(Source(f"history:{idx}", "history", "\n".join(m.render() for m in group), timestamp=max(stamps) if stamps else None, messages=tuple(group)))
    return sources, warnings


# -- evidence --------------------------------------------------------------------

_MAX_LINES_PER_FILE = 20


def _numbered(pairs: Iterable[tuple[int, str]]) -> str:
    out, prev = [], None
    for num, text in pairs:
        if prev is not None and num > prev + 1:
            out.append("   ...")
        out.append(f"{num:>6}\t{text}")
        prev = num
    return "\n".join(out)


def evidence_sources(items: Iterable[object] | Result, *, relevance: float | Callable[[str], float] = 1.0, max_lines: int = _MAX_LINES_PER_FILE) -> list[Source]:
    """Sources for primitive results: refs, matching lines, excerpts.

    Each item is labelled with its path and line range. Matching lines
    (``LineRef``, with their context) of one file become one item, lines
    numbered, gaps marked ``...``, at most ``max_lines`` lines (the label
    says how many more). ``relevance`` is a number or a function of the
    path. A ``Result`` contributes its ``results``.
    """
    if isinstance(items, Result):
        items = items.results
    rel = relevance if callable(relevance) else (lambda _p: relevance)
    out: list[Source] = []
    by_path: dict[str, list[LineRef]] = {}
    order: list[object] = []
    for it in items:
        if isinstance(it, LineRef):
            if it.path not in by_path:
                by_path[it.path] = []
                order.append(it.path)
            by_path[it.path].append(it)
        elif isinstance(it, (FileRef, Excerpt)):
            order.append(it)
        else:
            raise QueryError(f"evidence must be FileRef, LineRef, Excerpt or a Result, got {type(it).__name__}", hint="pass what glob/grep/head/tail returned", field="evidence")
    for it in order:
        if isinstance(it, str):
            refs = by_path[it]
            lines: dict[int, str] = {}
            for r in refs:
                for c in r.before:
                    lines.setdefault(c["line"], c["text"])
                lines[r.line] = r.text
                for c in r.after:
                    lines.setdefault(c["line"], c["text"])
            nums = sorted(lines)
            shown = nums[:max_lines]
            more = len(nums) - len(shown)
            label = f"{it}:{shown[0]}-{shown[-1]}" if len(shown) > 1 else f"{it}:{shown[0]}"
            if more:
                label += f" ({more} more lines; read them with {call('head', path=it, start=shown[-1] + 1)})"
            out.append(Source(f"evidence:{it}", "evidence", _numbered((n, lines[n]) for n in shown), relevance=rel(it), timestamp=refs[0].mtime, label=label))
        elif isinstance(it, Excerpt):
            if it.start_line is None:
                n = len(it.lines)
                label = f"{it.path} (last {n} lines)"
                body = _numbered(zip(range(-n, 0), it.lines))
            else:
                label = f"{it.path}:{it.start_line}-{it.end_line}" if it.lines else f"{it.path} (0 lines)"
                if it.total_lines is not None:
                    label += f" of {it.total_lines}"
                body = _numbered(zip(range(it.start_line, it.start_line + len(it.lines)), it.lines))
            out.append(Source(f"evidence:{label}", "evidence", body, relevance=rel(it.path), timestamp=it.mtime, label=label))
        elif isinstance(it, FileRef):
            what = human_size(it.size)  # one size format, as glob shows it
            if it.matches is not None:
                what += f", {it.matches} matching line{'s' if it.matches != 1 else ''}"
            label = f"{it.path} ({what}{', denied' if it.denied else ''})"
            out.append(Source(f"evidence:{it.path}", "evidence", "", relevance=rel(it.path), timestamp=it.mtime, label=label))
    return out
