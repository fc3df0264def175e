"""Helpers for the hostile-repository suite (tests/test_hostile.py); not fixtures.

Everything here drives jitctx through its public surfaces only: the CLI
(``jitctx.adapters.cli.main`` in process, or ``python -m jitctx`` as a
subprocess), the Python API (``jitctx.Workspace``, ``jitctx.context_for_task``),
``jitctx.tools.dispatch`` and the MCP server (``jitctx.adapters.mcp.build_server``
with the SDK's in-memory client, or ``python -m jitctx mcp`` over raw stdio).
Nothing here may block for ever: subprocesses run with a deadline and are
killed (their whole process group) when it passes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

WORKTREE = Path(__file__).resolve().parent.parent
LIMIT = 15.0  # seconds a jitctx process may take on a hostile repository before it counts as hung
SANE_CODES = (0, 1, 2)


# -- subprocesses -------------------------------------------------------------------------


def subprocess_env(**extra: str) -> dict[str, str]:
    """``os.environ`` (already isolated by conftest) plus this worktree on ``PYTHONPATH``."""
    env = dict(os.environ)
    env.pop("JITCTX_DEBUG", None)
    env["PYTHONPATH"] = os.pathsep.join([str(WORKTREE), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    env.update(extra)
    return env


def jitctx_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "jitctx", *args]


@dataclass
class Run:
    """A finished (or killed) process: ``hung`` when it outlived its deadline."""

    argv: list[str]
    code: int | None
    stdout: str
    stderr: str
    hung: bool
    elapsed: float
    maxrss_kb: int | None = None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def describe(self) -> str:
        shown = " ".join(a if len(a) < 80 else a[:77] + "..." for a in self.argv[2:])
        state = f"hung (killed after {self.elapsed:.1f} s)" if self.hung else f"exit {self.code} in {self.elapsed:.1f} s"
        return f"{shown}: {state}\nstdout: {self.stdout[-800:]!r}\nstderr: {self.stderr[-1500:]!r}"


class Launched:
    """A started process writing to files (no pipe to fill), with a deadline of its own.

    A daemon thread reaps it with ``wait4`` as soon as it ends (its exit time
    and peak RSS are exact however late ``finish`` is called); a timer kills
    its process group ``limit`` seconds after the start and marks it hung.
    """

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict | None = None,
        outdir: Path,
        stdin=subprocess.DEVNULL,
        preexec_fn=None,
        limit: float = LIMIT,
    ) -> None:
        outdir.mkdir(parents=True, exist_ok=True)
        n = len(list(outdir.glob("out-*")))
        self.out_path, self.err_path = outdir / f"out-{n}", outdir / f"err-{n}"
        self.argv = argv
        self.hung = False
        self.ended: float | None = None
        self._status = self._usage = None
        self._done = threading.Event()
        self.started = time.monotonic()
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env if env is not None else subprocess_env(),
                stdin=stdin,
                stdout=out,
                stderr=err,
                start_new_session=True,
                preexec_fn=preexec_fn,  # noqa: PLW1509 - os.nice/os.close only
            )
        self._timer = threading.Timer(limit, self._expire)
        self._timer.daemon = True
        self._timer.start()
        threading.Thread(target=self._reap, name="hostile-reaper", daemon=True).start()
        self.run: Run | None = None

    def _reap(self) -> None:
        _, self._status, self._usage = os.wait4(self.proc.pid, 0)
        self.ended = time.monotonic()
        self._timer.cancel()
        self._done.set()

    def _expire(self) -> None:
        if not self._done.is_set():
            self.hung = True
            kill_group(self.proc.pid)

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def finish(self, wait: float | None = None) -> Run:
        """Wait for the end (at most ``wait`` more seconds, else until the deadline); kill what is left."""
        if self.run is not None:
            return self.run
        if not self._done.wait(wait):
            self._expire()
            self._done.wait()
        self._timer.cancel()
        kill_group(self.proc.pid)  # children left behind (git blocked on a FIFO...)
        self.proc.returncode = os.waitstatus_to_exitcode(self._status)
        self.run = Run(
            self.argv,
            None if self.hung else self.proc.returncode,
            self.out_path.read_bytes().decode("utf-8", "surrogateescape"),
            self.err_path.read_bytes().decode("utf-8", "surrogateescape"),
            self.hung,
            (self.ended or time.monotonic()) - self.started,
            self._usage.ru_maxrss if self._usage is not None else None,
        )
        return self.run

    def kill(self) -> None:
        if self.run is None:
            self.finish(0.0)


def kill_group(pgid: int) -> None:
    """Kill the process group of a child started with ``start_new_session`` (git, rg below it too)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def run_jitctx(
    *args: str,
    cwd: Path,
    outdir: Path,
    env: dict | None = None,
    limit: float = LIMIT,
    preexec_fn=None,
) -> Run:
    """``python -m jitctx ARGS`` in ``cwd``; killed (and reported ``hung``) after ``limit`` seconds."""
    launched = Launched(
        jitctx_argv(*args),
        cwd=cwd,
        env=env,
        outdir=outdir,
        preexec_fn=preexec_fn,
        limit=limit,
    )
    return launched.finish()


