"""Assembler inputs: Source validation, history grouping, evidence items."""

from __future__ import annotations

import pytest
from fakes_assemble import FakePreload

from jitctx.errors import QueryError
from jitctx.refs import Excerpt, FileRef, LineRef, Result
from jitctx.window.sources import Message, Source, ToolCall, evidence_sources, history_sources, item_text, note_source, preload_source, task_source

# -- Source ----------------------------------------------------------------------


def test_kind_defaults():
    got = {k: (s.priority, s.stable, s.protected, s.section) for k in ("system", "preload", "notes", "history", "evidence", "task", "todo") for s in [Source("x", k, "c")]}
    assert got == {
        "system": (100, True, True, "system"),
        "preload": (90, True, False, "preload"),
        "notes": (60, False, False, "notes"),
        "history": (50, False, False, "history"),
        "evidence": (40, False, False, "evidence"),
        "task": (100, False, True, "task"),
        "todo": (30, False, False, "context"),
    }


def test_explicit_values_override_kind_defaults():
    s = Source("x", "evidence", "c", priority=7, stable=True, protected=True)
    assert (s.priority, s.stable, s.protected) == (7, True, True)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"content": b"bytes"}, "source 'x': content must be text, got bytes"),
        ({"content": None}, "source 'x': content must be text, got NoneType"),
        ({"content": ["a", "b"]}, "source 'x': content must be text, got list"),
        ({"name": ""}, "a source needs a non-empty name, got ''"),
        ({"kind": ""}, "source 'x': kind must be a non-empty string, got ''"),
        ({"relevance": 1.5}, "source 'x': relevance must be a number from 0 to 1, got 1.5"),
        ({"relevance": "high"}, "source 'x': relevance must be a number from 0 to 1, got 'high'"),
        ({"timestamp": "yesterday"}, "source 'x': timestamp must be epoch seconds or None, got 'yesterday'"),
        ({"priority": 1.5}, "source 'x': priority must be an integer, got 1.5"),
        ({"kind": "task", "stable": True}, "source 'x': a task source cannot be stable"),
    ],
)
def test_bad_source(kwargs, message):
    args = {"name": "x", "kind": "notes", "content": "c", **kwargs}
    with pytest.raises(QueryError) as err:
        Source(**args)
    assert err.value.message == message


def test_non_text_content_error_says_what_to_do():
    with pytest.raises(QueryError) as err:
        Source("blob", "evidence", b"\x00\x01")
    assert err.value.hint == "decode bytes first (e.g. data.decode('utf-8', 'replace')) or pass a reference instead"
    assert err.value.fields == {"field": "content", "source": "blob"}


def test_item_text_per_kind():
    assert item_text(Source("e", "evidence", "1\tx", label="a.py:1")) == "==> a.py:1 <==\n1\tx\n"
    assert item_text(Source("e", "evidence", "")) == "==> e <==\n"
    assert item_text(note_source("plan", name="n")) == "- plan\n"
    assert item_text(note_source("a\nb", name="n", label="plan")) == "- plan:\na\nb\n"
    assert item_text(Source("w", "weird", "x")) == "--- w (weird) ---\nx\n"
    assert item_text(Source("s", "system", "\n  \n be\n\n")) == " be\n"


def test_task_must_be_text():
    for bad in ("", "   ", None, b"fix"):
        with pytest.raises(QueryError, match="the task must be non-empty text"):
            task_source(bad)


def test_preload_source():
    assert preload_source(FakePreload("# AGENTS\n")) == [Source("preload", "preload", "# AGENTS\n")]
    assert preload_source(FakePreload("  \n")) == []
    with pytest.raises(QueryError, match="preload has no text"):
        preload_source(object())


# -- history ---------------------------------------------------------------------


def _call(*ids):
    return Message("assistant", "", tuple(ToolCall(i, f"tool_{i}", "{}") for i in ids))


