"""Root resolution, HEAD from files, and the file universe (DESIGN section 2)."""

import subprocess

import pytest

from jitctx.errors import RepoError
from jitctx.repo.universe import Repo, find_root

UNIVERSE = {
    ".env",
    ".env.example",
    ".github/workflows/ci.yml",
    ".gitignore",
    "AGENTS.md",
    "Makefile",
    "README.md",
    "data/blob.bin",
    "docs/guide.md",
    "secrets/server.pem",
    "src/app.py",
    "src/util/AGENTS.md",
    "src/util/__init__.py",
    "src/util/helpers.py",
    "text/bom.txt",
    "text/crlf.txt",
    "text/empty.txt",
    "text/latin1.txt",
    "text/link-to-app.py",
    "text/long.txt",
    "text/nonl.txt",
    "text/numbers.txt",
}


def test_universe_is_tracked_plus_untracked_not_ignored(repo):
    repo.write("notes/todo.txt", "untracked\n")
    repo.write("scratch.log", "ignored\n")
    files = set(Repo(repo.root).files())
    assert files == UNIVERSE | {"notes/todo.txt"}


def test_include_ignored_widens_the_universe_but_never_to_git(repo):
    files = set(Repo(repo.root).files(include_ignored=True))
    assert files == UNIVERSE | {"build/out.txt", "debug.log"}
    assert not any(f.startswith(".git/") for f in files)


def test_root_in_a_subfolder_lists_relative_to_it(repo):
    sub = Repo(repo.root / "src")
    assert set(sub.files()) == {"app.py", "util/AGENTS.md", "util/__init__.py", "util/helpers.py"}
    assert sub.head() == repo.head()


def test_outside_git_gitignore_files_apply(tmp_path):
    root = tmp_path / "plain"
    (root / "pkg" / "gen").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log\n")
    (root / "pkg" / ".gitignore").write_text("gen/\n!keep.log\n")
    for rel in ["a.py", "a.log", ".hidden", "pkg/b.py", "pkg/gen/c.py", "pkg/keep.log"]:
        (root / rel).write_text("x\n")
    r = Repo(root)
    assert not r.is_git
    assert set(r.files()) == {".gitignore", "a.py", ".hidden", "pkg/.gitignore", "pkg/b.py", "pkg/keep.log"}
    assert r.is_ignored("pkg/gen/c.py") and r.is_ignored("a.log") and not r.is_ignored("pkg/keep.log")
    assert r.head() is None


def test_head_is_read_from_files_and_follows_branches_and_packed_refs(repo):
    r = Repo(repo.root)
    first = repo.head()
    assert r.head() == first
    repo.checkout("feature", create=True)
    second = repo.commit("on feature")
    assert r.head() == second
    repo.git("pack-refs", "--all")
    assert not (repo.root / ".git" / "refs" / "heads" / "feature").exists()
    assert r.head() == second
    repo.git("checkout", "-q", "--detach", first)
    assert r.head() == first


def test_unborn_branch_has_no_head(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path / "empty")], check=True)
    assert Repo(tmp_path / "empty").head() is None


def test_linked_worktree_has_its_own_head(repo, tmp_path):
    wt = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    (wt / "side.txt").write_text("side\n")
    subprocess.run(["git", "add", "-A"], cwd=wt, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "side"], cwd=wt, check=True)
    side_head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=wt, capture_output=True, text=True).stdout.strip()
    r = Repo(wt)
    assert r.git.git_dir != r.git.common_dir
    assert r.head() == side_head != repo.head()
    assert "side.txt" in r.files()


