"""The assembler pipeline: gather, select, structure, compress, report.

A word-counting fake tokenizer (one token per word) makes every count and
eviction exact; a few tests use the real cl100k tokenizer.
"""

from __future__ import annotations

import hashlib
import math

import pytest
from fakes_assemble import WordTokenizer
from hypothesis import given, settings
from hypothesis import strategies as st

from jitctx.errors import QueryError
from jitctx.window.assemble import AssembleConfig, Context, Cut, Eviction, Section, assemble, check_budget
from jitctx.window.sources import Message, Source, ToolCall, history_sources, note_source, system_source, task_source

CFG = AssembleConfig(reserve_ratio=0, output="Reply briefly.")
TOK = WordTokenizer()


def run(sources, budget, config=CFG, **kw) -> Context:
    return assemble(sources, budget, config=config, tokenizer=TOK, **kw)


def ev(name, content, *, relevance=1.0, timestamp=None, label=None):
    return Source(name, "evidence", content, relevance=relevance, timestamp=timestamp, label=label or name)


# -- structure -------------------------------------------------------------------


def _mixed():
    return [
        system_source("You are careful."),
        Source("preload", "preload", "# AGENTS.md\nRun make test."),
        note_source("plan: read app.py first", name="notes:plan"),
        ev("evidence:src/app.py", "1\tdef main():", label="src/app.py:1"),
        Source("todo", "todo-list", "ship it"),
        task_source("Fix main."),
    ]


def test_structure_stable_first_fixed_order_task_last():
    ctx = run(_mixed(), 100)
    assert ctx.text == (
        "[System]\nYou are careful.\n\n"
        "[Instructions]\n# AGENTS.md\nRun make test.\n\n"
        "[Output]\nReply briefly.\n\n"
        "[Notes]\n- plan: read app.py first\n\n"
        "[Evidence]\n==> src/app.py:1 <==\n1\tdef main():\n\n"
        "[Context]\n--- todo (todo-list) ---\nship it\n\n"
        "[Task]\nFix main.\n"
    )
    assert ctx.sections == (
        Section("system", "System", "[System]\nYou are careful.\n\n", 4, True, ("system",)),
        Section("preload", "Instructions", "[Instructions]\n# AGENTS.md\nRun make test.\n\n", 6, True, ("preload",)),
        Section("output", "Output", "[Output]\nReply briefly.\n\n", 3, True, ("output",)),
        Section("notes", "Notes", "[Notes]\n- plan: read app.py first\n\n", 6, False, ("notes:plan",)),
        Section("evidence", "Evidence", "[Evidence]\n==> src/app.py:1 <==\n1\tdef main():\n\n", 7, False, ("evidence:src/app.py",)),
        Section("context", "Context", "[Context]\n--- todo (todo-list) ---\nship it\n\n", 7, False, ("todo",)),
        Section("task", "Task", "[Task]\nFix main.\n", 3, False, ("task",)),
    )
    assert ctx.tokens == 36 == TOK.count(ctx.text)
    assert ctx.evicted == () and ctx.cuts == () and ctx.warnings == ()
    assert ctx.stable_text == "[System]\nYou are careful.\n\n[Instructions]\n# AGENTS.md\nRun make test.\n\n[Output]\nReply briefly.\n\n"
    assert ctx.prefix_hash == hashlib.sha256(ctx.stable_text.encode()).hexdigest()


def test_report_to_dict_is_whole():
    ctx = run(_mixed(), 100)
    d = ctx.to_dict()
    assert d == {
        "kind": "context",
        "text": ctx.text,
        "tokens": 36,
        "budget": 100,
        "reserve": 0,
        "available": 100,
        "stable_tokens": 13,
        "prefix_hash": ctx.prefix_hash,
        "sections": [
            {"name": "system", "title": "System", "tokens": 4, "stable": True, "sources": ["system"], "cut": False},
            {"name": "preload", "title": "Instructions", "tokens": 6, "stable": True, "sources": ["preload"], "cut": False},
            {"name": "output", "title": "Output", "tokens": 3, "stable": True, "sources": ["output"], "cut": False},
            {"name": "notes", "title": "Notes", "tokens": 6, "stable": False, "sources": ["notes:plan"], "cut": False},
            {"name": "evidence", "title": "Evidence", "tokens": 7, "stable": False, "sources": ["evidence:src/app.py"], "cut": False},
            {"name": "context", "title": "Context", "tokens": 7, "stable": False, "sources": ["todo"], "cut": False},
            {"name": "task", "title": "Task", "tokens": 3, "stable": False, "sources": ["task"], "cut": False},
        ],
        "evicted": [],
        "cut": [],
        "warnings": [],
    }


