"""Rules from every agent's format (issue 34): the model, the prefix and the
just-in-time deliveries on the Python API, sessions, re-delivery, the setting."""

from __future__ import annotations

import hashlib
import subprocess

import pytest
from rules_table import CALLS, FILES, FIXTURES, PREFIX, delivered

from jitctx.errors import QueryError
from jitctx.preload import formats as rules
from jitctx.session.workspace import Workspace


@pytest.mark.parametrize("name", FIXTURES)
def test_issue_34_prefix_matches_the_table(make_repo, name):
    r = make_repo(name)
    p = Workspace(r.root).preload()
    assert p.text == PREFIX[name]
    assert p.tokens <= p.budget and p.prefix_hash == hashlib.sha256(p.text.encode()).hexdigest()
    if name in FILES:
        assert [(f.path, f.reason) for f in p.files] == FILES[name]


@pytest.mark.parametrize(("name", "tool", "args", "want"), CALLS, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CALLS)])
def test_issue_34_just_in_time_matches_the_table_and_comes_once(make_repo, name, tool, args, want):
    ws = Workspace(make_repo(name).root)
    res = getattr(ws, tool)(**args)
    assert delivered(res.instructions) == want
    again = getattr(ws, tool)(**args)
    assert again.instructions == []  # once per session
    for i in res.instructions:
        assert "rule" in i or "dir" in i
        if "rule" in i:  # a rule's content is its text without front matter
            assert i["rule"]["matched"] in [getattr(x, "path", None) for x in res.results] or tool in ("head", "tail", "locate")
            assert not (i.get("content") or "").startswith("---")


def test_issue_34_the_prefix_is_byte_stable_across_clones(make_repo, tmp_path):
    one = make_repo("rules_all")
    two = tmp_path / "elsewhere" / "clone"
    subprocess.run(["git", "clone", "-q", str(one.root), str(two)], check=True)
    a, b = Workspace(one.root).preload(), Workspace(two).preload()
    assert a.text == b.text == PREFIX["rules_all"] and a.prefix_hash == b.prefix_hash


def test_issue_34_a_rule_in_the_prefix_is_not_delivered_again_and_a_changed_rule_is(make_repo):
    r = make_repo("rules_all")
    ws = Workspace(r.root)
    ws.preload()
    first = ws.head("svc/api.py")
    assert [i["path"] for i in first.instructions] == ["svc/GEMINI.md", ".claude/rules/py.md", ".github/instructions/svc.instructions.md"]
    assert ws.head("svc/api.py", force=True).instructions == []
    r.write(".claude/rules/py.md", '---\npaths:\n  - "**/*.py"\n---\n# Python\n\nFormat with ruff; type-check with mypy.\n')
    again = ws.glob("svc/*")
    assert [(i["path"], i["rule"]["matched"]) for i in again.instructions] == [(".claude/rules/py.md", "svc/api.py")]
    content = ws.head("svc/api.py", force=True).instructions
    assert content == []  # delivered with its new text once: not again
    # a rule changed back to a text the session was given already is not repeated
    r.write(".claude/rules/py.md", '---\npaths:\n  - "**/*.py"\n---\n# Python\n\nFormat with ruff.\n')
    assert ws.glob("svc/*").instructions == []


def test_issue_34_reading_a_rule_file_marks_it_delivered(make_repo):
    ws = Workspace(make_repo("rules_cline").root)
    ws.head(".clinerules/02-tests.md")
    assert ws.head("tests/test_x.py").instructions == []


def test_issue_34_a_rule_met_with_content_is_cut_with_a_marker_naming_file_lines(make_repo, monkeypatch):
    import jitctx.preload.nested

    r = make_repo("rules_cline")
    r.write(".clinerules/02-tests.md", '---\npaths: ["tests/**"]\n---\n' + "".join(f"- test rule {i}: keep tests fast and independent.\n" for i in range(400)))
    monkeypatch.setattr(jitctx.preload.nested, "NESTED_TOKENS", 200)
    (i,) = Workspace(r.root).head("tests/test_x.py").instructions
    assert i["truncated"] and i["tokens"] <= 200
    last = i["content"].rstrip("\n").split("\n")[-1]
    k = len(i["content"].split("\n")) - 2  # body lines kept
    assert last == f"[… .clinerules/02-tests.md cut to 200 tokens: kept lines 4-{k + 3} of 403; read on with head path=.clinerules/02-tests.md start={k + 4}]"


