"""The processes jitctx starts by itself: started bare, seen, stopped.

Owns starting a helper process (a warm server, an index builder, an analysis
worker) with only the descriptors it needs (``spawn``: stdin, stdout and
stderr as asked, every other descriptor closed, whatever its close-on-exec
flag: a caller's pipe that reached this process must not live on in a child),
reaping the ones this process started (``reap``), tying a worker's life to
its parent's (``die_with_parent``), and finding and stopping every such
process of this user, whatever environment started it (``find``, ``stop``:
``jitctx serve --status --all`` and ``--stop --all``). A process is known by
the first line of the code it runs (``MARK``), or as ``jitctx serve`` run
in the foreground. Imports ``os`` and ``sys`` only at module level: the thin
client spawns through it. Does not own what those processes do (``server``,
``code.build``, ``code.workers``).
"""

from __future__ import annotations

import os
import sys

__all__ = ["MARK", "Proc", "die_with_parent", "find", "reap", "spawn", "stop"]

MARK = "# jitctx: "  # the first line of the code a started process runs: "# jitctx: server", "builder", "worker"
ROLES = ("server", "builder", "worker")

_children: set[int] = set()  # started here, not yet reaped


def _open_fds() -> list[int]:
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return sorted(int(n) for n in os.listdir(folder) if n.isdigit())
        except OSError:
            continue
    return list(range(3, 1024))  # no listing: close the usual range (a closed one is skipped)


def spawn(argv: list[str], *, env: dict[str, str] | None = None, stdin: int | None = None, stdout: int | None = None, keep: tuple[int, ...] = (), group: bool = True) -> int:
    """Start ``argv`` (``argv[0]`` is the program's path) and return its pid.

    Its stdin and stdout are the given descriptors (``/dev/null`` when ``None``), its
    stderr ``/dev/null``; of the others only ``keep`` stays open (made inheritable here).
    ``group``: a process group of its own (a Ctrl-C at the terminal is not for it).
    Raises ``OSError`` when it cannot start."""
    actions: list[tuple] = []
    for fd, given in ((0, stdin), (1, stdout)):
        actions.append((os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) if given is None else (os.POSIX_SPAWN_DUP2, given, fd))
    actions.append((os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_RDWR, 0))
    for fd in keep:
        os.set_inheritable(fd, True)
    # after the dup2s: a source descriptor is closed in the child once copied
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _open_fds() if fd > 2 and fd not in keep]
    environ = dict(os.environ) if env is None else env
    if group:
        pid = os.posix_spawn(argv[0], argv, environ, file_actions=actions, setpgroup=0)
    else:
        pid = os.posix_spawn(argv[0], argv, environ, file_actions=actions)
    _children.add(pid)
    return pid


def reap() -> None:
    """Collect the exit of every process started here that has ended (no zombies)."""
    for pid in list(_children):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        except OSError:
            continue
        if done:
            _children.discard(pid)


