"""Hostile repositories (issue 12): what a repository nobody vetted must not make jitctx do.

One or more tests per numbered case of the issue, each asserting the contract
of DESIGN section 2 ("The trust boundary"). Each was written against the code
before the fixes, where most of them failed; they now guard against regressions.

Only public surfaces are used (the CLI, the Python API, ``jitctx.tools.dispatch``,
the MCP server), so the suite survives the package's restructuring. Anything
that may block runs in a subprocess with a deadline (``hostile_support.LIMIT``)
and is killed when it passes; nothing outside ``tmp_path`` is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hostile_support import (
    LIMIT,
    PRIVATE_KEY_BODY,
    Launched,
    RawMcp,
    Swapper,
    assert_sane,
    cli,
    fake_tokens,
    jitctx_argv,
    mcp_session,
    plant_outside,
    private_key_block,
    run_jitctx,
    subprocess_env,
)

pytestmark = pytest.mark.hostile


@pytest.fixture(autouse=True)
def _private_tmpdir(tmp_path, monkeypatch):
    """Temporary files of jitctx (and of the rg and git it runs) go to tmp_path, never to /tmp:
    a call killed here must not leave anything outside the test's folder."""
    d = tmp_path / "tmpdir"
    d.mkdir()
    monkeypatch.setenv("TMPDIR", str(d))
    monkeypatch.setattr(tempfile, "tempdir", str(d))


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def _plain_repo(root: Path, files: dict[str, str | bytes], *, git: bool = True) -> Path:
    """A repository at ``root`` holding ``files`` (committed when ``git``)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    if git:
        _git(root, "init", "-q", "-b", "main")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "hostile fixture")
    return root


def _workspace(root: Path, **kw):
    from jitctx import Workspace

    return Workspace(root, **kw)


def _dispatch(name: str, arguments: dict, ws) -> str:
    from jitctx.tools import dispatch

    out = dispatch(name, arguments, workspace=ws)
    return out.text + "\n" + json.dumps(out.data, ensure_ascii=False, default=str)


# == case 1: repository-configured programs never run =========================================

# Every path a read-only call can take: (name, function(root) -> all the text it produced).
# CLI calls run in process through cli.main; each git call jitctx makes is a real subprocess.


def _cli_call(*argv: str):
    def call(root: Path) -> str:
        return cli(*argv, "--root", str(root), cwd=root)[1]

    return call


def _api_preload(root: Path) -> str:
    ws = _workspace(root)
    pre = ws.preload()
    ws.stale()
    ws.refresh()
    return pre.text + "\n".join(pre.warnings)


def _api_context(root: Path) -> str:
    from jitctx import context_for_task

    ctx = context_for_task(_workspace(root), "where is greet defined", budget=4000)
    return ctx.text


def _tool(name: str, args: dict):
    def call(root: Path) -> str:
        return _dispatch(name, args, _workspace(root, max_tokens=4000))

    return call


def _mcp(step: tuple):
    def call(root: Path) -> str:
        return mcp_session(_workspace(root, max_tokens=4000), [step])[0]

    return call


CALLS = {
    "glob": _cli_call("glob", "*.md"),
    "glob-path": _cli_call("glob", "**/*.py", "src"),
    "head": _cli_call("head", "src/app.py"),
    "head-ignored": _cli_call("head", "debug.log"),
    "tail": _cli_call("tail", "src/app.py"),
    "preload": _cli_call("preload"),
    "context": _cli_call("context", "--task", "where is greet defined", "--budget", "4000"),
    "watch": _cli_call("watch", "--timeout", "0.3", "--poll"),
    "api-preload-stale-refresh": _api_preload,
    "api-context_for_task": _api_context,
    "tool-glob": _tool("glob", {"pattern": "**/*"}),
    "tool-grep": _tool("grep", {"pattern": "greet", "mode": "content"}),
    "tool-head": _tool("head", {"path": "src/app.py"}),
    "tool-tail": _tool("tail", {"path": "src/app.py"}),
    "mcp-glob": _mcp(("tool", "glob", {"pattern": "**/*.py"})),
    "mcp-grep": _mcp(("tool", "grep", {"pattern": "greet"})),
    "mcp-head": _mcp(("tool", "head", {"path": "README.md"})),
    "mcp-tail": _mcp(("tool", "tail", {"path": "README.md"})),
    "mcp-resource": _mcp(("resource",)),
    "mcp-prompt": _mcp(("prompt",)),
}
for _backend in ("rg", "python"):
    for _mode in ("files", "content", "count"):
        CALLS[f"grep-{_backend}-{_mode}"] = _cli_call("grep", "greet", "--backend", _backend, "--mode", _mode)
        CALLS[f"grep-{_backend}-{_mode}-path"] = _cli_call("grep", "greet", "src", "--backend", _backend, "--mode", _mode)

# git config keys (besides core.fsmonitor) whose value is a program git may start, with
# what makes git consider it; each canary script touches PWNED-<key> next to the repo.
PROGRAM_KEYS = (
    "core.hooksPath",  # a folder holding every hook name, below
    "core.pager",
    "pager.ls-files",
    "pager.check-ignore",
    "pager.config",
    "pager.rev-parse",
    "pager.cat-file",
    "core.editor",
    "sequence.editor",
    "core.askPass",
    "core.sshCommand",
    "core.gitProxy",
    "core.alternateRefsCommand",
    "credential.helper",
    "diff.external",
    "diff.pwn.textconv",
    "diff.pwn.command",
    "filter.pwn.clean",
    "filter.pwn.smudge",
    "filter.pwn.process",
    "merge.pwn.driver",
    "gpg.program",
    "gpg.ssh.program",
    "gpg.ssh.defaultKeyCommand",
    "uploadpack.packObjectsHook",
    "remote.origin.uploadpack",
    "remote.origin.receivepack",
    "sendemail.sendmailcmd",
    "web.browser",
    "alias.ls-files",
    "alias.check-ignore",
)
HOOKS = (
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
)


def _canary(tmp_path: Path) -> Path:
    """A script that records that it ran: ``canary NAME`` touches ``tmp_path/PWNED-NAME`` and fails."""
    script = tmp_path / "canary.sh"
    script.write_text(f'#!/bin/sh\ntouch "{tmp_path}/PWNED-$1"\nexit 1\n')
    script.chmod(0o755)
    return script


def _pwned(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.glob("PWNED-*"))


def _arm_every_program_key(root: Path, tmp_path: Path, script: Path) -> None:
    """Set every PROGRAM_KEYS key (and the default hooks folder) to the canary, after the last commit."""
    (root / ".gitattributes").write_text("* filter=pwn diff=pwn merge=pwn\n")
    _git(root, "add", ".gitattributes")
    _git(root, "commit", "-q", "-m", "attributes")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in HOOKS:
        for d in (hooks, root / ".git" / "hooks"):
            h = d / name
            h.write_text(f'#!/bin/sh\n"{script}" hook-{name}\n')
            h.chmod(0o755)
    _git(root, "remote", "add", "origin", "ssh://pwn.invalid/x.git")
    for key in PROGRAM_KEYS:
        value = str(hooks) if key == "core.hooksPath" else f"{script} {key}"
        if key.startswith("alias."):
            value = f"!{script} {key}"
        _git(root, "config", key, value)


def _fsmonitor_params():
    return list(CALLS)


@pytest.mark.parametrize("call", _fsmonitor_params())
def test_case1_fsmonitor_never_runs(make_repo, tmp_path, call):
    """core.fsmonitor names a program: no call path may start it (git runs it whenever it reads the index)."""
    repo = make_repo()
    script = _canary(tmp_path)
    _git(repo.root, "config", "core.fsmonitor", f"{script} fsmonitor-{call}")
    CALLS[call](repo.root)
    assert _pwned(tmp_path) == []


def test_case1_other_configured_programs_never_run(make_repo, tmp_path):
    """Hooks, filters, textconv, pagers, credential helpers, ssh, askpass...: every call path, none runs."""
    repo = make_repo()
    script = _canary(tmp_path)
    _arm_every_program_key(repo.root, tmp_path, script)
    for call in CALLS.values():
        call(repo.root)
    assert _pwned(tmp_path) == []
    # the canaries are live: git's own diff starts one (the filter process, which fails, so git does too)
    subprocess.run(["git", "diff", "HEAD~1"], cwd=repo.root, capture_output=True, check=False)
    assert _pwned(tmp_path)


def _other_repo(tmp_path: Path, script: Path) -> Path:
    """A second repository whose config runs the canary and whose files must never be listed."""
    other = _plain_repo(tmp_path / "other", {"OTHER-ONLY.txt": "greet OTHER-REPO-MARKER\n"})
    _git(other, "config", "core.fsmonitor", f"{script} other-fsmonitor")
    return other


ENV_PROGRAMS = (
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "PAGER",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "EDITOR",
)


@pytest.mark.parametrize(
    "variant",
    [
        "git-dir-elsewhere",
        pytest.param(
            "config-from-env",
        ),
    ],
)
def test_case1_hostile_environment(make_repo, tmp_path, variant):
    """jitctx started with GIT_DIR/GIT_WORK_TREE/GIT_INDEX_FILE pointing at another repository (or
    core.fsmonitor injected through GIT_CONFIG_COUNT) and every program variable set to the canary:
    it serves its root, lists nothing of the other repository, and starts no program."""
    repo = make_repo()
    script = _canary(tmp_path)
    other = _other_repo(tmp_path, script)
    env = subprocess_env(**{k: f"{script} env-{k}" for k in ENV_PROGRAMS})
    if variant == "git-dir-elsewhere":
        env.update(
            GIT_DIR=str(other / ".git"),
            GIT_WORK_TREE=str(other),
            GIT_INDEX_FILE=str(other / ".git" / "index"),
            GIT_COMMON_DIR=str(other / ".git"),
        )
    else:
        env.update(
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0="core.fsmonitor",
            GIT_CONFIG_VALUE_0=f"{script} env-config-fsmonitor",
        )
    commands = [
        ("glob", "**/*"),
        ("grep", "greet", "--backend", "rg", "--mode", "content"),
        ("grep", "greet", "--backend", "python", "--mode", "content"),
        ("head", "debug.log"),
        ("context", "--task", "greet", "--budget", "2000"),
    ]
    launched = [
        Launched(
            jitctx_argv(*c, "--root", str(repo.root)),
            cwd=repo.root,
            env=env,
            outdir=tmp_path / "runs",
        )
        for c in commands
    ]
    runs = [x.finish() for x in launched]
    assert_sane(*runs)
    assert _pwned(tmp_path) == []
    for run in runs:
        assert "OTHER-ONLY" not in run.output and "OTHER-REPO-MARKER" not in run.output, run.describe()
    assert "src/app.py" in runs[0].stdout and "src/app.py\n3:" in runs[1].stdout and "src/app.py\n3:" in runs[2].stdout  # grouped under the file (issue 33)


# == case 2: a symlink swapped in during a call ===============================================

ENV_SECRET = "ENV-SECRET-MARKER-51c0"


@pytest.fixture
def fast_switching():
    """Switch threads every 100 µs (default 5 ms) so the swapper interleaves with the call often."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(old)


