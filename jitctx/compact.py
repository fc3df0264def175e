"""Light compaction of a chat history: old tool results cleared to fit a budget.

Owns :func:`compact` and its report (:class:`Compaction`,
:class:`ClearedResult`): the content of old tool results, oldest first, is
replaced by a one-line placeholder naming the call that fetches it again
(in tool-argument syntax), its size in tokens and whether it is still
current, until the history fits a token budget. Never touches user or
assistant messages (text and tool calls: decisions stay), the order of the
messages or the call/result pairing (a cleared result keeps its place and
``tool_call_id``), nor anything outside the history. Counts each history
group as the assembler prices it in ``[History]`` (``sources``' grouping
and item text). Does not own grouping or pairing rules (``sources``),
choosing which groups enter a window (``assemble``), nor summarising turns.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from .errors import QueryError
from .query import check_count
from .sources import Message, Source, ToolCall, history_sources, item_text
from .tokens import Tokenizer, get_tokenizer

__all__ = ["DEFAULT_KEEP_RECENT", "MAX_CALL_CHARS", "ClearedResult", "Compaction", "call_text", "compact", "is_cleared"]

DEFAULT_KEEP_RECENT = 3
MAX_CALL_CHARS = 240  # a longer call (a write with a file as argument) is named by id: repeating it would cost what clearing saves

# jitctx's own tools (adapters/tools.TOOLS; a test keeps them equal) and the
# arguments their hints name first; any other tool is shown as name + JSON.
_TOOLS = ("glob", "grep", "head", "tail", "outline", "symbols", "locate", "notes")
_LEAD = {"glob": ("pattern", "path"), "grep": ("pattern", "path"), "symbols": ("query", "path"), "locate": ("task",), "notes": ("action", "id")}
_ARG_NAME = re.compile(r"[a-z_]+")
# shown unquoted: what the hint syntax reads back as one value (no trailing '.' or ':')
_PLAIN = re.compile(r"[\w./*@+-]*[\w/*@+-]")
_CURRENCY = {True: "still current;", False: "changed since:", None: "currency unknown;"}
_PLACEHOLDER = re.compile(r"\[\.\.\. result cleared: [\d,]+ tokens, (?:still current;|changed since:|currency unknown;) fetch again with [^\n]+\]")


@dataclass(frozen=True, slots=True)
class ClearedResult:
    """One tool result whose content was replaced by a placeholder.

    ``index``: the message's position in the history (0-based).
    ``tool_call_id`` and ``tool``: the call it answers and the tool's name.
    ``call``: the call that fetches it again, as the placeholder shows it.
    ``tokens_before`` / ``tokens_after``: the message as ``[History]``
    prices it, with its content and with the placeholder. ``current``: what
    ``is_current`` said when it was cleared (``None``: unknown).
    """

    index: int
    tool_call_id: str
    tool: str
    call: str
    tokens_before: int
    tokens_after: int
    current: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "tool_call_id": self.tool_call_id,
            "tool": self.tool,
            "call": self.call,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "current": self.current,
        }


@dataclass(frozen=True, slots=True)
class Compaction:
    """What :func:`compact` made of a history.

    ``messages``: the history, same length and order; cleared results are
    new ``Message`` values, every other message is the input's (a dict
    input becomes a ``Message``). ``cleared``: the results cleared, oldest
    first. ``tokens_before`` / ``tokens_after``: the history's tokens as
    the assembler's ``[History]`` items price them (the section's
    ``[History]`` header, charged once, not included); ``tokens_saved`` is
    their difference. ``fits``: ``tokens_after <= budget``. ``notice``: one
    line saying what was cleared and saved, or why it still does not fit.
    """

    messages: tuple[Message, ...]
    cleared: tuple[ClearedResult, ...]
    tokens_before: int
    tokens_after: int
    tokens_saved: int
    budget: int
    fits: bool
    notice: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "compact",
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "tokens_saved": self.tokens_saved,
            "budget": self.budget,
            "fits": self.fits,
            "cleared": [c.to_dict() for c in self.cleared],
            "notice": self.notice,
        }


def _value(v: object) -> str | None:
    """One argument value in hint syntax, or ``None`` when it has none (lists, quotes of both kinds, line ends)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else None
    if not isinstance(v, str) or not v.isprintable():
        return None
    if _PLAIN.fullmatch(v):
        return v
    if "'" not in v:
        return f"'{v}'"
    if '"' not in v:
        return f'"{v}"'
    return None


