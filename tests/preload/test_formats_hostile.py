"""Rules and imports on a hostile repository (issue 34): links out, FIFOs, huge,
binary and denied rule files are skipped with a reason; imports stay inside
the root; hostile front matter hangs nothing. Never a byte from outside the
root or from a denied file, in the prefix or just in time."""

from __future__ import annotations

import os

import pytest

from jitctx.adapters import cli
from jitctx.session.workspace import Workspace

SECRET = "TOP-SECRET-CONTENT"


@pytest.fixture
def hostile(make_repo, tmp_path):
    r = make_repo("rules_all")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.mdc").write_text(f"---\nalwaysApply: true\n---\n{SECRET} file\n")
    (outside / "rules").mkdir()
    (outside / "rules" / "x.md").write_text(f"{SECRET} folder\n")
    rules = r.root / ".cursor" / "rules"
    (rules / "leak.mdc").symlink_to(outside / "leak.mdc")
    (r.root / ".claude" / "rules").rename(r.root / "claude-rules-moved")
    (r.root / ".claude" / "rules").symlink_to(outside / "rules")
    os.mkfifo(rules / "fifo.mdc")
    r.write(".cursor/rules/id_rsa.mdc", f"---\nalwaysApply: true\n---\n{SECRET} denied\n")
    r.write("keys/server.pem", f"{SECRET} pem\n")
    os.link(r.root / "keys" / "server.pem", rules / "hard.mdc")
    r.write(".clinerules-big/x", "")  # not a rule location: ignored
    r.write(".windsurf/rules/bin.md", b"---\ntrigger: always_on\n---\n\0" + SECRET.encode() + b" binary\n")
    r.write(".windsurf/rules/big.md", "---\ntrigger: always_on\n---\n" + ("big rule line\n" * 30_000))
    r.write(".windsurf/rules/yaml.md", "---\ntrigger: &t always_on\nglobs: !!python/object/apply:os.system ['false']\n---\nHostile front matter, plain body.\n")
    return r


def test_issue_34_hostile_rule_files_are_skipped_with_a_reason(hostile):
    ws = Workspace(hostile.root)
    p = ws.preload()
    assert SECRET not in p.text and SECRET not in "\n".join(p.warnings)
    reasons = {f.path: f.reason for f in p.files}
    assert reasons[".cursor/rules/leak.mdc"] == "outside_root"
    assert reasons[".cursor/rules/fifo.mdc"] == "not_a_file"
    assert reasons[".cursor/rules/id_rsa.mdc"] == "denied"
    assert reasons[".cursor/rules/hard.mdc"] == "denied"
    assert reasons[".windsurf/rules/bin.md"] == "binary"
    assert reasons[".windsurf/rules/big.md"] == "too_large"
    assert ".claude/rules is, or is under, a symlink to a folder or file outside the root; skipped, as head refuses it" in p.warnings
    assert any(w.startswith(".windsurf/rules/big.md is ") and "skipped unread" in w for w in p.warnings)
    # hostile front matter: the anchored trigger and the tagged globs are left out; with neither, a Windsurf rule always applies
    assert "Hostile front matter, plain body." in p.text
    assert any(w.startswith(".windsurf/rules/yaml.md: front matter line 2: trigger: anchors and tags") for w in p.warnings)
    # just in time: nothing from outside or denied either
    res = ws.glob("**")
    assert SECRET not in str(res.instructions)
    assert {f.get("format") for f in p.to_dict()["files"]} >= {"cursor", "windsurf"}


def test_issue_34_a_link_above_a_rule_folder_lists_no_outside_name(make_repo, tmp_path):
    r = make_repo("rules_cline")
    outside = tmp_path / "outside-cursor"
    (outside / "rules").mkdir(parents=True)
    (outside / "rules" / "outside-name-secret.mdc").write_text(f"---\nalwaysApply: true\n---\n{SECRET}\n")
    (r.root / ".cursor").symlink_to(outside)
    (r.root / ".github").symlink_to(outside)
    p = Workspace(r.root).preload()
    shown = p.text + "\n".join(p.warnings) + str(p.to_dict()["files"])
    assert SECRET not in shown and "outside-name-secret" not in shown and str(tmp_path) not in shown
    assert ".cursor/rules is, or is under, a symlink to a folder or file outside the root; skipped, as head refuses it" in p.warnings