def _race_repo(tmp_path: Path, *, git: bool, victims: int = 10) -> tuple[Path, list[Path], list[Path], str]:
    """A repository with ``lib/f<i>.txt`` victims, a ``.env`` and an outside secret, all holding MATCHME."""
    outside, marker = plant_outside(tmp_path)
    files = {f"lib/f{i}.txt": f"MATCHME harmless {i}\n" for i in range(victims)}
    files[".env"] = f"MATCHME API_TOKEN={ENV_SECRET}\n"
    root = _plain_repo(tmp_path / "repo", files, git=git)
    return (
        root,
        [root / f"lib/f{i}.txt" for i in range(victims)],
        [outside, root / ".env"],
        marker,
    )


def _leaks(text: str, marker: str) -> bool:
    return marker in text or ENV_SECRET in text


def _result_text(res) -> str:
    """A Result as its JSON envelope (every field a surface shows: results, notice, instructions...)."""
    return json.dumps(res.to_dict(), ensure_ascii=False, default=str)


GREP_RACE_ITERATIONS = 40
PEEK_RACE_ITERATIONS = 2000


@pytest.mark.parametrize(
    "backend",
    [
        pytest.param(
            "rg",
        ),
        "python",
    ],
)
def test_case2_symlink_swapped_in_during_grep_content(tmp_path, fast_switching, backend):
    """40 content-mode greps (GREP_RACE_ITERATIONS) while a thread swaps 10 matching files for symlinks
    to an outside file and to .env: neither secret ever appears (today rg leaks in most iterations)."""
    root, victims, targets, marker = _race_repo(tmp_path, git=True)
    ws = _workspace(root)
    leaked = []
    with Swapper(victims, targets, tmp_path / "stage") as swapper:
        for i in range(GREP_RACE_ITERATIONS):
            try:
                text = _result_text(ws.grep("MATCHME", mode="content", backend=backend))
            except Exception as exc:  # noqa: BLE001 - a vanished file may fail a call; it must not leak either
                text = str(exc)
            if _leaks(text, marker):
                leaked.append(i)
    assert swapper.swaps > GREP_RACE_ITERATIONS
    assert leaked == [], f"secret content in {len(leaked)} of {GREP_RACE_ITERATIONS} greps"


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["head", "tail"])
def test_case2_symlink_swapped_in_during_head_tail(tmp_path, fast_switching, tool):
    """2,000 calls (PEEK_RACE_ITERATIONS) on one file while a thread swaps it for a symlink to an
    outside file or to .env: the check and the read must see the same file. Outside git, so each
    call is cheap; today the check-to-open gap is hit in about one call in a hundred."""
    root, victims, targets, marker = _race_repo(tmp_path, git=False, victims=1)
    ws = _workspace(root)
    leaked = 0
    with Swapper(victims, targets, tmp_path / "stage"):
        for _ in range(PEEK_RACE_ITERATIONS):
            try:
                text = _result_text(getattr(ws, tool)("lib/f0.txt"))
            except Exception as exc:  # noqa: BLE001 - refused (outside_root, denied, vanished): fine if it quotes nothing
                text = str(exc)
            leaked += _leaks(text, marker)
    assert leaked == 0, f"secret content in {leaked} of {PEEK_RACE_ITERATIONS} calls"


# == case 4: a parent folder swapped for a symlink ==============================================

OUTSIDE_SIZE = 4321  # an outside file's size no fixture file has


def _folder_swapped_repo(tmp_path: Path) -> tuple[Path, str]:
    """``lib/passwd`` tracked, then ``lib`` replaced by a symlink to an outside folder with its own ``passwd``."""
    marker = "OUTSIDE-FOLDER-MARKER-9d2e"
    outside = tmp_path / "outside-etc"
    outside.mkdir()
    body = f"root:x:0:0 MATCHME {marker}\n"
    (outside / "passwd").write_text(body + "#" * (OUTSIDE_SIZE - len(body) - 1) + "\n")
    root = _plain_repo(
        tmp_path / "repo",
        {"lib/passwd": "MATCHME harmless\n", "ok.txt": "MATCHME fine\n"},
    )
    for p in (root / "lib").iterdir():
        p.unlink()
    (root / "lib").rmdir()
    (root / "lib").symlink_to(outside)
    return root, marker