# -- the formats setting ------------------------------------------------------------------


def test_issue_34_formats_setting_chooses_what_is_read(make_repo):
    r = make_repo("rules_all")
    only_cursor = Workspace(r.root, formats="cursor")
    p = only_cursor.preload()
    assert p.text.startswith("==> .cursor/rules/always.mdc (Cursor rule, always applied) <==\n")
    assert "AGENTS.md" not in p.text and {x["format"] for x in p.to_dict()["rules"]} == {"cursor"}
    # the cursor copy of the python rule is the one read now
    assert [i["path"] for i in only_cursor.head("svc/api.py").instructions] == [".cursor/rules/py.mdc"]
    chain = Workspace(r.root, formats=["agents", "claude"])
    assert chain.preload().text.startswith("==> AGENTS.md (")
    assert [i["path"] for i in chain.head("svc/api.py").instructions] == [".claude/rules/py.md"]  # svc/GEMINI.md is gemini's
    none = Workspace(r.root, formats="none")
    assert none.preload().text.startswith("==> README.md (project README) <==") and none.head("svc/api.py").instructions == []
    everything = Workspace(r.root, formats="all")
    assert everything.preload().text == PREFIX["rules_all"]
    everything.set_formats("copilot")
    assert [i["path"] for i in everything.head("svc/api.py").instructions] == [".github/instructions/svc.instructions.md"]


def test_issue_34_formats_from_the_environment(make_repo, monkeypatch):
    monkeypatch.setenv("JITCTX_FORMATS", "windsurf")
    ws = Workspace(make_repo("rules_all").root)
    assert ws.preload().text.startswith("==> rules to read when they apply")
    assert Workspace(ws.root, formats="all").preload().text == PREFIX["rules_all"]


def test_issue_34_bad_formats_are_a_query_error_naming_the_value(make_repo):
    root = make_repo("rules_all").root
    for bad, named in (("cursor,vscode", "'vscode'"), (["agents", 3], "3"), (7, "7")):
        with pytest.raises(QueryError) as info:
            Workspace(root, formats=bad)
        assert named in info.value.message and "agents, claude" in (info.value.hint or "")
    assert rules.check_formats(" claude , agents ") == ("agents", "claude")
    assert rules.check_formats(None) == rules.check_formats("all") == rules.FORMATS and rules.check_formats("none") == ()


def test_issue_34_chain_fallbacks_follow_the_formats():
    assert rules.chain_fallbacks(("CLAUDE.md", "GEMINI.md", "NOTES.md"), ("agents", "gemini")) == ("GEMINI.md", "NOTES.md")
    assert rules.chain_fallbacks(("CLAUDE.md",), rules.FORMATS) == ("CLAUDE.md",)


# -- the model -------------------------------------------------------------------------------


def test_issue_34_scopes_per_format(make_repo):
    root = make_repo("rules_all").root
    ws = Workspace(root)
    found = rules.find_rules(ws.policy, rules.FORMATS)
    assert [(r.path, r.format, r.scope, r.globs) for r in found.rules] == [
        (".claude/rules/py.md", "claude", "path", ("**/*.py",)),
        (".cursor/rules/always.mdc", "cursor", "always", ()),
        (".cursor/rules/py.mdc", "cursor", "path", ("**/*.py",)),
        (".github/copilot-instructions.md", "copilot", "always", ()),
        (".github/instructions/svc.instructions.md", "copilot", "path", ("svc/**",)),
        (".windsurf/rules/security.md", "windsurf", "request", ()),
        (".clinerules", "cline", "always", ()),
    ]
    py, cursor_py = found.rules[0], found.rules[2]
    assert py.digest == cursor_py.digest and py.text == "# Python\n\nFormat with ruff.\n" and py.offset == 4
    assert py.matches("a/b/c.py") and py.matches("c.py") and not py.matches("c.pyi")


