"""A small agent loop on jitctx's tool schemas and ``dispatch``, with a scripted model.

The loop is the one every chat-completions agent runs: send the messages and
the tool schemas, run each tool call the model makes, append the results,
repeat until the model answers in text. The "model" here is scripted (no
network, no API key) so the loop can be run and tested anywhere; swap
``ScriptedModel`` for a real client (``openai.OpenAI().chat.completions.create``)
and nothing else changes.

Run it::

    python examples/agent_loop.py --root path/to/repo
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable

from jitctx.errors import JitctxError
from jitctx.session.workspace import Workspace
from jitctx.tools import dispatch, export_schemas

Model = Callable[[list[dict], list[dict]], dict]


class ScriptedModel:
    """Plays a fixed plan: find Python files, read the first one, answer.

    Each call returns one assistant message in the chat-completions shape. It
    reads the previous tool result the way a model would: from the text.
    """

    def __init__(self, pattern: str = "**/*.py") -> None:
        self.pattern = pattern
        self.turn = 0

    def __call__(self, messages: list[dict], tools: list[dict]) -> dict:
        assert {t["function"]["name"] for t in tools} >= {"glob", "grep", "head", "tail"}
        self.turn += 1
        last = messages[-1]
        if self.turn == 1:
            return _call("c1", "glob", {"pattern": self.pattern, "limit": 5})
        if self.turn == 2:
            first = re.match(r"(\S+)  ", _skip_notes(last["content"]))
            if first is None:
                return {"role": "assistant", "content": f"No files match {self.pattern}."}
            return _call("c2", "head", {"path": first.group(1), "n": 20})
        if self.turn == 3 and last["content"].startswith("error"):
            return {"role": "assistant", "content": f"I could not read it: {last['content'].splitlines()[0]}"}
        header = _skip_notes(last["content"]).splitlines()[0]
        return {"role": "assistant", "content": f"Read {header.strip('=<> ')}."}


def _skip_notes(text: str) -> str:
    """Drop the [stale]/[instructions] lines that lead a result."""
    lines = text.splitlines()
    while lines and lines[0].startswith("["):
        lines.pop(0)
    return "\n".join(lines)


def _call(call_id: str, name: str, args: dict) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    }


def run(task: str, model: Model, workspace: Workspace, *, max_turns: int = 8) -> list[dict]:
    """Run the loop; returns the whole transcript (the last message is the answer)."""
    tools = export_schemas("openai")
    messages: list[dict] = [{"role": "user", "content": task}]
    for _ in range(max_turns):
        reply = model(messages, tools)
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            return messages
        for call in calls:
            out = dispatch(call["function"]["name"], call["function"]["arguments"], workspace=workspace)
            # Errors go back to the model as text too: it reads the hint and retries.
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": out.text})
    messages.append({"role": "assistant", "content": f"Stopped after {max_turns} turns."})
    return messages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="repository to explore (default: the working directory's)")
    parser.add_argument("--pattern", default="**/*.py")
    args = parser.parse_args(argv)
    try:
        ws = Workspace(args.root, max_tokens=4000)
    except JitctxError as exc:  # a bad --root: say why, as the jitctx CLI does, no traceback
        print(f"agent_loop: error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
        return 2
    transcript = run("Find a Python file and tell me what it starts with.", ScriptedModel(args.pattern), ws)
    for m in transcript:
        body = m.get("content") or json.dumps(m.get("tool_calls"))
        print(f"--- {m['role']}\n{body}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