def call_text(call: ToolCall) -> str:
    """The call on one line, runnable as shown.

    A jitctx tool in tool-argument syntax (``head path=src/app.py start=1
    n=40``; null arguments, which mean the default, left out); any other
    tool, or arguments that syntax cannot carry (lists, text with both
    quote kinds), as its name and its JSON arguments (``read_file {"path":
    "a.txt"}``). A call over ``MAX_CALL_CHARS`` characters is named by its
    id instead (``write_file with the arguments of call c7 above``): its
    arguments stay in the assistant message that made it.
    """
    name = call.name if call.name.isprintable() and not any(ch.isspace() for ch in call.name) else json.dumps(call.name, ensure_ascii=False)
    try:
        args = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        args = None
    text = None
    if call.name == "notes" and isinstance(args, dict) and args.get("action") in ("add", "delete"):
        args = {"action": "list"}  # a write is never repeated: what it left is in the list
    if call.name in _TOOLS and isinstance(args, dict):
        lead = [k for k in _LEAD.get(call.name, ("path",)) if k in args]
        words = [name]
        for k in [*lead, *(k for k in args if k not in lead)]:
            if args[k] is None:
                continue
            shown = _value(args[k])
            if shown is None or not _ARG_NAME.fullmatch(k):
                words = []
                break
            words.append(f"{k}={shown}")
        text = " ".join(words) or None
    if text is None:
        shown_args = json.dumps(args, ensure_ascii=False) if args is not None else " ".join(call.arguments.split())
        text = f"{name} {shown_args}"
    if len(text) > MAX_CALL_CHARS:
        return f"{name} with the arguments of call {call.id} above"
    return text


_REREADS = ("head", "tail", "outline")  # a session answers these with a note when it showed the content before


def _refetch(call: ToolCall) -> ToolCall:
    """The call that fetches a cleared result again. For a jitctx read (head, tail,
    outline) it carries ``force=true``: a session would otherwise answer that the content
    is unchanged since shown, pointing at the very result being cleared."""
    if call.name not in _REREADS:
        return call
    try:
        args = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        return call
    if not isinstance(args, dict) or args.get("force") is True:
        return call
    return replace(call, arguments=json.dumps({**args, "force": True}))


def _shown_call(call: ToolCall) -> str:
    """The fetch-again call as a placeholder shows it: never a secret a call's arguments
    held (then it is named by id, as a long call is)."""
    from .redact import redact_text

    text = call_text(_refetch(call))
    if redact_text(text)[1]:
        name = call.name if call.name.isprintable() and not any(ch.isspace() for ch in call.name) else json.dumps(call.name, ensure_ascii=False)
        return f"{redact_text(name)[0]} with the arguments of call {redact_text(call.id)[0]} above"
    return text


def _asks_content(fn: Callable) -> bool:
    """Whether ``is_current`` takes the result's content as a second argument."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def _placeholder(tokens: int, current: bool | None, call: str) -> str:
    return f"[... result cleared: {tokens:,} tokens, {_CURRENCY[current]} fetch again with {call}]"


def is_cleared(content: str) -> bool:
    """Whether a tool result's content is already a placeholder (it is never cleared twice)."""
    return _PLACEHOLDER.fullmatch(content) is not None


def _messages(history: object) -> list[Message]:
    if isinstance(history, (str, bytes, dict, Message)) or not isinstance(history, Iterable):
        raise QueryError(
            f"history must be a list of messages, got {type(history).__name__}",
            hint="pass the chat as a list of Message values or OpenAI-style dicts",
            field="history",
        )
    return [m if isinstance(m, Message) else Message.from_dict(m) for m in history]


def _groups(msgs: list[Message]) -> list[Source]:
    try:
        return history_sources(msgs)[0]
    except QueryError as exc:
        raise QueryError(
            exc.message,
            hint="compact clears results of a well-formed history only: add or drop the unmatched message, or repair it first with history_sources(history, repair=True)",
            **exc.fields,
        ) from None


