"""Run a command while another process holds all but a few of the user's inotify instances.

    python benchmarks/inotify_hold.py [--free 8] [--limit 64 | --global] -- COMMAND ...

Issue 30's condition for the test suite: editors and build watchers hold most of the
user's inotify instances, ``--free`` are left. This process opens instances until the
kernel refuses one (``EMFILE``), closes ``--free`` of them, runs ``COMMAND``, reports
its exit status and how many instances were free before and after, and releases them.

By default it does so in a user namespace of its own (``unshare --user
--map-root-user``) whose ``fs.inotify.max_user_instances`` it sets to ``--limit``:
the kernel counts a namespace's instances against its own limit (and its parents'),
so the command meets exactly the same refusal while the real user's other programs
(other checkouts' test runs on a shared machine) keep their instances. ``--global``
takes the real user's instances instead (everything else of that user then meets the
limit too). Linux only.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import subprocess
import sys

_libc = ctypes.CDLL(None, use_errno=True)


def grab() -> list[int]:
    """Every inotify instance the kernel still gives this user."""
    fds = []
    while True:
        fd = _libc.inotify_init1(os.O_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            if err in (errno.EMFILE, errno.ENFILE):
                return fds
            raise OSError(err, os.strerror(err))
        fds.append(fd)


def free_now() -> int:
    fds = grab()
    for fd in fds:
        os.close(fd)
    return len(fds)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--free", type=int, default=8)
    ap.add_argument("--limit", type=int, default=64)
    ap.add_argument("--global", dest="global_", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("a command to run")
    if not args.global_ and os.environ.get("INOTIFY_HOLD_NS") != "1":
        env = {**os.environ, "INOTIFY_HOLD_NS": "1"}
        inner = [sys.executable, os.path.abspath(__file__), "--free", str(args.free), "--limit", str(args.limit), "--", *command]
        return subprocess.run(["unshare", "--user", "--map-root-user", *inner], env=env, check=False).returncode
    if not args.global_:
        with open("/proc/sys/fs/inotify/max_user_instances", "w") as f:
            f.write(str(args.limit))
    held = grab()
    for _ in range(min(args.free, len(held))):
        os.close(held.pop())
    before = free_now()
    print(f"inotify_hold: holding {len(held)} instances, {before} free for: {' '.join(command)}", flush=True)
    code = subprocess.run(command, check=False).returncode
    after = free_now()
    print(f"inotify_hold: exit {code}; {after} instances free after (were {before})", flush=True)
    for fd in held:
        os.close(fd)
    return code


if __name__ == "__main__":
    sys.exit(main())
