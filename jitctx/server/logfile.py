"""The warm server's log: a file beside its socket, and stderr in the foreground.

Owns where a server's log goes (``<socket>.log`` in the private run folder:
a started server has no terminal; opened as untrusted, no link followed;
bounded: a new server starts a new log past 1 MiB), its level
(``JITCTX_LOG``, warning by default) and its format. Does not own what is
logged (each module's own logger under ``jitctx``).
"""

from __future__ import annotations

import logging
import os
import sys

from . import registry

__all__ = ["log_to"]


def log_to(path: str, *, foreground: bool) -> None:
    """The server's log: ``path`` (``<socket>.log`` beside its socket: a started server has no
    terminal), and stderr too in the ``foreground``. Level from ``JITCTX_LOG`` (warning).
    Opened as untrusted (no link followed); not kept when it cannot be."""
    level = getattr(logging, os.environ.get("JITCTX_LOG", "WARNING").upper(), logging.WARNING)
    root = logging.getLogger("jitctx")
    root.setLevel(level if isinstance(level, int) else logging.WARNING)
    fmt = logging.Formatter("%(asctime)s jitctx server %(process)d: %(levelname)s: %(message)s")
    handler: logging.Handler
    try:
        fd = registry.private_file(path, create=True)
        if os.fstat(fd).st_size > 1 << 20:
            os.ftruncate(fd, 0)  # bounded: a new server starts a new log past 1 MiB
        os.lseek(fd, 0, os.SEEK_END)
        handler = logging.StreamHandler(open(fd, "a", encoding="utf-8", errors="backslashreplace"))  # noqa: SIM115 - the server's life
    except (OSError, registry.Unusable) as exc:
        handler = logging.NullHandler()
        if foreground and sys.__stderr__ is not None:
            sys.__stderr__.write(f"jitctx: warning: no log file: {exc}\n")
    handler.setFormatter(fmt)
    root.addHandler(handler)
    if foreground and sys.__stderr__ is not None:
        tty = logging.StreamHandler(sys.__stderr__)
        tty.setFormatter(fmt)
        root.addHandler(tty)
