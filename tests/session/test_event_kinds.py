"""Sorting file-system events (jitctx.session.event_kinds): pure, no watcher."""

from __future__ import annotations

import pytest

from jitctx.session.event_kinds import GitPaths, classify

GP = GitPaths("/r/.git", "/r/.git")
WT = GitPaths("/m/.git/worktrees/wt", "/m/.git")
DELIVERED = {"/r/AGENTS.md": "AGENTS.md", "/r/src/util/AGENTS.md": "src/util/AGENTS.md"}


@pytest.mark.parametrize(
    ("paths", "git", "want"),
    [
        (("/r/.git/HEAD", ""), GP, "head"),
        (("/r/.git/HEAD.lock", "/r/.git/HEAD"), GP, "head"),  # the lock renamed over HEAD
        (("/r/.git/HEAD.lock", ""), GP, "head"),  # written just before the rename
        (("/r/.git/refs/heads/main.lock", "/r/.git/refs/heads/main"), GP, "head"),
        (("/r/.git/refs/heads/feature/deep", ""), GP, "head"),
        (("/r/.git/packed-refs.lock", "/r/.git/packed-refs"), GP, "head"),
        (("/r/.git/rebase-merge", ""), GP, "head"),
        (("/r/.git/index.lock", "/r/.git/index"), GP, None),
        (("/r/.git/index", ""), GP, None),
        (("/r/.git/ORIG_HEAD", ""), GP, None),
        (("/r/.git/FETCH_HEAD", ""), GP, None),
        (("/r/.git/COMMIT_EDITMSG", ""), GP, None),
        (("/r/.git/refs/tags/v1", ""), GP, None),
        (("/r/.git/refs/stash", ""), GP, None),
        (("/r/.git/refs/remotes/origin/main", ""), GP, None),
        (("/r/.git/logs/HEAD", ""), GP, None),
        (("/m/.git/worktrees/wt/HEAD", ""), WT, "head"),
        (("/m/.git/HEAD", ""), WT, None),  # the main work tree's HEAD is not ours
        (("/m/.git/refs/heads/wtb", ""), WT, "head"),
        (("/m/.git/packed-refs", ""), WT, "head"),
        (("/r/AGENTS.md", ""), GP, "file"),
        (("/r/.AGENTS.md.swp", "/r/AGENTS.md"), GP, "file"),  # editor's atomic save
        (("/r/src/util", ""), GP, "file"),  # a directory holding a delivered file
        (("/r/README.md", ""), GP, None),
        (("/r/src/utility.py", ""), GP, None),
        (("/r/AGENTS.md", ""), None, "file"),  # outside git
    ],
)
def test_classify(paths, git, want):
    assert classify(paths, git, DELIVERED) == want


def test_gitpaths_busy_while_a_lock_or_rebase_exists(tmp_path):
    g = GitPaths(str(tmp_path), str(tmp_path))
    assert not g.busy()
    for name in ("HEAD.lock", "index.lock"):
        (tmp_path / name).write_text("")
        assert g.busy()
        (tmp_path / name).unlink()
    (tmp_path / "rebase-merge").mkdir()
    assert g.busy()