def test_find_root_order(repo, tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    nested = repo.root / "src" / "util"
    assert find_root(cwd=nested) == repo.root.resolve()
    monkeypatch.setenv("JITCTX_ROOT", str(other))
    assert find_root(cwd=nested) == other.resolve()
    assert find_root(str(repo.root / "docs"), cwd=nested) == (repo.root / "docs").resolve()


def test_find_root_git_file_counts(tmp_path):
    top = tmp_path / "wt"
    (top / "deep").mkdir(parents=True)
    (top / ".git").write_text("gitdir: /somewhere/else\n")
    assert find_root(cwd=top / "deep") == top.resolve()


def test_find_root_falls_back_to_cwd_outside_git(tmp_path):
    (tmp_path / "plain" / "x").mkdir(parents=True)
    assert find_root(cwd=tmp_path / "plain" / "x") == (tmp_path / "plain" / "x").resolve()


def test_find_root_refuses_filesystem_root_and_home(tmp_path, monkeypatch):
    with pytest.raises(RepoError, match="filesystem root"):
        find_root("/")
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(RepoError, match="home directory"):
        find_root(str(tmp_path))


def test_find_root_missing_or_file(tmp_path):
    with pytest.raises(RepoError, match="does not exist"):
        find_root(str(tmp_path / "missing"))
    (tmp_path / "f").write_text("x")
    with pytest.raises(RepoError, match="not a directory"):
        find_root(str(tmp_path / "f"))


def test_root_inside_an_ignored_directory_is_served_as_plain_files(repo):
    repo.write("build/pkg/mod.py", "x = 1\n")
    r = Repo((repo.root / "build").resolve())
    assert not r.is_git
    assert set(r.files()) == {"out.txt", "pkg/mod.py"}


def test_unmerged_paths_are_listed_once(repo):
    repo.checkout("other", create=True)
    repo.write("README.md", "other side\n")
    repo.commit("other")
    repo.checkout("main")
    repo.write("README.md", "main side\n")
    repo.commit("main")
    repo.git("merge", "other", check=False)
    assert "UU README.md" in repo.git("status", "--porcelain")
    files = Repo(repo.root).files()
    assert files.count("README.md") == 1


def test_without_a_git_binary_the_tree_is_walked(repo, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    files = set(Repo(repo.root).files())
    assert files == UNIVERSE  # found by the walk, .git/ left out
    assert "build/out.txt" not in files  # .gitignore still applies


@pytest.mark.parametrize("var", ["GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"])
def test_the_callers_pathspec_settings_do_not_change_the_universe(repo, monkeypatch, var):
    repo.write("notes/todo.py", "untracked\n")
    monkeypatch.setenv(var, "1")
    r = Repo(repo.root)
    assert set(r.files()) == UNIVERSE | {"notes/todo.py"}
    listed = {p for chunk in r.file_chunks(suffix=".py") for p in chunk}
    assert {p for p in listed if p.endswith(".py")} == {"src/app.py", "src/util/__init__.py", "src/util/helpers.py", "text/link-to-app.py", "notes/todo.py"}
    assert not r.is_ignored("src/app.py") and r.is_ignored("scratch.log")


def test_a_git_hooks_environment_does_not_redirect_git_to_another_repository(repo, make_repo, monkeypatch):
    other = make_repo("preload")
    monkeypatch.setenv("GIT_DIR", str(other.root / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.root))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other.root / ".git" / "index"))
    r = Repo(repo.root)
    assert set(r.files()) == UNIVERSE
    assert r.is_ignored("scratch.log")


def test_a_name_starting_with_a_colon_is_not_read_as_pathspec_magic(repo):
    repo.write(".gitignore", (repo.root / ".gitignore").read_text() + ":scratch.txt\n")
    repo.write(":scratch.txt", "ignored by its own name\n")
    repo.write(":keep.txt", "not ignored\n")
    r = Repo(repo.root)
    assert r.is_ignored(":scratch.txt")
    assert not r.is_ignored(":keep.txt")


def _ended(procs) -> bool:
    return all(p.returncode is not None for p in procs)


def test_a_prefetched_listing_is_taken_by_the_next_listing_asking_the_same(repo):
    repo.write("notes/todo.py", "untracked\n")
    r = Repo(repo.root)
    r.prefetch(suffix=".py")
    procs = r._listing.procs
    listed = {p for chunk in r.file_chunks(suffix=".py") for p in chunk}
    assert {"src/app.py", "notes/todo.py"} <= listed
    assert r._listing is None and _ended(procs)


def test_a_prefetched_listing_for_other_arguments_is_stopped_not_used(repo):
    repo.write("scratch.log", "ignored\n")
    r = Repo(repo.root)
    r.prefetch(suffix=".py")
    procs = r._listing.procs
    assert set(r.files(include_ignored=True)) >= UNIVERSE | {"scratch.log", "build/out.txt"}
    assert r._listing is None and _ended(procs)


def test_close_stops_a_prefetched_listing_and_a_root_outside_git_prefetches_nothing(repo):
    r = Repo(repo.root)
    r.prefetch()
    procs = r._listing.procs
    r.close()
    assert r._listing is None and _ended(procs)
    plain = Repo((repo.root / "build").resolve())  # ignored by git: served as plain files, not listed by git
    plain.prefetch()
    assert plain._listing is None


