"""Instruction-file picking, loading and line cutting (pure parts with a fake tokenizer)."""

from __future__ import annotations

import os

import pytest

from jitctx import instructions as ins
from jitctx.errors import QueryError


class WordTokenizer:
    """One token per whitespace-separated word; records the longest text counted."""

    name = "words"

    def __init__(self) -> None:
        self.longest = 0
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        self.longest = max(self.longest, len(text))
        return len(text.split())

    def truncate(self, text: str, n: int) -> str:  # pragma: no cover - unused
        return " ".join(text.split()[:n])


def render_with(lines):
    return lambda k: "".join(line + "\n" for line in lines[:k]) + f"[cut at {k}]\n"


def test_cut_lines_keeps_the_most_whole_lines_that_fit():
    lines = tuple(f"w{i} x y" for i in range(100))  # 3 tokens a line, marker 3 tokens
    tok = WordTokenizer()
    assert ins.cut_lines(tok, lines, 33, render_with(lines)) == 10
    assert ins.cut_lines(tok, lines, 35, render_with(lines)) == 10
    assert ins.cut_lines(tok, lines, 36, render_with(lines)) == 11
    assert ins.cut_lines(tok, lines, 2, render_with(lines)) is None
    assert ins.cut_lines(tok, lines, 3, render_with(lines)) == 0
    assert ins.cut_lines(tok, lines, 10_000, render_with(lines)) == 100


def test_cut_lines_on_a_huge_input_counts_only_text_near_the_fit():
    lines = tuple(f"line {i} of many" for i in range(200_000))
    tok = WordTokenizer()
    k = ins.cut_lines(tok, lines, 400, render_with(lines))
    assert k == 99  # 4 tokens a line, 3 for the marker
    assert tok.longest < 20_000 and tok.calls < 40


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
    pick = ins.pick_instruction(tmp_path, ".", ("CLAUDE.md", "GEMINI.md"), 8000, near_misses=True)
    assert pick.chosen.path == "CLAUDE.md" and pick.chosen.loaded.lines == ("claude",)
    assert [(s.path, s.reason) for s in pick.skipped] == [("AGENTS.override.md", "empty"), ("AGENTS.md", "empty")]
    assert len(pick.warnings) == 2
    assert ins.pick_instruction(tmp_path, ".", (), 8000).chosen is None


def test_load_reads_a_huge_file_only_partly_and_whole_lines_only(tmp_path):
    p = tmp_path / "big.md"
    line = b"0123456789 abcdefghij \xc3\xa9\n"  # a two-byte char near every line end
    with open(p, "wb") as f:
        f.write(line * (ins.FULL_READ // len(line) + 1000))
    loaded = ins.load(p, os.stat(p), 100)
    assert not loaded.complete and loaded.blob is None and not loaded.replaced
    assert len(loaded.lines) == 256 * 1024 // len(line)
    assert set(loaded.lines) == {line[:-1].decode()}
    small = tmp_path / "s.md"
    small.write_bytes(b"a\r\nb\r\n\r\n\r\n")
    s = ins.load(small, os.stat(small), 100)
    assert (s.lines, s.complete, s.text) == (("a", "b"), True, "a\nb\n")
    assert s.blob == "08fafd0c22a01026101c637e3f4349ca50737c78"  # git hash-object of the bytes
