"""Light compaction of a chat history: old tool results cleared to fit a budget.

Owns :func:`compact` and its report (:class:`Compaction`,
:class:`ClearedResult`): the content of old tool results, oldest first, is
replaced by a one-line placeholder naming the call that fetches it again
(in tool-argument syntax), its size in tokens and whether it is still
current, until the history fits a token budget. Never touches system,
developer, user or assistant messages (text and tool calls: decisions stay), the order of the
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

from ..errors import QueryError
from ..query import PRIMITIVES, check_count
from ..tokens.tokenizer import Tokenizer, get_tokenizer
from .sources import Message, Source, ToolCall, history_sources, item_text

__all__ = ["DEFAULT_KEEP_RECENT", "MAX_CALL_CHARS", "ClearedResult", "Compaction", "call_text", "compact", "is_cleared"]

DEFAULT_KEEP_RECENT = 3
MAX_CALL_CHARS = 240  # a longer call (a write with a file as argument) is named by id: repeating it would cost what clearing saves

# jitctx's own tools (their definitions' names) and the arguments their hints
# name first; any other tool is shown as name + JSON.
_TOOLS = frozenset(q.name for q in PRIMITIVES)
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

    ``messages``: the history, same length and order as the input: a
    ``Message`` or an OpenAI chat dict with text content comes back as a
    ``Message`` (a cleared result a new one); a system or developer message,
    a message of content blocks (Anthropic, or OpenAI parts) and a Responses
    item come back as given, or, holding a cleared result, as a copy whose
    result content is the placeholder. ``cleared``: the results cleared, oldest
    first. ``tokens_before`` / ``tokens_after``: the history's tokens as
    the assembler's ``[History]`` items price them (the section's
    ``[History]`` header, charged once, not included); ``tokens_saved`` is
    their difference. ``fits``: ``tokens_after <= budget``. ``notice``: one
    line saying what was cleared and saved, or why it still does not fit.
    """

    messages: tuple[Message | dict, ...]
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
    from ..text.redact import redact_text

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


_TEXT_BLOCKS = ("text", "input_text", "output_text")
_IMAGE_BLOCKS = ("image", "image_url", "input_image")


@dataclass(slots=True)
class _Given:
    """One input message and what it became: ``shape`` ``message`` (a ``Message`` or an
    OpenAI chat dict with text content: its ``Message`` is the output, as before), ``prefix``
    (a system or developer message: counted, never cleared, returned as given) or
    ``blocks`` (content blocks or Responses items: returned as given, a cleared result's
    content replaced); ``results``: the normalised tool messages it holds."""

    shape: str
    item: object
    first: int  # its first normalised message (messages of a prefix: none)
    results: list[int]
    prefix: str = ""


def _history(history: object) -> tuple[list[_Given], list[Message], list[int]]:
    """The input messages, the chat they make as ``Message`` values (tool calls paired with
    their results), and for each of those the input message it came from.

    Accepted: ``Message`` values; OpenAI chat completions dicts (``system`` and
    ``developer`` too; content as text or as a list of parts; an assistant's
    ``tool_calls``, one ``tool`` message per result); OpenAI Responses items
    (``message``, ``function_call``, ``function_call_output``: consecutive calls are one
    assistant turn); Anthropic messages (content blocks: ``text``, ``tool_use`` in the
    assistant's, one ``tool_result`` block per result in the user's)."""
    if isinstance(history, (str, bytes, dict, Message)) or not isinstance(history, Iterable):
        raise QueryError(
            f"history must be a list of messages, got {type(history).__name__}",
            hint="pass the chat as a list of Message values, or OpenAI or Anthropic message dicts",
            field="history",
        )
    given: list[_Given] = []
    msgs: list[Message] = []
    origin: list[int] = []
    calls_open = False  # the last message is an assistant turn made of Responses function_call items

    def add(i: int, m: Message) -> int:
        msgs.append(m)
        origin.append(i)
        return len(msgs) - 1

    for i, item in enumerate(history):
        if isinstance(item, Message):
            n = add(i, item)
            given.append(_Given("message", item, n, [n] if item.role == "tool" else []))
            calls_open = False
            continue
        if not isinstance(item, dict):
            raise QueryError(f"a history message must be a Message or a dict, got {type(item).__name__}", field="history", index=i)
        kind, role, content = item.get("type"), item.get("role"), item.get("content")
        if kind == "function_call":  # Responses: a call; consecutive ones are one turn
            call = ToolCall(item.get("call_id") or item.get("id"), item.get("name"), item.get("arguments", "{}"))  # type: ignore[arg-type]  # checked there
            if calls_open:
                last = msgs[-1]
                msgs[-1] = Message("assistant", last.content, (*last.tool_calls, call), timestamp=last.timestamp)
                given.append(_Given("blocks", item, len(msgs) - 1, []))
            else:
                given.append(_Given("blocks", item, add(i, Message("assistant", "", (call,))), []))
            calls_open = True
            continue
        calls_open = False
        if kind == "function_call_output":
            n = add(i, Message("tool", _flat(item.get("output"), i), tool_call_id=item.get("call_id")))
            given.append(_Given("blocks", item, n, [n]))
        elif role in ("system", "developer"):
            given.append(_Given("prefix", item, len(msgs), [], prefix=f"{role}: {_flat(content, i).strip()}"))
        elif isinstance(content, list):
            given.append(_blocks(i, item, role, content, add))
        else:
            n = add(i, Message.from_dict(item))
            given.append(_Given("message", item, n, [n] if msgs[n].role == "tool" else []))
    return given, msgs, origin


