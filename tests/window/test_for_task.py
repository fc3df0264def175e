"""A window for a task: located regions as evidence, what did not fit said in the text, the CLI."""

from __future__ import annotations

import json

import pytest
from fakes_assemble import FakePreload, FakeWorkspace

from jitctx.adapters import cli
from jitctx.errors import QueryError
from jitctx.locate.answer import FileHit
from jitctx.locate.regions import Region
from jitctx.refs import Result
from jitctx.session.workspace import Workspace
from jitctx.window.assemble import AssembleConfig
from jitctx.window.for_task import DEFAULT_SYSTEM, context_for_task

CFG = AssembleConfig(reserve_ratio=0, output="Reply briefly.")
PRELOAD = FakePreload("<!-- AGENTS.md -->\n# Agent notes\nRun make test.\n")
FILES = {
    "src/app.py": "".join(f"line {i} of app\n" for i in range(1, 41)),
    "src/util/helpers.py": "def greet(name):\n    return 'hello ' + name\n\n\ndef shout(name):\n    return greet(name).upper()\n",
}


def _hit(path, score, *regions, tokens=50):
    return FileHit(path, 100, 5.0, score, "source", ("terms: greet",), tuple(regions), tokens, 40)


def _region(path, a, b, symbol=None, tokens=10):
    return Region(path, a, b, "function" if symbol else "lines", symbol, "def greet(name):" if symbol else "line", tokens, 1.0, ("greet",))


LOCATED = Result(
    "locate",
    [
        _hit("src/util/helpers.py", 2.0, _region("src/util/helpers.py", 1, 2, "greet", 8), _region("src/util/helpers.py", 5, 6, "shout", 8)),
        _hit("src/app.py", 1.0, _region("src/app.py", 1, 30, None, 150)),
    ],
    total=2,
)


def _ws(**kw) -> FakeWorkspace:
    return FakeWorkspace(**{"preload": PRELOAD, "located": LOCATED, "files": FILES, **kw})


def test_context_for_task_whole_window():
    ws = _ws()
    ctx = context_for_task(ws, "Fix greet in helpers", 1000, config=CFG, system="Be careful.")
    assert ctx.text == (
        "[System]\nBe careful.\n\n"
        "[Instructions]\n<!-- AGENTS.md -->\n# Agent notes\nRun make test.\n\n"
        "[Output]\nReply briefly.\n\n"
        "[Evidence]\n"
        "==> src/util/helpers.py:1-2 of 6 greet (function); greet <==\n     1\tdef greet(name):\n     2\t    return 'hello ' + name\n"
        "==> src/util/helpers.py:5-6 of 6 shout (function); greet <==\n     5\tdef shout(name):\n     6\t    return greet(name).upper()\n"
        "==> src/app.py:1-30 of 40 lines; greet <==\n" + "".join(f"{i:>6}\tline {i} of app\n" for i in range(1, 31)) + "\n"
        "[Task]\nFix greet in helpers\n"
    )
    assert ws.calls == [
        ("preload",),
        ("locate", "Fix greet in helpers", 15),
        ("read_regions", "src/util/helpers.py", ((1, 2), (5, 6))),
        ("read_regions", "src/app.py", ((1, 30),)),
    ]
    assert ctx.warnings == () and ctx.evicted == () and ctx.located == 2


def test_what_did_not_fit_is_in_the_text():
    ctx = context_for_task(_ws(preload=FakePreload("")), "Fix greet in helpers", 200, config=CFG, system="Be careful.")
    assert ctx.tokens <= 200
    assert "==> src/util/helpers.py:1-2" in ctx.text and "==> src/app.py" not in ctx.text
    block = ctx.text.split("--- read next (not in this window) ---\n", 1)[1].split("\n\n")[0]
    assert block.splitlines() == ["head path=src/app.py start=1 n=30  # 150 tokens", "left out: 1 region (157 tokens) from 1 file"]  # tool syntax; the CLI shows flags
    assert ctx.text.index("[Evidence]") < ctx.text.index("[Context]") < ctx.text.index("[Task]")


