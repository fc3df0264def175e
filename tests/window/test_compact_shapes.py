"""compact takes an ordinary chat history (issue 33 item 4): system and developer messages
(counted, never cleared), OpenAI chat completions and Responses shapes, Anthropic content
blocks, several results for one turn's calls; each message comes back in its own shape."""

from __future__ import annotations

import json

from fakes_assemble import WordTokenizer

from jitctx.window.compact import compact
from jitctx.window.sources import Message

TOK = WordTokenizer()


def words(n: int) -> str:
    return " ".join(["w"] * n)


def _openai():
    return [
        {"role": "system", "content": "You are a careful coding agent."},
        {"role": "developer", "content": [{"type": "text", "text": "Cite files as path:line."}]},
        {"role": "user", "content": [{"type": "text", "text": "fix the retry bug"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "head", "arguments": '{"path": "a.py"}'}},
                {"id": "c2", "type": "function", "function": {"name": "head", "arguments": '{"path": "b.py"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": words(40)},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": words(40)}]},
        {"role": "assistant", "content": "the bug is in b.py"},
    ]


def test_issue_33_system_and_developer_messages_are_accepted_counted_and_never_cleared():
    history = _openai()
    snapshot = json.dumps(history)
    got = compact(history, 0, keep_recent=0, tokenizer=TOK)
    assert json.dumps(history) == snapshot  # the input is not changed
    assert len(got.messages) == len(history)
    assert got.messages[0] is history[0] and got.messages[1] is history[1]  # as given, never cleared
    assert got.messages[2] is history[2]
    assert [c.tool_call_id for c in got.cleared] == ["c1", "c2"] and [c.index for c in got.cleared] == [4, 5]
    assert got.messages[4] == Message("tool", got.messages[4].content, tool_call_id="c1") and "fetch again with head path=a.py" in got.messages[4].content
    assert got.messages[5]["content"].startswith("[... result cleared: ") and "head path=b.py" in got.messages[5]["content"]
    assert got.messages[5]["tool_call_id"] == "c2"
    system_cost = TOK.count("system: You are a careful coding agent.") + TOK.count("developer: Cite files as path:line.")
    assert got.tokens_after >= system_cost and not got.fits  # the prefix counts; it is what is left
    fits = compact(history, got.tokens_after, keep_recent=0, tokenizer=TOK)
    assert fits.fits and fits.tokens_after == got.tokens_after


def test_issue_33_anthropic_blocks_with_several_results_in_one_message():
    history = [
        {"role": "user", "content": "fix the retry bug"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "reading both"},
                {"type": "tool_use", "id": "toolu_1", "name": "head", "input": {"path": "a.py"}},
                {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {"pattern": "retry", "mode": "content"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": words(40)},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": words(50)}]},
                {"type": "text", "text": "and look at the tests too"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    snapshot = json.dumps(history)
    got = compact(history, 0, keep_recent=1, tokenizer=TOK)
    assert json.dumps(history) == snapshot and len(got.messages) == 4
    assert [c.tool_call_id for c in got.cleared] == ["toolu_1"] and got.cleared[0].index == 2  # the most recent result stays whole
    results = got.messages[2]["content"]
    assert results[0]["type"] == "tool_result" and results[0]["tool_use_id"] == "toolu_1"
    assert results[0]["content"].startswith("[... result cleared: ") and "head path=a.py" in results[0]["content"]
    assert results[1] is history[2]["content"][1] and results[2] is history[2]["content"][2]
    assert got.messages[1] is history[1] and got.messages[3] is history[3]
    everything = compact(history, 0, keep_recent=0, tokenizer=TOK)
    assert [c.tool_call_id for c in everything.cleared] == ["toolu_1", "toolu_2"]
    assert "grep pattern=retry mode=content" in everything.messages[2]["content"][1]["content"]


def test_issue_33_openai_responses_items():
    history = [
        {"role": "system", "content": "be brief"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
        {"type": "function_call", "call_id": "r1", "name": "head", "arguments": '{"path": "a.py"}'},
        {"type": "function_call", "call_id": "r2", "name": "tail", "arguments": '{"path": "log.txt"}'},
        {"type": "function_call_output", "call_id": "r2", "output": words(40)},
        {"type": "function_call_output", "call_id": "r1", "output": words(40)},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "fixed"}]},
    ]
    got = compact(history, 0, keep_recent=0, tokenizer=TOK)
    assert [c.tool_call_id for c in got.cleared] == ["r2", "r1"] and [c.index for c in got.cleared] == [4, 5]
    assert got.messages[4]["output"].startswith("[... result cleared: ") and "tail path=log.txt" in got.messages[4]["output"]
    assert got.messages[4]["call_id"] == "r2" and got.messages[2] is history[2] and got.messages[0] is history[0]


def test_issue_33_a_malformed_block_is_a_query_error_naming_the_message():
    import pytest

    from jitctx.errors import QueryError

    with pytest.raises(QueryError) as info:
        compact([{"role": "user", "content": ["ok", 5]}], 10, tokenizer=TOK)
    assert info.value.fields["index"] == 0 and "content block must be a dict" in info.value.message
    with pytest.raises(QueryError) as info:
        compact([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz", "content": "x"}]}], 10, tokenizer=TOK)
    assert "no matching tool call" in info.value.message
