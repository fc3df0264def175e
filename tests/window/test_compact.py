"""Light compaction: old tool results cleared, oldest first, to fit a budget.

A word-counting fake tokenizer (one token per word) makes every count
exact: a tool message costs the 4 words of ``tool <name> [<id>] returned:``
plus its content's words; a placeholder is 10 words plus its call's. One
test checks the counts against the assembler with the real tokenizer.
"""

from __future__ import annotations

import json

import pytest
from fakes_assemble import WordTokenizer
from hypothesis import given, settings
from hypothesis import strategies as st

from jitctx.errors import QueryError
from jitctx.window.assemble import AssembleConfig, Eviction, assemble
from jitctx.window.compact import MAX_CALL_CHARS, ClearedResult, Compaction, call_text, compact, is_cleared
from jitctx.window.sources import Message, Source, ToolCall, history_sources, item_text, system_source, task_source

TOK = WordTokenizer()


def words(n: int, w: str = "w") -> str:
    return " ".join([w] * n)


def head(cid: str, path: str, n: int = 40) -> ToolCall:
    return ToolCall(cid, "head", json.dumps({"path": path, "start": 1, "n": n}))


def run(history, budget, **kw) -> Compaction:
    return compact(history, budget, tokenizer=TOK, **kw)


def _session():
    """A user turn, four reads of 30 words each (34 tokens as messages, 19 cleared), then an answer."""
    return [
        Message("user", "fix the retry bug"),  # 5
        Message("assistant", "reading the client", (head("c1", "src/a.py"),)),  # 4 + 10 (a call's line)
        Message("tool", words(30), tool_call_id="c1"),  # 34
        Message("assistant", "", (head("c2", "src/b.py"), head("c3", "src/c.py"))),  # 20
        Message("tool", words(30), tool_call_id="c3"),  # 34
        Message("tool", words(30), tool_call_id="c2"),  # 34
        Message("assistant", "", (head("c4", "src/d.py"),)),  # 10
        Message("tool", words(30), tool_call_id="c4"),  # 34
        Message("assistant", "the bug is in b.py"),  # 6
    ]


SESSION_TOKENS = 5 + 14 + 34 + 20 + 34 + 34 + 10 + 34 + 6  # 191


def rendered_tokens(messages) -> int:
    """The history as the assembler prices its [History] items."""
    return sum(TOK.count(item_text(s)) for s in history_sources(messages)[0])


# -- what is cleared -------------------------------------------------------------


def test_oldest_results_are_cleared_first_and_the_recent_ones_stay_whole():
    history = _session()
    got = run(history, SESSION_TOKENS - 30, keep_recent=1)  # one clearing saves 34 - 19 = 15: two are needed
    assert [(c.index, c.tool_call_id) for c in got.cleared] == [(2, "c1"), (4, "c3")]
    assert got.messages[2] == Message("tool", "[... result cleared: 34 tokens, currency unknown; fetch again with head path=src/a.py start=1 n=40 force=true]", tool_call_id="c1")
    assert got.messages[4].content == "[... result cleared: 34 tokens, currency unknown; fetch again with head path=src/c.py start=1 n=40 force=true]"
    assert got.messages[5:] == tuple(history[5:])  # c2 is not needed, c4 is the most recent
    assert got.messages[:2] == tuple(history[:2])
    assert got.cleared[0] == ClearedResult(2, "c1", "head", "head path=src/a.py start=1 n=40 force=true", 34, 19, None)
    assert (got.tokens_before, got.tokens_after, got.tokens_saved, got.budget, got.fits) == (191, 161, 30, 161, True)
    assert got.tokens_after == rendered_tokens(got.messages)
    assert got.notice == "cleared 2 old tool results (30 tokens saved): history 161 of 161 tokens; each placeholder names the call that fetches its result again."