def test_task_and_output_always_present():
    ctx = run([], 10)
    assert ctx.text == "[Output]\nReply briefly.\n\n[Task]\n(no task given)\n"
    assert [s.name for s in ctx.sections] == ["output", "task"]
    assert ctx.tokens == 7


def test_stable_source_of_a_dynamic_kind_goes_to_the_prefix():
    ctx = run([Source("rules", "notes", "never push", stable=True), note_source("today", name="n"), task_source("go")], 100)
    assert ctx.text == "[Notes]\n- never push\n\n[Output]\nReply briefly.\n\n[Notes]\n- today\n\n[Task]\ngo\n"
    assert [(s.name, s.stable) for s in ctx.sections] == [("notes", True), ("output", True), ("notes", False), ("task", False)]


def test_every_kind_lands_in_a_section_whatever_its_stability():
    sources = [
        Source("sys2", "system", "per-turn rule", stable=False),
        Source("pre2", "preload", "fresh file", stable=False),
        Source("ev", "evidence", "x", label="a.py", stable=True),
        Source("odd", "odd-kind", "y", stable=True),
        task_source("t"),
    ]
    ctx = run(sources, 100)
    assert [(s.name, s.stable, s.sources) for s in ctx.sections] == [
        ("evidence", True, ("ev",)),
        ("context", True, ("odd",)),
        ("output", True, ("output",)),
        ("system", False, ("sys2",)),
        ("preload", False, ("pre2",)),
        ("task", False, ("task",)),
    ]


def test_items_normalized_blank_lines_and_trailing_space_stripped():
    ctx = run([note_source("\n\n  \nfirst\n\n second  \n\n\n", name="n"), task_source("t\r\nu")], 100)
    assert ctx.text == "[Output]\nReply briefly.\n\n[Notes]\n- first\n\n second\n\n[Task]\nt\nu\n"


def test_empty_source_is_evicted_as_empty():
    ctx = run([note_source("   \n", name="blank"), task_source("t")], 100)
    assert ctx.evicted == (Eviction("blank", "notes", 60, 0, "empty"),)


# -- select ----------------------------------------------------------------------


def test_select_filters_ranks_by_weighted_score_and_fills_greedily():
    # scores (0.7*relevance + 0.3*recency): e3 .78, e1 .70, e2 .65; e4 below min_relevance
    sources = [
        ev("e1", "x y", relevance=1.0, timestamp=100, label="a.py"),
        ev("e2", "z", relevance=0.5, timestamp=200, label="b.py"),
        ev("e3", "w " * 10, relevance=0.9, timestamp=150, label="c.py"),
        ev("e4", "v", relevance=0.05, timestamp=200, label="d.py"),
        task_source("Fix it."),
    ]
    ctx = run(sources, 16)  # protected 6, evidence header 1: room for e1 (5) + e2 (4), not e3 (13)
    assert ctx.text == "[Output]\nReply briefly.\n\n[Evidence]\n==> a.py <==\nx y\n==> b.py <==\nz\n\n[Task]\nFix it.\n"
    assert ctx.evicted == (
        Eviction("e4", "evidence", 40, 4, "below_min_relevance"),
        Eviction("e3", "evidence", 40, 13, "over_budget"),
    )
    assert ctx.tokens == 16


def test_select_rank_order_decides_who_gets_the_last_room():
    sources = [
        ev("old", "a b", relevance=1.0, timestamp=0, label="old.py"),
        ev("new", "c d", relevance=1.0, timestamp=10, label="new.py"),
        task_source("t"),
    ]
    ctx = run(sources, 5 + 1 + 5)  # room for one item only: the more recent wins
    assert [s.sources for s in ctx.sections if s.name == "evidence"] == [("new",)]
    assert ctx.evicted == (Eviction("old", "evidence", 40, 5, "over_budget"),)


def test_select_priority_breaks_score_ties():
    low = Source("low", "evidence", "a", label="l", priority=1)
    high = Source("high", "evidence", "b", label="h", priority=9)
    ctx = run([low, high, task_source("t")], 5 + 1 + 4)
    assert ctx.evicted == (Eviction("low", "evidence", 1, 4, "over_budget"),)


