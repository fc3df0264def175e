"""Redaction of unmistakable secrets: private-key blocks and well-known token formats."""

from jitctx import Workspace
from jitctx.text.redact import Finding, redact_lines, redact_text

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\nAAAAAAAAAAABAAAAMwAAAAtzc2gtZWQy\n-----END OPENSSH PRIVATE KEY-----\n"
GH = "ghp_" + "A1b2" * 9


def test_a_private_key_block_is_redacted_line_by_line():
    text, found = redact_text("before\n" + KEY + "after\n")
    assert text == "before\n" + "[redacted: private key]\n" * 4 + "after\n"
    assert found == [Finding(2, "private key")]


def test_a_block_entered_in_the_middle_is_still_redacted():
    body = KEY.split("\n")[1:4]  # head --start inside the block: no BEGIN line shown
    lines, found, _ = redact_lines(["code", *body])
    assert lines == ["code"] + ["[redacted: private key]"] * 3 and found == [Finding(2, "private key")]


def test_tokens_are_replaced_where_they_stand_and_ordinary_text_is_not():
    line = f'TOKEN = "{GH}"  # and AKIAABCDEFGHIJKLMNOP, xoxb-1234567890-abcdefghij'
    (out,), found, _ = redact_lines([line])
    assert GH not in out and "AKIAABCDEFGHIJKLMNOP" not in out and "xoxb-" not in out
    assert [f.what for f in found] == ["GitHub token", "AWS access key id", "Slack token"]
    plain = ["high ghost AKIA sk-learn task_live_x", "sha = 'da39a3ee5e6b4b0d3255bfef95601890afd80709'"]
    assert redact_lines(plain)[0] == plain and redact_lines(plain)[1] == []


def test_primitives_redact_with_a_notice_naming_path_and_line(repo):
    repo.write("config/settings.py", f'DEBUG = True\nGITHUB = "{GH}"\n')
    repo.write("docs/key.txt", "see below\n" + KEY)
    ws = Workspace(repo.root)
    head = ws.head("config/settings.py")
    assert GH not in head.results[0].content and "redacted in config/settings.py at line(s) 2" in head.notice
    grep = ws.grep("GITHUB|b3Blbn", mode="content", context=1)
    shown = str([r.to_dict() for r in grep.results])
    assert GH not in shown and "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU=" not in shown
    assert "redacted" in grep.notice
    tail = ws.tail("docs/key.txt", 3)
    assert "b3Blbn" not in tail.results[0].content


def test_an_instruction_file_holding_a_secret_is_redacted_in_the_prefix(repo):
    repo.write("AGENTS.md", f"# rules\nDeploy with {GH}\n")
    pre = Workspace(repo.root).preload()
    assert GH not in pre.text and "[redacted: GitHub token]" in pre.text
    assert any("redacted in AGENTS.md at line(s) 2" in w for w in pre.warnings)