def test_keep_recent_counts_tool_results_from_the_end():
    got = run(_session(), 0, keep_recent=2)  # c2 and c4 are the two most recent results
    assert [c.tool_call_id for c in got.cleared] == ["c1", "c3"]
    assert [m.content for m in got.messages if m.role == "tool"][2:] == [words(30), words(30)]
    everything = run(_session(), 0, keep_recent=0)
    assert [c.tool_call_id for c in everything.cleared] == ["c1", "c3", "c2", "c4"]
    assert all(is_cleared(m.content) for m in everything.messages if m.role == "tool")


def test_user_and_assistant_messages_are_never_changed():
    history = _session()
    got = run(history, 0, keep_recent=0)
    assert len(got.cleared) == 4
    assert [m for m in got.messages if m.role != "tool"] == [m for m in history if m.role != "tool"]
    assert all(a is b for a, b in zip(got.messages, history) if a.role != "tool")


def test_placeholders_name_the_call_the_tokens_and_the_currency():
    history = [
        Message("user", "go"),
        Message(
            "assistant", "", (head("now", "src/a.py"), ToolCall("old", "grep", {"pattern": "def main", "path": "src"}), ToolCall("who", "fetch_url", {"url": "https://x.org/a b"}))
        ),
        Message("tool", words(30), tool_call_id="now"),
        Message("tool", words(20), tool_call_id="old"),
        Message("tool", words(25), tool_call_id="who"),
    ]
    asked: list[ToolCall] = []

    def is_current(call: ToolCall) -> bool | None:
        asked.append(call)
        return {"now": True, "old": False}.get(call.id)

    got = run(history, 0, keep_recent=0, is_current=is_current)
    assert [m.content for m in got.messages[2:]] == [
        "[... result cleared: 34 tokens, still current; fetch again with head path=src/a.py start=1 n=40 force=true]",
        "[... result cleared: 24 tokens, changed since: fetch again with grep pattern='def main' path=src]",
        '[... result cleared: 29 tokens, currency unknown; fetch again with fetch_url {"url": "https://x.org/a b"}]',
    ]
    assert [c.current for c in got.cleared] == [True, False, None]
    assert asked == list(history[1].tool_calls)  # each call asked about once, the call itself


def test_results_no_longer_than_their_placeholder_are_left_alone():
    history = [
        Message("assistant", "", (head("c1", "a.py"), head("c2", "b.py"))),
        Message("tool", words(7), tool_call_id="c1"),  # 11 tokens: the placeholder would be 18
        Message("tool", words(14), tool_call_id="c2"),  # 18: no saving either
        Message("user", "next"),
    ]
    asked: list[str] = []
    got = run(history, 0, keep_recent=0, is_current=lambda c: asked.append(c.id))
    assert got.cleared == () and got.messages == tuple(history) and asked == []
    assert not got.fits
    assert got.notice == (
        "nothing could be cleared, but the history still takes 51 tokens, over the budget of 0: "
        "only user/assistant messages (22 tokens), cleared or short results (29 tokens) remain; raise budget or summarise older turns."
    )


def test_a_cleared_result_is_not_cleared_twice():
    first = run(_session(), 0, keep_recent=1, is_current=lambda c: True)
    again = run(first.messages, 0, keep_recent=0, is_current=lambda c: False)
    assert [c.tool_call_id for c in again.cleared] == ["c4"]  # only the one kept whole before
    assert again.messages[:7] == first.messages[:7]  # "still current" stays as it was said
    assert run(first.messages, 0, keep_recent=1) == run(first.messages, 0, keep_recent=1)
    assert run(first.messages, 0, keep_recent=1).cleared == ()