def compact(
    history: Iterable[Message | dict],
    budget: int,
    *,
    keep_recent: int = DEFAULT_KEEP_RECENT,
    tokenizer: Tokenizer | None = None,
    is_current: Callable[..., bool | None] | None = None,
) -> Compaction:
    """Clear old tool results, oldest first, until ``history`` fits ``budget`` tokens.

    ``history``: ``Message`` values or OpenAI-style dicts, as
    ``history_sources`` accepts them (a malformed history is a
    ``QueryError``, as there). ``budget``: the tokens the history may take
    (an integer >= 0), counted as the assembler prices its ``[History]``
    items. The ``keep_recent`` most recent tool results are kept whole;
    results already cleared, and results no longer than their placeholder,
    are left as they are. ``is_current(call)``, or ``is_current(call,
    content)`` when it takes two arguments (``content``: the result being
    cleared; ``Workspace.current`` judges it), says whether a result is
    still current (``True``), changed since (``False``) or unknown
    (``None``; also when no callback is given); it is asked only about the
    results cleared. The placeholder's call fetches the content again: a
    jitctx read (head, tail, outline) carries ``force=true``, since a session
    would answer it with a note pointing at the result just cleared.
    ``tokenizer``: any ``Tokenizer`` (default: the shared cl100k one).
    Deterministic: the same input gives the same output.
    """
    budget = check_count("budget", budget, minimum=0, hint="pass the tokens the history may take, e.g. budget=20000")[0]
    keep_recent = check_count("keep_recent", keep_recent, minimum=0, hint=f"pass how many recent tool results stay whole, e.g. keep_recent={DEFAULT_KEEP_RECENT}")[0]
    if is_current is not None and not callable(is_current):
        raise QueryError(
            f"is_current must be a function of the tool call or None, got {type(is_current).__name__}", hint="pass e.g. is_current=lambda call: None", field="is_current"
        )
    with_content = is_current is not None and _asks_content(is_current)
    tok = tokenizer if tokenizer is not None else get_tokenizer()
    msgs = _messages(history)
    sources = _groups(msgs)

    def cost(group: list[Message]) -> int:
        return tok.count(item_text(history_sources(group)[0][0]))

    def message_cost(m: Message) -> int:
        return tok.count(item_text(Source("message", "history", m.render())))

    # Message i's group and its place there; a group's messages carry the
    # tool names history_sources fills in, which the rendering shows.
    where: dict[int, tuple[int, int]] = {}
    groups: list[list[Message]] = []
    for s in sources:
        for k in range(len(s.messages)):
            where[len(where)] = (len(groups), k)
        groups.append(list(s.messages))
    costs = [cost(group) for group in groups]
    before = total = sum(costs)

    results = [n for n, m in enumerate(msgs) if m.role == "tool"]
    recent = set(results[len(results) - keep_recent :]) if keep_recent else set()
    out = list(msgs)
    cleared: list[ClearedResult] = []
    for n in results:
        if total <= budget:
            break
        m = msgs[n]
        if n in recent or is_cleared(m.content):
            continue
        g, k = where[n]
        named = groups[g][k]
        call = next(c for c in groups[g][0].tool_calls if c.id == m.tool_call_id)
        shown = _shown_call(call)
        tokens_before = message_cost(named)
        # Priced with the longest currency wording before the callback is
        # asked, so it is asked only about results that are cleared.
        if max(message_cost(replace(named, content=_placeholder(tokens_before, c, shown))) for c in _CURRENCY) >= tokens_before:
            continue
        current = None if is_current is None else is_current(call, m.content) if with_content else is_current(call)
        if current is not None and not isinstance(current, bool):
            raise QueryError(f"is_current must return True, False or None, got {current!r} for call {call.id!r}", hint="return None when currency is unknown", field="is_current")
        text = _placeholder(tokens_before, current, shown)
        out[n] = replace(m, content=text)
        groups[g][k] = replace(named, content=text)
        new_cost = cost(groups[g])
        total += new_cost - costs[g]
        costs[g] = new_cost
        cleared.append(ClearedResult(n, call.id, call.name, shown, tokens_before, message_cost(groups[g][k]), current))

    fits = total <= budget
    left: dict[str, int] = {}
    if not fits:
        for n, (g, k) in where.items():
            what = "text" if msgs[n].role != "tool" else "recent" if n in recent else "other"
            left[what] = left.get(what, 0) + message_cost(groups[g][k])
    notice = _notice(len(cleared), before, total, budget, len(recent), left)
    return Compaction(tuple(out), tuple(cleared), before, total, before - total, budget, fits, notice)


def _notice(n: int, before: int, after: int, budget: int, recent: int, left: dict[str, int]) -> str:
    """What was cleared and saved; if it still does not fit (``left``: tokens per kind of message), what remains."""
    what = f"cleared {n:,} old tool result{'s' if n != 1 else ''} ({before - after:,} tokens saved)"
    if after <= budget:
        if not n:
            return f"history fits the budget ({after:,} of {budget:,} tokens): nothing cleared."
        return f"{what}: history {after:,} of {budget:,} tokens; each placeholder names the call that fetches its result again."
    parts = [f"user/assistant messages ({left.get('text', 0):,} tokens)"]
    if recent:
        count, plural = (f"{recent:,} ", "s") if recent != 1 else ("", "")
        parts.append(f"the {count}most recent tool result{plural} ({left.get('recent', 0):,} tokens; lower keep_recent to clear them)")
    if left.get("other"):
        parts.append(f"cleared or short results ({left['other']:,} tokens)")
    lead = what if n else "nothing could be cleared"
    return f"{lead}, but the history still takes {after:,} tokens, over the budget of {budget:,}: only {', '.join(parts)} remain; raise budget or summarise older turns."