@pytest.mark.parametrize(
    ("backend", "path"),
    [
        pytest.param(
            "python",
            ".",
        ),
        ("rg", "."),
        ("python", "lib"),
        ("rg", "lib"),
    ],
)
def test_case4_parent_folder_symlink_grep(tmp_path, backend, path):
    root, marker = _folder_swapped_repo(tmp_path)
    code, out = cli(
        "grep",
        "MATCHME",
        path,
        "--mode",
        "content",
        "--backend",
        backend,
        "--root",
        str(root),
    )
    assert marker not in out and "root:x" not in out
    assert code in (0, 1, 2) and "Traceback" not in out


def test_case4_parent_folder_symlink_glob(tmp_path):
    root, _ = _folder_swapped_repo(tmp_path)
    for argv in (
        ("glob", "**/*"),
        ("glob", "**/passwd"),
        ("glob", "*", "--include-ignored"),
    ):
        code, out = cli(*argv, "--root", str(root), "--json")
        assert code in (0, 1), out
        sizes = [r["size"] for r in json.loads(out)["results"]]
        assert OUTSIDE_SIZE not in sizes, out


@pytest.mark.parametrize("tool", ["head", "tail"])
def test_case4_parent_folder_symlink_head_tail(tmp_path, tool):
    root, marker = _folder_swapped_repo(tmp_path)
    out = _dispatch(tool, {"path": "lib/passwd"}, _workspace(root, max_tokens=4000))
    assert marker not in out and '"reason": "outside_root"' in out


# glob during the swap is not here: it shows no content, and a name's size and mtime
# are read with one lstat per hit; a folder swapped between git's walk and that lstat
# can show the outside file's metadata (docs/design.md, "The trust boundary").
@pytest.mark.parametrize("call", ["grep-python", "grep-rg"])
def test_case4_parent_folder_swapped_during_call(tmp_path, fast_switching, call):
    """40 calls (GREP_RACE_ITERATIONS) while a thread swaps the folder lib/ for a symlink to an outside
    folder holding same-named files: no outside content, and no outside file's metadata in glob."""
    outside = tmp_path / "outside-lib"
    outside.mkdir()
    marker = "OUTSIDE-LIB-MARKER-3b7f"
    for i in range(10):
        body = f"MATCHME {marker}\n"
        (outside / f"f{i}.txt").write_text(body + "#" * (OUTSIDE_SIZE - len(body) - 1) + "\n")
    root = _plain_repo(
        tmp_path / "repo",
        {
            **{f"lib/f{i}.txt": f"MATCHME harmless {i}\n" for i in range(10)},
            "ok.txt": "MATCHME ok\n",
        },
    )
    ws = _workspace(root)
    leaked = []
    with Swapper([root / "lib"], [outside], tmp_path / "stage"):
        for i in range(GREP_RACE_ITERATIONS):
            try:
                if call.startswith("grep"):
                    text = _result_text(ws.grep("MATCHME", mode="content", backend=call.split("-")[1]))
                else:
                    res = ws.glob("**/*")
                    text = _result_text(res) + (marker if OUTSIDE_SIZE in [r.size for r in res.results] else "")
            except Exception as exc:  # noqa: BLE001 - any refusal is fine if it quotes nothing
                text = str(exc)
            if marker in text:
                leaked.append(i)
    assert leaked == [], f"outside content or metadata in {len(leaked)} of {GREP_RACE_ITERATIONS} calls"


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["head", "tail"])
def test_case4_parent_folder_swapped_during_head_tail(tmp_path, fast_switching, tool):
    """2,000 calls (PEEK_RACE_ITERATIONS) on lib/f0.txt while a thread swaps the folder lib/ for a
    symlink to an outside folder holding f0.txt: never the outside content (today a few percent)."""
    outside = tmp_path / "outside-lib"
    outside.mkdir()
    marker = "OUTSIDE-LIB-MARKER-8c1d"
    (outside / "f0.txt").write_text(f"MATCHME {marker}\n")
    root = _plain_repo(tmp_path / "repo", {"lib/f0.txt": "MATCHME harmless\n"}, git=False)
    ws = _workspace(root)
    leaked = 0
    with Swapper([root / "lib"], [outside], tmp_path / "stage"):
        for _ in range(PEEK_RACE_ITERATIONS):
            try:
                text = _result_text(getattr(ws, tool)("lib/f0.txt"))
            except Exception as exc:  # noqa: BLE001 - any refusal is fine if it quotes nothing
                text = str(exc)
            leaked += marker in text
    assert leaked == 0, f"outside content in {leaked} of {PEEK_RACE_ITERATIONS} calls"


# == case 3: instruction files linked out of the root ===========================================

LINKED_OUT = {
    "AGENTS.md": "OUT-AGENTS-MARKER-a1",
    "README.md": "SIBLING-README-MARKER-b2",
    "src/util/AGENTS.md": "OUT-NESTED-MARKER-c3",
}


def _linked_out_repo(make_repo, tmp_path: Path) -> Path:
    """The basic fixture with AGENTS.md, README.md (to ../sibling/) and src/util/AGENTS.md linked outside."""
    repo = make_repo()
    (tmp_path / "sibling").mkdir()
    (tmp_path / "outside").mkdir(exist_ok=True)
    targets = {
        "AGENTS.md": tmp_path / "outside" / "agents.txt",
        "README.md": tmp_path / "sibling" / "secret.txt",
        "src/util/AGENTS.md": tmp_path / "outside" / "nested.txt",
    }
    for rel, target in targets.items():
        target.write_text(f"# notes\n\n{LINKED_OUT[rel]}\n")
        link = repo.root / rel
        link.unlink()
        # README.md goes up the tree relatively (../sibling), the others are absolute links
        link.symlink_to(os.path.relpath(target, link.parent) if rel == "README.md" else target)
    return repo.root


def _no_linked_out_content(text: str) -> None:
    for rel, marker in LINKED_OUT.items():
        assert marker not in text, f"{rel} (a link out of the root) was loaded"


def _surface_text(root: Path, surface: str) -> str:
    if surface == "preload-cli":
        return cli("preload", "--cwd", "src/util", "--root", str(root))[1] + cli("preload", "--json", "--root", str(root))[1]
    if surface == "context":
        return cli(
            "context",
            "--task",
            "greet helpers",
            "--root",
            str(root),
            cwd=root / "src" / "util",
        )[1]
    if surface in ("mcp-resource", "mcp-prompt"):
        return mcp_session(_workspace(root, max_tokens=4000), [(surface[4:],)])[0]
    ws = _workspace(root)
    if surface == "jit-head":
        return _result_text(ws.head("src/util/helpers.py"))
    if surface == "jit-grep":
        return _result_text(ws.grep("greet", "src", mode="content"))
    return _result_text(ws.glob("*", "src/util"))


@pytest.mark.parametrize(
    "surface",
    [
        pytest.param(
            "preload-cli",
        ),
        pytest.param(
            "context",
        ),
        pytest.param(
            "mcp-resource",
        ),
        pytest.param(
            "mcp-prompt",
        ),
        pytest.param(
            "jit-head",
        ),
        "jit-grep",
        "jit-glob",
    ],
)
def test_case3_instruction_files_linked_out_are_not_loaded(make_repo, tmp_path, surface):
    root = _linked_out_repo(make_repo, tmp_path)
    _no_linked_out_content(_surface_text(root, surface))


def test_case3_preload_skips_linked_out_files_with_a_warning(make_repo, tmp_path):
    root = _linked_out_repo(make_repo, tmp_path)
    pre = _workspace(root).preload("src/util")
    _no_linked_out_content(pre.text + json.dumps(pre.to_dict(), default=str))
    for rel in LINKED_OUT:
        assert any(rel in w for w in pre.warnings), (rel, pre.warnings)
    assert [f["path"] for f in pre.to_dict()["files"] if f.get("reason") == "included"] == []


# == case 5: secrets in error messages ===========================================================

SECRET_LINE_MARKER = "sk-live-" + "UNIQUEMARKER4e1d"