def test_protected_sources_over_budget_is_an_error_naming_cost_and_budget():
    sources = [system_source("one two three four five six seven eight nine ten"), task_source("Fix it now.")]
    with pytest.raises(QueryError) as err:
        run(sources, 12)
    e = err.value
    assert e.message == "protected sources (system, task, output) need 18 tokens but the budget allows 12 (budget 12 minus reserve 0)"
    assert e.fields == {"field": "budget", "protected_tokens": 18, "budget": 12, "available": 12}
    assert "never dropped" in e.hint


def test_reserve_is_held_back_from_the_budget():
    cfg = AssembleConfig(reserve_ratio=0.5, output="Reply briefly.")
    ctx = run([ev("e", "a b c d", label="x"), task_source("t")], 20, config=cfg)
    assert (ctx.budget, ctx.available) == (20, 10)
    assert ctx.evicted == (Eviction("e", "evidence", 40, 7, "over_budget"),)
    assert ctx.to_dict()["reserve"] == 10


# -- history ---------------------------------------------------------------------


def _history():
    return [
        Message("user", "first question here"),
        Message("assistant", "", (ToolCall("c1", "grep", "{}"), ToolCall("c2", "glob", "{}"))),
        Message("tool", "r1", tool_call_id="c1"),
        Message("tool", "r2", tool_call_id="c2"),
        Message("assistant", "answer one"),
        Message("user", "second question"),
    ]


def test_history_trimmed_oldest_first_never_splitting_a_call_from_its_results():
    hist, warnings = history_sources(_history())
    assert [(s.name, TOK.count(s.content)) for s in hist] == [("history:0", 4), ("history:1", 20), ("history:4", 3), ("history:5", 3)]
    ctx = run([*hist, task_source("Fix it.")], 22)  # room 16 - header 1: the two newest, not the tool group
    assert ctx.text == "[Output]\nReply briefly.\n\n[History]\nassistant: answer one\nuser: second question\n\n[Task]\nFix it.\n"
    assert ctx.evicted == (
        Eviction("history:1", "history", 50, 20, "over_budget"),
        Eviction("history:0", "history", 50, 4, "history_trimmed"),  # it would fit, but a newer turn is gone
    )
    assert ctx.messages == (Message("assistant", "answer one"), Message("user", "second question"))
    assert warnings == []


def test_history_keeps_parallel_calls_with_all_their_results():
    hist, _ = history_sources(_history())
    ctx = run([*hist, task_source("Fix it.")], 6 + 1 + 3 + 3 + 20)
    section = next(s for s in ctx.sections if s.name == "history")
    assert section.text == (
        "[History]\n"
        "assistant called grep [c1] {}\n"
        "assistant called glob [c2] {}\n"
        "tool grep [c1] returned:\nr1\n"
        "tool glob [c2] returned:\nr2\n"
        "assistant: answer one\n"
        "user: second question\n\n"
    )
    assert [m.role for m in ctx.messages] == ["assistant", "tool", "tool", "assistant", "user"]
    assert ctx.evicted == (Eviction("history:0", "history", 50, 4, "over_budget"),)


def test_history_competes_on_score_with_other_dynamic_sources():
    hist, _ = history_sources([Message("user", "old words here", timestamp=1), Message("user", "new", timestamp=9)])
    notes = note_source("a b c", name="n", relevance=0.2, timestamp=5)  # score .14+.15=.29 < history
    ctx = run([*hist, notes, task_source("t")], 4 + 1 + 2 + 4)
    assert [s.name for s in ctx.sections] == ["output", "history", "task"]
    assert ctx.evicted == (Eviction("history:0", "history", 50, 4, "over_budget"), Eviction("n", "notes", 60, 4, "over_budget"))


# -- compress --------------------------------------------------------------------

PRELOAD = "".join(f"line {n} word\n" for n in range(1, 201))  # 600 tokens


def test_compress_cuts_a_stable_source_on_a_line_boundary_with_a_marker():
    ctx = run([Source("preload", "preload", PRELOAD), task_source("Fix it.")], 107)  # room 100 after protected 6 and the header
    section = ctx.sections[0]
    kept = "".join(f"line {n} word\n" for n in range(1, 29))
    assert section == Section(
        "preload",
        "Instructions",
        "[Instructions]\n" + kept + "[... cut to fit the budget: kept 28 of 200 lines, 600 tokens in full]\n\n",
        100,
        True,
        ("preload",),
        cut=True,
    )
    assert ctx.cuts == (Cut("preload", "preload", 600, 99),)
    assert ctx.evicted == ()
    assert ctx.tokens == 106 <= ctx.available