def _spawned(monkeypatch) -> list[list[str]]:
    """The command of every process started from now on (``subprocess.run`` included)."""
    seen: list[list[str]] = []
    real = subprocess.Popen

    def spy(cmd, *a, **kw):
        seen.append(cmd)
        return real(cmd, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", spy)
    return seen


def _git(cmd: list[str]) -> list[str]:
    """A git command line without its safety overrides (``-c key=value`` pairs)."""
    out = [cmd[0]]
    rest = cmd[1:]
    while rest[:1] == ["-c"]:
        rest = rest[2:]
    return out + rest


def test_is_ignored_asks_the_index_only_for_paths_a_rule_matches(repo, monkeypatch):
    repo.write("kept.log", "tracked although *.log is ignored\n")
    repo.git("add", "-f", "kept.log")
    repo.write("loose.log", "untracked and ignored\n")
    r = Repo(repo.root)
    calls = _spawned(monkeypatch)
    assert not r.is_ignored("src/app.py")
    assert [_git(c)[:3] for c in calls] == [["git", "check-ignore", "--no-index"]]  # no rule: the index is never read
    assert r.is_ignored("loose.log")
    assert not r.is_ignored("kept.log")  # tracked: the index exempts it
    assert not r.is_ignored("notes/new.txt") and r.is_ignored("build/out.txt")


def _dominant_src(repo):
    """105k files under one src/ in miniature: most folders under src/, a big ignored node_modules/."""
    repo.write(".gitignore", (repo.root / ".gitignore").read_text() + "node_modules/\n")
    for i in range(12):
        repo.write(f"src/pkg{i:02d}/mod.py", "x = 1\n")
    repo.write("src/pkg03/new_untracked.py", "y = 2\n")
    repo.write("src/:odd.py", "z = 3\n")
    for i in range(20):
        repo.write(f"node_modules/lib{i}/index.js", "module.exports = 1\n")
    repo.write("src/vendored/.git/HEAD", "ref: refs/heads/main\n")  # a nested repository
    repo.write("src/vendored/inner.py", "w = 4\n")


def test_walk_groups_split_a_dominant_folder_but_not_an_ignored_one_or_a_nested_repository(repo):
    from jitctx.repo.listing import walk_groups

    _dominant_src(repo)
    groups = walk_groups(repo.root, 2)
    units = [u for g in groups for u in g]
    assert len(groups) == 2 and abs(len(groups[0]) - len(groups[1])) <= 1
    assert "src/pkg00" in units and "src" not in units  # split: both walkers share src/
    assert "node_modules" in units and not any(u.startswith("node_modules/") for u in units)
    assert "src/vendored" in units and not any(u.startswith("src/vendored/") for u in units)
    top = sorted(e.name for e in repo.root.iterdir() if e.name != ".git")
    assert walk_groups(repo.root, 2, balance=False) == [top[0::2], top[1::2]]  # a small repository: top level only
    assert walk_groups(repo.root, 1) == [[]]


def test_a_balanced_walk_lists_what_one_unsplit_walk_lists(repo, monkeypatch):
    from jitctx.repo import listing

    _dominant_src(repo)
    one = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=repo.root, capture_output=True, check=True)
    expected = set(one.stdout.decode().split("\0")) - {""}
    monkeypatch.setattr(listing, "LARGE_INDEX", 0)  # balance even this small index
    r = Repo(repo.root)
    assert r.is_large()
    assert set(r.files()) == expected
    assert {"src/pkg03/new_untracked.py", "src/:odd.py"} <= expected


def test_a_listing_under_a_folder_walks_only_it_and_keeps_root_relative_paths(repo, monkeypatch):
    _dominant_src(repo)
    repo.git("add", "-f", "build/out.txt")  # tracked inside an ignored folder
    repo.write("build/loose.txt", "ignored\n")
    r = Repo(repo.root)
    everything = r.files()
    spawned = _spawned(monkeypatch)
    for under in ("src", "src/pkg03", "build", "src/vendored"):
        spawned.clear()
        listed = [p for chunk in r.file_chunks(under=under) for p in chunk]
        assert sorted(listed) == sorted(p for p in everything if p.startswith(under + "/")), under
        for cmd in spawned:  # every git process is told to stay in the folder
            cmd = _git(cmd)
            assert cmd[cmd.index("--") + 1 :] and all(a == under or a.startswith(under + "/") for a in cmd[cmd.index("--") + 1 :])
    assert [p for chunk in r.file_chunks(under="build") for p in chunk] == ["build/out.txt"]


