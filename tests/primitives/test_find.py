"""glob: matching, sorting, limits and notices (DESIGN section 4)."""

import pytest

from jitctx import Workspace
from jitctx.errors import PathError, QueryError


@pytest.fixture
def ws(repo):
    return Workspace(repo.root)


def paths(result):
    return [r.path for r in result.results]


def test_glob_returns_refs_newest_first_ties_by_path(repo, ws):
    repo.write("src/util/helpers.py", "def greet(n):\n    return n\n", mtime=1_800_000_000)
    res = ws.glob("**/*.py")
    assert paths(res) == ["src/util/helpers.py", "src/app.py", "src/util/__init__.py", "text/link-to-app.py"]
    top = res.results[0]
    assert (top.size, top.mtime) == (len("def greet(n):\n    return n\n"), 1_800_000_000)
    assert res.total == 4 and not res.truncated and res.notice is None
    assert res.git_head == repo.head()


def test_glob_sort_by_path_and_size(repo, ws):
    assert paths(ws.glob("src/**", sort="path")) == ["src/app.py", "src/util/AGENTS.md", "src/util/__init__.py", "src/util/helpers.py"]
    assert paths(ws.glob("src/**", sort="size"))[0] == "src/app.py"


def test_glob_hidden_files_are_included_git_dir_never(ws):
    assert paths(ws.glob("**/*.yml")) == [".github/workflows/ci.yml"]
    assert ws.glob("**/HEAD").total == 0


def test_glob_ignored_files_only_with_include_ignored(ws):
    assert ws.glob("**/*.log").total == 0
    res = ws.glob("**/*.log", include_ignored=True)
    assert paths(res) == ["debug.log"]


def test_glob_path_scopes_the_search_and_pattern_is_relative_to_it(ws):
    assert paths(ws.glob("*.py", "src/util", sort="path")) == ["src/util/__init__.py", "src/util/helpers.py"]
    assert paths(ws.glob("**/helpers.py", "src")) == ["src/util/helpers.py"]
    assert paths(ws.glob("helpers.py", "src")) == []  # a pattern without '/' is the top level of path


def test_glob_untracked_files_are_found(repo, ws):
    repo.write("notes/new.md", "draft\n")
    assert "notes/new.md" in paths(ws.glob("**/*.md"))


def test_glob_case_sensitive_by_default_with_a_flag(ws):
    assert ws.glob("readme.md").total == 0
    assert paths(ws.glob("readme.md", ignore_case=True)) == ["README.md"]


def test_glob_denied_paths_are_flagged_not_hidden(ws):
    res = ws.glob(".env*", sort="path")
    assert [(r.path, r.denied) for r in res.results] == [(".env", True), (".env.example", False)]


def test_glob_limit_truncates_visibly_with_the_next_step(ws):
    res = ws.glob("**/*", limit=3, sort="path")
    assert len(res.results) == 3 and res.truncated
    assert res.total == 22
    assert res.notice.startswith("showing 3 of 22 files (by path)")
    assert "raise limit" in res.notice


def test_glob_empty_result_says_what_was_searched(ws):
    res = ws.glob("**/[r]*.rs")  # not a plain suffix: every path is looked at and counted
    assert res.results == [] and res.total == 0
    assert res.notice == (
        "no files match '**/[r]*.rs' in the repository (22 searched: tracked and untracked-not-ignored files; ignored files were not searched (include_ignored=true widens))."
    )
    res = ws.glob("**/*.rs")  # a plain suffix: git drops tracked paths that cannot match, so no count
    assert res.notice == (
        "no files match '**/*.rs' in the repository (searched: tracked and untracked-not-ignored files; ignored files were not searched (include_ignored=true widens))."
    )


def test_glob_existing_literal_path_wins_over_brackets(repo, ws):
    repo.write("pages/[id].tsx", "export {}\n")
    repo.write("pages/i.tsx", "export {}\n")
    assert paths(ws.glob("pages/[id].tsx")) == ["pages/[id].tsx"]
    assert paths(ws.glob("pages/[xi].tsx")) == ["pages/i.tsx"]


def test_glob_skips_tracked_files_deleted_from_the_tree(repo, ws):
    (repo.root / "docs" / "guide.md").unlink()
    assert "docs/guide.md" not in paths(ws.glob("**/*.md"))


def test_glob_max_tokens_cuts_at_whole_items(ws):
    from tests_support import CharTokenizer

    small = Workspace(ws.root, tokenizer=CharTokenizer())
    full = small.glob("**/*", sort="path")
    cut = small.glob("**/*", sort="path", max_tokens=200)
    assert 0 < len(cut.results) < len(full.results)
    assert paths(cut) == paths(full)[: len(cut.results)]
    assert cut.truncated and "to fit max_tokens=200" in cut.notice