class CharTokenizer:
    """One token per character: a placeholder for 1,234 tokens is longer than one for 90."""

    name = "chars"

    def count(self, text: str) -> int:
        return len(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        return text[: max(max_tokens, 0)]


def test_a_placeholder_is_not_cleared_again_even_where_that_would_save():
    history = [Message("assistant", "", (head("c1", "a.py"),)), Message("tool", "x" * 1234, tool_call_id="c1"), Message("user", "ok")]
    first = compact(history, 0, keep_recent=0, tokenizer=CharTokenizer())
    assert first.messages[1].content == "[... result cleared: 1,260 tokens, currency unknown; fetch again with head path=a.py start=1 n=40 force=true]"
    again = compact(first.messages, 0, keep_recent=0, tokenizer=CharTokenizer())
    assert again.cleared == () and again.messages == first.messages


def test_a_cleared_result_keeps_its_place_id_name_and_timestamp():
    history = [Message("assistant", "", (head("c1", "a.py"),), timestamp=5.0), Message("tool", words(40), tool_call_id="c1", name="head", timestamp=6.0)]
    got = run(history, 0, keep_recent=0)
    assert got.messages[1] == Message("tool", "[... result cleared: 44 tokens, currency unknown; fetch again with head path=a.py start=1 n=40 force=true]", (), "c1", "head", 6.0)


def test_a_long_call_is_named_by_its_id():
    body = words(100, "x")
    history = [Message("assistant", "", (ToolCall("w1", "write_file", {"path": "a.txt", "content": body}),)), Message("tool", words(200), tool_call_id="w1"), Message("user", "ok")]
    got = run(history, 0, keep_recent=0)
    assert got.messages[1].content == "[... result cleared: 204 tokens, currency unknown; fetch again with write_file with the arguments of call w1 above]"
    assert got.messages[0] is history[0]  # the arguments stay in the call


# -- call text -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (ToolCall("1", "head", '{"n": 40, "path": "src/app.py", "start": 1}'), "head path=src/app.py n=40 start=1"),
        (ToolCall("1", "tail", {"path": "CHANGELOG.md", "n": 30, "max_tokens": None}), "tail path=CHANGELOG.md n=30"),
        (ToolCall("1", "grep", {"path": "src", "pattern": "it's", "fixed_strings": True}), 'grep pattern="it\'s" path=src fixed_strings=true'),
        (ToolCall("1", "glob", {"pattern": "**/*.py", "path": "."}), "glob pattern=**/*.py path='.'"),
        (ToolCall("1", "symbols", {"path": "src", "query": "Parser.parse"}), "symbols query=Parser.parse path=src"),
        (ToolCall("1", "locate", {"task": "fix the retry timeout"}), "locate task='fix the retry timeout'"),
        (ToolCall("1", "grep", {"pattern": "x", "glob": ["*.py"]}), 'grep {"glob": ["*.py"], "pattern": "x"}'),
        (ToolCall("1", "grep", {"pattern": "a'b\"c"}), 'grep {"pattern": "a\'b\\"c"}'),
        (ToolCall("1", "head", {"path": "a\nb"}), 'head {"path": "a\\nb"}'),
        (ToolCall("1", "read_file", '{"path": "a.txt"}'), 'read_file {"path": "a.txt"}'),
        (ToolCall("1", "run", "not json\n at all"), "run not json at all"),
        (ToolCall("1", "outline", ""), "outline"),
    ],
)
def test_call_text_is_one_runnable_line(call, text):
    assert call_text(call) == text


def test_call_text_knows_every_jitctx_tool():
    from jitctx.adapters.tools import TOOLS
    from jitctx.window.compact import _TOOLS

    assert sorted(_TOOLS) == sorted(TOOLS)


def test_call_text_caps_its_length():
    long = ToolCall("c9", "grep", {"pattern": "x" * MAX_CALL_CHARS})
    assert call_text(long) == "grep with the arguments of call c9 above"


# -- pairs -----------------------------------------------------------------------


def assert_pairs_whole(before, after):
    """Same roles and ids in the same places; each call's result after it, before the next non-tool message."""
    assert [(m.role, m.tool_call_id, m.tool_calls) for m in after] == [(m.role, m.tool_call_id, m.tool_calls) for m in before]
    sources, warnings = history_sources(after)
    assert warnings == []
    assert sum(len(s.messages) for s in sources) == len(after)
    for s in sources:
        calls = {c.id for m in s.messages for c in m.tool_calls}
        answered = {m.tool_call_id for m in s.messages if m.role == "tool"}
        assert calls == answered