def test_issue_34_glob_meaning_per_format(tmp_path):
    # Claude Code and Copilot: '*.md' is the root's; Cursor, Windsurf, Cline: any depth
    (tmp_path / ".claude" / "rules").mkdir(parents=True)
    (tmp_path / ".claude" / "rules" / "a.md").write_text('---\npaths: "*.md"\n---\nclaude\n')
    (tmp_path / ".cursor" / "rules").mkdir(parents=True)
    (tmp_path / ".cursor" / "rules" / "a.mdc").write_text("---\nglobs: *.md\n---\ncursor\n")
    from jitctx.repo.policy import PathPolicy

    claude, cursor = rules.find_rules(PathPolicy(tmp_path), rules.FORMATS).rules
    assert claude.matches("README.md") and not claude.matches("docs/x.md")
    assert cursor.matches("README.md") and cursor.matches("docs/x.md")


def test_issue_34_text_digest_ignores_blank_lines_at_the_ends():
    from jitctx.preload.instructions import text_digest

    assert text_digest(["", "a", "b", "", ""]) == text_digest(["a", "b"]) != text_digest(["a", "", "b"])


# -- budget ----------------------------------------------------------------------------------


def test_issue_34_an_always_rule_is_cut_visibly_with_its_files_line_numbers(make_repo):
    r = make_repo("rules_cursor")
    body = "".join(f"- style point {i}: prefer early returns and small functions.\n" for i in range(300))
    r.write(".cursor/rules/style.mdc", "---\ndescription: House style\nalwaysApply: true\n---\n# House style\n\n" + body)
    ws = Workspace(r.root)
    p = ws.preload(budget=600)
    assert p.tokens <= 600
    (style,) = [f for f in p.files if f.path == ".cursor/rules/style.mdc"]
    assert style.reason == "cut" and style.truncated and style.format == "cursor"
    marker = next(line for line in p.text.splitlines() if line.startswith("[… .cursor/rules/style.mdc"))
    kept = int(marker.split("kept lines 5-")[1].split(" ")[0].replace(",", ""))
    assert marker == f"[… .cursor/rules/style.mdc cut to fit the preload budget: kept lines 5-{kept} of 306; read on with head path=.cursor/rules/style.mdc start={kept + 1}]"
    # the head call in the marker reads on exactly where the prefix stopped
    assert ws.head(".cursor/rules/style.mdc", start=kept + 1, n=1).results[0].content.startswith(body.splitlines()[kept - 6])
    assert any(w.startswith(".cursor/rules/style.mdc was cut to fit budget=600 tokens") for w in p.warnings)


def test_issue_34_when_labels_do_not_fit_the_list_goes_first_then_rules_then_imports(make_repo):
    r = make_repo("rules_all")
    ws = Workspace(r.root)
    full = ws.preload(readme_budget=0)
    sizes = {f.path: f.reason for f in full.files}
    assert sizes["AGENTS.md"] == sizes["docs/style.md"] == sizes[".cursor/rules/always.mdc"] == "included"
    tight = ws.preload(budget=full.tokens - 5, readme_budget=0)  # the list of rules on request no longer fits
    assert "rules to read when they apply" not in tight.text and ".cursor/rules/always.mdc" in tight.text
    assert any(w.startswith("the list of rules to read on request was left out of the prefix") for w in tight.warnings)
    reasons = {}
    for budget in range(tight.tokens, 0, -1):
        p = ws.preload(budget=budget, readme_budget=0)
        for f in p.files:
            if f.reason == "omitted":
                reasons.setdefault(f.path, budget)
    # omitted (even the label) in this order as the budget shrinks: the rule, the import, then AGENTS.md
    assert reasons[".cursor/rules/always.mdc"] > reasons["docs/style.md"] > reasons["AGENTS.md"]


def test_issue_34_context_brings_the_rules_of_what_it_located(make_repo):
    from jitctx.window.for_task import context_for_task

    ws = Workspace(make_repo("rules_all").root)
    ctx = context_for_task(ws, "where is serve defined", budget=6000)
    assert "Review comments are suggestions." in ctx.text  # the always rule, in the prefix
    assert "Services log JSON." in ctx.text and "Format with ruff." in ctx.text  # met just in time with the located file
    assert ctx.text.count("Format with ruff.") == 1  # the cursor copy of the python rule comes once


def test_issue_34_forget_makes_a_rule_due_again_even_with_the_same_text(make_repo):
    ws = Workspace(make_repo("rules_all").root)
    ws.glob("svc/*")
    ws.nested.forget([".claude/rules/py.md", "svc/GEMINI.md"])
    assert [i["path"] for i in ws.glob("svc/*").instructions] == ["svc/GEMINI.md", ".claude/rules/py.md"]
