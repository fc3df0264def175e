"""The one module that speaks git: the ``git`` program, and git's rules without it.

Owns starting ``git`` (every process jitctx runs against a repository
starts here): its environment, the configuration overrides that keep a
repository from naming a program git would run, time limits, and the few
commands jitctx asks (``ls-files``, ``check-ignore``, ``config``,
``rev-parse``, ``diff``, ``cat-file``). Does not own what a listing means
(``universe``, ``listing``) or what an ignore rule decides (``ignore``).

The trust boundary (DESIGN section 2): a repository's own configuration can
name programs (``core.fsmonitor`` runs on every index read; hooks, pagers,
external diff, filters, textconv, credential helpers). jitctx only reads, so
every call passes overrides for each key a read command could reach, never
runs a pager or a prompt, and never waits longer than its time limit.
"""

from __future__ import annotations

import os
import re
import subprocess

from ..errors import RepoError

__all__ = [
    "GIT_TIMEOUT",
    "SAFE_CONFIG",
    "GitTimeout",
    "blobs",
    "check_ignore",
    "check_ignore_rules",
    "config_get",
    "env",
    "git_args",
    "index_blobs",
    "rev_parse",
    "run",
    "spawn",
    "split_z",
    "timeout",
]

GIT_TIMEOUT = 10.0  # seconds any one git process may take (override: $JITCTX_GIT_TIMEOUT); 100k files list in ~0.3 s

# `-c key=value` pairs given to every git process: each key names a program
# (or starts a process) that a read command could reach. An empty value
# resets a list (credential.helper) or turns the feature off.
SAFE_CONFIG = (
    "core.fsmonitor=false",  # the hook runs on every index read (ls-files, check-ignore, status)
    "core.hooksPath=/dev/null",  # no hook of the repository ever runs
    "core.pager=cat",
    "core.askPass=",
    "core.sshCommand=",
    "credential.helper=",
    "diff.external=",
    "gc.auto=0",  # no background `git gc --auto`
    "maintenance.auto=false",
    "protocol.allow=never",  # no transport, ever
    "core.quotepath=off",  # names as they are (our parsing wants the bytes)
)

# What would make git look at another repository than the one at the root, or
# read jitctx's pathspecs another way: a git hook exports some of these, a
# user's shell may set the others.
_FOREIGN_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
)
_SAFE_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat", "PAGER": "cat"}

_env: dict[str, str] | None = None


class GitTimeout(RepoError):
    """A git process did not finish within its time limit."""


def env() -> dict[str, str]:
    """The environment of every git process: the caller's, without ``_FOREIGN_ENV``,
    with no prompts, pagers or optional index writes."""
    global _env
    if _env is None:
        base = {k: v for k, v in os.environ.items() if k not in _FOREIGN_ENV}
        _env = {**base, **_SAFE_ENV}
    return _env


def reset_env() -> None:
    """Forget the cached environment (tests change ``os.environ``)."""
    global _env
    _env = None


def timeout() -> float:
    raw = os.environ.get("JITCTX_GIT_TIMEOUT")
    try:
        value = float(raw) if raw else GIT_TIMEOUT
    except ValueError:
        return GIT_TIMEOUT
    return value if value > 0 else GIT_TIMEOUT


def git_args(*args: str) -> list[str]:
    """``git -c ... <args>``: the command line with every safety override."""
    cmd = ["git"]
    for kv in SAFE_CONFIG:
        cmd += ["-c", kv]
    cmd.extend(args)
    return cmd