def test_pairs_are_never_split():
    history = _session()
    got = run(history, 0, keep_recent=0)
    assert len(got.cleared) == 4
    assert_pairs_whole(history, got.messages)


def test_dict_input_is_accepted_and_not_mutated():
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "head", "arguments": '{"path": "a.py"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": words(40)},
        {"role": "user", "content": "and?"},
    ]
    snapshot = json.dumps(history)
    got = run(history, 0, keep_recent=0)
    assert json.dumps(history) == snapshot
    assert got.messages[2] == Message("tool", "[... result cleared: 44 tokens, currency unknown; fetch again with head path=a.py force=true]", tool_call_id="c1")
    assert got.messages[1].tool_calls == (ToolCall("c1", "head", '{"path": "a.py"}'),)


# -- fits or not -----------------------------------------------------------------


def test_a_history_that_fits_is_returned_unchanged():
    history = _session()
    got = run(history, SESSION_TOKENS, is_current=lambda c: pytest.fail("asked"))
    assert got == Compaction(tuple(history), (), SESSION_TOKENS, SESSION_TOKENS, 0, SESSION_TOKENS, True, "history fits the budget (191 of 191 tokens): nothing cleared.")
    assert all(a is b for a, b in zip(got.messages, history))
    assert run([], 0) == Compaction((), (), 0, 0, 0, 0, True, "history fits the budget (0 of 0 tokens): nothing cleared.")


def test_a_history_that_cannot_fit_says_why():
    got = run(_session(), 100, keep_recent=1)
    assert [c.tool_call_id for c in got.cleared] == ["c1", "c3", "c2"]
    assert (got.tokens_after, got.fits) == (SESSION_TOKENS - 45, False)
    assert got.notice == (
        "cleared 3 old tool results (45 tokens saved), but the history still takes 146 tokens, over the budget of 100: "
        "only user/assistant messages (55 tokens), the most recent tool result (34 tokens; lower keep_recent to clear them), "
        "cleared or short results (57 tokens) remain; raise budget or summarise older turns."
    )
    text_only = run([Message("user", words(50)), Message("assistant", words(50))], 10)
    assert not text_only.fits and text_only.cleared == ()
    assert text_only.notice == (
        "nothing could be cleared, but the history still takes 102 tokens, over the budget of 10: only user/assistant messages (102 tokens) remain; raise budget or summarise older turns."
    )


def test_the_report_as_json():
    got = run(_session(), 161, keep_recent=1, is_current=lambda c: True)
    assert got.to_dict() == {
        "kind": "compact",
        "tokens_before": 191,
        "tokens_after": 161,
        "tokens_saved": 30,
        "budget": 161,
        "fits": True,
        "cleared": [
            {"index": 2, "tool_call_id": "c1", "tool": "head", "call": "head path=src/a.py start=1 n=40 force=true", "tokens_before": 34, "tokens_after": 19, "current": True},
            {"index": 4, "tool_call_id": "c3", "tool": "head", "call": "head path=src/c.py start=1 n=40 force=true", "tokens_before": 34, "tokens_after": 19, "current": True},
        ],
        "notice": "cleared 2 old tool results (30 tokens saved): history 161 of 161 tokens; each placeholder names the call that fetches its result again.",
    }


# -- agreement with the assembler --------------------------------------------------