def test_history_groups_calls_with_their_results():
    msgs = [Message("user", "q"), _call("a", "b"), Message("tool", "ra", tool_call_id="a"), Message("tool", "rb", tool_call_id="b"), Message("assistant", "done")]
    sources, warnings = history_sources(msgs)
    assert [(s.name, [m.role for m in s.messages]) for s in sources] == [
        ("history:0", ["user"]),
        ("history:1", ["assistant", "tool", "tool"]),
        ("history:4", ["assistant"]),
    ]
    assert sources[1].content == "assistant called tool_a [a] {}\nassistant called tool_b [b] {}\ntool tool_a [a] returned:\nra\ntool tool_b [b] returned:\nrb"
    assert sources[1].messages[1].name == "tool_a"  # filled from the call
    assert warnings == []


def test_history_results_in_any_order_among_parallel_calls():
    sources, _ = history_sources([_call("a", "b"), Message("tool", "rb", tool_call_id="b"), Message("tool", "ra", tool_call_id="a")])
    assert len(sources) == 1 and [m.tool_call_id for m in sources[0].messages[1:]] == ["b", "a"]


def test_history_timestamp_is_the_newest_of_the_group():
    msgs = [Message("assistant", "", (ToolCall("a", "t"),), timestamp=5), Message("tool", "r", tool_call_id="a", timestamp=7)]
    assert history_sources(msgs)[0][0].timestamp == 7


def test_history_accepts_openai_dicts():
    msgs = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"pattern":"x"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "hit"},
    ]
    sources, _ = history_sources(msgs)
    assert sources[1].messages == (
        Message("assistant", "", (ToolCall("c1", "grep", '{"pattern":"x"}'),)),
        Message("tool", "hit", tool_call_id="c1", name="grep"),
    )


def test_history_result_without_call_is_an_error():
    with pytest.raises(QueryError) as err:
        history_sources([Message("tool", "r", tool_call_id="ghost"), Message("user", "q")])
    assert err.value.message == "history: tool result for call id 'ghost' at message 0 has no matching tool call before it"
    assert err.value.fields == {"field": "history", "tool_call_id": "ghost", "index": 0}
    assert "repair_history=True" in err.value.hint


def test_history_call_without_result_is_an_error():
    with pytest.raises(QueryError) as err:
        history_sources([Message("user", "q"), _call("a", "b"), Message("tool", "ra", tool_call_id="a"), Message("user", "next")])
    assert err.value.message == "history: tool call(s) b at message 1 have no result before message 3"
    assert err.value.fields == {"field": "history", "tool_call_ids": ["b"], "index": 1}


def test_history_call_without_result_at_the_end_is_an_error():
    with pytest.raises(QueryError, match=r"tool call\(s\) a at message 0 have no result before message 1"):
        history_sources([_call("a")])


def test_history_result_after_the_conversation_moved_on_is_an_error():
    # the result arrives after a user message: the call's group was already closed
    with pytest.raises(QueryError, match="tool call\\(s\\) a at message 0 have no result before message 1"):
        history_sources([_call("a"), Message("user", "q"), Message("tool", "r", tool_call_id="a")])


def test_history_second_result_for_one_call_is_an_error():
    with pytest.raises(QueryError, match="answers a call that already has a result"):
        history_sources([_call("a"), Message("tool", "r", tool_call_id="a"), Message("tool", "r2", tool_call_id="a")])


def test_history_repeated_call_id_is_an_error():
    with pytest.raises(QueryError, match="message 0 repeats a tool call id"):
        history_sources([_call("a", "a")])


def test_history_repair_drops_unmatched_calls_and_results_with_warnings():
    msgs = [
        Message("tool", "orphan", tool_call_id="ghost"),
        Message("user", "q"),
        _call("a", "b"),
        Message("tool", "ra", tool_call_id="a"),
        Message("user", "next"),
        _call("c"),
    ]
    sources, warnings = history_sources(msgs, repair=True)
    assert [(s.name, s.content) for s in sources] == [
        ("history:1", "user: q"),
        ("history:2", "assistant called tool_a [a] {}\ntool tool_a [a] returned:\nra"),
        ("history:4", "user: next"),
    ]
    assert warnings == [
        "history: dropped tool result 'ghost' at message 0: no matching call (repair)",
        "history: dropped tool call(s) b at message 2: no result (repair)",
        "history: dropped tool call(s) c at message 5: no result (repair)",
    ]