def sane_problems(run: Run) -> list[str]:
    """What is wrong with how a process ended: hung, odd exit code, traceback, silent error, internal error."""
    problems = []
    if run.hung:
        problems.append("hung")
    elif run.code not in SANE_CODES:
        problems.append(f"exit code {run.code}")
    if "Traceback" in run.output:
        problems.append("traceback")
    if run.code == 2 and not run.stderr.strip():
        problems.append("exit 2 without a message")
    if "internal error" in run.output:
        problems.append("internal error")
    return problems


def assert_sane(*runs: Run) -> None:
    """Every run ended by itself, exit 0/1/2, a message with exit 2, no traceback, no internal error."""
    bad = [f"{'/'.join(sane_problems(r))}: {r.describe()}" for r in runs if sane_problems(r)]
    assert not bad, "\n\n".join(bad)


# -- the CLI in process ---------------------------------------------------------------------


def cli(*argv: str, cwd: Path | None = None) -> tuple[int, str]:
    """``jitctx.adapters.cli.main(argv)`` with stdout and stderr captured: (exit code, stdout + stderr).

    With ``JITCTX_TEST_SERVER=1`` (CI's second run) the same call goes through the root's
    warm server instead: a ``python -m jitctx`` process whose client waits for it."""
    from jitctx.adapters import cli as cli_mod

    if os.environ.get("JITCTX_TEST_SERVER") == "1":
        proc = subprocess.run(jitctx_argv(*argv), cwd=cwd or os.getcwd(), env=subprocess_env(), capture_output=True, timeout=LIMIT * 4, stdin=subprocess.DEVNULL)
        return proc.returncode, (proc.stdout + proc.stderr).decode("utf-8", "surrogateescape")

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_mod.main(list(argv))
    finally:
        os.chdir(old)
    return code, out.getvalue() + err.getvalue()


# -- MCP ------------------------------------------------------------------------------------


def run_async(fn, *args):
    """``anyio.run``, then join the worker threads it leaves (they are told to stop, never joined)."""
    import anyio

    before = set(threading.enumerate())
    try:
        return anyio.run(fn, *args)
    finally:
        for t in set(threading.enumerate()) - before:
            if t.name == "AnyIO worker thread":
                t.join(timeout=5)


def _tool_text(result) -> str:
    parts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    return "\n".join(parts) + "\n" + json.dumps(result.structured_content, ensure_ascii=False, default=str)


def mcp_session(ws, steps: list[tuple]) -> list[str]:
    """Run ``steps`` against an in-memory MCP server over ``ws``; one text per step.

    A step is ``("tool", name, arguments)``, ``("resource",)`` or ``("prompt",)``.
    A tool result's text is its content plus its structured content as JSON;
    a protocol error's text is its message (prefixed ``MCPError:``).
    """
    import mcp
    from mcp import Client

    from jitctx.adapters.mcp import PRELOAD_URI, build_server

    app = build_server(workspace=ws, poll=None)
    texts: list[str] = []

    async def main():
        async with Client(app.server) as c:
            for step in steps:
                try:
                    if step[0] == "tool":
                        texts.append(_tool_text(await c.call_tool(step[1], step[2])))
                    elif step[0] == "resource":
                        texts.append("\n".join(x.text for x in (await c.read_resource(PRELOAD_URI)).contents))
                    else:
                        prompt = await c.get_prompt("repo_context")
                        texts.append((prompt.description or "") + "\n" + "\n".join(m.content.text for m in prompt.messages))
                except mcp.MCPError as exc:
                    texts.append(f"MCPError: {exc}")

    run_async(main)
    return texts