def test_issue_34_hostile_repository_on_the_cli_never_a_traceback(hostile, capsys):
    for argv in (["preload"], ["glob", "**"], ["head", "svc/api.py"], ["preload", "--json"]):
        code = cli.main([*argv, "--root", str(hostile.root)])
        out, err = capsys.readouterr()
        assert code in (0, 1), err
        assert SECRET not in out and SECRET not in err and "Traceback" not in err


def test_issue_34_imports_stay_inside_the_root(make_repo, tmp_path):
    r = make_repo("rules_all")
    (tmp_path / "outside.md").write_text(f"{SECRET} outside\n")
    r.write(".env", f"TOKEN={SECRET}\n")
    r.write("docs/link.md", "")
    os.unlink(r.root / "docs" / "link.md")
    (r.root / "docs" / "link.md").symlink_to(tmp_path / "outside.md")
    r.write("a1.md", "one @a2.md\n")
    for i in range(2, 9):
        r.write(f"a{i}.md", f"level {i} @a{i + 1}.md\n")
    r.write("cycle.md", "back to @AGENTS.md and on to @a1.md\n")
    r.write(
        "AGENTS.md",
        "# Root\n\n@.env @.git/config @/etc/hostname @docs/link.md @../outside.md @~/x.md @docs @cycle.md\n```\n@docs/style.md in a fence is not an import\n```\n",
    )
    p = Workspace(r.root).preload()
    assert SECRET not in p.text and SECRET not in "\n".join(p.warnings)
    imported = [(f.path, f.reason, f.imported_by) for f in p.files if f.imported_by]
    assert imported == [
        (".env", "denied", "AGENTS.md"),
        ("cycle.md", "included", "AGENTS.md"),
        ("a1.md", "included", "cycle.md"),
        ("a2.md", "included", "a1.md"),
        ("a3.md", "included", "a2.md"),
        ("a4.md", "included", "a3.md"),
    ]  # five hops: a4 imports no further
    w = "\n".join(p.warnings)
    assert "AGENTS.md imports @docs/link.md: outside the root; skipped, as head refuses it" in w
    assert "AGENTS.md imports @.git/config: inside git's internals; skipped" in w
    assert "AGENTS.md imports @/etc/hostname: outside the root; skipped, as head refuses it" in w
    assert "AGENTS.md imports @../outside.md: outside the root; skipped, as head refuses it" in w
    assert "AGENTS.md imports @~/x.md: a file in the home folder, outside the root; skipped" in w
    assert "AGENTS.md imports @docs: a folder, not a file; skipped" in w
    assert "a4.md imports @a5.md: imports deeper than 5 levels are not followed" in w
    assert "docs/style.md" not in [f.path for f in p.files]  # the fenced one is no import; nothing else names it now
    assert str(tmp_path) not in p.text and str(tmp_path) not in w  # no absolute path anywhere


def test_issue_34_a_nested_files_imports_come_with_it_just_in_time(make_repo):
    r = make_repo("rules_all")
    r.write("svc/GEMINI.md", "# svc (Gemini)\n\nSee @notes/db.md and @../AGENTS.md\n")
    r.write("svc/notes/db.md", "The database is Postgres.\n")
    ws = Workspace(r.root)
    ws.preload()
    got = ws.head("svc/api.py").instructions
    assert [(i["path"], i.get("imported_by")) for i in got[:2]] == [("svc/GEMINI.md", None), ("svc/notes/db.md", "svc/GEMINI.md")]
    assert got[1]["content"] == "The database is Postgres.\n"