def test_counts_agree_with_what_the_assembler_admits():
    """With the real tokenizer: a budget of the protected sources + the [History] header + tokens_after keeps every group; one less does not."""
    from jitctx.tokens.tokenizer import get_tokenizer

    tok = get_tokenizer()
    code = "def main():\n    return retry(3)\n\n\n" * 30
    history = [
        Message("user", "fix the bug\n\n"),
        Message("assistant", "reading", (ToolCall("c1", "head", '{"path": "src/app.py", "n": 40}\n'),)),
        Message("tool", code, tool_call_id="c1"),
        Message("assistant", "", (ToolCall("c2", "grep", {"pattern": "def main"}), ToolCall("c3", "read_file", {"path": "a b.txt"}))),
        Message("tool", "  \n" + code, tool_call_id="c3"),
        Message("tool", code, tool_call_id="c2"),
        Message("assistant", "done"),
    ]
    got = compact(history, 500, keep_recent=1, tokenizer=tok)
    assert [c.tool_call_id for c in got.cleared] == ["c1", "c3"] and got.fits
    cfg = AssembleConfig(reserve_ratio=0)
    task = task_source("fix it")
    with pytest.raises(QueryError) as exc:
        assemble([task], 1, config=cfg, tokenizer=tok)
    protected = exc.value.fields["protected_tokens"]
    assert isinstance(protected, int)
    room = protected + tok.count("[History]\n") + tok.count("\n") + got.tokens_after
    groups = history_sources(got.messages)[0]
    whole = assemble([*groups, task], room, config=cfg, tokenizer=tok)
    assert whole.evicted == () and [m.content for m in whole.messages] == [m.content for m in got.messages]
    short = assemble([*groups, task], room - 1, config=cfg, tokenizer=tok)
    assert short.evicted == (Eviction("history:0", "history", 50, tok.count(item_text(groups[0])), "over_budget"),)


# -- bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field", "named"),
    [
        ({"budget": -1}, "budget", "budget must be at least 0, got -1"),
        ({"budget": 1.5}, "budget", "budget must be an integer, got 1.5"),
        ({"budget": "100"}, "budget", "budget must be an integer, got '100'"),
        ({"budget": True}, "budget", "budget must be an integer, got True"),
        ({"keep_recent": -1}, "keep_recent", "keep_recent must be at least 0, got -1"),
        ({"keep_recent": "3"}, "keep_recent", "keep_recent must be an integer, got '3'"),
        ({"is_current": "yes"}, "is_current", "is_current must be a function of the tool call or None, got str"),
        ({"is_current": lambda c: "yes"}, "is_current", "is_current must return True, False or None, got 'yes' for call 'c1'"),
        ({"history": None}, "history", "history must be a list of messages, got NoneType"),
        ({"history": "user: hi"}, "history", "history must be a list of messages, got str"),
        ({"history": [{"role": "robot", "content": "x"}]}, "role", "history message role must be one of user, assistant, tool, got 'robot'"),
        ({"history": [Message("tool", "r", tool_call_id="zz")]}, "history", "history: tool result for call id 'zz' at message 0 has no matching tool call before it"),
        ({"history": [Message("assistant", "", (head("c1", "a.py"),)), Message("user", "hi")]}, "history", "history: tool call(s) c1 at message 0 have no result before message 1"),
    ],
)
def test_bad_input_is_a_query_error_naming_the_value(kwargs, field, named):
    args = {"history": _session(), "budget": 0, "keep_recent": 0} | kwargs
    with pytest.raises(QueryError) as exc:
        compact(args.pop("history"), args.pop("budget"), tokenizer=TOK, **args)
    assert exc.value.fields["field"] == field
    assert exc.value.message == named
    assert exc.value.hint


def test_a_malformed_history_hint_names_compacts_way_out():
    with pytest.raises(QueryError) as exc:
        run([Message("tool", "r", tool_call_id="zz")], 10)
    assert exc.value.fields == {"field": "history", "tool_call_id": "zz", "index": 0}
    assert exc.value.hint is not None and "history_sources(history, repair=True)" in exc.value.hint and "repair_history" not in exc.value.hint


# -- properties ------------------------------------------------------------------