class RawMcp:
    """``python -m jitctx mcp`` (or another stdio server command) driven with raw JSON-RPC lines.

    A reader thread parses stdout into a queue, so no read blocks the test;
    every wait has a timeout. ``close()`` kills the process group if still alive.
    """

    def __init__(self, argv: list[str], *, cwd: Path, env: dict | None = None) -> None:
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env if env is not None else subprocess_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.messages: queue.Queue = queue.Queue()
        self.raw: list[bytes] = []
        self.stderr = b""
        self._next = 100
        self._out = threading.Thread(target=self._read, daemon=True)
        self._err = threading.Thread(target=self._read_err, daemon=True)
        self._out.start()
        self._err.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.raw.append(line)
            try:
                self.messages.put(json.loads(line))
            except ValueError:
                self.messages.put({"unparsable": line.decode("utf-8", "replace")})
        self.messages.put(None)  # stdout closed

    def _read_err(self) -> None:
        self.stderr = self.proc.stderr.read()

    def send(self, msg: dict) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> int:
        self._next += 1
        msg = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self._next

    def call(self, name: str, arguments: dict) -> int:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def wait_for(self, rid: int, timeout: float) -> dict | None:
        """The response to request ``rid``, or ``None`` if none came within ``timeout`` (or stdout closed)."""
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            try:
                msg = self.messages.get(timeout=left)
            except queue.Empty:
                return None
            if msg is None:
                self.messages.put(None)
                return None
            if msg.get("id") == rid and ("result" in msg or "error" in msg):
                return msg
        return None

    def initialize(self, timeout: float = LIMIT) -> dict:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        reply = self.wait_for(1, timeout)
        assert reply is not None and "result" in reply, f"no initialize reply; stderr: {self.stderr[-2000:]!r}"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()

    def exited_within(self, timeout: float) -> bool:
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def close(self) -> None:
        self.close_stdin()
        if self.proc.poll() is None:
            kill_group(self.proc.pid)
            self.proc.wait()
        self._out.join(timeout=5)
        self._err.join(timeout=5)
        for f in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                f.close()

    def __enter__(self) -> RawMcp:  # noqa: PYI034 - typing.Self needs 3.11
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- files that swap under a running call ------------------------------------------------


def _renameat2():
    """``exchange(a, b)``: swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); ``None`` elsewhere."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None

    def exchange(a: Path, b: Path) -> None:
        if fn(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(a))

    return exchange


@dataclass
class Swapper:
    """A background thread that keeps swapping each of ``victims`` with a symlink to ``targets[k]``.

    A victim is a file or a folder inside the repository; its symlink waits in
    ``stage`` (outside the repository, same file system, so no listing sees
    it). On Linux one ``renameat2(RENAME_EXCHANGE)`` swaps them atomically
    (the victim is always there, as itself or as the link: the swap rate that
    makes these races show in a few hundred calls); elsewhere two renames.
    On exit every victim is back in place.
    """

    victims: list[Path]
    targets: list[Path]
    stage: Path
    swaps: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _links(self) -> list[Path]:
        self.stage.mkdir(parents=True, exist_ok=True)
        links = []
        for k, _ in enumerate(self.victims):
            link = self.stage / f"link-{k}"
            if not link.is_symlink():
                os.symlink(self.targets[k % len(self.targets)], link)
            links.append(link)
        return links

    def _loop(self) -> None:
        links = self._links()
        exchange = _renameat2()
        while not self._stop.is_set():
            for victim, link in zip(self.victims, links):
                if exchange is not None:
                    exchange(victim, link)  # the link in
                    time.sleep(0)
                    exchange(victim, link)  # the file (or folder) back
                else:
                    aside = self.stage / (link.name + ".aside")
                    os.rename(victim, aside)
                    os.rename(link, victim)
                    time.sleep(0)
                    os.rename(victim, link)
                    os.rename(aside, victim)
                self.swaps += 1
                time.sleep(0)

    def __enter__(self) -> Swapper:  # noqa: PYI034 - typing.Self needs 3.11
        self._thread = threading.Thread(target=self._loop, name="hostile-swapper", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout=10)
        assert not self._thread.is_alive(), "the swapper thread did not stop"
        for victim in self.victims:
            assert not victim.is_symlink(), f"{victim} left swapped"


# -- secrets that must never show ------------------------------------------------------------


def plant_outside(tmp_path: Path, name: str = "secret.txt", marker: str = "OUTSIDE-ROOT-MARKER-7f3a9c") -> tuple[Path, str]:
    """A file next to the repository (``tmp_path/outside/NAME``) holding a unique marker line."""
    d = tmp_path / "outside"
    d.mkdir(exist_ok=True)
    p = d / name
    p.write_text(f"root:x:0:0:{marker}:/root:/bin/sh\nMATCHME {marker}\n", encoding="utf-8")
    return p, marker


def fake_tokens() -> dict[str, str]:
    """Well-known secret formats with made-up values, built by concatenation so scanners of
    this repository do not flag the test source itself."""
    return {
        "aws": "AK" + "IA" + "Q3ZJ5X7K2M9P4R8T",
        "github": "gh" + "p_" + "Zq8dK2mV7xR4tY1wN6bF3hJ9cL5pS0aE2uGi",
        "gitlab": "gl" + "pat-" + "x7Kd9Qm2Vt4Rz8Lw1Np3",
        "slack": "xo" + "xb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    }


PRIVATE_KEY_BODY = "MIIEowIBAAKCAQEAHOSTILEKEYBODY0123456789abcdefQ"


def private_key_block() -> str:
    return "-----BEGIN " + "RSA PRIVATE KEY-----\n" + PRIVATE_KEY_BODY + "\n" + "-----END " + "RSA PRIVATE KEY-----\n"


# -- many slow processes at once ---------------------------------------------------------------


class SlowPool:
    """Processes that may hang, all started at once so their deadlines run concurrently.

    A module fixture launches every scenario up front; each test then takes
    its own ``Run`` with ``result(name)``, waiting at most until ``LIMIT``
    seconds after that process started. ``close()`` kills whatever is left.
    """

    def __init__(self, outdir: Path) -> None:
        self.outdir = outdir
        self.launched: dict[str, Launched] = {}

    def launch(self, name: str, argv: list[str], *, cwd: Path, env: dict, preexec_fn=None) -> None:
        self.launched[name] = Launched(argv, cwd=cwd, env=env, outdir=self.outdir / "runs", preexec_fn=preexec_fn)

    def result(self, name: str) -> Run:
        """The process's Run (it was killed, and counts as hung, LIMIT seconds after its own start)."""
        return self.launched[name].finish()

    def close(self) -> None:
        for x in self.launched.values():
            x.kill()