def _ignore_secret_repo(tmp_path: Path, variant: str) -> Path:
    """A repository whose ignore file is (or links to) a secret with lines rg or pathspec reject."""
    git = variant != "outside-git-gitignore-link"
    if git:
        secret = f"*\nAPI_KEY={SECRET_LINE_MARKER}[\n"  # '[' unclosed: rg rejects the line, quoting it
    else:
        secret = f"API_KEY={SECRET_LINE_MARKER}\\\n!\nfoo\\\n[z-a]\n"  # lines pathspec rejects
    root = _plain_repo(tmp_path / "repo", {"a.txt": "hello\n", "AGENTS.md": "# notes\n"}, git=git)
    (root / ".env").write_text(secret)
    if variant in ("gitignore-link", "outside-git-gitignore-link"):
        (root / ".gitignore").symlink_to(".env")
    elif variant == "info-exclude-link":
        exclude = root / ".git" / "info" / "exclude"
        exclude.unlink(missing_ok=True)
        exclude.symlink_to(root / ".env")
    elif variant == "excludesfile":
        _git(root, "config", "core.excludesFile", str(root / ".env"))
    elif variant == "gitignore-is-secret":
        (root / ".gitignore").write_text(secret)
    return root


def _secret_surfaces(root: Path) -> list[tuple[str, int, str]]:
    runs = []
    for argv in (
        ("grep", "hello", "--backend", "rg"),
        ("grep", "hello", "--backend", "rg", "--mode", "content"),
        ("grep", "hello", "--backend", "python", "--mode", "count"),
        ("glob", "*"),
        ("glob", "*", "--include-ignored"),
        ("head", "a.txt"),
        ("preload",),
        ("context", "--task", "hello", "--budget", "2000"),
    ):
        code, out = cli(*argv, "--root", str(root))
        runs.append((" ".join(argv), code, out))
    ws = _workspace(root, max_tokens=4000)
    for name, args in (
        ("grep", {"pattern": "hello"}),
        ("glob", {"pattern": "**/*"}),
        ("head", {"path": "a.txt"}),
    ):
        runs.append((f"tool {name}", 0, _dispatch(name, args, ws)))
    for i, text in enumerate(
        mcp_session(
            ws,
            [
                ("tool", "grep", {"pattern": "hello", "mode": "content"}),
                ("tool", "glob", {"pattern": "*"}),
                ("resource",),
            ],
        )
    ):
        runs.append((f"mcp step {i}", 0, text))
    return runs


@pytest.mark.parametrize(
    "variant",
    [
        pytest.param(
            "gitignore-link",
        ),
        pytest.param(
            "info-exclude-link",
        ),
        pytest.param(
            "excludesfile",
        ),
        pytest.param(
            "gitignore-is-secret",
        ),
        pytest.param(
            "outside-git-gitignore-link",
        ),
    ],
)
def test_case5_no_error_quotes_an_ignore_file(tmp_path, variant):
    """An ignore file that is (or links to) a secret, with lines the matchers reject: no output of any
    surface quotes a line of it, nothing crashes (exit 0/1/2, no traceback, no internal error)."""
    root = _ignore_secret_repo(tmp_path, variant)
    bad = []
    for what, code, out in _secret_surfaces(root):
        if SECRET_LINE_MARKER in out:
            bad.append(f"{what}: quotes the secret: {out[-400:]!r}")
        if code not in (0, 1, 2) or "Traceback" in out or "internal error" in out or "internal_error" in out:
            bad.append(f"{what}: exit {code}: {out[-400:]!r}")
    assert not bad, "\n".join(bad)


# == case 6: hard links, case, folders, and secrets in ordinary files =============================

BASIC_ENV_SECRET = "secret-value-123"  # fixtures_repo/basic/dot-env


def _content_surfaces(root: Path, path: str, pattern: str) -> dict[str, str]:
    """Every way to get ``path``'s content: head, tail, grep (both backends), the tools, MCP,
    each in a session of its own (in one session a second read of the same bytes is a note)."""

    def ws():
        return _workspace(root, max_tokens=4000)

    out = {}
    for tool in ("head", "tail"):
        try:
            out[tool] = _result_text(getattr(ws(), tool)(path))
        except Exception as exc:  # noqa: BLE001 - a refusal is what we hope for; its text is checked
            out[tool] = f"{type(exc).__name__}: {exc} {getattr(exc, 'fields', '')}"
    for backend in ("rg", "python"):
        for scope in (".", path):
            out[f"grep-{backend}-{scope}"] = cli(
                "grep",
                pattern,
                scope,
                "--mode",
                "content",
                "--backend",
                backend,
                "--include-ignored",
                "--root",
                str(root),
            )[1]
    out["tool-head"] = _dispatch("head", {"path": path}, ws())
    out["tool-grep"] = _dispatch("grep", {"pattern": pattern, "mode": "content", "include_ignored": True}, ws())
    out["mcp-tail"] = mcp_session(ws(), [("tool", "tail", {"path": path})])[0]
    return out


def _assert_withheld(surfaces: dict[str, str], secret: str) -> None:
    shown = sorted(k for k, text in surfaces.items() if secret in text)
    assert shown == [], f"the secret is shown by: {shown}"


def test_case6_hard_link_to_denied_file_is_denied(make_repo):
    repo = make_repo()
    os.link(repo.root / ".env", repo.root / "notes.txt")
    surfaces = _content_surfaces(repo.root, "notes.txt", "API_TOKEN")
    _assert_withheld(surfaces, BASIC_ENV_SECRET)
    assert '"reason": "denied"' in surfaces["tool-head"]


@pytest.mark.parametrize(
    "name",
    [".ENV", ".Env", "KEY.PEM", "Deploy.Key", "ID_RSA", ".ENV.production", ".NETRC"],
)
def test_case6_deny_names_match_case_insensitively(make_repo, name):
    repo = make_repo()
    secret = f"CASE-SECRET-{name.upper()}-77"
    repo.write(name, f"TOKEN={secret}\n")
    surfaces = _content_surfaces(repo.root, name, "TOKEN=")
    _assert_withheld(surfaces, secret)
    assert '"reason": "denied"' in surfaces["tool-head"]


def test_case6_folder_named_env_is_denied(make_repo):
    repo = make_repo()
    secret = "ENV-FOLDER-SECRET-4410"
    repo.write(".env.d/ok.txt", "fine\n")  # a harmless neighbour keeps the grep non-empty
    repo.root.joinpath(".env").rename(repo.root / "old.env")
    repo.write(".env/production", f"DATABASE_URL=postgres://app:{secret}@db/app\n")
    _assert_withheld(_content_surfaces(repo.root, ".env/production", "DATABASE_URL"), secret)


def test_case6_allowed_templates_stay_served(make_repo):
    """Guard for the case-insensitive fix: *.example (any case) is still served."""
    repo = make_repo()
    repo.write(".ENV.EXAMPLE", "API_TOKEN=put-yours-here\n")
    for path in (".env.example", ".ENV.EXAMPLE"):
        out = _dispatch("head", {"path": path}, _workspace(repo.root))
        assert "API_TOKEN=" in out and '"error"' not in out, out


def _secrets_file(repo) -> list[str]:
    tokens = fake_tokens()
    body = "\n".join(f"{kind.upper()}_TOKEN = '{value}'" for kind, value in tokens.items())
    repo.write(
        "config/settings.py",
        f'"""Settings."""\n{body}\nPRIVATE_KEY = """\n{private_key_block()}"""\nGREETING = "hi"\n',
    )
    return [*tokens.values(), PRIVATE_KEY_BODY]


@pytest.mark.parametrize(
    "surface",
    [
        "head",
        "tail",
        "grep-rg-.",
        "grep-python-.",
        "tool-head",
        "tool-grep",
        "mcp-tail",
    ],
)
def test_case6_secret_formats_are_redacted_with_a_notice(make_repo, surface):
    repo = make_repo()
    secrets = _secrets_file(repo)
    text = _content_surfaces(repo.root, "config/settings.py", "TOKEN|PRIVATE|MII")[surface]
    shown = [s[:8] + "..." for s in secrets if s in text]
    assert shown == [], f"{surface} shows {shown}"
    assert "redact" in text.lower(), f"{surface} does not say it redacted anything: {text[-600:]!r}"
    if not surface.startswith(("grep", "tool-grep")):
        assert "GREETING" in text  # the rest of the file is still served