def _blocks(i: int, item: dict, role: object, content: list, add: Callable[[int, Message], int]) -> _Given:
    """A message whose content is a list of parts or blocks, as ``Message`` values: an
    assistant's text and ``tool_use`` calls; a user's ``tool_result`` blocks (one tool
    message each, in order) then its text; a tool message's parts as its text."""
    texts, calls, results = [], [], []
    for b in content:
        if not isinstance(b, dict):
            raise QueryError(f"history message {i}: a content block must be a dict, got {type(b).__name__}", field="content", index=i)
        if b.get("type") == "tool_use":
            calls.append(ToolCall(b.get("id"), b.get("name"), b.get("input") if b.get("input") is not None else {}))  # type: ignore[arg-type]
        elif b.get("type") == "tool_result":
            results.append(Message("tool", _flat(b.get("content"), i), tool_call_id=b.get("tool_use_id")))
        else:
            texts.append(_flat([b], i))
    text = "\n".join(t for t in texts if t)
    if role == "tool":
        n = add(i, Message("tool", text, tool_call_id=item.get("tool_call_id"), name=item.get("name")))
        return _Given("blocks", item, n, [n])
    if role == "assistant" or calls:
        return _Given("blocks", item, add(i, Message(str(role), text, tuple(calls))), [])
    ns = [add(i, m) for m in results]
    if text or not ns:
        n = add(i, Message(str(role), text))  # its role is checked there
        return _Given("blocks", item, ns[0] if ns else n, ns)
    return _Given("blocks", item, ns[0], ns)


def _flat(content: object, i: int) -> str:
    """Text content, or a list of parts or blocks as their text (an image as ``[image]``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise QueryError(
            f"history message {i}: content must be text or a list of content blocks, got {type(content).__name__}",
            hint="decode bytes or join content blocks into one string first",
            field="content",
            index=i,
        )
    out = []
    for b in content:
        if isinstance(b, str):
            out.append(b)
        elif isinstance(b, dict) and b.get("type") in _TEXT_BLOCKS and isinstance(b.get("text"), str):
            out.append(b["text"])
        elif isinstance(b, dict) and b.get("type") in _IMAGE_BLOCKS:
            out.append("[image]")
        elif isinstance(b, dict) and b.get("type") == "tool_result":
            out.append(_flat(b.get("content"), i))
    return "\n".join(out)


def _given_back(given: list[_Given], out: list[Message], cleared: dict[int, str]) -> tuple[Message | dict, ...]:
    """The history to return, one entry per input message in its order: a ``Message`` where
    one came in or an OpenAI chat dict with text (as before), else the input as given, a
    cleared result's content replaced by its placeholder (``cleared``: message -> text)."""
    back: list = []
    for g in given:
        if g.shape == "message":
            back.append(out[g.first])
        elif not any(n in cleared for n in g.results):
            back.append(g.item)
        else:
            d = dict(g.item)  # type: ignore[call-overload]
            if d.get("type") == "function_call_output":
                d["output"] = cleared[g.results[0]]
            elif d.get("role") == "tool":
                d["content"] = cleared[g.results[0]]
            else:
                ns = iter(g.results)  # the tool_result blocks, in order
                d["content"] = [{**b, "content": cleared[n]} if isinstance(b, dict) and b.get("type") == "tool_result" and (n := next(ns)) in cleared else b for b in d["content"]]
            back.append(d)
    return tuple(back)


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

    ``history``: a chat as ``Message`` values, OpenAI chat completions dicts,
    OpenAI Responses items or Anthropic messages (content blocks; several
    ``tool_result`` blocks in one message are several results), in any mix;
    ``system`` and ``developer`` messages are counted and never cleared. Calls
    are paired with their results as ``history_sources`` pairs them (a
    malformed history is a ``QueryError``, as there). ``budget``: the tokens the history may take
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
    given, msgs, origin = _history(history)
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
    fixed = sum(tok.count(item_text(Source("message", "history", g.prefix))) for g in given if g.shape == "prefix")  # never cleared
    before = total = sum(costs) + fixed

    results = [n for n, m in enumerate(msgs) if m.role == "tool"]
    recent = set(results[len(results) - keep_recent :]) if keep_recent else set()
    out = list(msgs)
    cleared: list[ClearedResult] = []
    texts: dict[int, str] = {}  # message -> the placeholder it got
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
        cleared.append(ClearedResult(origin[n], call.id, call.name, shown, tokens_before, message_cost(groups[g][k]), current))
        texts[n] = text

    fits = total <= budget
    left: dict[str, int] = {"text": fixed} if fixed else {}
    if not fits:
        for n, (g, k) in where.items():
            what = "text" if msgs[n].role != "tool" else "recent" if n in recent else "other"
            left[what] = left.get(what, 0) + message_cost(groups[g][k])
    notice = _notice(len(cleared), before, total, budget, len(recent), left)
    return Compaction(_given_back(given, out, texts), tuple(cleared), before, total, before - total, budget, fits, notice)


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