def isolated_env(home: Path) -> dict[str, str]:
    """The environment conftest's autouse isolation gives, for fixtures wider than one test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in ("JITCTX_ROOT", "CLAUDE_PROJECT_DIR", "JITCTX_DEBUG")}
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Fixture\n\temail = fixture@example.com\n[init]\n\tdefaultBranch = main\n")
    (home / "tmp").mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        TIKTOKEN_CACHE_DIR=str(home / "tiktoken"),
        TMPDIR=str(home / "tmp"),  # a process killed mid-call leaves its temp files here, not in /tmp
        # servers (CI's second run: the client's default, a root's third call starts one) in a run
        # folder of this fixture's own that its teardown empties (stop_servers of its jitctx/ run folder)
        XDG_RUNTIME_DIR=str(home / "run"),
    )
    if os.environ.get("JITCTX_TEST_SERVER") != "1":
        env["JITCTX_SERVER"] = "0"  # as conftest's first run: in process
    else:
        env.pop("JITCTX_SERVER", None)
    (home / "run").mkdir(mode=0o700, exist_ok=True)
    env["PYTHONPATH"] = os.pathsep.join([str(WORKTREE), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    return env


# An MCP stdio server whose grep runs the pure-Python backend (what ``jitctx mcp`` runs where
# the rg binary is absent), through the public surfaces only: a Workspace whose ``grep`` picks
# the backend and the time cap, served by ``build_server`` over the SDK's stdio transport.
PY_BACKEND_SERVER = """
import sys

import anyio
from mcp.server.stdio import stdio_server

from jitctx import Workspace
from jitctx.adapters.mcp import build_server

TIMEOUT = float(sys.argv[2])
STARTED = sys.argv[3]  # made when a grep starts: what the test waits for


class PythonBackendWorkspace(Workspace):
    def grep(self, *args, **kwargs):
        kwargs["backend"] = "python"
        kwargs["timeout"] = TIMEOUT
        open(STARTED, "a").close()
        return super().grep(*args, **kwargs)


app = build_server(workspace=PythonBackendWorkspace(sys.argv[1], max_tokens=4000), poll=None)


async def main():
    async with stdio_server() as (read, write):
        await app.server.run(read, write, app.server.create_initialization_options())


anyio.run(main)
"""


def python_backend_server(tmp_path: Path, root: Path, timeout: float) -> list[str]:
    """argv of a stdio MCP server over ``root`` whose grep uses the python backend with ``timeout``;
    ``grep_started(tmp_path)`` waits until a grep call has started in it."""
    script = tmp_path / "py_backend_server.py"
    script.write_text(PY_BACKEND_SERVER)
    return [sys.executable, str(script), str(root), str(timeout), str(tmp_path / "grep-started")]


def grep_started(tmp_path: Path, timeout: float = LIMIT) -> None:
    """Wait until the ``python_backend_server`` of ``tmp_path`` has started a grep call."""
    deadline = time.monotonic() + timeout
    while not (tmp_path / "grep-started").exists():
        assert time.monotonic() < deadline, f"no grep call started within {timeout:g} s"
        time.sleep(0.01)