def test_case6_secret_in_instruction_file_is_redacted_in_preload(make_repo):
    repo = make_repo()
    token = fake_tokens()["github"]
    repo.write("AGENTS.md", f"# Agent notes\n\nPush with GITHUB_TOKEN={token} when asked.\n")
    pre = _workspace(repo.root).preload()
    texts = [
        pre.text,
        json.dumps(pre.to_dict(), default=str),
        *mcp_session(_workspace(repo.root), [("resource",), ("prompt",)]),
    ]
    assert not any(token in t for t in texts)
    assert any("redact" in w.lower() for w in pre.warnings) or "redact" in pre.text.lower()


# == case 7: roots that must be refused ===========================================================

CREDENTIAL = "ghs_" + "CredInRemoteUrl9Q2w"


def _bare_repo(tmp_path: Path) -> Path:
    bare = tmp_path / "served.git"
    _git(tmp_path, "init", "-q", "--bare", str(bare))
    _git(
        bare,
        "config",
        "remote.origin.url",
        f"https://deploy:{CREDENTIAL}@forge.invalid/team/app.git",
    )
    return bare


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(
            "bare",
        ),
        pytest.param("git-dir"),
    ],
)
def test_case7_git_internals_are_refused_as_root(make_repo, tmp_path, kind):
    if kind == "bare":
        root = _bare_repo(tmp_path)
    else:
        repo = make_repo()
        _git(
            repo.root,
            "config",
            "remote.origin.url",
            f"https://deploy:{CREDENTIAL}@forge.invalid/team/app.git",
        )
        root = repo.root / ".git"
    runs = [
        (argv, *cli(*argv, "--root", str(root)))
        for argv in (
            ("head", "config"),
            ("glob", "*"),
            ("grep", "forge", "--mode", "content"),
            ("preload",),
        )
    ]
    assert not [argv for argv, _, out in runs if CREDENTIAL in out], "the credential URL in config was shown"
    assert [argv for argv, code, _ in runs if code != 2] == [], "a git dir was served as a root"
    from jitctx import RepoError

    with pytest.raises(RepoError):
        _workspace(root)


@pytest.mark.slow
def test_case7_mcp_refuses_a_bare_root(tmp_path):
    """``jitctx mcp --root <bare>`` exits 2 before serving, like ``--root /``."""
    bare = _bare_repo(tmp_path)
    run = Launched(jitctx_argv("mcp", "--root", str(bare)), cwd=tmp_path, outdir=tmp_path / "runs").finish()
    assert CREDENTIAL not in run.output
    assert run.code == 2 and run.stdout == "" and run.stderr.startswith("jitctx: error:"), run.describe()


@pytest.mark.parametrize(
    "how",
    [
        pytest.param(
            "--root ''",
        ),
        pytest.param(
            "JITCTX_ROOT=",
        ),
        pytest.param(
            "Workspace('')",
        ),
    ],
)
def test_case7_empty_root_is_refused(make_repo, monkeypatch, how):
    repo = make_repo()
    monkeypatch.chdir(repo.root)
    if how == "Workspace('')":
        from jitctx import RepoError

        with pytest.raises(RepoError):
            _workspace("")
        return
    if how == "JITCTX_ROOT=":
        monkeypatch.setenv("JITCTX_ROOT", "")
        argv = ["glob", "*"]
    else:
        argv = ["glob", "*", "--root", ""]
    code, out = cli(*argv)
    assert code == 2 and "root" in out and "Makefile" not in out, out


# == case 8: hangs (FIFOs, brace patterns) =========================================================
# Every process here may hang today; they all start together (one module fixture), so the
# suite waits LIMIT seconds once, not once per test. Brace expansions burn CPU: they run niced.

FIFO_VARIANTS = ("gitignore", "info-exclude", "excludesfile", "gitignore-outside-git")
FIFO_COMMANDS = {
    "glob": ("glob", "*.txt"),
    "grep-rg": ("grep", "hello", "--backend", "rg", "--mode", "content"),
    "grep-python": ("grep", "hello", "--backend", "python"),
    "head": ("head", "a.txt"),
    "preload": ("preload",),
    "context": ("context", "--task", "hello", "--budget", "2000"),
}
BRACES = {
    "glob-ab18": ("glob", "{a,b}" * 18),
    "grep-g-ab18": ("grep", "hello", "-g", "{a,b}" * 18),
    "glob-abcd10": ("glob", "{a,b,c,d}" * 10),
}
MAX_RSS_KB = 500 * 1024
SPARSE_SIZE = 2 << 30  # a 2 GiB file: 8 KiB of text lines, then a hole
SPARSE_COMMANDS = {
    "grep-python": ("grep", "needle", "--backend", "python"),
    "grep-python-content": (
        "grep",
        "needle",
        "big.txt",
        "--backend",
        "python",
        "--mode",
        "content",
    ),
    "grep-rg": ("grep", "needle", "--backend", "rg", "--mode", "content"),
    "head": ("head", "big.txt", "--start", "500"),
    "tail": ("tail", "big.txt"),
    "glob": ("glob", "**/*", "--sort", "size"),
}
CRASH_COMMANDS = {
    "glob": ("glob", "*.txt"),
    "grep": ("grep", "hello"),
    "head": ("head", "ab.txt"),
    "tail": ("tail", "ab.txt"),
    "preload": ("preload",),
    "context": ("context", "--task", "hello", "--budget", "2000"),
    "watch": ("watch", "--timeout", "0.5", "--poll"),
    "tools": ("tools",),
}


def _git_env(root: Path, env: dict, *args: str) -> None:
    proc = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def _fifo_repo(base: Path, variant: str, env: dict) -> Path:
    root = base / variant / "repo"
    root.mkdir(parents=True)
    (root / "a.txt").write_text("hello\n")
    (root / "AGENTS.md").write_text("# notes\n")
    if variant != "gitignore-outside-git":
        for args in (
            ("init", "-q", "-b", "main"),
            ("add", "-A"),
            ("commit", "-q", "-m", "fifo"),
        ):
            _git_env(root, env, *args)
    if variant in ("gitignore", "gitignore-outside-git"):
        os.mkfifo(root / ".gitignore")
    elif variant == "info-exclude":
        exclude = root / ".git" / "info" / "exclude"
        exclude.unlink(missing_ok=True)
        os.mkfifo(exclude)
    else:
        os.mkfifo(root.parent / "excludes.fifo")
        _git_env(root, env, "config", "core.excludesFile", str(root.parent / "excludes.fifo"))
    return root


