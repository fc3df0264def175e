"""Ignore decisions in one place (issue 35): every user of the rules agrees, and the
deciding rule is reported.

One tree of nested ``.gitignore`` files (negations, folder rules, ``**``, anchored
rules), ``info/exclude`` and the global excludes file; each path's expected
decision and rule are written out, and git's listing, the kept listing, rg's walk
(with ``rgwalk``'s tracked-but-ignored files), the python engine, ``is_ignored``
and ``ignore_decision`` must all say the same, in git and outside it.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from jitctx import Workspace
from jitctx.repo import gitcmd, ignore
from jitctx.repo.ignore import Decision, Rule, RuleFile, Rules
from jitctx.repo.universe import Repo

RULES = {
    ".gitignore": "# build output\n*.log\nbuild/\n!keep.log\n/anchored.txt\ndocs/**/gen/\n**/tmp\n\n*.bak\n",
    "pkg/.gitignore": "!*.log\ncache/\n/local.txt\nsub/**/*.out\n!.env\n",
    "pkg/inner/.gitignore": "!important.bak\n",
}
INFO_EXCLUDE = "info-only.txt\n"
GLOBAL_EXCLUDES = "*.swp\n"

# path -> the rule that decides it (file, line, pattern), None when none matches
EXPECTED: dict[str, tuple[str, int, str] | None] = {
    "plain.txt": None,
    "a.log": (".gitignore", 2, "*.log"),
    "keep.log": (".gitignore", 4, "!keep.log"),
    "build/out.bin": (".gitignore", 3, "build/"),
    "anchored.txt": (".gitignore", 5, "/anchored.txt"),
    "x/anchored.txt": None,
    "docs/a/b/gen/out.md": (".gitignore", 6, "docs/**/gen/"),
    "docs/gen/z.md": (".gitignore", 6, "docs/**/gen/"),
    "docs/guide2.md": None,
    "tmp/t.txt": (".gitignore", 7, "**/tmp"),
    "pkg/tmp/u.txt": (".gitignore", 7, "**/tmp"),
    "pkg/x.log": ("pkg/.gitignore", 1, "!*.log"),
    "pkg/cache/c.txt": ("pkg/.gitignore", 2, "cache/"),
    "pkg/local.txt": ("pkg/.gitignore", 3, "/local.txt"),
    "local.txt": None,
    "pkg/sub/a/b/c.out": ("pkg/.gitignore", 4, "sub/**/*.out"),
    "pkg/sub/c.out": ("pkg/.gitignore", 4, "sub/**/*.out"),
    "pkg/inner/y.bak": (".gitignore", 9, "*.bak"),
    "pkg/inner/important.bak": ("pkg/inner/.gitignore", 1, "!important.bak"),
    "pkg/ok.py": None,
    "pkg/.env": ("pkg/.gitignore", 5, "!.env"),  # re-included by a rule, still denied: never searched
}
DENIED = {"pkg/.env"}
GIT_ONLY = {  # rules git reads beside the .gitignore files (not outside git)
    "info-only.txt": (".git/info/exclude", 1, "info-only.txt"),
    "notes.swp": ("<excludes>", 1, "*.swp"),
}
TRACKED = "tracked.log"  # tracked, and a rule matches: in the universe, the rule still reported


def _tree(root) -> None:
    for rel, text in RULES.items():
        os.makedirs(os.path.dirname(root / rel), exist_ok=True)
        (root / rel).write_text(text)
    for rel in [*EXPECTED, *GIT_ONLY, TRACKED]:
        os.makedirs(os.path.dirname(root / rel), exist_ok=True)
        (root / rel).write_text("needle\n")


def _ignored(rule) -> bool:
    return rule is not None and not rule[2].startswith("!")


def _every_view(root, expected: dict, *, live=None) -> dict[str, set[str]]:
    """Which of ``expected``'s paths each user puts in the universe."""
    ws = Workspace(root)
    views = {
        "listing": set(Repo(root).files()),
        "rg walk": {r.path for r in ws.grep("needle", backend="rg", limit=10_000).results},
        "python engine": {r.path for r in ws.grep("needle", backend="python", limit=10_000).results},
        "is_ignored": {p for p in expected if not Repo(root).is_ignored(p)},
        "ignore_decision": {p for p in expected if not Repo(root).ignore_decision(p).ignored},
    }
    if live is not None:
        tracked, untracked = live.listing()
        views["kept listing"] = set(tracked) | set(untracked)
        views["is_ignored (kept listing)"] = {p for p in expected if not Repo(root, live=live).is_ignored(p)}
    views = {name: {p for p in got if p in expected} for name, got in views.items()}
    for name in ("rg walk", "python engine"):  # the deny list holds whatever the ignore rules say
        assert not views[name] & DENIED, name
        views[name] |= DENIED
    return views


