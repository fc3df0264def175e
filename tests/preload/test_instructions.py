"""Instruction-file picking and loading."""

from __future__ import annotations

import os

import pytest

from jitctx.errors import QueryError
from jitctx.preload import instructions as ins
from jitctx.repo.policy import Opener


def test_check_fallbacks():
    assert ins.check_fallbacks(["CLAUDE.md", "CLAUDE.md", "X.md"]) == ("CLAUDE.md", "X.md")
    assert ins.check_fallbacks([]) == ()
    for bad in ("CLAUDE.md", [".."], ["a/b.md"], [""], [3], None):
        with pytest.raises(QueryError):
            ins.check_fallbacks(bad)


def test_pick_precedence_and_skips(tmp_path):
    (tmp_path / "AGENTS.override.md").write_text("")
    (tmp_path / "AGENTS.md").write_text("\n \n")
    (tmp_path / "CLAUDE.md").write_text("claude\n")
    (tmp_path / "GEMINI.md").write_text("gemini\n")
    pick = ins.pick_instruction(Opener(tmp_path), ".", ("CLAUDE.md", "GEMINI.md"), 8000, near_misses=True)
    assert pick.chosen.path == "CLAUDE.md" and pick.chosen.loaded.lines == ("claude",)
    assert [(s.path, s.reason) for s in pick.skipped] == [("AGENTS.override.md", "empty"), ("AGENTS.md", "empty")]
    assert len(pick.warnings) == 2
    assert ins.pick_instruction(Opener(tmp_path), ".", (), 8000).chosen is None


def test_load_reads_a_huge_file_only_partly_and_whole_lines_only(tmp_path):
    p = tmp_path / "big.md"
    line = b"0123456789 abcdefghij \xc3\xa9\n"  # a two-byte char near every line end
    with open(p, "wb") as f:
        f.write(line * (ins.FULL_READ // len(line) + 1000))
    loaded = ins.load(Opener(tmp_path), "big.md", os.stat(p), 100)
    assert not loaded.complete and loaded.blob is None and not loaded.replaced
    assert len(loaded.lines) == 256 * 1024 // len(line)
    assert set(loaded.lines) == {line[:-1].decode()}
    small = tmp_path / "s.md"
    small.write_bytes(b"a\r\nb\r\n\r\n\r\n")
    s = ins.load(Opener(tmp_path), "s.md", os.stat(small), 100)
    assert (s.lines, s.complete, s.text) == (("a", "b"), True, "a\nb\n")
    assert s.blob == "08fafd0c22a01026101c637e3f4349ca50737c78"  # git hash-object of the bytes


def test_a_symlink_out_of_the_root_is_skipped_with_a_warning(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("outside secret\n")
    (root / "AGENTS.md").symlink_to(tmp_path / "secret.txt")
    (root / "CLAUDE.md").write_text("claude\n")
    pick = ins.pick_instruction(Opener(root), ".", ("CLAUDE.md",), 8000)
    assert pick.chosen.path == "CLAUDE.md"
    assert [(s.path, s.reason) for s in pick.skipped] == [("AGENTS.md", "outside_root")]
    assert pick.warnings == ("AGENTS.md is a symlink to a file outside the root; skipped, as head refuses it",)