@pytest.fixture(scope="module")
def slow_pool(tmp_path_factory):
    from hostile_support import SlowPool, isolated_env

    base = tmp_path_factory.mktemp("slow")
    env = isolated_env(base / "home")
    pool = SlowPool(base)
    for variant in FIFO_VARIANTS:
        root = _fifo_repo(base, variant, env)
        for name, argv in FIFO_COMMANDS.items():
            pool.launch(
                f"fifo:{variant}:{name}",
                jitctx_argv(*argv, "--root", str(root)),
                cwd=root,
                env=env,
            )
    brace_root = _plain_repo_env(base / "braces", env)
    for name, argv in BRACES.items():
        pool.launch(
            f"brace:{name}",
            jitctx_argv(*argv, "--root", str(brace_root)),
            cwd=brace_root,
            env=env,
            preexec_fn=lambda: os.nice(15),
        )
    big_root = _sparse_repo(base / "sparse", env)
    for name, argv in SPARSE_COMMANDS.items():
        pool.launch(
            f"sparse:{name}",
            jitctx_argv(*argv, "--root", str(big_root)),
            cwd=big_root,
            env=env,
            preexec_fn=lambda: os.nice(5),
        )
    crash_root = _plain_repo_env(base / "crash", env)
    for name, argv in CRASH_COMMANDS.items():
        for rooted in (True, False):
            gone = base / "gone" / f"{name}-{rooted}"
            gone.mkdir(parents=True)
            args = [*argv, "--root", str(crash_root)] if rooted else list(argv)
            shell = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
            pool.launch(
                f"deleted-cwd:{name}:{rooted}",
                ["sh", "-c", shell, "sh", str(gone), *jitctx_argv(*args)],
                cwd=base,
                env=env,
            )
        pool.launch(
            f"stdout-closed:{name}",
            jitctx_argv(*argv, "--root", str(crash_root)),
            cwd=crash_root,
            env=env,
            preexec_fn=lambda: os.close(1),
        )
    locked_repo = _locked_repo(base / "locked", env)
    prefix = _drop_root_privileges()
    if prefix is not None:
        for name, argv in UNREADABLE_COMMANDS.items():
            pool.launch(
                f"unreadable:{name}",
                [*prefix, *jitctx_argv(*argv)],
                cwd=locked_repo,
                env=env,
            )
    long_dir = "d" * 300
    for name, argv in {
        "glob": ("glob", "*.md", long_dir),
        "grep": ("grep", "x", long_dir),
        "head": ("head", long_dir + "/f.txt"),
    }.items():
        pool.launch(
            f"long-path:{name}",
            jitctx_argv(*argv, "--root", str(crash_root)),
            cwd=crash_root,
            env=env,
        )
    yield pool
    pool.close()
    from conftest import stop_servers

    stop_servers(os.path.join(env["XDG_RUNTIME_DIR"], "jitctx"), str(base / "home" / ".cache" / "jitctx"))  # the run folder
    for p in (locked_repo / "locked", locked_repo / "secret.txt"):
        p.chmod(0o755)


def _plain_repo_env(root: Path, env: dict) -> Path:
    root.mkdir(parents=True)
    (root / "ab.txt").write_text("hello\n")
    (root / "AGENTS.md").write_text("# notes\n")
    for args in (
        ("init", "-q", "-b", "main"),
        ("add", "-A"),
        ("commit", "-q", "-m", "braces"),
    ):
        _git_env(root, env, *args)
    return root


UNREADABLE_COMMANDS = {
    "subfolder-glob": ("glob", "**/*"),
    "subfolder-grep-rg": ("grep", "hi", "--backend", "rg"),
    "subfolder-grep-python": ("grep", "hi", "--backend", "python"),
    "path-glob": ("glob", "*", "locked"),
    "root-glob": ("glob", "*", "--root", "locked"),
    "root-grep": ("grep", "hi", "--root", "locked"),
    "root-head": ("head", "f.txt", "--root", "locked"),
    "file-head": ("head", "secret.txt"),
    "file-tail": ("tail", "secret.txt"),
}


def _drop_root_privileges() -> list[str] | None:
    """A command prefix under which file permissions bind (``None``: they cannot be made to)."""
    if os.geteuid() != 0:
        return []
    import shutil

    setpriv = shutil.which("setpriv")
    # root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH is refused like anyone else
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"] if setpriv else None


def _locked_repo(root: Path, env: dict) -> Path:
    """A repository with an unreadable folder ``locked/`` and an unreadable file ``secret.txt`` (chmod 000)."""
    root.mkdir(parents=True)
    (root / "a.txt").write_text("hi\n")
    (root / "locked").mkdir()
    (root / "locked" / "f.txt").write_text("hi there\n")
    (root / "secret.txt").write_text("hi secret\n")
    for args in (
        ("init", "-q", "-b", "main"),
        ("add", "-A"),
        ("commit", "-q", "-m", "locked"),
    ):
        _git_env(root, env, *args)
    (root / "locked").chmod(0)
    (root / "secret.txt").chmod(0)
    return root


def _sparse_repo(root: Path, env: dict) -> Path:
    root.mkdir(parents=True)
    (root / "AGENTS.md").write_text("# notes\n")
    (root / "small.txt").write_text("needle\n")
    with open(root / "big.txt", "wb") as f:
        f.write(b"needle in a text head\n" * 372)  # 8,184 bytes of text: not binary by the 8 KiB probe
        f.truncate(SPARSE_SIZE)
    for args in (
        ("init", "-q", "-b", "main"),
        ("add", "AGENTS.md", "small.txt"),
        ("commit", "-q", "-m", "sparse"),
    ):
        _git_env(root, env, *args)
    return root


def _fifo_params():
    for variant in FIFO_VARIANTS:
        for command in FIFO_COMMANDS:
            yield pytest.param(variant, command, id=f"{variant}-{command}")


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "command"), list(_fifo_params()))
def test_case8_fifo_ignore_file_does_not_hang(slow_pool, variant, command):
    """A FIFO where git or jitctx reads an ignore file: every command ends within LIMIT (15 s),
    so every git call needs a time limit below that, and jitctx reads only regular files."""
    run = slow_pool.result(f"fifo:{variant}:{command}")
    assert_sane(run)


@pytest.mark.parametrize("name", list(BRACES))
def test_case8_brace_pattern_is_bounded(slow_pool, name):
    """A brace pattern with 2^18 (or 4^10) expansions: an answer or an error within LIMIT, under 500 MB."""
    run = slow_pool.result(f"brace:{name}")
    assert_sane(run)
    assert run.maxrss_kb is not None and run.maxrss_kb < MAX_RSS_KB, f"peak RSS {run.maxrss_kb} KB"


CATASTROPHIC = "(a|aa)+b"  # exponential backtracking (re and the regex module alike) on a line of a's ending in '!'


def _catastrophic_repo(tmp_path: Path) -> Path:
    return _plain_repo(tmp_path / "repo", {"a.txt": "a" * 48 + "!\n", "b.txt": "plain\n"})


def _order(server, *ids: int) -> list[int]:
    """The ids of the responses among ``ids`` in the order the server wrote them."""
    seen = []
    for line in list(server.raw):
        try:
            rid = json.loads(line).get("id")
        except ValueError:
            continue
        if rid in ids and rid not in seen:
            seen.append(rid)
    return seen


@pytest.mark.slow
def test_case8_mcp_catastrophic_regex_keeps_the_server_responsive(tmp_path):
    """A catastrophic regex (python backend, 2 s time cap) inside the MCP server: a ping sent during it
    is answered before the call ends (partial, or an error), which it does at its time cap.
    (Issue 30: the order of the answers, not seconds, which a busy machine stretches.)"""
    from hostile_support import grep_started, python_backend_server

    root = _catastrophic_repo(tmp_path)
    with RawMcp(python_backend_server(tmp_path, root, timeout=2.0), cwd=root) as server:
        server.initialize()
        call = server.call("grep", {"pattern": CATASTROPHIC})
        grep_started(tmp_path)
        ping = server.request("ping")
        assert server.wait_for(ping, timeout=LIMIT) is not None, "ping unanswered during a catastrophic regex"
        assert server.wait_for(call, timeout=LIMIT) is not None or call in _order(server, call), "the grep call did not end at its 2 s time cap"
        assert _order(server, call, ping) == [ping, call], "the ping waited for the catastrophic regex"


@pytest.mark.slow
def test_case8_mcp_exits_when_stdin_closes_during_catastrophic_regex(tmp_path):
    from hostile_support import grep_started, python_backend_server

    root = _catastrophic_repo(tmp_path)
    with RawMcp(python_backend_server(tmp_path, root, timeout=60.0), cwd=root) as server:
        server.initialize()
        server.call("grep", {"pattern": CATASTROPHIC})
        grep_started(tmp_path)
        server.close_stdin()
        assert server.exited_within(20.0), "still running 20 s after stdin closed (the regex's cap is 60 s)"