@pytest.fixture
def ruled(make_repo, tmp_path, monkeypatch):
    repo = make_repo("basic")
    config = tmp_path / "config-home"
    (config / "git").mkdir(parents=True)
    (config / "git" / "ignore").write_text(GLOBAL_EXCLUDES)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    gitcmd.reset_env()  # git's environment is kept per process: this test's $XDG_CONFIG_HOME
    _tree(repo.root)
    (repo.root / ".git" / "info").mkdir(exist_ok=True)
    (repo.root / ".git" / "info" / "exclude").write_text(INFO_EXCLUDE)
    repo.git("add", "-f", TRACKED)
    repo.git("add", *RULES)
    repo.commit("rules")
    expected = {**EXPECTED, **GIT_ONLY, TRACKED: (".gitignore", 2, "*.log")}
    excludes = str(config / "git" / "ignore")
    expected = {p: (excludes, *r[1:]) if r and r[0] == "<excludes>" else r for p, r in expected.items()}
    yield repo, expected
    monkeypatch.undo()
    gitcmd.reset_env()


def test_issue_35_every_user_of_the_ignore_rules_decides_the_same_in_git(ruled):
    repo, expected = ruled
    root = repo.root
    want = {p for p, rule in expected.items() if not _ignored(rule) or p == TRACKED}
    for name, got in _every_view(root, expected).items():
        assert got == want, name


def test_issue_35_the_deciding_rule_is_reported_in_git(ruled):
    repo, expected = ruled
    r = Repo(repo.root)
    for path, rule in expected.items():
        got = r.ignore_decision(path)
        assert (got.rule.source, got.rule.line, got.rule.pattern) == rule if rule else got.rule is None, path
        assert got.tracked == (path == TRACKED), path
        assert got.ignored == (_ignored(rule) and path != TRACKED), path
    # a folder asked as a folder; a batch asked at once; a root in a folder of the repository
    assert r.ignores.decide(["build/", "pkg/"]) == {"build/": Decision("build/", Rule(".gitignore", 3, "build/")), "pkg/": Decision("pkg/")}
    sub = Repo(repo.root / "pkg")
    assert sub.ignore_decision("cache/c.txt").rule == Rule(".gitignore", 2, "cache/")
    assert sub.ignore_decision("inner/y.bak").rule == Rule(str(repo.root / ".gitignore"), 9, "*.bak")  # above the root: absolute


def test_issue_35_every_user_decides_the_same_outside_git(ruled, tmp_path):
    repo, _ = ruled
    plain = tmp_path / "outer" / "plain"
    shutil.copytree(repo.root, plain, ignore=shutil.ignore_patterns(".git"))
    (tmp_path / "outer" / ".gitignore").write_text("plain.txt\n")  # above the root: not the root's rules
    # git's other rule files do not apply outside git (nor in rg's walk there)
    expected = {**EXPECTED, TRACKED: (".gitignore", 2, "*.log"), **dict.fromkeys(GIT_ONLY)}
    assert not Repo(plain).is_git
    want = {p for p, rule in expected.items() if not _ignored(rule)}
    for name, got in _every_view(plain, expected).items():
        assert got == want, name
    r = Repo(plain)
    for path, rule in expected.items():
        got = r.ignore_decision(path)
        assert (got.rule.source, got.rule.line, got.rule.pattern) == rule if rule else got.rule is None, path


def test_issue_35_the_kept_listing_agrees(ruled):
    from watch_support import need_inotify

    from jitctx.server.kept_listing import LiveListing

    need_inotify()
    repo, expected = ruled
    r = Repo(repo.root)
    assert r.git is not None
    private = tempfile.mkdtemp(prefix="jx-ign-", dir="/tmp")
    kept = LiveListing(r.root, r.git.git_dir, r.git.common_dir, private, None)
    kept.start()
    try:
        assert kept.wait(30), kept.state
        want = {p for p, rule in expected.items() if not _ignored(rule) or p == TRACKED}
        views = _every_view(repo.root, expected, live=kept)
        assert views["kept listing"] == want and views["is_ignored (kept listing)"] == want
    finally:
        kept.close()
        os.rmdir(private)


def test_a_folder_rule_decides_below_it_and_a_negation_cannot_reach_inside(tmp_path):
    # git cannot re-include a file whose folder is ignored: the folder's rule decides
    (tmp_path / ".gitignore").write_text("out/\n!out/keep.txt\n")
    got = ignore.decide_without_git(tmp_path, ["out/keep.txt", "out/", "out"])
    assert got["out/keep.txt"].rule == Rule(".gitignore", 1, "out/") and got["out/keep.txt"].ignored
    assert got["out/"].ignored and got["out"].rule is None  # "out" as a file: a folder rule does not match it


def test_rule_lines_are_the_files_own_numbers_and_rejected_lines_are_left_out():
    rules = RuleFile("x/.gitignore", "x", "\n\n# c\nfoo\\\n[z-a]\n  \n*.tmp   \nkeep\\ \n")
    assert rules.decide("x/a.tmp") == Rule("x/.gitignore", 7, "*.tmp")
    assert rules.decide("x/keep ") == Rule("x/.gitignore", 8, "keep\\ ")
    assert Rules((rules,)).ignores("x/b.tmp") and not Rules((rules,)).ignores("x/b.txt")