_TOOL_CALLS = [
    ("head", lambda n: {"path": f"src/m{n}.py", "start": 1, "n": 40}),
    ("grep", lambda n: {"pattern": f"def f{n}", "path": "src"}),
    ("glob", lambda n: {"pattern": "*.py", "exclude": None}),
    ("read_file", lambda n: {"path": f"docs/{n}.md"}),
]
_word = st.sampled_from(["alpha", "beta", "x", "def", "return", "(", "\n", "  "])


@st.composite
def _histories(draw):
    msgs: list[Message] = []
    n = 0
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "calls"]))
        text = " ".join(draw(st.lists(_word, max_size=8)))
        if kind != "calls":
            msgs.append(Message(kind, text))
            continue
        ids = []
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            n += 1
            tool, args = draw(st.sampled_from(_TOOL_CALLS))
            ids.append(f"c{n}")
            calls.append(ToolCall(f"c{n}", tool, args(n)))
        msgs.append(Message("assistant", text, tuple(calls)))
        for cid in draw(st.permutations(ids)):
            msgs.append(Message("tool", words(draw(st.integers(0, 60)), draw(st.sampled_from(["w", "(x)", "a\nb"]))), tool_call_id=cid))
    return msgs


_CURRENT = [None, lambda c: True, lambda c: False, lambda c: None, lambda c: int(c.id[1:]) % 2 == 0 or None]


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(_histories(), st.integers(0, 120), st.integers(0, 4), st.sampled_from(_CURRENT), st.integers(40, 400))
def test_compaction_properties(history, percent, keep_recent, is_current, window):
    budget = rendered_tokens(history) * percent // 100  # most budgets between nothing and the whole history
    got = compact(history, budget, keep_recent=keep_recent, tokenizer=TOK, is_current=is_current)

    # (1) the assembler's prefix is the same with the compacted history
    def window_of(messages):
        fixed = [system_source("You are careful."), Source("preload", "preload", "# AGENTS.md\nRun make test.\n" * 5)]
        return assemble([*fixed, *history_sources(messages)[0], task_source("Fix it.")], window, config=AssembleConfig(reserve_ratio=0), tokenizer=TOK)

    assert window_of(got.messages).prefix_hash == window_of(history).prefix_hash

    # (2) no pair split: same roles and ids in place, every call answered within its group
    assert_pairs_whole(history, got.messages)

    # (3) the counts
    assert got.tokens_before == rendered_tokens(history)
    assert got.tokens_after == rendered_tokens(got.messages) <= got.tokens_before
    assert got.tokens_saved == got.tokens_before - got.tokens_after
    assert got.fits == (got.tokens_after <= budget)
    assert sum(c.tokens_before - c.tokens_after for c in got.cleared) == got.tokens_saved  # the fake is additive

    # (4) user and assistant messages as they were; tool results either whole or one-line placeholders
    results = [i for i, m in enumerate(history) if m.role == "tool"]
    recent = set(results[len(results) - keep_recent :]) if keep_recent else set()
    cleared = {c.index for c in got.cleared}
    for i, (a, b) in enumerate(zip(history, got.messages)):
        if a.role != "tool":
            assert b is a
        elif i in cleared:
            assert i not in recent and is_cleared(b.content) and "\n" not in b.content and b.tool_call_id == a.tool_call_id
        else:
            assert b is a

    # oldest first: what a budget clears is the start of what clearing everything would clear
    every = compact(history, 0, keep_recent=keep_recent, tokenizer=TOK, is_current=is_current)
    assert [c.index for c in got.cleared] == sorted(cleared)
    assert got.cleared == every.cleared[: len(got.cleared)]
    assert got.fits or got.cleared == every.cleared
    # deterministic, and compacting again clears nothing more
    assert compact(history, budget, keep_recent=keep_recent, tokenizer=TOK, is_current=is_current) == got
    assert compact(got.messages, budget, keep_recent=keep_recent, tokenizer=TOK).cleared == ()