def test_compress_keeps_nothing_under_50_tokens():
    ctx = run([Source("preload", "preload", PRELOAD), task_source("Fix it.")], 67)  # room 60: 15 lines = 45 tokens
    assert ctx.evicted == (Eviction("preload", "preload", 90, 600, "cut_below_min"),)
    assert ctx.cuts == ()
    assert [s.name for s in ctx.sections] == ["output", "task"]


def test_compress_not_attempted_when_room_is_under_50_tokens():
    ctx = run([Source("preload", "preload", PRELOAD), task_source("Fix it.")], 50)
    assert ctx.evicted == (Eviction("preload", "preload", 90, 600, "over_budget"),)


def test_compress_off_evicts_instead():
    cfg = AssembleConfig(reserve_ratio=0, output="Reply briefly.", compress=False)
    ctx = run([Source("preload", "preload", PRELOAD), task_source("Fix it.")], 107, config=cfg)
    assert ctx.evicted == (Eviction("preload", "preload", 90, 600, "over_budget"),)


# -- gather ----------------------------------------------------------------------


def test_gather_tolerates_a_failing_provider():
    def broken():
        raise ValueError("boom")

    def junk():
        return "not a source"

    def good():
        return [note_source("kept", name="n")]

    ctx = run([broken, junk, good, task_source("t")], 100, warnings=["carried"])
    assert ctx.warnings == ("carried", "source broken failed: ValueError: boom", "source junk failed: TypeError: returned str, not Source")
    assert [s.sources for s in ctx.sections] == [("output",), ("n",), ("task",)]


def test_gather_refuses_a_non_source_item():
    with pytest.raises(QueryError, match="a source must be a Source, got str"):
        run([["text"]], 100)


# -- prefix hash -----------------------------------------------------------------


def test_prefix_hash_equal_when_only_dynamic_sources_change():
    stable = [system_source("You are careful."), Source("preload", "preload", "# AGENTS.md\nRun make test.")]
    a = run([*stable, ev("e", "x", label="a.py"), task_source("Fix main.")], 100)
    b = run([*stable, note_source("new note", name="n"), ev("f", "y z", label="b.py"), task_source("Now fix util, please.")], 100)
    c = run([system_source("You are careful."), Source("preload", "preload", "# AGENTS.md\nRun make check."), task_source("Fix main.")], 100)
    assert a.prefix_hash == b.prefix_hash != c.prefix_hash
    assert a.text != b.text


# -- bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    "budget, message",
    [
        (0, "budget must be at least 1, got 0"),
        (-5, "budget must be at least 1, got -5"),
        ("100", "budget must be an integer, got '100'"),
        (10.5, "budget must be an integer, got 10.5"),
        (True, "budget must be an integer, got True"),
        (None, "budget must be an integer, got None"),
    ],
)
def test_bad_budget(budget, message):
    with pytest.raises(QueryError) as err:
        run([task_source("t")], budget)
    assert err.value.message == message
    assert err.value.fields["field"] == "budget"


def test_check_budget_passes_a_good_one():
    assert check_budget(16000) == 16000


def test_check_budget_is_the_shared_count_rule(monkeypatch):
    """One rule for every count: check_budget delegates to query.check_count."""
    import jitctx.window.assemble
    from jitctx.query import check_count

    seen = []

    def spy(name, value, **kw):
        seen.append((name, value, kw))
        return check_count(name, value, **kw)

    monkeypatch.setattr(jitctx.window.assemble, "check_count", spy)
    assert check_budget(300) == 300
    assert seen == [("budget", 300, {"minimum": 1})]
    for bad in (0, "1", 2.5, False):
        with pytest.raises(QueryError) as mine:
            check_budget(bad)
        with pytest.raises(QueryError) as shared:
            check_count("budget", bad, minimum=1)
        assert (mine.value.message, mine.value.hint, mine.value.fields) == (shared.value.message, shared.value.hint, shared.value.fields)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"relevance_weight": 0.5, "recency_weight": 0.4}, "relevance_weight + recency_weight must sum to 1, got 0.5 + 0.4 = 0.9"),
        ({"relevance_weight": 1.2, "recency_weight": -0.2}, "relevance_weight must be from 0 to 1 (at most 1), got 1.2"),
        ({"relevance_weight": "0.7"}, "relevance_weight must be a number, got '0.7'"),
        ({"reserve_ratio": 1}, "reserve_ratio must be from 0 to 1 (below 1), got 1"),
        ({"reserve_ratio": -0.1}, "reserve_ratio must be from 0 to 1 (below 1), got -0.1"),
        ({"min_relevance": 1.5}, "min_relevance must be from 0 to 1 (at most 1), got 1.5"),
        ({"min_relevance": math.nan}, "min_relevance must be a number, got nan"),
        ({"output": "  "}, "output must be non-empty text, got '  '"),
        ({"compress": "yes"}, "compress must be true or false, got 'yes'"),
    ],
)
def test_bad_config(kwargs, message):
    with pytest.raises(QueryError) as err:
        AssembleConfig(**kwargs)
    assert err.value.message == message