def _cli_prefetch(monkeypatch, cwd, root, path=".", pattern="**/*.py"):
    from jitctx.adapters.cli import early

    monkeypatch.chdir(cwd)
    return early.early_glob(["glob", pattern, path, "--root", str(root)])


def test_the_early_glob_scan_reads_the_arguments_as_the_parser_does(repo, monkeypatch):
    from jitctx.adapters.cli import early
    from jitctx.query import FindQuery, params

    value_flags = {f for p in params(FindQuery) if p.kind != "bool" for f in p.arg.flags if f.startswith("--")}
    assert value_flags | {"--max-tokens", "--root"} == early.GLOB_VALUE_FLAGS  # every glob option taking a value
    monkeypatch.chdir(repo.root)
    r = early.early_glob(["glob", "--limit", "5", "*.py", "--sort", "path", "src", "-i", f"--root={repo.root}"])
    assert r._listing.key == (str(repo.root), False, None, "src")  # -i: no suffix hint
    r.close()
    assert early.early_glob(["grep", "x"]) is None and early.early_glob(["glob", " "]) is None


def test_a_cli_prefetch_from_a_folder_inside_the_root_serves_a_glob_of_that_folder(repo, monkeypatch):
    from jitctx import Workspace

    r = _cli_prefetch(monkeypatch, repo.root / "src" / "util", repo.root)
    assert r._listing.key == (str(repo.root), False, ".py", "src/util")
    res = Workspace(repo=r).glob("**/*.py", "src/util", sort="path")
    assert [ref.path for ref in res.results] == ["src/util/__init__.py", "src/util/helpers.py"]
    assert r._listing is None


def test_a_cli_prefetch_takes_the_glob_folder_as_the_cli_does(repo, tmp_path, monkeypatch):
    r = _cli_prefetch(monkeypatch, repo.root / "src", repo.root, "util")  # from the working directory inside
    assert r._listing.key[3] == "src/util"
    r.close()
    r = _cli_prefetch(monkeypatch, tmp_path, repo.root, "src")  # outside the root: from the root
    assert r._listing.key[3] == "src"
    r.close()
    assert _cli_prefetch(monkeypatch, repo.root, repo.root, "../..")._listing is None  # leads out: left to the real call
    assert _cli_prefetch(monkeypatch, repo.root, repo.root, "README.md")._listing is None  # not a folder
    assert _cli_prefetch(monkeypatch, repo.root, tmp_path / "missing") is None  # a bad root: left to the real call


