"""A window for a task: keywords, evidence from grep/glob, preload, the CLI."""

from __future__ import annotations

import json

import pytest
from fakes_assemble import FakePreload, FakeWorkspace

from jitctx.adapters import cli
from jitctx.assemble import AssembleConfig, Eviction
from jitctx.context import DEFAULT_SYSTEM, context_for_task, task_keywords
from jitctx.errors import QueryError
from jitctx.refs import FileRef, LineRef, Result
from jitctx.workspace import Workspace

CFG = AssembleConfig(reserve_ratio=0, output="Reply briefly.")
PRELOAD = FakePreload("<!-- AGENTS.md -->\n# Agent notes\nRun make test.\n")
GREP = Result(
    "grep",
    [
        LineRef("src/app.py", 100, 5.0, 3, "from util.helpers import greet"),
        LineRef("src/app.py", 100, 5.0, 7, '    print(greet("world"))'),
        LineRef("docs/guide.md", 50, 9.0, 3, "Call `greet` to say hello."),
    ],
    total=3,
)
GLOBS = {"**/*helpers*": [FileRef("src/util/helpers.py", 120, 7.0)]}


def _ws(**kw) -> FakeWorkspace:
    return FakeWorkspace(**{"preload": PRELOAD, "grep": GREP, "globs": GLOBS, **kw})


def test_task_keywords():
    assert task_keywords("Fix greet() in src/util/helpers.py, please!") == ["greet", "src", "util", "helpers"]
    assert task_keywords("Make the CLI handle --Budget and BUDGET") == ["cli", "handle", "budget"]
    assert task_keywords("do it") == []
    assert task_keywords(" ".join(f"word{n}" for n in range(20))) == [f"word{n}" for n in range(8)]


def test_context_for_task_whole_window():
    ws = _ws()
    ctx = context_for_task(ws, "Fix greet in helpers", 1000, config=CFG, system="Be careful.")
    assert ctx.text == (
        "[System]\nBe careful.\n\n"
        "[Instructions]\n<!-- AGENTS.md -->\n# Agent notes\nRun make test.\n\n"
        "[Output]\nReply briefly.\n\n"
        "[Evidence]\n"
        '==> src/app.py:3-7 <==\n     3\tfrom util.helpers import greet\n   ...\n     7\t    print(greet("world"))\n'
        "==> docs/guide.md:3 <==\n     3\tCall `greet` to say hello.\n"
        "==> src/util/helpers.py (120 B) <==\n\n"
        "[Task]\nFix greet in helpers\n"
    )
    content = (("ignore_case", True), ("limit", 20), ("mode", "content"))
    assert ws.calls == [
        ("preload",),
        ("grep", "greet|helpers", ".", (("ignore_case", True), ("limit", 2000), ("mode", "count"))),  # which files, how often
        ("glob", "**/*{greet,helpers}*"),  # one listing for every keyword
        ("grep", "greet|helpers", "src/app.py", content),  # ranked: app.py has more matching lines
        ("grep", "greet|helpers", "docs/guide.md", content),
    ]
    assert ctx.warnings == () and ctx.evicted == ()


def test_relevance_is_the_share_of_keywords_hit():
    # app.py hits both keywords (1.0); guide.md and helpers.py one each (0.5)
    cfg = AssembleConfig(reserve_ratio=0, output="Reply briefly.", min_relevance=0.6)
    ctx = context_for_task(_ws(), "Fix greet in helpers", 1000, config=cfg, system="Be careful.")
    assert ctx.evicted == (
        Eviction("evidence:docs/guide.md", "evidence", 40, 9, "below_min_relevance"),
        Eviction("evidence:src/util/helpers.py", "evidence", 40, 5, "below_min_relevance"),
    )


def test_failing_preload_and_grep_are_warnings_and_the_rest_goes_on():
    ws = _ws(preload=RuntimeError("no preload yet"), grep=ModuleNotFoundError("No module named 'jitctx.search'"))
    ctx = context_for_task(ws, "Fix greet in helpers", 1000, config=CFG, system="Be careful.")
    assert ctx.warnings == (
        "evidence: grep failed: ModuleNotFoundError: No module named 'jitctx.search'",
        "source preload failed: RuntimeError: no preload yet",
    )
    assert [s.name for s in ctx.sections] == ["system", "output", "evidence", "task"]
    assert ctx.sections[2].sources == ("evidence:src/util/helpers.py",)