def spawn(args: list[str], cwd: os.PathLike | str) -> subprocess.Popen:
    """Start ``git <args>`` in ``cwd`` with stdout piped; raises ``OSError`` without git.

    The caller waits with ``wait_for`` (a time limit) or kills it.
    """
    return subprocess.Popen(git_args(*args), cwd=cwd, env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def wait_for(proc: subprocess.Popen, what: str, limit: float | None = None) -> bytes:
    """``proc``'s output once it ends; kills it and raises ``GitTimeout`` past the limit."""
    limit = timeout() if limit is None else limit
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise GitTimeout(
            f"git {what} did not finish within {limit:g} s",
            hint="a FIFO or a hung file system in the repository can block git; set JITCTX_GIT_TIMEOUT to wait longer",
        ) from None
    return out


def run(args: list[str], cwd: os.PathLike | str, *, input: bytes | None = None, limit: float | None = None) -> subprocess.CompletedProcess:
    """Run ``git <args>`` to the end (stdout and stderr captured, as bytes).

    Raises ``OSError`` when there is no git binary and ``GitTimeout`` past the
    time limit; a non-zero exit is the caller's to judge.
    """
    limit = timeout() if limit is None else limit
    try:
        return subprocess.run(
            git_args(*args), cwd=cwd, env=env(), input=input, capture_output=True, check=False, timeout=limit, stdin=None if input is not None else subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise GitTimeout(
            f"git {args[0]} did not finish within {limit:g} s",
            hint="a FIFO or a hung file system in the repository can block git; set JITCTX_GIT_TIMEOUT to wait longer",
        ) from None


def index_blobs(cwd: os.PathLike | str) -> dict[str, str]:
    """Git's index: repo-relative path -> the blob id git holds for it (regular files
    at stage 0); ``{}`` when git cannot tell."""
    try:
        proc = run(["ls-files", "-s", "-z"], cwd)
    except (OSError, RepoError):
        return {}
    if proc.returncode != 0:
        return {}
    out: dict[str, str] = {}
    for entry in split_z(proc.stdout):
        head, _, path = entry.partition("\t")
        mode, blob, stage = (head.split(" ") + ["", "", ""])[:3]
        if stage == "0" and mode in ("100644", "100755"):
            out[path] = blob
    return out


def blobs(cwd: os.PathLike | str, ids: list[str]) -> dict[str, bytes]:
    """The content of git blobs by id (one ``cat-file --batch``: no filter or textconv
    runs); ids git does not have are left out."""
    wanted = [i for i in ids if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", i)]
    if not wanted:
        return {}
    try:
        proc = run(["cat-file", "--batch"], cwd, input="".join(i + "\n" for i in wanted).encode())
    except (OSError, RepoError):
        return {}
    out: dict[str, bytes] = {}
    data, at = proc.stdout, 0
    for blob in wanted:
        end = data.find(b"\n", at)
        if end < 0:
            break
        head = data[at:end].split(b" ")
        at = end + 1
        if len(head) != 3 or head[1] != b"blob":  # "<id> missing", or not a blob
            if len(head) == 3 and head[2].isdigit():
                at += int(head[2]) + 1
            continue
        size = int(head[2])
        out[blob] = data[at : at + size]
        at += size + 1
    return out


def split_z(out: bytes) -> list[str]:
    """NUL-separated git output as names (undecodable bytes kept as surrogates)."""
    names = out.decode("utf-8", "surrogateescape").split("\0")
    names.pop()  # after the last NUL
    return names


def _pathspec_arg(rel: str) -> str:
    # check-ignore takes no --literal-pathspecs: a leading ':' would read as pathspec magic
    return "./" + rel if rel.startswith(":") else rel


def check_ignore(cwd: os.PathLike | str, paths: list[str], *, no_index: bool) -> set[str]:
    """Which of ``paths`` git's ignore rules match (``no_index``: the rules alone;
    else a tracked file is never ignored). Empty when git cannot answer."""
    if not paths:
        return set()
    args = ["check-ignore", *(["--no-index"] if no_index else []), "-z", "--stdin"]
    data = "\0".join(_pathspec_arg(p) for p in paths).encode("utf-8", "surrogateescape") + b"\0"
    try:
        proc = run(args, cwd, input=data)
    except OSError:
        return set()
    said = split_z(proc.stdout) if proc.stdout else []
    return {p[2:] if p.startswith("./:") else p for p in said}


def check_ignore_rules(cwd: os.PathLike | str, paths: list[str]) -> dict[str, tuple[str, int, str]]:
    """The rule that decides each of ``paths`` git's rules match, the index aside
    (``check-ignore -v --no-index``): path -> (rule file as git names it: from
    the work tree's top, or absolute; line; pattern, ``!`` first for a rule
    that re-includes). Paths no rule matches are left out; ``{}`` without git."""
    if not paths:
        return {}
    data = "\0".join(_pathspec_arg(p) for p in paths).encode("utf-8", "surrogateescape") + b"\0"
    try:
        proc = run(["check-ignore", "--no-index", "-v", "-z", "--stdin"], cwd, input=data)
    except OSError:
        return {}
    said = split_z(proc.stdout) if proc.stdout else []
    out = {}
    for k in range(0, len(said) - 3, 4):
        source, line, pattern, path = said[k : k + 4]
        if source and line.isdigit():
            out[path[2:] if path.startswith("./:") else path] = (source, int(line), pattern)
    return out


def config_get(cwd: os.PathLike | str, key: str, *, path: bool = False) -> str | None:
    """One configuration value as git resolves it (all levels, includes); ``None`` when unset."""
    try:
        proc = run(["config", *(["--path"] if path else []), "--get", key], cwd)
    except (OSError, RepoError):
        return None
    value = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return value if proc.returncode == 0 and value else None


def rev_parse(cwd: os.PathLike | str, rev: str = "HEAD") -> str | None:
    """``git rev-parse --verify`` of ``rev``; ``None`` when unborn, broken or not git."""
    try:
        proc = run(["rev-parse", "-q", "--verify", rev + "^{commit}"], cwd)
    except (OSError, RepoError):
        return None
    sha = proc.stdout.decode("ascii", "replace").strip()
    return sha if proc.returncode == 0 and sha else None
