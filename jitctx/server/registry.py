"""This user's warm servers: which run, asking one, their files, ``--status --all``.

Owns what is known of servers from outside them: the servers of a run
folder (each holds its lock file's lock: ``held``), a control request to one
(``ask``: status, stop, leave; ``control``: ``jitctx serve --status`` and
``--stop`` of one root), opening a file of the run folder as
untrusted (``private_file``: a regular file of this user, no link followed,
no blocking open; what else sits there is named with what to do), a status
as text, and every jitctx process of this user whatever environment started
it (``everyone``, from ``procs.find``): ``jitctx serve --status --all`` and
``--stop --all``. Does not own a server's life (``server``) or finding
processes (``procs``).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
from pathlib import Path

from .. import __version__, procs
from . import protocol

__all__ = ["Unusable", "ask", "control", "everyone", "held", "private_file", "running", "status_all", "status_text", "stop_all"]


class Unusable(Exception):
    """The run folder holds something that is not this server's (a folder, a link) where
    its socket, lock or log should be: the message names it and what to do."""


def private_file(path: str, *, create: bool) -> int:
    """Open a file of the run folder as untrusted (``cache.open_untrusted``), read and
    write; raises ``Unusable`` naming what is there."""
    from ..cache.folders import open_untrusted

    try:
        return open_untrusted(path, os.O_RDWR | (os.O_CREAT if create else 0))
    except OSError as exc:
        raise Unusable(exc.strerror or str(exc)) from None


def running(folder: str) -> list[int]:
    """The pids of the servers whose sockets are in ``folder`` (a run folder's ``jitctx/``)
    and that run now: each holds its lock file's lock, which a new attempt cannot take."""
    return [pid for _, pid, _ in held(folder)]


def held(folder: str) -> list[tuple[str, int, float]]:
    """(lock path, pid, last use) of each server of ``folder`` running now."""
    import fcntl

    found = []
    for lock in sorted(Path(folder).glob("*.lock")) if os.path.isdir(folder) else []:
        try:
            fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                continue  # not held: that server has ended
            except OSError:
                pass
            pid = int(os.read(fd, 64).split()[0])
        except (OSError, ValueError, IndexError):
            continue
        finally:
            os.close(fd)
        found.append((str(lock), pid, st.st_mtime))
    return found


def ask(path: str, what: str, *, timeout: float = 5.0) -> str | None:
    """Send a control request to the server at ``path``; its answer, or ``None``."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            cred = s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            if int.from_bytes(cred[4:8], sys.byteorder) != os.getuid():
                return None
            s.sendall(protocol.encode_request([protocol.CONTROL, what]))
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
    except OSError:
        return None
    return b"".join(chunks).decode("utf-8", "replace").rstrip("\n") or None


def status_text(s: dict) -> str:
    """A server's status (``Server.status``) as ``serve --status`` prints it."""
    rss = s.get("rss_mib")
    return "\n".join(
        [
            f"pid {s.get('pid')}, serving {s.get('root')}",
            f"socket {s.get('socket')}",
            f"up {s.get('up', 0):,.0f} s, {s.get('calls', 0):,} calls answered, {s.get('refused', 0):,} sent back, {s.get('sessions', 0)} session(s), "
            f"idle exit after {s.get('idle_exit', 0):g} s (idle {s.get('idle', 0):,.0f} s)",
            f"memory {rss:,.1f} MiB resident" if isinstance(rss, (int, float)) else "memory unknown",
            f"listing: {s.get('listing')}",
        ]
    )


def control(root: str | None, what: str, *, as_json: bool = False) -> int:
    """``jitctx serve --status`` / ``--stop``: ask the root's server; 1 when none runs."""
    from ..repo.universe import find_root

    real = str(find_root(root))
    folder = protocol.run_dir(os.environ, make=False)
    fp = protocol.fingerprint(os.environ, protocol.PACKAGE, __version__)
    path = protocol.socket_name(folder, real, fp) if folder else None
    answer = ask(path, what) if path is not None else None
    if not answer:
        sys.stdout.write(json.dumps({"root": real, "running": False}) + "\n" if as_json else f"no server runs for {real}\n")
        return 1
    if what == "stop":
        sys.stdout.write(json.dumps({"root": real, "running": True, "stopping": True}) + "\n" if as_json else f"stopped the server for {real}\n")
        return 0
    try:
        status = json.loads(answer)
    except ValueError:
        status = None
    if not isinstance(status, dict):
        sys.stdout.write(f"the server for {real} gave no status\n")
        return 1
    if as_json:
        sys.stdout.write(json.dumps({"running": True, **status}, indent=2) + "\n")
    else:
        sys.stdout.write(status_text(status) + "\n")
    return 0


# -- every jitctx process of this user (serve --status --all, --stop --all) ---------------------


def everyone(root: str | None = None) -> list[dict]:
    """Every jitctx server, index builder and worker of this user running now, whatever
    environment started it (``procs.find``), with what each server says of itself; only
    those of ``root`` (a real path) when given. Each one a dict: ``pid``, ``parent``,
    ``role``, ``root``, ``age``, ``rss_mib``, ``package``; a server also ``status`` (its
    ``Server.status``, or ``None`` when it does not answer) and ``separate`` (the
    environment keys that set it apart from another server of its root)."""
    found = procs.find()
    rows: list[dict] = []
    for p in found:
        row: dict = {
            "pid": p.pid,
            "parent": p.parent,
            "role": p.role,
            "root": p.root,
            "age": round(p.age, 1),
            "rss_mib": None if p.rss_mib is None else round(p.rss_mib, 1),
            "package": p.package,
            "interpreter": p.argv[0] if p.argv else None,
        }
        if p.role == "server":
            status = row["status"] = _status_of(p)
            if status is not None:
                row["root"] = status.get("root", p.root)
                row["package"] = status.get("package", p.package)
            elif p.root is not None:
                row["root"] = os.path.realpath(p.root)
        elif p.role == "builder" and p.root is not None:
            row["root"] = os.path.realpath(p.root)
        rows.append(row)
    by_pid = {r["pid"]: r for r in rows}
    for r in rows:
        if r["role"] == "worker" and r["parent"] in by_pid:
            r["root"] = by_pid[r["parent"]]["root"]
    _separate([r for r in rows if r["role"] == "server"])
    return [r for r in rows if root is None or r["root"] == root]


def _status_of(p: procs.Proc) -> dict | None:
    """What a server of this user (found in ``/proc``) says of itself: its socket is found
    from the environment it started with (its run folder) and its lock file's pid."""
    env = p.environ()
    folder = protocol.run_dir(env, make=False) if env is not None else None
    if folder is None:
        return None
    for lock, pid, _ in held(folder):
        if pid == p.pid:
            answer = ask(lock[: -len(".lock")] + ".sock", "status", timeout=1.0)
            try:
                status = json.loads(answer) if answer else None
            except ValueError:
                return None
            return status if isinstance(status, dict) else None
    return None


def _separate(servers: list[dict]) -> None:
    """For servers of one root, why each is separate: the interpreter, the jitctx or the
    environment keys that differ from another's."""
    groups: dict[str, list[dict]] = {}
    for s in servers:
        s["separate"] = []
        if s["root"] is not None:
            groups.setdefault(s["root"], []).append(s)
    for group in groups.values():
        for s in group:
            mine = _identity(s)
            for other in group:
                if other is s:
                    continue
                theirs = _identity(other)
                keys = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
                s["separate"].append({"pid": other["pid"], "differ": keys or ["nothing seen (one of them does not answer)"]})


def _identity(server: dict) -> dict[str, str]:
    status = server.get("status") or {}
    socket_path = status.get("socket")
    ident = {
        "interpreter": str(status.get("interpreter")),
        "package": str(status.get("package")),
        "version": str(status.get("version")),
        "run folder": os.path.dirname(socket_path) if isinstance(socket_path, str) else "None",
    }
    for item in status.get("environment") or []:
        key, _, value = str(item).partition("=")
        ident[key] = value
    return ident


def _age(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def _rows_text(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        rss = f"{r['rss_mib']:,.1f} MiB" if r["rss_mib"] is not None else "memory unknown"
        head = f"{r['role']:<7} pid {r['pid']:<7} up {_age(r['age'])}, {rss}"
        if r["role"] == "worker":
            lines.append(f"{head}, of pid {r['parent']} ({r['root'] or 'root unknown'})")
            continue
        lines.append(f"{head}, {r['root'] or 'root unknown'}")
        s = r.get("status")
        if r["role"] == "server":
            if s is None:
                lines.append("        gave no status (stopped, another jitctx version, or its socket is gone)")
            else:
                lines.append(
                    f"        {s.get('calls', 0):,} calls, {s.get('sessions', 0)} session(s), idle {_age(s.get('idle', 0))} (exits after {_age(s.get('idle_exit', 0))}), listing {s.get('listing')}"
                )
            for other in r.get("separate", []):
                lines.append(f"        separate from pid {other['pid']}: {', '.join(other['differ'])} differ")
    roles = [r["role"] for r in rows]
    counts = ", ".join(f"{roles.count(k)} {k}{'s' if roles.count(k) != 1 else ''}" for k in procs.ROLES if k in roles)
    lines.append(f"{len(rows)} jitctx process{'es' if len(rows) != 1 else ''} ({counts})")
    return "\n".join(lines)


def _scope(root: str | None) -> str | None:
    if root is None:
        return None
    from ..repo.universe import find_root

    return str(find_root(root))


def status_all(root: str | None, *, as_json: bool = False) -> int:
    """``jitctx serve --status --all``: every jitctx process of this user (of ``root``
    with ``--root``); 1 when there is none."""
    scope = _scope(root)
    rows = everyone(scope)
    if as_json:
        sys.stdout.write(json.dumps({"processes": rows}, indent=2) + "\n")
    elif rows:
        sys.stdout.write(_rows_text(rows) + "\n")
    else:
        sys.stdout.write(f"no jitctx process runs{f' for {scope}' if scope else ''}\n")
    return 0 if rows else 1


def stop_all(root: str | None, *, as_json: bool = False) -> int:
    """``jitctx serve --stop --all``: stop every jitctx process of this user (of ``root``
    with ``--root``): servers are asked to stop (they stop their builders), then every
    one left gets ``SIGTERM``, and ``SIGKILL`` after a few seconds. 1 when none ran."""
    scope = _scope(root)
    rows = everyone(scope)
    for r in rows:
        if r["role"] == "server" and r.get("status") and r["status"].get("socket"):
            ask(r["status"]["socket"], "stop", timeout=1.0)
    left = procs.stop([r["pid"] for r in rows])
    if as_json:
        sys.stdout.write(json.dumps({"stopped": [r["pid"] for r in rows if r["pid"] not in left], "left": left}) + "\n")
    elif rows:
        sys.stdout.write(
            f"stopped {len(rows) - len(left)} jitctx process{'es' if len(rows) - len(left) != 1 else ''}" + (f"; still running: {', '.join(map(str, left))}" if left else "") + "\n"
        )
    else:
        sys.stdout.write(f"no jitctx process runs{f' for {scope}' if scope else ''}\n")
    return 0 if rows else 1