def test_breadth_before_depth():
    """The best region of the next file is admitted before a file's second region."""
    located = Result(
        "locate",
        [
            _hit("src/util/helpers.py", 1.0, _region("src/util/helpers.py", 1, 2, "greet", 8), _region("src/util/helpers.py", 5, 6, "shout", 8)),
            _hit("src/app.py", 0.9, _region("src/app.py", 1, 2, None, 8)),
        ],
        total=2,
    )
    ctx = context_for_task(_ws(located=located, preload=FakePreload("")), "Fix greet", 80, config=CFG, system="Be careful.")
    assert "==> src/util/helpers.py:1-2" in ctx.text and "==> src/app.py:1-2" in ctx.text
    assert "==> src/util/helpers.py:5-6" not in ctx.text and "symbol=shout" in ctx.text


def test_no_hits_says_so():
    ctx = context_for_task(_ws(located=Result("locate", [], total=0)), "Fix greet", 1000, config=CFG)
    assert ctx.located == 0
    assert "no file matches the task's terms; nothing was located" in ctx.text
    assert ctx.to_dict()["located"] == 0


def test_tight_budget_cuts_the_preload_in_the_text():
    readme = "==> README.md (project README) <==\n" + "[![ci](https://x/badge.svg)](https://x)\n" * 5 + "".join(f"readme line {i} with words\n" for i in range(80))
    ctx = context_for_task(_ws(preload=FakePreload(readme)), "Fix greet", 400, config=CFG, system="Be careful.")
    instructions = ctx.text.split("[Instructions]\n", 1)[1].split("[Output]")[0]
    assert "badge.svg" not in instructions
    assert "[... preload cut to fit the budget: kept " in instructions and "print it whole with jitctx preload]" in instructions
    assert "preload: cut to " in ctx.text.split("[Context]", 1)[1] and "5 badge lines left out" in ctx.text
    assert "==> src/util/helpers.py:1-2" in ctx.text  # the evidence got its room
    assert ctx.tokens <= 400


def test_failing_preload_and_locate_are_warnings_and_the_rest_goes_on():
    ws = _ws(preload=RuntimeError("no preload yet"), located=RuntimeError("index broke"))
    ctx = context_for_task(ws, "Fix greet in helpers", 1000, config=CFG, system="Be careful.")
    assert ctx.warnings == ("source preload failed: RuntimeError: no preload yet", "evidence: locate failed: RuntimeError: index broke")
    assert [s.name for s in ctx.sections] == ["system", "output", "context", "task"]
    assert "the task could not be located" in ctx.text


def test_bad_task_errors_pass_through():
    ws = _ws(located=QueryError("the task has no words to search for", field="task"))
    with pytest.raises(QueryError, match="no words"):
        context_for_task(ws, "the and of", 1000, config=CFG)


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


# -- on a real repository ---------------------------------------------------------


def test_real_repo_window_finds_the_definition(repo):
    ctx = context_for_task(Workspace(repo.root), "make greet shout", budget=4000)
    evidence = ctx.text.split("[Evidence]\n", 1)[1]
    assert "==> src/util/helpers.py:" in evidence and "shout (function)" in evidence
    assert ctx.tokens <= 4000 and ctx.located >= 1


def test_nested_instructions_met_by_the_evidence_lead_it(repo):
    ctx = context_for_task(Workspace(repo.root), "make greet shout", budget=4000)
    evidence = ctx.text.split("[Evidence]\n", 1)[1]
    assert evidence.startswith("==> src/util/AGENTS.md:1-3 of 3 <==\n     1\t# util notes\n")
    assert "[Instructions]" in ctx.text and "src/util/AGENTS.md" not in ctx.text.split("[Output]")[0]  # never in the prefix