def test_preload_warnings_and_truncated_grep_are_reported():
    grep = Result("grep", list(GREP.results), total=500, truncated=True, notice="showing 3 of 500; narrow with path=")
    ctx = context_for_task(_ws(preload=FakePreload("# A\n", warnings=["README.md cut to 2,000 tokens"]), grep=grep), "Fix greet", 1000, config=CFG)
    assert ctx.warnings == ("preload: README.md cut to 2,000 tokens", "evidence: ranked the first 2 of 500 matching files")


def test_task_without_keywords_searches_nothing():
    ws = _ws()
    ctx = context_for_task(ws, "do it", 1000, config=CFG)
    assert ws.calls == [("preload",)]
    assert ctx.warnings == ("evidence: the task has no keywords to search for (words of 3+ letters)",)


def test_history_and_notes_are_passed_through():
    history = [{"role": "user", "content": "hello"}, {"role": "tool", "tool_call_id": "x", "content": "orphan"}]
    with pytest.raises(QueryError, match="tool result for call id 'x'"):
        context_for_task(_ws(), "Fix greet", 1000, config=CFG, history=history)
    cfg = AssembleConfig(reserve_ratio=0, output="Reply briefly.", repair_history=True)
    ctx = context_for_task(_ws(), "Fix greet", 1000, config=cfg, history=history, notes=["try helpers first"], use_preload=False)
    assert ctx.warnings == ("history: dropped tool result 'x' at message 1: no matching call (repair)",)
    assert [(s.name, s.sources) for s in ctx.sections if s.name in ("notes", "history")] == [("notes", ("notes:0",)), ("history", ("history:0",))]


def test_default_system_text():
    ctx = context_for_task(_ws(), "Fix greet", 1000, config=CFG)
    assert ctx.sections[0].text == f"[System]\n{DEFAULT_SYSTEM}\n\n"


@pytest.mark.parametrize("budget", [0, -1, "16000", 1.5])
def test_bad_budget_fails_before_any_work(budget):
    ws = _ws()
    with pytest.raises(QueryError, match="budget must be"):
        context_for_task(ws, "Fix greet", budget)
    assert ws.calls == []


def test_bad_task():
    with pytest.raises(QueryError, match="the task must be non-empty text"):
        context_for_task(_ws(), "  ", 1000)


# -- CLI -------------------------------------------------------------------------


@pytest.fixture
def patched(monkeypatch):
    """The real Workspace on a fixture repo, with preload and grep scripted (other engineers own them)."""
    monkeypatch.setattr(Workspace, "preload", lambda self, *a, **k: PRELOAD)
    monkeypatch.setattr(Workspace, "grep", lambda self, *a, **k: GREP)


