"""What a session says is true of the bytes (issue 29): each case the issue found, pinned.

Redaction holds in diffs and re-reads, compaction's "still current" judges the
placeholder's own content and its fetch-again call returns the text, a diff only
stands in for lines the caller was shown, a read of a file changed since any
earlier delivery says so, the lines and the hash come from one read, a head of a
file over 8 MiB renders, a hard link to a denied file answers nothing, turns count
calls, ``context --task`` reports staleness, ``head --symbol`` says what it did.
"""

from __future__ import annotations

from jitctx import Workspace
from jitctx.render import render_text


def test_issue_29_head_of_a_file_over_8_mib_renders(make_repo, capsys):
    from jitctx.adapters.cli import main
    from jitctx.tools import dispatch

    repo = make_repo("basic")
    repo.write("huge.txt", "".join(f"row {i}\n" for i in range(1, 1_000_001)))  # ~10 MB
    with Workspace(repo.root) as w:
        for call in (lambda: w.head("huge.txt", n=3), lambda: w.head("huge.txt", n=3, force=True)):
            text = render_text(call())
            assert "==> huge.txt (lines 1-3, total not counted," in text and "     3\trow 3" in text
        out = dispatch("head", {"path": "huge.txt", "n": 2}, workspace=w)
        assert not out.is_error and "     2\trow 2" in out.text
    assert main(["head", "huge.txt", "-n", "2", "--root", str(repo.root)]) == 0
    assert "     2\trow 2" in capsys.readouterr().out


def test_issue_29_a_head_inside_a_key_block_redacts_it_although_begin_is_not_shown(make_repo):
    repo = make_repo("basic")
    body = "".join(f"{'QUJD' * 16}{i:04d}\n" for i in range(8))
    repo.write("keys.txt", "intro\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\nafter\n")
    for w in (Workspace(repo.root), Workspace(repo.root, record=False)):
        with w:
            res = w.head("keys.txt", start=4, n=3)  # body lines only: neither BEGIN nor END shown
            text = render_text(res)
            assert "QUJD" not in text and text.count("[redacted: private key]") == 3
            assert "secret(s) (private key) redacted in keys.txt at line(s) 4" in res.notice