# == case 13: MCP cancellation and disconnect ======================================================

SLOW_FILES = 250  # each holds a line that costs the regex module ~25-50 ms: a grep of several seconds
SLOW_LINE = "a" * 23 + "!\n"


def _slow_repo(tmp_path: Path) -> Path:
    return _plain_repo(
        tmp_path / "repo",
        {f"slow/f{i:03}.txt": SLOW_LINE for i in range(SLOW_FILES)} | {"README.md": "# slow\n"},
    )


def _assert_call_is_slow(root: Path) -> float:
    """The test means something only if the whole grep takes several seconds: measure 10 files;
    the whole grep's estimated seconds."""
    ws = _workspace(root)
    ten = root / "ten"
    ten.mkdir()
    for i in range(10):
        (ten / f"f{i}.txt").write_text(SLOW_LINE)
    t0 = time.monotonic()
    ws.grep(CATASTROPHIC, "ten", backend="python", include_ignored=True)
    estimate = (time.monotonic() - t0) * SLOW_FILES / 10
    for p in ten.iterdir():
        p.unlink()
    ten.rmdir()
    assert estimate > 4.0, f"the slow grep would take only {estimate:.1f} s here: raise SLOW_FILES"
    return estimate


@pytest.mark.slow
def test_case13_disconnect_mid_call_stops_the_work(tmp_path):
    """stdin closed once a grep of several seconds has started (measured): the server process exits
    long before the grep would have ended (within a third of its time, at least 2 s: the
    measure scales with the machine's load, a fixed 2 s did not)."""
    from hostile_support import grep_started, python_backend_server

    root = _slow_repo(tmp_path)
    estimate = _assert_call_is_slow(root)
    with RawMcp(python_backend_server(tmp_path, root, timeout=60.0), cwd=root) as server:
        server.initialize()
        server.call("grep", {"pattern": CATASTROPHIC})
        grep_started(tmp_path)
        server.close_stdin()
        closed = time.monotonic()
        exited = server.exited_within(max(2.0, estimate / 3))
        took = time.monotonic() - closed
    assert exited, f"still running {took:.1f} s after the client went away (the grep takes ~{estimate:.0f} s)"


@pytest.mark.slow
def test_case13_cancelled_call_stops_the_work(tmp_path):
    """notifications/cancelled once a grep of several seconds has started (measured): the next call is
    answered long before the grep would have ended (a third of its time, at least 2 s)."""
    from hostile_support import grep_started, python_backend_server

    root = _slow_repo(tmp_path)
    estimate = _assert_call_is_slow(root)
    with RawMcp(python_backend_server(tmp_path, root, timeout=60.0), cwd=root) as server:
        server.initialize()
        slow = server.call("grep", {"pattern": CATASTROPHIC})
        grep_started(tmp_path)
        server.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": slow, "reason": "user pressed stop"},
            }
        )
        nxt = server.call("head", {"path": "README.md"})
        sent = time.monotonic()
        reply = server.wait_for(nxt, timeout=max(2.0, estimate / 3))
        took = time.monotonic() - sent
    assert reply is not None and "result" in reply, f"the call after a cancelled one waited {took:.1f} s"


# == case 9: memory ==================================================================================


@pytest.mark.parametrize(
    "command",
    SPARSE_COMMANDS,
)
def test_case9_reads_are_bounded(slow_pool, command):
    """A 2 GiB sparse file whose first 8 KiB are text: every command stays under 500 MB peak RSS
    (wait4's ru_maxrss of the jitctx process, which includes the rg or git it waited for)."""
    run = slow_pool.result(f"sparse:{command}")
    assert_sane(run)
    assert run.maxrss_kb is not None and run.maxrss_kb < MAX_RSS_KB, f"peak RSS {run.maxrss_kb // 1024} MB"


# == case 10: crashes ==================================================================================


def _deleted_cwd_params():
    for rooted in (True, False):
        for command in CRASH_COMMANDS:
            yield pytest.param(command, rooted, id=f"{'with' if rooted else 'no'}-root-{command}")


@pytest.mark.parametrize(("command", "rooted"), list(_deleted_cwd_params()))
def test_case10_deleted_working_directory(slow_pool, command, rooted):
    """Run from a working directory that was deleted: a message and exit 0/1/2, never a traceback
    or an internal error (with --root given, the command has all it needs)."""
    run = slow_pool.result(f"deleted-cwd:{command}:{rooted}")
    assert "can't cd" not in run.stderr and "rmdir" not in run.stderr, run.describe()  # the setup itself worked
    assert_sane(run)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(
            c,
        )
        for c in CRASH_COMMANDS
    ],
)
def test_case10_stdout_closed(slow_pool, command):
    """stdout closed (``>&-``): exit 0/1/2 with at most a message, never a traceback."""
    run = slow_pool.result(f"stdout-closed:{command}")
    assert_sane(run)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(
            "glob",
        ),
        "grep",
        "head",
    ],
)
def test_case10_path_of_300_characters(slow_pool, command):
    run = slow_pool.result(f"long-path:{command}")
    assert_sane(run)
    assert run.code in (1, 2)


def _unreadable_params():
    return list(UNREADABLE_COMMANDS)


@pytest.mark.parametrize("name", list(_unreadable_params()))
def test_case10_unreadable_folder_and_file(slow_pool, name):
    """An unreadable folder (in the tree, as the path, as the root) and a chmod 000 file: a message
    naming the path (or the rest served), exit 0/1/2, never a traceback or an internal error.
    As root, run without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH (setpriv) so permissions bind."""
    if f"unreadable:{name}" not in slow_pool.launched:
        pytest.skip("running as root without setpriv: chmod does not bind")
    run = slow_pool.result(f"unreadable:{name}")
    assert_sane(run)
    if name.startswith("subfolder"):
        assert run.code == 0 and "a.txt" in run.stdout, run.describe()
    if run.code == 2:
        assert "locked" in run.stderr or "secret.txt" in run.stderr, run.describe()


def test_case10_glob_pattern_of_300_characters(make_repo):
    repo = make_repo()
    for pattern in ("x" * 300, "src/" + "y" * 300 + ".py", "*" + "z" * 300):
        code, out = cli("glob", pattern, "--root", str(repo.root))
        assert code in (1, 2) and "Traceback" not in out and "internal error" not in out, (pattern[:20], out)


@pytest.mark.parametrize("line", ["!", "foo\\", "[z-a]"])
def test_case10_ignore_lines_pathspec_rejects_outside_git(tmp_path, line):
    """Outside git, a .gitignore line git would skip (or accept): every command still answers."""
    root = _plain_repo(
        tmp_path / "repo",
        {
            "a.txt": "hello\n",
            ".gitignore": f"*.log\n{line}\n",
            "AGENTS.md": "# notes\n",
        },
        git=False,
    )
    bad = []
    for argv in (
        ("glob", "*.txt"),
        ("grep", "hello", "--backend", "rg"),
        ("grep", "hello", "--backend", "python"),
        ("head", "a.txt"),
        ("context", "--task", "hello", "--budget", "2000"),
    ):
        code, out = cli(*argv, "--root", str(root))
        if code not in (0, 1, 2) or "Traceback" in out or "internal error" in out:
            bad.append(f"{argv}: exit {code}: {out[-300:]}")
    assert not bad, "\n".join(bad)


def _bytes_named_repo(tmp_path: Path) -> Path:
    root = _plain_repo(tmp_path / "repo", {"README.md": "# greet\n"})
    fd = os.open(os.fsencode(root) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"greet from a name that is not UTF-8\n")
    os.close(fd)
    return root