@pytest.mark.parametrize("pattern", ["", "   "])
def test_glob_empty_pattern_is_an_error(ws, pattern):
    with pytest.raises(QueryError, match="pattern is empty"):
        ws.glob(pattern)


def test_glob_path_errors(ws):
    with pytest.raises(PathError) as info:
        ws.glob("*.py", "src/app.py")
    assert info.value.reason == "not_a_directory"
    with pytest.raises(PathError) as info:
        ws.glob("*.py", "../")
    assert info.value.reason == "outside_root"
    with pytest.raises(PathError) as info:
        ws.glob("*", "missing")
    assert info.value.reason == "not_found"


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "10"])
def test_glob_bad_limit(ws, limit):
    with pytest.raises(QueryError, match="limit must be"):
        ws.glob("*", limit=limit)


def test_glob_bad_sort(ws):
    with pytest.raises(QueryError, match="sort must be one of mtime, path, size; got 'name'"):
        ws.glob("*", sort="name")


def test_glob_outside_git_uses_gitignore(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / ".gitignore").write_text("out/\n")
    (root / "out").mkdir()
    (root / "out" / "x.py").write_text("x\n")
    (root / "y.py").write_text("y\n")
    res = Workspace(root).glob("**/*.py")
    assert paths(res) == ["y.py"] and res.git_head is None


def test_glob_naming_a_directory_says_how_to_list_it(ws):
    res = ws.glob("src/util")
    assert res.total == 0
    assert res.notice.endswith("'src/util' is a directory: list it with glob pattern='src/util/**'.")


def test_glob_absolute_pattern_inside_the_root(ws):
    assert paths(ws.glob(str(ws.root) + "/src/**/*.py", sort="path")) == ["src/app.py", "src/util/__init__.py", "src/util/helpers.py"]


def test_glob_in_a_subfolder_root(repo):
    sub = Workspace(repo.root / "src")
    assert paths(sub.glob("**/*.py", sort="path")) == ["app.py", "util/__init__.py", "util/helpers.py"]
    assert paths(sub.glob("util/*.py", sort="path")) == ["util/__init__.py", "util/helpers.py"]


def test_issue_2_symlinks_show_nothing_of_outside_files_and_carry_the_targets_deny(repo, ws, tmp_path):
    import os

    outside = tmp_path / "outside.txt"
    outside.write_text("x" * 5000)
    os.symlink(outside, repo.root / "leak.txt")
    os.symlink(".env", repo.root / "notes.txt")
    refs = {r.path: r for r in ws.glob("*.txt", sort="path").results}
    assert refs["leak.txt"].size != 5000  # the link's own size, not the outside file's
    assert refs["notes.txt"].denied
    assert {r.path: r.size for r in ws.glob("text/link-to-app.py").results} == {"text/link-to-app.py": (repo.root / "src" / "app.py").stat().st_size}


def test_issue_12_a_folder_swapped_for_a_symlink_does_not_show_what_it_leads_to(repo, tmp_path):
    import shutil

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "helpers.py").write_text("x" * 777)
    shutil.rmtree(repo.root / "src" / "util")
    (repo.root / "src" / "util").symlink_to(outside)  # src/util/helpers.py stays in the index
    ws = Workspace(repo.root)
    paths = [r.path for r in ws.glob("**/*.py").results]
    assert "src/util/helpers.py" not in paths and "src/app.py" in paths
    for backend in ("rg", "python"):
        res = ws.grep("x", backend=backend)
        assert all(not r.path.startswith("src/util/") for r in res.results)


def test_issue_15_star_is_the_top_level_of_the_search_path_and_double_star_recurses(repo, ws):
    """DESIGN 4: glob's '*' does not cross '/', so '*.py' lists the top level only."""
    repo.write("top.py", "x = 1\n")
    assert paths(ws.glob("*.py", sort="path")) == ["top.py"]
    assert paths(ws.glob("*.py", "src", sort="path")) == ["src/app.py"]
    assert "src/util/helpers.py" in paths(ws.glob("**/*.py", sort="path"))
    assert paths(ws.glob("*", "src", sort="path")) == ["src/app.py"]
    assert paths(ws.glob("*.P?", "src", ignore_case=True, sort="path")) == ["src/app.py"]  # the regex route too
    assert paths(ws.glob("{*.py,util/*.py}", "src", sort="path")) == ["src/app.py", "src/util/__init__.py", "src/util/helpers.py"]