def test_cli_context_prints_the_window(repo, patched, capsys):
    code = cli.main(["context", "--task", "Fix greet in helpers", "--root", str(repo.root)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert out.startswith(f"[System]\n{DEFAULT_SYSTEM}\n\n[Instructions]\n<!-- AGENTS.md -->\n")
    assert "==> src/util/helpers.py (" in out  # the real glob found it by name
    assert out.endswith("[Task]\nFix greet in helpers\n")


def test_cli_context_json_is_the_report(repo, patched, capsys):
    code = cli.main(["context", "--task", "Fix greet in helpers", "--budget", "3000", "--root", str(repo.root), "--json"])
    out, _ = capsys.readouterr()
    d = json.loads(out)
    assert code == 0
    assert list(d) == ["kind", "text", "tokens", "budget", "reserve", "available", "stable_tokens", "prefix_hash", "sections", "evicted", "cut", "warnings"]
    assert (d["budget"], d["reserve"], d["available"]) == (3000, 300, 2700)
    assert [s["name"] for s in d["sections"]] == ["system", "preload", "output", "evidence", "task"]
    tok = Workspace(repo.root).tokenizer
    assert d["tokens"] == tok.count(d["text"]) == sum(s["tokens"] for s in d["sections"]) <= 2700


def test_cli_context_warnings_go_to_stderr(repo, monkeypatch, capsys):
    def broken(self, *a, **k):
        raise RuntimeError("no preload")

    monkeypatch.setattr(Workspace, "preload", broken)
    monkeypatch.setattr(Workspace, "grep", lambda self, *a, **k: GREP)
    code = cli.main(["context", "--task", "Fix greet", "--root", str(repo.root)])
    out, err = capsys.readouterr()
    assert code == 0 and err == "jitctx: warning: source preload failed: RuntimeError: no preload\n"


@pytest.mark.parametrize("budget", ["0", "-5"])
def test_cli_context_bad_budget(repo, patched, capsys, budget):
    code = cli.main(["context", "--task", "x", "--budget", budget, "--root", str(repo.root)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err == f"jitctx: error: budget must be at least 1, got {budget}\n  hint: pass budget>=1\n"


def test_cli_context_budget_not_a_number(repo, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["context", "--task", "x", "--budget", "lots", "--root", str(repo.root)])
    assert exc.value.code == 2
    assert "invalid int value: 'lots'" in capsys.readouterr().err


def test_cli_context_protected_over_budget(repo, patched, capsys):
    code = cli.main(["context", "--task", "Fix greet in helpers", "--budget", "20", "--root", str(repo.root)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("jitctx: error: protected sources (system, task, output) need ")
    assert "but the budget allows 18 (budget 20 minus reserve 2)" in err


def test_single_keyword_glob_has_no_braces():
    ws = FakeWorkspace(preload=FakePreload("# rules\n"))
    context_for_task(ws, "greet", budget=400)
    assert ("glob", "**/*greet*") in ws.calls


def test_nested_instructions_met_by_the_evidence_lead_it(repo):
    ctx = context_for_task(Workspace(repo.root), "make greet shout", budget=4000)
    evidence = ctx.text.split("[Evidence]\n", 1)[1]
    assert evidence.startswith("==> src/util/AGENTS.md:1-3 of 3 <==\n     1\t# util notes\n")
    assert evidence.index("src/util/AGENTS.md") < evidence.index("src/util/helpers.py")
    assert "[Instructions]" in ctx.text and "src/util/AGENTS.md" not in ctx.text.split("[Output]")[0]  # never in the prefix


def test_files_with_keywords_in_their_path_are_read_first(repo):
    for i in range(30):
        repo.write(f"aaa/noise{i:02d}.txt", "greet greet greet\n" * 5)
    ctx = context_for_task(Workspace(repo.root), "greet helpers", budget=6000)
    evidence = ctx.text.split("[Evidence]\n", 1)[1]
    assert evidence.index("==> src/util/helpers.py:1-6") < evidence.index("aaa/noise")  # path hit beats match count


def test_context_reuses_the_sessions_preload_and_warns_of_stale_files(repo):
    """No re-render between refreshes: same prefix, same refresh arguments, stale reports kept."""
    ws = Workspace(repo.root)
    pre = ws.preload("src", budget=4000)
    args = dict(ws._preload_args)
    assert ws.last_preload is pre
    repo.write("AGENTS.md", "# Agent notes\n\nA new rule.\n")
    ctx = context_for_task(ws, "make greet shout", budget=6000)
    assert ws._preload_args == args and ws.last_preload is pre
    instructions = ctx.text.split("[Instructions]\n", 1)[1].split("[Output]")[0]
    assert "Keep functions small." in instructions and "A new rule." not in instructions  # the prefix as rendered
    assert "preload: AGENTS.md changed since the prefix was rendered; refresh to re-render it" in ctx.warnings
    assert [(s["path"], s["kind"]) for s in ws.stale() if s["kind"] == "preload"] == [("AGENTS.md", "preload")]  # not settled
    again = context_for_task(ws, "make greet shout", budget=6000)
    assert again.prefix_hash == ctx.prefix_hash
    ws.refresh()
    fresh = context_for_task(ws, "make greet shout", budget=6000)
    assert "A new rule." in fresh.text and not any("since the prefix was rendered" in w for w in fresh.warnings)


def test_context_preloads_once_when_the_session_has_none(repo):
    ws = Workspace(repo.root)
    assert ws.last_preload is None
    context_for_task(ws, "make greet shout", budget=6000)
    first = ws.last_preload
    assert first is not None
    context_for_task(ws, "make greet shout", budget=6000)
    assert ws.last_preload is first


def test_cli_context_preloads_the_working_directorys_chain(repo, monkeypatch, capsys):
    """Like `jitctx preload`: run from src/util, the prefix holds src/util/AGENTS.md."""
    monkeypatch.chdir(repo.root / "src" / "util")
    code = cli.main(["context", "--task", "make greet shout", "--root", str(repo.root), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0
    instructions = d["text"].split("[Instructions]\n", 1)[1].split("[Output]")[0]
    assert "Keep functions small." in instructions and "Helpers here must stay pure" in instructions
    assert instructions == Workspace(repo.root).preload("src/util").text + "\n"
