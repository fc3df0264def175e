"""Path policy: confinement, deny list, binary and text rules (DESIGN section 2)."""

import os

import pytest

from jitctx.errors import PathError, QueryError
from jitctx.repo.policy import PathPolicy


@pytest.fixture
def policy(repo):
    return PathPolicy(repo.root.resolve())


def reason(policy, path, want="any"):
    with pytest.raises(PathError) as info:
        policy.resolve(path, want=want)
    return info.value.reason


def test_relative_and_absolute_paths_inside_resolve_to_repo_relative(policy, repo):
    assert policy.resolve("src/app.py", want="file").path == "src/app.py"
    assert policy.resolve(str(repo.root / "src" / "app.py")).path == "src/app.py"
    assert policy.resolve("./src/../src/util").path == "src/util"
    assert policy.resolve(".", want="dir").path == "."


@pytest.mark.parametrize("given", ["../outside.txt", "src/../../x", "/etc/passwd"])
def test_escapes_are_outside_root(policy, given):
    assert reason(policy, given) == "outside_root"


def test_sibling_sharing_the_root_prefix_is_outside(policy, repo):
    evil = repo.root.parent / (repo.root.name + "-evil")
    evil.mkdir()
    (evil / "secret.txt").write_text("x")
    assert reason(policy, str(evil / "secret.txt")) == "outside_root"
    assert reason(policy, f"../{repo.root.name}-evil/secret.txt") == "outside_root"


def test_symlink_leading_out_is_outside(policy, repo, tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("outside content")
    os.symlink(target, repo.root / "out-link.txt")
    assert reason(policy, "out-link.txt", want="file") == "outside_root"


def test_symlink_loop_terminates_with_a_clear_reason(policy, repo):
    os.symlink("loop-b", repo.root / "loop-a")
    os.symlink("loop-a", repo.root / "loop-b")
    assert reason(policy, "loop-a", want="file") == "symlink_loop"


def test_symlink_inside_the_root_is_served(policy):
    assert policy.resolve("text/link-to-app.py", want="file").path == "src/app.py"


@pytest.mark.parametrize("given", [".git/config", ".git", "src/../.git/HEAD"])
def test_git_internals_are_refused(policy, given):
    assert reason(policy, given) == "git_internal"


def test_missing_path_names_it_and_suggests_glob(policy):
    with pytest.raises(PathError) as info:
        policy.resolve("src/nope.py")
    assert info.value.reason == "not_found"
    assert "src/nope.py" in info.value.message
    assert "**/nope.py" in info.value.hint


def test_file_where_directory_expected_and_reverse(policy):
    assert reason(policy, "src/app.py", want="dir") == "not_a_directory"
    assert reason(policy, "src", want="file") == "not_a_file"


@pytest.mark.parametrize("given", ["", "   "])
def test_empty_path_is_refused(policy, given):
    assert reason(policy, given) == "empty"


def test_non_string_path_is_a_query_error(policy):
    with pytest.raises(QueryError, match="path must be a string"):
        policy.resolve(3)


@pytest.mark.parametrize(
    "name,denied",
    [
        (".env", True),
        (".env.local", True),
        ("config/.env.production", True),
        (".env.example", False),
        (".env.sample", False),
        (".env.template", False),
        ("server.pem", True),
        ("tls.key", True),
        ("id_rsa", True),
        ("id_rsa.pub", True),
        ("id_ed25519", True),
        ("cert.p12", True),
        (".netrc", True),
        ("keys.py", False),
        ("environment.md", False),
        ("monkey.keyboard", False),
    ],
)
def test_deny_list(policy, name, denied):
    assert policy.is_denied(name) is denied


def test_denied_file_is_refused_by_name_and_through_a_symlink(policy, repo):
    assert reason(policy, ".env", want="file") == "denied"
    os.symlink(".env", repo.root / "innocent.txt")
    assert reason(policy, "innocent.txt", want="file") == "denied"


def test_deny_list_is_configurable(repo):
    custom = PathPolicy(repo.root.resolve(), deny=("*.md",), allow=())
    assert custom.is_denied("README.md") and not custom.is_denied(".env")


def test_issue_12_denied_names_in_any_case_and_under_a_denied_folder_are_refused(repo):
    from jitctx import Workspace

    repo.write(".ENV", "API_KEY=zqsecretzq\n")
    repo.write("KEY.PEM", "-----BEGIN X-----\n")
    repo.write(".env.d/.env/inner.txt", "inside a denied folder\n")
    ws = Workspace(repo.root)
    for path in (".ENV", "KEY.PEM", ".env.d/.env/inner.txt"):
        with pytest.raises(PathError) as exc:
            ws.head(path)
        assert exc.value.reason == "denied"
    for backend in ("rg", "python"):
        res = ws.grep("zqsecretzq|inside a denied", backend=backend, mode="content")
        assert res.results == [], backend


def test_issue_12_a_hard_link_to_a_denied_file_is_denied(repo):
    import os

    from jitctx import Workspace

    os.link(repo.root / ".env", repo.root / "notes.txt")
    ws = Workspace(repo.root)
    with pytest.raises(PathError) as exc:
        ws.head("notes.txt")
    assert exc.value.reason == "denied"
    secret = (repo.root / ".env").read_text().split("=", 1)[1].strip()
    for backend in ("rg", "python"):
        for mode in ("files", "content"):
            res = ws.grep(secret, backend=backend, mode=mode)
            assert [r.path for r in res.results] == [], (backend, mode)
    assert [r.denied for r in ws.glob("notes.txt").results] == [True]
