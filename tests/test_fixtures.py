"""The fixture repos are complete: nothing was dropped by this project's ignores.

Each ``fixtures_repo/<name>/`` has a ``fixtures_repo/MANIFEST.<name>.txt``
listing its files (one per line, relative to the repo).
"""

import pytest
from conftest import FIXTURES

NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", NAMES)
def test_manifest_lists_every_fixture_file(name):
    manifest = FIXTURES / f"MANIFEST.{name}.txt"
    assert manifest.is_file(), f"add {manifest.name} listing the files of fixtures_repo/{name}/"
    root = FIXTURES / name
    present = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}
    assert set(manifest.read_text().split()) == present


def test_make_repo_renames_dot_files_and_commits(repo):
    assert (repo.root / ".gitignore").is_file()
    assert (repo.root / ".github" / "workflows" / "ci.yml").is_file()
    assert not (repo.root / "dot-env").exists()
    tracked = repo.git("ls-files").split("\n")
    assert ".env" in tracked and "build/out.txt" not in tracked and "debug.log" not in tracked
    assert len(repo.head()) == 40
