"""The fixture repos are complete: nothing was dropped by this project's ignores."""

from conftest import FIXTURES


def test_manifest_lists_every_fixture_file():
    listed = set((FIXTURES / "MANIFEST.txt").read_text().split())
    present = {
        p.relative_to(FIXTURES).as_posix()
        for p in FIXTURES.rglob("*")
        if (p.is_file() or p.is_symlink()) and p.name != "MANIFEST.txt"
    }
    assert listed == present


def test_make_repo_renames_dot_files_and_commits(repo):
    assert (repo.root / ".gitignore").is_file()
    assert (repo.root / ".github" / "workflows" / "ci.yml").is_file()
    assert not (repo.root / "dot-env").exists()
    tracked = repo.git("ls-files").split("\n")
    assert ".env" in tracked and "build/out.txt" not in tracked and "debug.log" not in tracked
    assert len(repo.head()) == 40
