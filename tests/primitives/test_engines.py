"""The shared grep suite: every case runs on both backends with the same expectations."""

from __future__ import annotations

import os

import pytest

from jitctx import PathError, QueryError, Workspace
from jitctx.primitives.engines import rg as rg_mod

MTIME = 1_700_000_000.0

BACKENDS = ["rg", "python"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    if request.param == "rg" and rg_mod.find_rg() is None:  # pragma: no cover - the wheel is a dependency
        pytest.skip("ripgrep binary not installed")
    return request.param


@pytest.fixture
def ws(repo):
    return Workspace(repo.root)


def grep(ws, backend, pattern, path=".", **kw):
    return ws.grep(pattern, path, backend=backend, **kw)


def files(res):
    return [(r.path, r.matches) for r in res.results]


def lines(res):
    return [(r.path, r.line, r.text) for r in res.results]


# -- files mode -----------------------------------------------------------------


def test_files_mode_lists_matching_files_by_path_with_counts(ws, backend):
    res = grep(ws, backend, "greet")
    assert [r.to_dict() for r in res.results] == [
        {"path": "docs/guide.md", "size": 36, "mtime": MTIME, "matches": 1},
        {"path": "src/app.py", "size": 151, "mtime": MTIME, "matches": 2},
        {"path": "src/util/helpers.py", "size": 119, "mtime": MTIME, "matches": 2},
    ]
    assert (res.total, res.truncated, res.notice) == (3, False, None)
    assert res.extra["backend"] == backend
    assert res.extra["matching_lines"] == 5


def test_hidden_files_are_searched_and_symlinks_not_followed(ws, backend):
    # .github/ is in the universe; text/link-to-app.py is a symlink (not followed, as git grep)
    got = files(grep(ws, backend, "make test"))
    assert got == [(".github/workflows/ci.yml", 1), ("AGENTS.md", 1)]
    assert "text/link-to-app.py" not in [p for p, _ in files(grep(ws, backend, "fixture application"))]


def test_count_mode_has_the_shape_of_files_mode(ws, backend):
    res = grep(ws, backend, "line", mode="count", path="text")
    assert files(res) == [("text/numbers.txt", 300), ("text/bom.txt", 1), ("text/latin1.txt", 1), ("text/nonl.txt", 1)]  # most first (issue 15)
    assert res.extra["matching_lines"] == 303


def test_files_mode_paging_names_the_next_offset(ws, backend):
    first = grep(ws, backend, "line", mode="files", path="text", limit=2)
    assert [p for p, _ in files(first)] == ["text/bom.txt", "text/latin1.txt"]
    assert first.truncated and first.total == 4
    assert first.notice == ("showing 1-2 of 4 files under text/ (by path); next page: offset=2; or narrow with path=... / glob=..., or raise limit.")
    second = grep(ws, backend, "line", mode="files", path="text", limit=2, offset=2)
    assert [p for p, _ in files(second)] == ["text/nonl.txt", "text/numbers.txt"]
    assert not second.truncated and second.notice is None


def test_offset_past_the_end_says_so(ws, backend):
    res = grep(ws, backend, "greet", offset=10)
    assert res.results == [] and res.total == 3
    assert res.notice == "offset=10 is past the end: 3 files matched in the repository; start again with offset=0."


# -- content mode -----------------------------------------------------------------


def test_content_mode_lines_with_context(ws, backend):
    res = grep(ws, backend, "greet", path="src/app.py", mode="content", context=1)
    assert [r.to_dict() for r in res.results] == [
        {
            "path": "src/app.py",
            "size": 151,
            "mtime": MTIME,
            "line": 3,
            "text": "from util.helpers import greet",
            "before": [{"line": 2, "text": ""}],
            "after": [{"line": 4, "text": ""}],
        },
        {
            "path": "src/app.py",
            "size": 151,
            "mtime": MTIME,
            "line": 7,
            "text": '    print(greet("world"))',
            "before": [{"line": 6, "text": "def main() -> None:"}],
            "after": [{"line": 8, "text": ""}],
            "symbol": "main",  # the innermost definition around the match (DESIGN 9)
        },
    ]


def test_close_matches_share_context_lines_once(ws, backend):
    res = grep(ws, backend, "^line (5|7)$", path="text/numbers.txt", mode="content", context=2)
    got = [(r.line, [c["line"] for c in r.before], [c["line"] for c in r.after]) for r in res.results]
    assert got == [(5, [3, 4], [6]), (7, [], [8, 9])]


def test_context_is_clipped_at_file_edges(ws, backend):
    res = grep(ws, backend, "^line (1|300)$", path="text/numbers.txt", mode="content", before=3, after=3)
    got = [(r.line, [c["line"] for c in r.before], [c["line"] for c in r.after]) for r in res.results]
    assert got == [(1, [], [2, 3, 4]), (300, [297, 298, 299], [])]


def test_content_paging_by_matching_lines(ws, backend):
    res = grep(ws, backend, "^line", path="text/numbers.txt", mode="content", limit=5, offset=5)
    assert [r.line for r in res.results] == [6, 7, 8, 9, 10]
    assert res.total == 300 and res.truncated
    assert "showing 6-10 of 300 matching lines in text/numbers.txt" in res.notice
    assert "next page: offset=10" in res.notice


def test_content_page_spanning_files(ws, backend):
    res = grep(ws, backend, "greet", mode="content", limit=2, offset=1)
    assert lines(res) == [("src/app.py", 3, "from util.helpers import greet"), ("src/app.py", 7, '    print(greet("world"))')]


def test_crlf_bom_latin1_and_no_final_newline(ws, backend):
    assert lines(grep(ws, backend, "second$", path="text/crlf.txt", mode="content")) == [("text/crlf.txt", 2, "second")]
    assert lines(grep(ws, backend, "^bom first", mode="content")) == [("text/bom.txt", 1, "bom first line")]
    assert lines(grep(ws, backend, "latin-1", mode="content")) == [("text/latin1.txt", 1, "caf\ufffd latin-1 text")]
    assert lines(grep(ws, backend, "at end$", mode="content")) == [("text/nonl.txt", 1, "no newline at end")]


def test_long_lines_show_a_window_around_the_match(ws, backend, repo):
    repo.write("min.js", "a" * 3000 + "NEEDLE" + "b" * 3000 + "\n")
    res = grep(ws, backend, "NEEDLE", mode="content")
    (hit,) = res.results
    assert hit.text.startswith("[… 2,836 chars] ") and hit.text.endswith(" [… 2,670 chars]")
    body = hit.text[len("[… 2,836 chars] ") : -len(" [… 2,670 chars]")]
    assert len(body) == 500 and "NEEDLE" in body
    edge = grep(ws, backend, "x{3}", mode="content").results[0]
    assert edge.text == "x" * 500 + " [… 4,500 chars]"


# -- what is searched ------------------------------------------------------------


def test_denied_content_never_appears_and_is_counted(ws, backend):
    res = grep(ws, backend, "secret")
    assert res.results == [] and res.total == 0
    assert res.extra["skipped"]["denied"] == 2
    assert "2 denied by policy" in res.notice  # rg: the tracked ones, from the listing it reads anyway
    allowed = grep(ws, backend, "API_TOKEN", mode="content")
    assert lines(allowed) == [(".env.example", 1, "API_TOKEN=changeme")]
    assert allowed.extra["skipped"]["denied"] == 2


def test_ignored_files_are_not_searched_unless_asked(ws, backend):
    res = grep(ws, backend, "built output")
    assert res.results == []
    # issue 16: counts where the search pass yields them (the python backend reads every
    # file), classes where a count would need another walk (rg walks the tree itself)
    assert (
        res.notice
        == {
            "python": "no matches for 'built output' in the repository: 20 tracked and untracked-not-ignored files searched; "
            "not searched: ignored files (include_ignored=true widens), 0 binary files containing the pattern, 2 denied by policy.",
            "rg": "no matches for 'built output' in the repository: searched the tracked and untracked-not-ignored files; "
            "not searched: ignored files (include_ignored=true widens), binary files (a NUL byte in the text), "
            "2 denied by policy (tracked; untracked ones not counted).",
        }[backend]
    )
    assert res.extra["skipped"] == {"binary": {"python": 0, "rg": None}[backend], "denied": 2, "ignored": None, "unreadable": 0}
    wide = grep(ws, backend, "built output", include_ignored=True)
    assert files(wide) == [("build/out.txt", 1)]


def test_tracked_file_matching_an_ignore_rule_is_searched(ws, backend, repo):
    repo.git("add", "-f", "debug.log")
    assert files(grep(ws, backend, "debug line")) == [("debug.log", 1)]


def test_binary_files_are_skipped_and_counted(ws, backend):
    res = grep(ws, backend, "binary")
    assert res.results == []
    if backend == "python":  # it reads every file: the count comes with the pass
        assert res.extra["skipped"]["binary"] == 1
        assert "1 binary file containing the pattern" in res.notice
    else:  # rg skips them in its walk; counting them took a second pass (issue 16: a class)
        assert res.extra["skipped"]["binary"] is None
        assert "binary files (a NUL byte in the text)" in res.notice


def test_untracked_files_are_searched(ws, backend, repo):
    repo.write("notes/todo.txt", "remember the milk\n")
    assert files(grep(ws, backend, "milk")) == [("notes/todo.txt", 1)]


def test_non_utf8_path_and_line(ws, backend, repo):
    name = os.fsdecode(b"caf\xe9.txt")
    (repo.root / name).write_bytes(b"caf\xe9 needle\n")
    res = grep(ws, backend, "needle", mode="content")
    assert lines(res) == [(name, 1, "caf\ufffd needle")]


# -- options ------------------------------------------------------------------------


def test_ignore_case_fixed_strings_and_globs(ws, backend):
    assert [p for p, _ in files(grep(ws, backend, "GREET", ignore_case=True))] == ["docs/guide.md", "src/app.py", "src/util/helpers.py"]
    assert files(grep(ws, backend, "greet(", fixed_strings=True)) == [("src/app.py", 1), ("src/util/helpers.py", 2)]
    assert files(grep(ws, backend, "greet", glob=["*.md"])) == [("docs/guide.md", 1)]
    assert files(grep(ws, backend, "greet", glob=["!docs/**"])) == [("src/app.py", 2), ("src/util/helpers.py", 2)]
    assert files(grep(ws, backend, "greet", "src", glob=["util/*.py"])) == [("src/util/helpers.py", 2)]


def test_multiline_matches_span_lines(ws, backend):
    res = grep(ws, backend, r"def main\(\) -> None:\n    print", multiline=True, mode="content")
    assert lines(res) == [("src/app.py", 6, "def main() -> None:"), ("src/app.py", 7, '    print(greet("world"))')]
    assert res.total == 2


def test_pattern_that_looks_like_an_option_is_searched_for(ws, backend, repo):
    repo.write("cli.txt", "use --files to list\n-v is verbose\n")
    assert files(grep(ws, backend, "--files")) == [("cli.txt", 1)]
    assert files(grep(ws, backend, "-v")) == [("cli.txt", 1)]


def test_path_that_is_a_file_searches_just_that_file(ws, backend):
    assert files(grep(ws, backend, "greet", "src/app.py")) == [("src/app.py", 2)]
    empty = grep(ws, backend, "nothing-here", "src/app.py")
    assert empty.notice == "no matches for 'nothing-here' in src/app.py."


# -- bad input -------------------------------------------------------------------------


def test_invalid_regex_names_pattern_position_and_backend(ws, backend):
    with pytest.raises(QueryError) as exc:
        grep(ws, backend, "(foo")
    assert exc.value.fields["pattern"] == "(foo"
    assert exc.value.fields["backend"] == backend
    assert exc.value.fields["position"] == 0
    assert f"invalid regex '(foo' at position 0 ({backend} backend)" in exc.value.message


def test_look_around_is_refused_by_both(ws, backend):
    with pytest.raises(QueryError) as exc:
        grep(ws, backend, "foo(?=bar)")
    assert "look-around" in exc.value.message and exc.value.fields["backend"] == backend


def test_path_outside_root_and_denied_file(ws, backend):
    with pytest.raises(PathError) as exc:
        grep(ws, backend, "x", "../")
    assert exc.value.reason == "outside_root"
    with pytest.raises(PathError) as exc:
        grep(ws, backend, "secret", ".env")
    assert exc.value.reason == "denied"


def test_file_vanishing_mid_search_is_skipped_and_reported(ws, backend, repo, monkeypatch):
    from jitctx.primitives import search

    real_pick = search.pick_backend

    def pick(name):
        b = real_pick(name)
        original = b.lines

        def lines_then_delete(scope, paths, upto):
            (repo.root / "src/app.py").unlink()
            return original(scope, paths, upto)

        b.lines = lines_then_delete
        return b

    monkeypatch.setattr(search, "pick_backend", pick)
    res = grep(ws, backend, "greet", mode="content")
    assert [r.path for r in res.results] == ["docs/guide.md", "src/util/helpers.py", "src/util/helpers.py"]
    assert res.extra["skipped_files"] == [{"path": "src/app.py", "reason": "vanished"}]
    assert "1 file(s) vanished or could not be read and were skipped: src/app.py." in res.notice


def test_outside_git_the_gitignore_files_still_apply(tmp_path, backend):
    (tmp_path / "proj" / "src").mkdir(parents=True)
    root = tmp_path / "proj"
    (root / ".gitignore").write_text("*.log\n")
    (root / "src" / "a.py").write_text("needle\n")
    (root / "run.log").write_text("needle\n")
    (root / ".hidden.txt").write_text("needle\n")
    ws = Workspace(root)
    assert not ws.repo.is_git
    assert files(grep(ws, backend, "needle")) == [(".hidden.txt", 1), ("src/a.py", 1)]
    assert files(grep(ws, backend, "needle", include_ignored=True)) == [(".hidden.txt", 1), ("run.log", 1), ("src/a.py", 1)]


def test_tracked_files_under_ignored_dirs_and_nested_rules_are_searched(ws, backend, repo):
    repo.write("src/.gitignore", "*.tmp\n")
    repo.write("src/keep.tmp", "needle\n")
    repo.write("src/drop.tmp", "needle\n")  # untracked and ignored: not searched
    repo.git("add", "-f", "src/keep.tmp", "build/out.txt")
    repo.git("add", "src/.gitignore")
    repo.write("build/out.txt", "needle\n")
    assert files(grep(ws, backend, "needle")) == [("build/out.txt", 1), ("src/keep.tmp", 1)]
    assert files(grep(ws, backend, "needle", "src")) == [("src/keep.tmp", 1)]
    assert files(grep(ws, backend, "needle", glob=["!*.tmp"])) == [("build/out.txt", 1)]


def test_excludes_file_and_info_exclude_rules_shape_discovery(ws, backend, repo, tmp_path):
    excludes = tmp_path / "global-ignore"
    excludes.write_text("*.secretish\n")
    repo.git("config", "core.excludesFile", str(excludes))
    (repo.root / ".git" / "info").mkdir(exist_ok=True)
    (repo.root / ".git" / "info" / "exclude").write_text("scratch/\n")
    repo.write("a.secretish", "needle\n")
    repo.write("b.secretish", "needle\n")
    repo.write("scratch/c.txt", "needle\n")
    repo.write("scratch/d.txt", "needle\n")
    repo.git("add", "-f", "a.secretish", "scratch/c.txt")
    assert files(grep(ws, backend, "needle")) == [("a.secretish", 1), ("scratch/c.txt", 1)]


def test_issue_3_an_ignored_directory_named_as_path_holds_only_its_tracked_files(ws, backend, repo):
    res = grep(ws, backend, "built", "build")
    assert res.results == [] and "not searched: ignored files (include_ignored=true widens)" in res.notice
    assert files(grep(ws, backend, "built", "build", include_ignored=True)) == [("build/out.txt", 1)]
    repo.git("add", "-f", "build/out.txt")
    assert files(grep(ws, backend, "built", "build")) == [("build/out.txt", 1)]


def test_bom_is_stripped_from_matching_lines(ws, backend):
    res = grep(ws, backend, "bom first", mode="content")
    assert [(r.path, r.line, r.text) for r in res.results] == [("text/bom.txt", 1, "bom first line")]


# -- issue 3 review fixes ---------------------------------------------------------------


def test_issue_3_denied_file_with_a_newline_in_its_name_is_never_searched(ws, backend, repo):
    (repo.root / "prod\nserver.key").write_text("PRIVATE KEY foo\n")
    (repo.root / "plain.txt").write_text("PRIVATE KEY bar\n")
    res = grep(ws, backend, "PRIVATE KEY", mode="content")
    assert lines(res) == [("plain.txt", 1, "PRIVATE KEY bar")]
    assert "foo" not in str([r.to_dict() for r in res.results])
    assert files(grep(ws, backend, "PRIVATE KEY foo")) == []


def test_issue_3_rg_post_check_drops_a_denied_file_with_a_newline_in_its_name(ws, repo, monkeypatch):
    if rg_mod.find_rg() is None:  # pragma: no cover - the wheel is a dependency
        pytest.skip("ripgrep binary not installed")
    monkeypatch.setattr(rg_mod, "deny_globs", lambda deny, allow: [])  # rg reads everything: the check must hold
    (repo.root / "prod\nserver.key").write_text("PRIVATE KEY foo\n")
    res = grep(ws, "rg", "PRIVATE KEY", mode="content")
    assert res.results == [] and res.total == 0


def test_issue_3_a_matching_line_is_never_context_at_page_edges(ws, backend, repo):
    repo.write("edge.txt", "foo1\nfoo2\nfoo3\nbar\n")
    first = grep(ws, backend, "foo", "edge.txt", mode="content", limit=2, after=1)
    assert [(r.line, r.after) for r in first.results] == [(1, ()), (2, ())]
    second = grep(ws, backend, "foo", "edge.txt", mode="content", limit=2, offset=1, before=1, after=1)
    assert [(r.line, r.before, r.after) for r in second.results] == [(2, (), ()), (3, (), ({"line": 4, "text": "bar"},))]


def test_issue_3_root_below_the_git_top_searches_tracked_files_a_top_rule_ignores(backend, repo):
    repo.write(".gitignore", "*.log\nbuild/\n")
    repo.write("pkg/tracked.log", "needle tracked\n")
    repo.write("pkg/loose.log", "needle loose\n")  # untracked and ignored: not searched
    repo.write("pkg/a.txt", "needle a\n")
    repo.git("add", ".gitignore", "pkg/a.txt")
    repo.git("add", "-f", "pkg/tracked.log")
    sub = Workspace(repo.root / "pkg")
    assert files(grep(sub, backend, "needle")) == [("a.txt", 1), ("tracked.log", 1)]


def test_issue_3_invalid_utf8_in_a_shown_line_is_noticed(ws, backend, repo):
    (repo.root / "bad.txt").write_bytes(b"ok needle\ncaf\xe9 needle\nbefore \xff\nneedle three\n")
    (repo.root / "good.txt").write_bytes("caf\ufffd genuine needle\n".encode())
    res = grep(ws, backend, "needle", "bad.txt", mode="content")
    assert lines(res) == [("bad.txt", 1, "ok needle"), ("bad.txt", 2, "caf\ufffd needle"), ("bad.txt", 4, "needle three")]
    assert "invalid UTF-8 was replaced with U+FFFD in 1 shown line(s) or their context: bad.txt:2." in res.notice
    ctx = grep(ws, backend, "three", "bad.txt", mode="content", before=1)
    assert [(r.line, r.before) for r in ctx.results] == [(4, ({"line": 3, "text": "before \ufffd"},))]
    assert "in 1 shown line(s) or their context: bad.txt:4." in ctx.notice
    clean = grep(ws, backend, "needle", "bad.txt", mode="content", limit=1)
    assert "invalid UTF-8" not in (clean.notice or "")
    genuine = grep(ws, backend, "genuine", mode="content")
    assert "invalid UTF-8" not in (genuine.notice or "")


@pytest.mark.parametrize("path", [".", "src"])
def test_issue_3_an_empty_grep_asks_git_each_question_once(ws, backend, path, monkeypatch):
    import subprocess

    calls: list[list[str]] = []
    real = subprocess.Popen

    class Spy(real):  # subprocess.run goes through Popen too
        def __init__(self, args, *a, **kw):
            calls.append([str(x) for x in args])
            super().__init__(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", Spy)
    res = grep(ws, backend, "no-such-text-anywhere", path)
    assert res.results == [] and "not searched:" in res.notice
    assert sum("check-ignore" in c for c in calls) <= (path != ".")
    assert sum("--cached" in c for c in calls) == 1
    walks = [c for c in calls if "--others" in c]
    assert len(walks) <= 4 and len({tuple(c) for c in walks}) == len(walks)  # each untracked walk once
    assert len(calls) <= {"rg": 7, "python": 5}[backend]
    if backend == "rg":  # issue 16: an empty grep costs no extra walk (no git walk, no second rg pass)
        assert walks == [] and sum(c[0].endswith("rg") for c in calls) == 1


def test_issue_3_a_lone_carriage_return_never_appears(repo, ws, backend):
    repo.write("cr.txt", b"one\rtwo target\rthree\nctx line\r\n")
    res = grep(ws, backend, "target", "cr.txt", mode="content", after=1)
    assert [(r.line, r.text, r.after) for r in res.results] == [(1, "one\u240dtwo target\u240dthree", ({"line": 2, "text": "ctx line"},))]


def test_a_tracked_file_whose_name_starts_with_a_colon_and_is_ignored_is_searched(ws, backend, repo):
    repo.write(".gitignore", (repo.root / ".gitignore").read_text() + ":*.txt\n")
    repo.write(":kept.txt", "needle\n")
    repo.git("add", "-f", "./:kept.txt")
    repo.write(":loose.txt", "needle\n")  # untracked and ignored: not searched
    assert files(grep(ws, backend, "needle")) == [(":kept.txt", 1)]


def test_issue_12_grep_leaves_no_temporary_file_in_tmpdir_or_the_tree(repo, backend, monkeypatch, tmp_path):
    inside = repo.root / "tmp"
    inside.mkdir()
    monkeypatch.setenv("TMPDIR", str(inside))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    ws = Workspace(repo.root)
    for mode in ("files", "content", "count"):
        grep(ws, backend, "greet", mode=mode)
    grep(ws, backend, "no-such-text")
    assert list(inside.iterdir()) == []
    assert not any(p.name.startswith("jitctx-") for p in repo.root.rglob("*"))


def test_issue_15_a_named_ignored_file_is_flagged_in_every_mode(ws, backend):
    """head and tail flag a named ignored file; grep did so in files mode only."""
    content = ws.grep("debug", "debug.log", mode="content", backend=backend)
    assert [r.to_dict().get("ignored") for r in content.results] == [True]
    assert "debug.log is ignored by git" in content.notice
    assert [r.ignored for r in ws.grep("debug", "debug.log", mode="files", backend=backend).results] == [True]
    assert not any(r.to_dict().get("ignored") for r in ws.grep("def", "src/app.py", mode="content", backend=backend).results)


def test_issue_16_tracked_files_under_ignore_rules_are_found_as_git_finds_them(ws, backend, repo):
    """rgwalk's cheap superset (anchored heads by bisection, components by
    shape) must never miss a tracked file git's own rules ignore."""
    import subprocess

    rules = {
        ".gitignore": "*.[ao]\n*~\n/top/*/deep/\n**/pkg/build/\n[Bb]in/\n\\#hash*\nlogs/**/*.log\nexact-name\n",
        "sub/.gitignore": "*\n!.gitignore\n",
        "curlish/src/.gitignore": "curlish\n*.patch\n",
        "a/b/.gitignore": "/c/*_bench\n",
    }
    tracked = [
        "x.o",
        "lib/y.a",
        "notes.txt~",
        "top/one/deep/f.c",
        "top/deep/kept.c",
        "w/pkg/build/z.c",
        "w/pkg/keep.c",
        "Bin/tool",
        "q/bin/tool2",
        "#hash1",
        "logs/2024/a.log",
        "logs/a.txt",
        "d/exact-name",
        "exact-name-not",
        "sub/anything.c",
        "curlish/src/curlish",
        "curlish/src/main.c",
        "curlish/docs/x.patch",
        "curlish/src/y.patch",
        "a/b/c/x_bench",
        "a/b/c/x_test",
        "a/c/y_bench",
    ]
    for path, text in rules.items():
        repo.write(path, text)
    for path in tracked:
        repo.write(path, "needle\n")
    repo.git("add", "-f", *rules, *tracked)
    repo.git("commit", "-qm", "tracked despite the rules")
    truth = subprocess.run(["git", "ls-files", "--cached", "--ignored", "--exclude-standard"], cwd=repo.root, capture_output=True, text=True, check=True).stdout.split()
    assert set(truth) >= {"x.o", "top/one/deep/f.c", "w/pkg/build/z.c", "curlish/src/curlish", "a/b/c/x_bench", "sub/anything.c"}
    found = {r.path for r in grep(ws, backend, "needle", limit=1000).results}
    assert set(tracked) <= found  # every tracked file is searched, ignored by a rule or not


def test_issue_15_context_lines_imply_content_mode(ws, backend):
    res = ws.grep("def greet", context=1, backend=backend)
    assert res.results and all(hasattr(r, "line") for r in res.results)
    assert ws.grep("def greet", before=1, mode="files", backend=backend).results[0].matches  # an explicit mode wins


def test_issue_15_count_mode_sorts_by_count_and_says_so(ws, backend, repo):
    repo.write("many.txt", "zz\nzz\nzz\n")
    repo.write("a_one.txt", "zz\n")
    res = ws.grep("zz", mode="count", backend=backend)
    assert [(r.path, r.matches) for r in res.results] == [("many.txt", 3), ("a_one.txt", 1)]
    assert "most matches first" in res.notice
    paged = ws.grep("zz", mode="count", limit=1, backend=backend)
    assert [r.path for r in paged.results] == ["many.txt"] and "most matches first" in paged.notice


def test_issue_16_the_remembered_answer_follows_the_ignore_files_and_the_index(ws, backend, repo):
    repo.write("keep/a.c", "needle\n")
    repo.write("keep/b.c", "needle\n")
    repo.git("add", "keep")
    repo.git("commit", "-qm", "two files")
    assert files(grep(ws, backend, "needle", "keep")) == [("keep/a.c", 1), ("keep/b.c", 1)]
    repo.write("keep/.gitignore", "a.c\n")  # an ignore rule now matches a tracked file
    repo.git("add", "keep/.gitignore")  # (rules in an untracked .gitignore: docs/design.md, known differences)
    assert files(grep(ws, backend, "needle", "keep")) == [("keep/a.c", 1), ("keep/b.c", 1)]
    repo.write("keep/.gitignore", "a.c\nb.c\n")  # the same index, another rule file
    assert files(grep(ws, backend, "needle", "keep")) == [("keep/a.c", 1), ("keep/b.c", 1)]
    assert files(grep(ws, backend, "needle", "keep")) == [("keep/a.c", 1), ("keep/b.c", 1)]  # from the remembered answer


def test_rg_skips_only_the_deny_globs_that_mean_the_same_to_it_and_no_allow_rescues():
    from jitctx.repo.policy import DEFAULT_ALLOW, DEFAULT_DENY

    assert rg_mod.deny_globs(DEFAULT_DENY, DEFAULT_ALLOW) == [".env", "*.pem", "*.key", "*.p12", ".netrc"]  # .env.* and id_rsa* can be rescued
    assert rg_mod.deny_globs(DEFAULT_DENY, ()) == list(DEFAULT_DENY)
    odd = ("{a,b}", "[ab].key", "a/b", "!x", "#x", "x\\y", "x ", "*.key")  # rg would read these globs otherwise
    assert rg_mod.deny_globs(odd, ()) == ["*.key"]
    assert rg_mod.deny_globs(("secret.txt", "*.pem", "*.crt"), ("*.TXT", "*pem", "x*")) == []
    assert rg_mod.deny_globs(("*.pem",), ("*.pem.bak",)) == ["*.pem"]


def test_a_rescued_deny_glob_is_still_held_by_the_policy(ws, repo):
    repo.write(".env.local", "TOKEN=abc\n")  # rg reads it (.env.* is not passed to it): the policy drops it
    repo.write(".env.example", "TOKEN=placeholder\n")
    for backend in ("rg", "python"):
        assert files(grep(ws, backend, "TOKEN=")) == [(".env.example", 1)]


def test_rg_remembers_the_tracked_listing_while_the_index_holds(ws, repo, monkeypatch):
    from jitctx.repo import gitcmd

    repo.write(".gitignore", "*.log\n")
    repo.write("keep.log", "needle\n")
    repo.git("add", "-f", ".gitignore", "keep.log")  # tracked, yet ignored: rg's walk skips it
    assert files(grep(ws, "rg", "needle")) == [("keep.log", 1)]
    real, asked = gitcmd.run, []

    def run(args, *a, **k):
        asked.append(args)
        return real(args, *a, **k)

    monkeypatch.setattr(gitcmd, "run", run)
    assert files(grep(ws, "rg", "needle")) == [("keep.log", 1)]
    assert ["ls-files", "-z", "--cached"] not in asked  # read from the cache directory
    repo.write("two.log", "needle\n")
    repo.git("add", "-f", "two.log")  # a new index: listed again
    assert files(grep(ws, "rg", "needle")) == [("keep.log", 1), ("two.log", 1)]
    assert ["ls-files", "-z", "--cached"] in asked


def test_rg_output_files_are_anonymous_and_fall_back_to_tempfile(monkeypatch, tmp_path):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with rg_mod._scratch() as f:  # O_TMPFILE: nothing named in the folder, deleted on close
        f.write(b"abc")
        f.seek(0)
        assert f.read() == b"abc" and list(tmp_path.iterdir()) == []
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))  # no such folder: tempfile's own choice
    with rg_mod._scratch() as f:
        f.write(b"x")
        f.seek(0)
        assert f.read() == b"x"