def test_context_reuses_the_sessions_preload_and_warns_of_stale_files(repo):
    """No re-render between refreshes: same prefix, same refresh arguments, stale reports kept."""
    ws = Workspace(repo.root)
    pre = ws.preload("src", budget=4000)
    args = dict(ws._preload_args)
    repo.write("AGENTS.md", "# Agent notes\n\nA new rule.\n")
    ctx = context_for_task(ws, "make greet shout", budget=6000)
    assert ws._preload_args == args and ws.last_preload is pre
    instructions = ctx.text.split("[Instructions]\n", 1)[1].split("[Output]")[0]
    assert "Keep functions small." in instructions and "A new rule." not in instructions
    assert "preload: AGENTS.md changed since the prefix was rendered; refresh to re-render it" in ctx.warnings
    ws.refresh()
    fresh = context_for_task(ws, "make greet shout", budget=6000)
    assert "A new rule." in fresh.text and not any("since the prefix was rendered" in w for w in fresh.warnings)


def test_context_preloads_once_when_the_session_has_none(repo):
    ws = Workspace(repo.root)
    context_for_task(ws, "make greet shout", budget=6000)
    first = ws.last_preload
    assert first is not None
    context_for_task(ws, "make greet shout", budget=6000)
    assert ws.last_preload is first


# -- CLI -------------------------------------------------------------------------