def test_weights_summing_to_one_with_float_noise_are_accepted():
    assert AssembleConfig(relevance_weight=0.1 + 0.2, recency_weight=0.7).recency_weight == 0.7


def test_bad_config_object():
    with pytest.raises(QueryError, match="config must be an AssembleConfig, got dict"):
        assemble([], 10, config={"reserve_ratio": 0}, tokenizer=TOK)


# -- exact counts ----------------------------------------------------------------


class CharTokenizer:
    """Not additive (ceil of chars/4): the assembler must still fit exactly."""

    name = "chars"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 4)

    def truncate(self, text: str, max_tokens: int) -> str:
        return text[: max(max_tokens, 0) * 4]


def test_non_additive_tokenizer_still_fits_the_budget():
    tok = CharTokenizer()
    sources = [ev(f"e{n}", "abcde " * 3, label=f"f{n}.py", timestamp=n) for n in range(40)] + [task_source("do it")]
    ctx = assemble(sources, 200, config=CFG, tokenizer=tok)
    assert ctx.tokens == sum(s.tokens for s in ctx.sections) <= 200
    assert all(s.tokens == tok.count(s.text) for s in ctx.sections)
    kept = len(next(s for s in ctx.sections if s.name == "evidence").sources)
    assert kept == 20 and {e.source for e in ctx.evicted} == {f"e{n}" for n in range(20)}  # the oldest go


def test_real_tokenizer_total_equals_the_count_of_the_whole_text():
    from jitctx.tokens.tokenizer import get_tokenizer

    tok = get_tokenizer()
    hist, _ = history_sources(
        [
            {"role": "user", "content": "Why does `greet` fail?\n\n"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"pattern": "greet"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "\n  src/app.py:3:from util.helpers import greet\n\n"},
        ]
    )
    sources = [
        system_source("  You are a careful agent.\n\n"),
        Source("preload", "preload", "<!-- AGENTS.md -->\n# Agent notes\n\n    Run the tests with `make test`.   \n\n\n"),
        note_source("\tTODO: check   unicode ☃ names\n", name="n"),
        *hist,
        ev("e", '     1\t"""The fixture application."""\n     2\t\n     3\tfrom util.helpers import greet\n', label="src/app.py:1-3"),
        Source("misc", "scratch", '  {"json": [1, 2]}\n'),
        task_source("Make greet() handle None.\n"),
    ]
    ctx = assemble(sources, 4000, tokenizer=tok)
    assert ctx.tokens == tok.count(ctx.text) == sum(tok.count(s.text) for s in ctx.sections)
    assert ctx.tokens <= ctx.available == 3600
    assert [s.name for s in ctx.sections] == ["system", "preload", "output", "notes", "history", "evidence", "context", "task"]


def test_real_tokenizer_cut_fits_and_keeps_whole_lines():
    from jitctx.tokens.tokenizer import get_tokenizer

    tok = get_tokenizer()
    text = "".join(f"- rule {n}: keep functions small and named ☃\n" for n in range(300))
    ctx = assemble([Source("preload", "preload", text), task_source("go")], 400, config=AssembleConfig(reserve_ratio=0), tokenizer=tok)
    pre = ctx.sections[0]
    assert pre.cut and ctx.tokens == tok.count(ctx.text) <= 400
    body = pre.text.split("\n")[1:-3]
    assert body and all(line.startswith("- rule ") and line.endswith("☃") for line in body)
    assert pre.text.endswith(f"[... cut to fit the budget: kept {len(body)} of 300 lines, {tok.count(text):,} tokens in full]\n\n")


def test_importing_the_assembler_loads_no_heavy_dependency():
    import subprocess
    import sys

    code = "import sys, jitctx.window.assemble, jitctx.window.for_task, jitctx.window.vendors; print(sorted(m for m in ('tiktoken', 'git', 'mcp') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_duplicate_source_names_are_a_warning():
    ctx = run([note_source("a", name="n"), note_source("b", name="n"), task_source("t")], 100)
    assert ctx.warnings == ("two sources are named 'n': the report cannot tell them apart",)