@pytest.mark.slow
def test_case10_mcp_survives_a_file_name_that_is_not_utf8(tmp_path):
    root = _bytes_named_repo(tmp_path)
    with RawMcp(jitctx_argv("mcp", "--root", str(root)), cwd=root) as server:
        server.initialize()
        for name, args in (("glob", {"pattern": "*"}), ("grep", {"pattern": "greet"})):
            reply = server.wait_for(server.call(name, args), timeout=4)
            state = "hangs" if server.proc.poll() is None else f"exited {server.proc.poll()}"
            assert reply is not None, f"no reply to {name}; the server {state}; stderr: {server.stderr[-500:]!r}"
            assert "result" in reply and "\\udcff" not in json.dumps(reply)  # no lone surrogate on the wire
        assert server.wait_for(server.request("ping"), timeout=5) is not None
        assert server.proc.poll() is None


def test_case10_cli_and_tools_handle_a_file_name_that_is_not_utf8(tmp_path):
    """Guard: the CLI (text and JSON), dispatch and the in-memory MCP server answer for such a name."""
    root = _bytes_named_repo(tmp_path)
    for argv in (
        ("glob", "*"),
        ("glob", "*", "--json"),
        ("grep", "greet", "--mode", "content"),
    ):
        code, out = cli(*argv, "--root", str(root))
        assert code == 0 and "bad" in out, out
    ws = _workspace(root, max_tokens=4000)
    assert "bad" in _dispatch("glob", {"pattern": "*"}, ws)


# == case 11: ordinary ignore files and the rg backend ================================================

IGNORE_FILES = {
    "star": "*\n",
    "star-and-bracket": "*\n[\n",
    "reversed-range": "[z-a]\n",
}


def _ignore_params():
    for name in IGNORE_FILES:
        for backend in ("rg", "python"):
            for mode in ("files", "content"):
                yield pytest.param(name, backend, mode, id=f"{name}-{backend}-{mode}")


@pytest.mark.parametrize(("ignore", "backend", "mode"), list(_ignore_params()))
def test_case11_ordinary_ignore_files_do_not_break_grep(tmp_path, ignore, backend, mode):
    """A tracked a.txt under a .gitignore of '*' (plus an odd line): grep finds it with both backends,
    and never blames the user's pattern for the repository's ignore file."""
    root = _plain_repo(tmp_path / "repo", {"a.txt": "hello\n", "sub/b.txt": "hello too\n"})
    (root / ".gitignore").write_text(IGNORE_FILES[ignore])
    code, out = cli("grep", "hello", "--backend", backend, "--mode", mode, "--root", str(root))
    assert "invalid regex" not in out
    assert code == 0 and "a.txt" in out and "sub/b.txt" in out, out


# == case 12: output that can spoof, and temporary files ==============================================

SPOOF_NAMES = (
    "evil\nFORGED.md  1 KB  just now",
    "fake\rFORGED2.md",
    "tab\tand\x1b[31mred.md",
)


def _spoof_repo(tmp_path: Path) -> Path:
    root = _plain_repo(tmp_path / "repo", {"README.md": "# spoof\n"})
    for name in SPOOF_NAMES:
        (root / name).write_text("greet spoof\n")
    return root


def _assert_escaped(text: str) -> None:
    assert "\r" not in text and "\x1b" not in text, repr(text[-500:])
    forged = [ln for ln in text.splitlines() if ln.startswith(("FORGED", "[31m"))]
    assert forged == [], f"lines that start with a forged path: {forged}"


@pytest.mark.parametrize(
    "surface",
    [
        pytest.param(
            "glob",
        ),
        pytest.param(
            "grep-files",
        ),
        pytest.param(
            "grep-content",
        ),
        pytest.param(
            "head",
        ),
        pytest.param(
            "tool-glob",
        ),
        pytest.param(
            "mcp-grep",
        ),
    ],
)
def test_case12_control_characters_in_names_are_escaped(tmp_path, surface):
    root = _spoof_repo(tmp_path)
    if surface == "glob":
        text = cli("glob", "*", "--root", str(root))[1]
    elif surface.startswith("grep"):
        text = cli("grep", "greet", "--mode", surface[5:], "--root", str(root))[1]
    elif surface == "head":
        text = "".join(cli("head", name, "--root", str(root))[1] for name in SPOOF_NAMES)
    elif surface == "tool-glob":
        from jitctx.tools import dispatch

        text = dispatch("glob", {"pattern": "*"}, workspace=_workspace(root, max_tokens=4000)).text
    else:
        from hostile_support import run_async
        from mcp import Client

        from jitctx.adapters.mcp import build_server

        async def main():
            async with Client(build_server(workspace=_workspace(root, max_tokens=4000), poll=None).server) as c:
                return (await c.call_tool("grep", {"pattern": "greet", "mode": "content"})).content[0].text

        text = run_async(main)
    _assert_escaped(text)
    assert "FORGED" in text  # the files are still listed, escaped


def test_case12_json_keeps_names_exact(tmp_path):
    """Guard for the escaping fix: JSON output carries the real names (JSON escapes them itself)."""
    root = _spoof_repo(tmp_path)
    code, out = cli("glob", "*", "--json", "--sort", "path", "--root", str(root))
    assert code == 0
    assert set(SPOOF_NAMES) <= {r["path"] for r in json.loads(out)["results"]}


def _jitctx_temp_files(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("jitctx*"))


@pytest.mark.parametrize("backend", ["rg", "python"])
@pytest.mark.parametrize("where", ["inside-repo", "outside-repo"])
def test_case12_grep_leaves_no_temp_files(tmp_path, where, backend):
    """Guard: after grep ends normally, no jitctx-* file is left in TMPDIR (inside or outside the repo)."""
    root = _plain_repo(tmp_path / "repo", {"a.txt": "hello\n"})
    tmpdir = root / ".tmp" if where == "inside-repo" else tmp_path / "tmp"
    tmpdir.mkdir()
    run = run_jitctx(
        "grep",
        "hello",
        "--backend",
        backend,
        "--mode",
        "content",
        "--root",
        str(root),
        cwd=root,
        outdir=tmp_path / "runs",
        env=subprocess_env(TMPDIR=str(tmpdir)),
    )
    assert_sane(run)
    assert run.code == 0
    assert _jitctx_temp_files(tmpdir) == []


@pytest.mark.parametrize(
    ("where", "sig"),
    [
        pytest.param(
            "inside-repo",
            "SIGKILL",
        ),
        pytest.param(
            "outside-repo",
            "SIGTERM",
        ),
        ("outside-repo", "SIGINT"),
    ],
)
@pytest.mark.slow
def test_case12_killed_grep_leaves_no_temp_files(tmp_path, where, sig):
    """rg grep stopped mid-call (held there by a FIFO as .git/info/exclude, or stopped as soon as a
    temp file shows): with TMPDIR inside the repository nothing of jitctx may appear there at all
    (SIGKILL allows no clean-up); with TMPDIR elsewhere, SIGTERM/SIGINT must leave nothing behind."""
    import signal as signals

    root = _plain_repo(tmp_path / "repo", {"a.txt": "hello\n"})
    exclude = root / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    os.mkfifo(exclude)
    tmpdir = root / ".tmp" if where == "inside-repo" else tmp_path / "tmp"
    tmpdir.mkdir()
    proc = Launched(
        jitctx_argv("grep", "hello", "--backend", "rg", "--root", str(root)),
        cwd=root,
        env=subprocess_env(TMPDIR=str(tmpdir)),
        outdir=tmp_path / "runs",
    )
    seen: list[str] = []
    end = time.monotonic() + 5
    while time.monotonic() < end and proc.running and not seen:
        seen = _jitctx_temp_files(tmpdir)
        time.sleep(0.002)
    if proc.running:
        os.kill(proc.proc.pid, getattr(signals, sig))
    run = proc.finish(5)
    assert not run.hung, "did not stop on the signal"
    if where == "inside-repo":
        assert seen == [], f"temp files inside the served tree: {seen}"
    assert _jitctx_temp_files(tmpdir) == []
