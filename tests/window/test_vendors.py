"""Provider-ready requests: OpenAI chat messages, Anthropic system + messages."""

from __future__ import annotations

from fakes_assemble import WordTokenizer

from jitctx.window.assemble import AssembleConfig, assemble
from jitctx.window.sources import Message, Source, ToolCall, history_sources, system_source, task_source
from jitctx.window.vendors import TRIMMED_NOTE, anthropic_request, openai_messages

CFG = AssembleConfig(reserve_ratio=0, output="Reply briefly.")

STABLE = "[System]\nBe careful.\n\n[Output]\nReply briefly."
TURN = "[Evidence]\n==> a.py:1 <==\n1\tx\n\n[Task]\nFix x."


def _window(history, budget=500):
    hist, _ = history_sources(history)
    sources = [system_source("Be careful."), *hist, Source("e", "evidence", "1\tx", label="a.py:1"), task_source("Fix x.")]
    return assemble(sources, budget, config=CFG, tokenizer=WordTokenizer())


HISTORY = [
    Message("user", "Where is x?"),
    Message("assistant", "Searching.", (ToolCall("c1", "grep", '{"pattern": "x"}'), ToolCall("c2", "glob", '{"pattern": "*.py"}'))),
    Message("tool", "a.py:1:x", tool_call_id="c1"),
    Message("tool", "a.py", tool_call_id="c2"),
]


def test_openai_messages_whole():
    ctx = _window(HISTORY)
    assert ctx.to_openai() == [
        {"role": "system", "content": STABLE},
        {"role": "user", "content": "Where is x?"},
        {
            "role": "assistant",
            "content": "Searching.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"pattern": "x"}'}},
                {"id": "c2", "type": "function", "function": {"name": "glob", "arguments": '{"pattern": "*.py"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.py:1:x"},
        {"role": "tool", "tool_call_id": "c2", "content": "a.py"},
        {"role": "user", "content": TURN},
    ]


def test_anthropic_request_whole_with_cache_breakpoint_ending_the_stable_prefix():
    ctx = _window(HISTORY)
    assert ctx.to_anthropic() == {
        "system": [{"type": "text", "text": STABLE, "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Where is x?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Searching."},
                    {"type": "tool_use", "id": "c1", "name": "grep", "input": {"pattern": "x"}},
                    {"type": "tool_use", "id": "c2", "name": "glob", "input": {"pattern": "*.py"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "a.py:1:x"},
                    {"type": "tool_result", "tool_use_id": "c2", "content": "a.py"},
                    {"type": "text", "text": TURN},
                ],
            },
        ],
    }


def test_stable_prefix_is_the_same_text_in_the_window_and_both_requests():
    ctx = _window(HISTORY)
    assert ctx.text.startswith(ctx.stable_text)
    assert ctx.to_openai()[0]["content"] == ctx.to_anthropic()["system"][0]["text"] == ctx.stable_text.rstrip("\n")


def test_no_history_is_system_plus_one_user_turn():
    ctx = _window([])
    assert ctx.to_openai() == [{"role": "system", "content": STABLE}, {"role": "user", "content": TURN}]
    assert ctx.to_anthropic()["messages"] == [{"role": "user", "content": [{"type": "text", "text": TURN}]}]


def test_anthropic_opens_with_a_user_note_when_trimming_left_an_assistant_first():
    # budget leaves room for the newest group only: the assistant's tool group
    ctx = _window(HISTORY, budget=37)  # protected 9, history header 1 + newest group 24: 3 left
    assert [(e.source, e.reason) for e in ctx.evicted] == [("history:0", "over_budget"), ("e", "over_budget")]
    msgs = ctx.to_anthropic()["messages"]
    assert msgs[0] == {"role": "user", "content": [{"type": "text", "text": TRIMMED_NOTE}]}
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert ctx.to_openai()[1]["role"] == "assistant"  # OpenAI accepts it as is


def test_tool_arguments_that_are_not_a_json_object():
    hist = [
        Message("assistant", "", (ToolCall("a", "t", "not json"), ToolCall("b", "t", "[1, 2]"), ToolCall("c", "t", ""))),
        Message("tool", "r", tool_call_id="a"),
        Message("tool", "r", tool_call_id="b"),
        Message("tool", "r", tool_call_id="c"),
    ]
    blocks = anthropic_request("S", hist, "T")["messages"][1]["content"]
    assert [b["input"] for b in blocks] == [{"arguments": "not json"}, {"arguments": [1, 2]}, {}]
    assert openai_messages("S", hist, "T")[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "t", "arguments": "not json"}},
            {"id": "b", "type": "function", "function": {"name": "t", "arguments": "[1, 2]"}},
            {"id": "c", "type": "function", "function": {"name": "t", "arguments": ""}},
        ],
    }


def test_consecutive_user_messages_are_merged_for_anthropic():
    req = anthropic_request("S", [Message("user", "a"), Message("user", "b")], "T")
    assert req["messages"] == [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, {"type": "text", "text": "T"}]}]