# -- invariants ------------------------------------------------------------------

_word = st.sampled_from(["alpha", "beta", "gamma", "delta", "x", "def", "return"])
_text = st.lists(st.lists(_word, min_size=0, max_size=6).map(" ".join), min_size=1, max_size=8).map("\n".join)


@st.composite
def _windows(draw):
    sources = []
    if draw(st.booleans()):
        sources.append(system_source(draw(_text).strip() or "rule"))
    if draw(st.booleans()):
        sources.append(Source("preload", "preload", draw(_text)))
    for n in range(draw(st.integers(0, 6))):
        sources.append(
            Source(
                f"s{n}",
                draw(st.sampled_from(["notes", "evidence", "misc"])),
                draw(_text),
                relevance=draw(st.floats(0, 1)),
                timestamp=draw(st.one_of(st.none(), st.integers(0, 100))),
            )
        )
    msgs = []
    for g in range(draw(st.integers(0, 5))):
        if draw(st.booleans()):
            ids = [f"c{g}.{k}" for k in range(draw(st.integers(1, 3)))]
            msgs.append(Message("assistant", "", tuple(ToolCall(i, "grep") for i in ids)))
            msgs += [Message("tool", draw(_text), tool_call_id=i) for i in reversed(ids)]
        else:
            msgs.append(Message(draw(st.sampled_from(["user", "assistant"])), draw(_text)))
    hist, _ = history_sources(msgs)
    sources += hist
    sources.append(task_source(draw(_text).strip() or "task"))
    return sources, draw(st.integers(1, 300))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_windows())
def test_invariants_fit_account_for_every_source_and_keep_a_history_suffix(case):
    sources, budget = case
    try:
        ctx = run(sources, budget)
    except QueryError as exc:
        assert exc.fields["protected_tokens"] > budget  # only when protected sources alone do not fit
        return
    assert ctx.tokens == TOK.count(ctx.text) == sum(s.tokens for s in ctx.sections) <= budget
    kept = [name for s in ctx.sections for name in s.sources]
    evicted = [e.source for e in ctx.evicted]
    assert sorted(kept + evicted) == sorted([s.name for s in sources] + ["output"])
    assert [s.name for s in ctx.sections][-1] == "task" and "output" in [s.name for s in ctx.sections]
    history = [s.name for s in sources if s.kind == "history"]
    kept_history = [n for n in kept if n.startswith("history:")]
    dropped = [n for n in history if n not in kept_history]
    if dropped and kept_history:  # kept history is the newest groups (relevance 1 each: no filter holes)
        assert history.index(dropped[-1]) < history.index(kept_history[0])
    roles = [m.role for m in ctx.messages]
    assert not roles or roles[0] != "tool"
    calls, results = set(), set()
    for m in ctx.messages:
        calls |= {c.id for c in m.tool_calls}
        if m.role == "tool":
            assert m.tool_call_id in calls  # a result never comes before its call
            results.add(m.tool_call_id)
    assert calls == results  # and no call is kept without its result


def test_a_cut_keeping_nothing_gives_its_room_back():
    """A stable source whose cut keeps under 50 tokens is evicted without being charged: the room goes to the others."""
    evidence = ev("evidence:src/app.py", "one two three four five six seven eight nine ten", label="src/app.py:1")
    ctx = run([Source("preload", "preload", PRELOAD), evidence, task_source("Fix it.")], 67)  # room 60: 15 lines = 45 tokens
    assert ctx.evicted == (Eviction("preload", "preload", 90, 600, "cut_below_min"),)
    assert [s.name for s in ctx.sections] == ["output", "evidence", "task"]
    assert ctx.tokens <= ctx.available


def test_a_cut_source_is_charged_what_it_keeps():
    """The cut keeps whole lines, so it may use less than the room: the rest is left for dynamic sources."""
    lines = "".join(f"w{n} " * 30 + "\n" for n in range(10))  # 10 lines of 30 tokens
    evidence = ev("evidence:a", "alpha beta gamma delta", label="a")
    ctx = run([Source("preload", "preload", lines), evidence, task_source("Fix it.")], 108)  # room ~100: keeps 2 lines (60 + marker)
    (cut,) = ctx.cuts
    assert cut.source == "preload" and cut.kept_tokens < 80
    assert ctx.evicted == ()
    assert "[Evidence]" in ctx.text and ctx.tokens <= ctx.available
