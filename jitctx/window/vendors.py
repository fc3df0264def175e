"""Provider-ready requests from an assembled window: OpenAI chat, Anthropic messages.

Owns the mapping of the window (stable prefix, kept history, this turn's
text) onto each provider's message shapes. Does not own what is in the
window (``assemble``) nor any network call: the caller sends the request.

Both shapes put the stable prefix first (OpenAI: the system message;
Anthropic: ``system`` with a ``cache_control`` breakpoint on its last
block), then the kept history as real messages (tool calls and results in
the provider's own form), then one user turn with the dynamic sections and
the task.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .sources import Message

__all__ = ["TRIMMED_NOTE", "anthropic_request", "openai_messages"]

TRIMMED_NOTE = "(earlier conversation trimmed to fit the context budget)"


def _openai(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    d: dict[str, Any] = {"role": m.role, "content": m.content if (m.content or not m.tool_calls) else None}
    if m.tool_calls:
        d["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in m.tool_calls]
    return d


def openai_messages(stable: str, history: Iterable[Message], turn: str) -> list[dict[str, Any]]:
    """``[system, *history, user]`` for the Chat Completions API."""
    out = [{"role": "system", "content": stable.rstrip("\n")}]
    out.extend(_openai(m) for m in history)
    out.append({"role": "user", "content": turn})
    return out


def _tool_input(arguments: str) -> dict[str, Any]:
    """Anthropic wants an object; arguments that are not a JSON object are kept under ``arguments``."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": value}


def _anthropic_blocks(m: Message) -> tuple[str, list[dict[str, Any]]]:
    if m.role == "tool":
        return "user", [{"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}]
    blocks: list[dict[str, Any]] = []
    if m.content.strip():
        blocks.append({"type": "text", "text": m.content})
    for c in m.tool_calls:
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)})
    return m.role, blocks


def anthropic_request(stable: str, history: Iterable[Message], turn: str) -> dict[str, Any]:
    """``{"system": [...], "messages": [...]}`` for the Messages API.

    Consecutive messages of one role are merged (tool results and the new
    user turn share one user message, results first, as the API requires).
    When trimming left an assistant message first, a short user note
    (``TRIMMED_NOTE``) opens the conversation: the API wants a user turn
    first.
    """
    messages: list[dict[str, Any]] = []
    for role, blocks in [*(_anthropic_blocks(m) for m in history), ("user", [{"type": "text", "text": turn}])]:
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": list(blocks)})
    if messages and messages[0]["role"] != "user":
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": TRIMMED_NOTE}]})
    system = [{"type": "text", "text": stable.rstrip("\n"), "cache_control": {"type": "ephemeral"}}]
    return {"system": system, "messages": messages}