def test_history_repair_keeps_the_text_of_an_assistant_whose_calls_are_dropped():
    sources, _ = history_sources([Message("assistant", "let me look", (ToolCall("a", "grep"),))], repair=True)
    assert [s.content for s in sources] == ["assistant: let me look"]


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Message("system", "x"), "history message role must be one of user, assistant, tool, got 'system'"),
        (lambda: Message("user", b"x"), "history message content must be text, got bytes"),
        (lambda: Message("tool", "x"), "a tool result message needs tool_call_id (the id of the call it answers)"),
        (lambda: Message("user", "x", (ToolCall("a", "t"),)), "only assistant messages make tool calls, got a user message with tool_calls"),
        (lambda: ToolCall("", "t"), "a tool call needs a non-empty id, got ''"),
        (lambda: ToolCall("a", "t", 5), "tool call 'a': arguments must be JSON text or a dict, got int"),
        (lambda: Message.from_dict("hi"), "a history message must be a Message or a dict, got str"),
    ],
)
def test_bad_messages(make, message):
    with pytest.raises(QueryError) as err:
        make()
    assert err.value.message == message


def test_tool_call_arguments_dict_becomes_json_text():
    assert ToolCall("a", "grep", {"pattern": "x", "mode": "files"}).arguments == '{"mode": "files", "pattern": "x"}'


# -- evidence --------------------------------------------------------------------


def test_evidence_labels_carry_path_and_line_range():
    res = Result(
        "grep",
        [
            LineRef("src/app.py", 200, 10.0, 3, "from util.helpers import greet", before=({"line": 2, "text": ""},)),
            LineRef("src/app.py", 200, 10.0, 7, "    print(greet('world'))"),
            LineRef("docs/guide.md", 50, 20.0, 1, "greet everyone"),
        ],
    )
    items = [
        *evidence_sources(res, relevance=lambda p: 1.0 if p.endswith(".py") else 0.5),
        *evidence_sources([FileRef("src/util/helpers.py", 1234, 30.0, matches=2), Excerpt("README.md", 90, 40.0, 1, 3, 10, "# Basic\n\nText\n")]),
    ]
    assert [(s.name, s.label, s.relevance, s.timestamp) for s in items] == [
        ("evidence:src/app.py", "src/app.py:2-7", 1.0, 10.0),
        ("evidence:docs/guide.md", "docs/guide.md:1", 0.5, 20.0),
        ("evidence:src/util/helpers.py", "src/util/helpers.py (1.2 KB, 2 matching lines)", 1.0, 30.0),
        ("evidence:README.md:1-3 of 10", "README.md:1-3 of 10", 1.0, 40.0),
    ]
    assert item_text(items[0]) == "==> src/app.py:2-7 <==\n     2\t\n     3\tfrom util.helpers import greet\n   ...\n     7\t    print(greet('world'))\n"
    assert item_text(items[2]) == "==> src/util/helpers.py (1.2 KB, 2 matching lines) <==\n"
    assert item_text(items[3]) == "==> README.md:1-3 of 10 <==\n     1\t# Basic\n     2\t\n     3\tText\n"


def test_evidence_caps_lines_per_file_and_says_how_to_read_on():
    refs = [LineRef("big.py", 1, 1.0, n, f"x{n}") for n in range(1, 31)]
    (src,) = evidence_sources(refs, max_lines=3)
    assert src.label == "big.py:1-3 (27 more lines; read them with head path=big.py start=4)"
    assert src.content == "     1\tx1\n     2\tx2\n     3\tx3"


def test_evidence_tail_of_a_huge_file_is_numbered_from_the_end():
    (src,) = evidence_sources([Excerpt("huge.log", 9 << 20, 1.0, None, None, None, "a\nb\n")])
    assert (src.label, src.content) == ("huge.log (last 2 lines)", "    -2\ta\n    -1\tb")


def test_evidence_refuses_other_values():
    with pytest.raises(QueryError, match="evidence must be FileRef, LineRef, Excerpt or a Result, got str"):
        evidence_sources(["src/app.py"])