def test_cli_context_prints_the_window(repo, capsys):
    code = cli.main(["context", "--task", "make greet shout", "--root", str(repo.root)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert out.startswith(f"[System]\n{DEFAULT_SYSTEM}\n\n[Instructions]\n")
    assert "==> src/util/helpers.py:" in out
    assert out.endswith("[Task]\nmake greet shout\n")


def test_cli_context_json_is_the_report(repo, capsys):
    code = cli.main(["context", "--task", "make greet shout", "--budget", "3000", "--root", str(repo.root), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0
    assert list(d) == ["kind", "text", "tokens", "budget", "reserve", "available", "stable_tokens", "prefix_hash", "sections", "evicted", "cut", "warnings", "located", "stale"]
    assert (d["budget"], d["reserve"], d["available"]) == (3000, 300, 2700)
    tok = Workspace(repo.root).tokenizer
    assert d["tokens"] == tok.count(d["text"]) == sum(s["tokens"] for s in d["sections"]) <= 2700


def test_cli_context_no_hits_exits_1_and_says_so(repo, capsys):
    code = cli.main(["context", "--task", "zebra quagga", "--root", str(repo.root)])
    out, _ = capsys.readouterr()
    assert code == 1 and "no file matches the task's terms" in out


@pytest.mark.parametrize("task", ["", "the and of it", "!!! ???"])
def test_cli_context_bad_task_exits_2(repo, capsys, task):
    code = cli.main(["context", "--task", task, "--root", str(repo.root)])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("jitctx: error: ") and "hint: " in err


@pytest.mark.parametrize("budget", ["0", "-5"])
def test_cli_context_bad_budget(repo, capsys, budget):
    code = cli.main(["context", "--task", "x", "--budget", budget, "--root", str(repo.root)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err == f"jitctx: error: --budget must be at least 1, got {budget}\n  hint: pass --budget 1 or more\n"  # in CLI flags (issue 15)


def test_cli_context_budget_not_a_number(repo, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["context", "--task", "x", "--budget", "lots", "--root", str(repo.root)])
    assert exc.value.code == 2
    assert "invalid int value: 'lots'" in capsys.readouterr().err


def test_cli_context_protected_over_budget(repo, capsys):
    code = cli.main(["context", "--task", "make greet shout", "--budget", "20", "--root", str(repo.root)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("jitctx: error: protected sources (system, task, output) need ")


def test_cli_context_preloads_the_working_directorys_chain(repo, monkeypatch, capsys):
    """Like `jitctx preload`: run from src/util, the prefix holds src/util/AGENTS.md."""
    monkeypatch.chdir(repo.root / "src" / "util")
    code = cli.main(["context", "--task", "make greet shout", "--root", str(repo.root), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0
    instructions = d["text"].split("[Instructions]\n", 1)[1].split("[Output]")[0]
    assert "Keep functions small." in instructions and "Helpers here must stay pure" in instructions


def test_cli_locate(repo, capsys):
    code = cli.main(["locate", "--task", "make greet shout", "--root", str(repo.root), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["tool"] == "locate"
    top = d["results"][0]
    assert top["path"] == "src/util/helpers.py" and top["role"] == "source"
    assert {r["symbol"] for r in top["regions"]} >= {"shout"}
    assert all(isinstance(r["tokens"], int) for r in top["regions"])
    assert d["terms"] == {"greet": 1, "shout": 1} and "make" in d["dropped"]
    code = cli.main(["locate", "--task", "make greet shout", "--root", str(repo.root)])
    out = capsys.readouterr().out
    assert code == 0 and "\nsrc/util/helpers.py  " in out and "shout (function" in out


def test_cli_locate_no_hits_and_bad_task(repo, capsys):
    assert cli.main(["locate", "--task", "zebra quagga", "--root", str(repo.root)]) == 1
    assert "no file holds any of the task's terms" in capsys.readouterr().out
    assert cli.main(["locate", "--task", "the of and", "--root", str(repo.root)]) == 2
    assert "no words to search for" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:  # a usage error naming --task, with locate's usage (issue 33)
        cli.main(["locate", "--root", str(repo.root)])
    assert info.value.code == 2 and "jitctx locate: error: the following arguments are required: --task" in capsys.readouterr().err


def test_tight_budget_lists_fewer_calls_rather_than_none():
    regs = [_region("src/app.py", i * 3 + 1, i * 3 + 2, None, 8) for i in range(3)]
    helpers = (_region("src/util/helpers.py", 1, 2, "greet", 8), _region("src/util/helpers.py", 5, 6, "shout", 8))
    located = Result("locate", [_hit("src/app.py", 1.0, *regs), _hit("src/util/helpers.py", 0.5, *helpers)], total=2)
    ctx = context_for_task(_ws(located=located, preload=FakePreload("")), "Fix greet", 45, config=CFG, system="Be careful.")
    block = ctx.text.split("--- read next (not in this window) ---\n", 1)[1].split("\n\n")[0]
    assert block.splitlines() == ["head path=src/app.py start=1 n=2  # 8 tokens", "... and 4 more regions", "left out: 5 regions (82 tokens) from 2 files"]
    assert ctx.tokens <= 45


def test_a_region_too_big_for_the_window_is_shown_in_part_and_listed_whole():
    # a 400-line function (bat's build_app: 4,900 tokens at an 8,000 budget) was evicted
    # whole: its lines where the task's terms are come instead, its whole read call listed
    body = "".join(f"    step_{i} = configure(option_{i})\n" for i in range(1, 400))
    body = body.replace("    step_200 = configure(option_200)\n", "    step_200 = configure(wrap_mode)  # the wrap mode option\n")
    files = {"src/clap_app.py": "def build_app():\n" + body}
    big = _region("src/clap_app.py", 1, 400, "build_app", 4000)
    located = Result("locate", [_hit("src/clap_app.py", 2.0, big, tokens=4000)], total=1)
    located.extra = {"terms": {"wrap": 1, "mode": 1}}
    ws = _ws(files=files, located=located)
    ctx = context_for_task(ws, "Add a wrap mode option", 1200, config=CFG, system="")
    assert ctx.tokens <= 1200
    (label,) = [ln for ln in ctx.text.split("\n") if ln.startswith("==> src/clap_app.py")]
    assert "part of build_app (function): lines 1-400 are" in label
    assert "\t    step_200 = configure(wrap_mode)" in ctx.text  # the lines holding the task's words
    assert "head path=src/clap_app.py symbol=build_app" in ctx.text  # the whole, to read next