def die_with_parent(parent: int) -> bool:
    """Have the kernel kill this process when its parent ends (Linux ``PR_SET_PDEATHSIG``);
    whether the parent is still ``parent`` (else it ended before the call: leave)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    return os.getppid() == parent


# -- this user's jitctx processes -----------------------------------------------------------


class Proc:
    """One of this user's jitctx processes, as ``/proc`` shows it.

    ``role``: server, builder or worker; ``root``: the root it serves or builds (None for a
    worker); ``package``: the folder holding the jitctx it runs, when its command line
    says; ``age``: seconds since it started; ``rss_mib``: resident memory."""

    __slots__ = ("age", "argv", "package", "parent", "pid", "role", "root", "rss_mib")

    def __init__(self, pid: int, parent: int, role: str, root: str | None, package: str | None, age: float, rss_mib: float | None, argv: list[str]) -> None:
        self.pid, self.parent, self.role, self.root, self.package = pid, parent, role, root, package
        self.age, self.rss_mib, self.argv = age, rss_mib, argv

    def environ(self) -> dict[str, str] | None:
        """Its environment when it started (``None``: not readable)."""
        try:
            with open(f"/proc/{self.pid}/environ", "rb") as f:
                raw = f.read()
        except OSError:
            return None
        env = {}
        for item in raw.split(b"\0"):
            key, sep, value = item.partition(b"=")
            if sep:
                env[os.fsdecode(key)] = os.fsdecode(value)
        return env


# what jitctx before the marks (0.1.0 of issue 21-23) started: seen, and stopped, all the same
_UNMARKED = {"from jitctx.server import main": "server", "from jitctx.build import _main": "builder"}


def _classify(argv: list[str]) -> tuple[str, str | None, str | None] | None:
    """(role, root, package) of a command line, or ``None`` when it is not one of ours."""
    if len(argv) >= 3 and argv[1] == "-c" and (argv[2].startswith(MARK) or any(m in argv[2] for m in _UNMARKED)):
        if argv[2].startswith(MARK):
            role = argv[2][len(MARK) :].split("\n", 1)[0].strip()
        else:
            role = next(r for m, r in _UNMARKED.items() if m in argv[2])
        if role not in ROLES:
            return None
        package = _inserted(argv[2])
        rest = argv[3:]
        if role == "server":
            root = rest[rest.index("--root") + 1] if "--root" in rest[:-1] else None
        elif role == "builder":
            root = rest[0] if rest else None
        else:
            root = None
        return role, root, package
    # `jitctx serve` in the foreground: the console script, or python -m jitctx
    i = 1 if len(argv) > 1 and os.path.basename(argv[1]) == "jitctx" else 2 if argv[1:3] == ["-m", "jitctx"] else 0
    if i and len(argv) > i + 1 and argv[i + 1] == "serve" and not {"--status", "--stop", "-h", "--help"} & set(argv[i + 2 :]):
        rest = argv[i + 2 :]
        root = rest[rest.index("--root") + 1] if "--root" in rest[:-1] else None
        return "server", root, None
    return None


def _inserted(code: str) -> str | None:
    """The folder the started code puts first on ``sys.path`` (where its jitctx is)."""
    import ast

    head = "sys.path.insert(0, "
    start = code.find(head)
    if start < 0:
        return None
    end = code.find(")", start)
    try:
        folder = ast.literal_eval(code[start + len(head) : end])
    except (ValueError, SyntaxError):
        return None
    return os.path.join(folder, "jitctx") if isinstance(folder, str) else None


def _boot_time() -> float:
    try:
        with open("/proc/stat", encoding="ascii") as f:
            for line in f:
                if line.startswith("btime "):
                    return float(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0.0


def find() -> list[Proc]:
    """Every jitctx server, builder and worker of this user running now (Linux: ``/proc``;
    elsewhere an empty list), oldest first."""
    if not os.path.isdir("/proc/self"):
        return []
    uid, me = os.getuid(), os.getpid()
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    boot = _boot_time()
    import time

    now = time.time()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [os.fsdecode(a) for a in f.read().split(b"\0")[:-1]]
            what = _classify(argv)
            if what is None:
                continue
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if fields[0] == b"Z":
                continue  # ended; its parent has not collected it yet
            parent, started = int(fields[1]), int(fields[19]) / ticks + boot
        except (OSError, ValueError, IndexError):
            continue
        found.append(Proc(pid, parent, what[0], what[1], what[2], max(0.0, now - started), _rss(pid), argv))
    return sorted(found, key=lambda p: -p.age)


def _rss(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (an ended one its parent has not collected does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def stop(pids: list[int], *, grace: float = 5.0) -> list[int]:
    """``SIGTERM`` each of ``pids``, then ``SIGKILL`` what still runs after ``grace``
    seconds; the pids that still run after that (none, normally)."""
    import signal
    import time

    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    left = list(pids)
    while left and time.monotonic() < deadline:
        reap()
        left = [p for p in left if alive(p)]
        if left:
            time.sleep(0.02)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    end = time.monotonic() + 2.0
    while left and time.monotonic() < end:
        reap()
        left = [p for p in left if alive(p)]
        if left:
            time.sleep(0.02)
    return left