def _random_tree(repo, seed: int) -> None:
    """A random layout: one dominant folder or many, ignored folders and files,
    tracked files under ignored folders, untracked files, a nested repository,
    names with spaces, a leading ':' or non-ASCII letters."""
    import random

    rng = random.Random(seed)
    names = ["src", "lib", "docs", "node_modules", "build", ":odd", "sp ace", "é"]
    rules = ["node_modules/", "*.log", "build/", "gen/"]
    repo.write(".gitignore", "\n".join(rng.sample(rules, rng.randint(1, len(rules)))) + "\n")
    tops = rng.sample(names, rng.randint(1, len(names)))
    heavy = rng.choice(tops)
    for i in range(rng.randint(40, 120)):
        top = heavy if rng.random() < 0.7 else rng.choice(tops)
        depth = rng.randint(0, 3)
        parts = [top] + [rng.choice(["a", "b", "gen", "c d", ":x"]) + str(rng.randint(0, 4)) for _ in range(depth)]
        repo.write("/".join(parts) + f"/f{i}." + rng.choice(["py", "log", "md"]), f"{i}\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "random")
    for i in range(rng.randint(0, 20)):  # untracked, some of them ignored
        repo.write(f"{rng.choice(tops)}/{rng.choice(['new', 'gen', 'a1'])}/u{i}.{rng.choice(['py', 'log'])}", "u\n")
    if rng.random() < 0.5:
        repo.write(f"{heavy}/nested/.git/HEAD", "ref: refs/heads/main\n")
        repo.write(f"{heavy}/nested/inner.py", "inner\n")


@pytest.mark.parametrize("seed", range(6))
def test_split_and_scoped_listings_equal_one_git_listing_on_random_layouts(make_repo, monkeypatch, seed):
    from jitctx.repo import listing

    repo = make_repo("basic")
    _random_tree(repo, seed)
    one = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=repo.root, capture_output=True, check=True)
    expected = set(one.stdout.decode("utf-8", "surrogateescape").split("\0")) - {""}
    monkeypatch.setattr(listing, "LARGE_INDEX", 0)  # balance as a large repository would
    monkeypatch.setattr(listing, "WALKERS", 3)
    r = Repo(repo.root)
    assert set(r.files()) == expected
    folders = sorted({p.rsplit("/", 1)[0] for p in expected if "/" in p})
    for under in folders[:: max(1, len(folders) // 8)]:
        listed = {p for chunk in r.file_chunks(under=under) for p in chunk}
        assert listed == {p for p in expected if p.startswith(under + "/")}, under


def test_a_flat_folder_of_many_entries_is_walked_whole(repo):
    from jitctx.repo.listing import MAX_UNITS, walk_groups

    for i in range(MAX_UNITS + 1):
        repo.write(f"flat/f{i}.txt", "x\n")
    assert walk_groups(repo.root / "flat", 2) == [[]]
    assert walk_groups(repo.root, 2, under="flat") == [["flat"]]
    assert len(Repo(repo.root).files()) == len(UNIVERSE) + MAX_UNITS + 1


def test_issue_12_empty_roots_git_dirs_and_bare_repositories_are_refused(repo, tmp_path, monkeypatch):
    with pytest.raises(RepoError, match="the root is empty"):
        find_root("")
    monkeypatch.setenv("JITCTX_ROOT", "")
    with pytest.raises(RepoError, match="JITCTX_ROOT is set but empty"):
        find_root(None, cwd=repo.root)
    monkeypatch.setenv("JITCTX_ROOT", str(tmp_path / "nope"))
    with pytest.raises(RepoError) as exc:
        find_root(None, cwd=repo.root)
    assert "$JITCTX_ROOT" in exc.value.message and "JITCTX_ROOT" in exc.value.hint
    monkeypatch.delenv("JITCTX_ROOT")
    with pytest.raises(RepoError, match="git dir or a bare repository"):
        find_root(str(repo.root / ".git"))
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.root), str(bare)], check=True)
    with pytest.raises(RepoError, match="git dir or a bare repository"):
        find_root(str(bare))


def test_issue_12_a_deleted_working_directory_is_a_clear_error(tmp_path, monkeypatch):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with pytest.raises(RepoError, match="the working directory no longer exists"):
        find_root()


def test_issue_12_a_fifo_ignore_file_never_hangs_a_listing(repo, monkeypatch):
    import os
    import time

    os.remove(repo.root / ".gitignore")
    os.mkfifo(repo.root / ".gitignore")
    r = Repo(repo.root)
    t0 = time.monotonic()
    listed = r.files()
    assert time.monotonic() - t0 < 5 and "src/app.py" in listed
    assert r.blocking_rules() == ".gitignore" and "not a regular file" in r.notice
    assert not r.is_ignored("src/app.py")


def test_issue_12_a_fifo_deeper_down_is_cut_by_git_s_time_limit(repo, monkeypatch):
    import os
    import time

    monkeypatch.setenv("JITCTX_GIT_TIMEOUT", "1")
    (repo.root / "deep").mkdir()
    os.mkfifo(repo.root / "deep" / ".gitignore")
    repo.write("deep/new.txt", "untracked\n")
    r = Repo(repo.root)
    t0 = time.monotonic()
    listed = r.files()
    assert time.monotonic() - t0 < 6
    assert {"src/app.py", "deep/new.txt"} <= set(listed) and len(listed) == len(set(listed))
    assert "did not finish within 1 s" in r.notice


def test_issue_16_a_small_folder_is_listed_by_one_git_process_with_tracked_first(repo, monkeypatch):
    repo.write("small/a.py", "tracked\n")
    repo.write("small/sub/b.py", "tracked\n")
    repo.git("add", "small")
    repo.git("commit", "-qm", "small folder")
    repo.write("small/new.py", "untracked\n")
    repo.write("small/sub/skip.log", "ignored by the fixture's rules?\n")
    r = Repo(repo.root)
    want = sorted(p for p in r.files() if p.startswith("small/"))
    spawned = _spawned(monkeypatch)
    chunks = list(r.file_chunks(under="small"))
    assert len([c for c in spawned if "ls-files" in c]) == 1  # each git process reads the whole index
    assert chunks[0] == ["small/a.py", "small/sub/b.py"]  # the tracked first, as find expects
    assert sorted(p for c in chunks for p in c) == want and "small/new.py" in chunks[1]
