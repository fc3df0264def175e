"""Warming a new server up before its first call: imports, loads, the kept listing.

Owns what the server does once, on its worker thread, before it takes calls:
importing and loading what calls need (the CLI's view, tree-sitter, the
tokenizer, watchdog's observer), one thread at a time (imports racing on two
threads can meet a module half made), at the lowest priority (the call that
started the server is answered in its own process meanwhile), and starting
the listing kept in memory (a git work tree on Linux). Does not own the
listing itself (``kept_listing``) or the server's life (``serve``).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .kept_listing import LiveListing

__all__ = ["quietly"]

log = logging.getLogger("jitctx.server.serve")


def quietly(root: str, folder: str) -> LiveListing | None:
    """``warm`` at the lowest priority (this thread, its listing thread and their git
    processes): the call that started the server is being answered in its own process
    meanwhile, and must not wait for the CPU this takes (~2 s on a 100k-file tree).
    The listing kept in memory, when one was started."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass
    try:
        return warm(root, folder)
    except Exception as exc:  # noqa: BLE001 - calls load what they need themselves
        log.warning("warming up failed: %s: %s", type(exc).__name__, exc)
        return None


def warm(root: str, folder: str) -> LiveListing | None:
    """Before the first call, on the worker thread: what calls import and load, then the
    listing. One thread imports at a time (imports racing on two threads can meet a
    module half made), and no call waits for the tokenizer (~150 ms) or tree-sitter."""
    from ..adapters import cliview  # noqa: F401
    from ..code import parse
    from ..tokens.tokenizer import get_tokenizer

    parse.warm()
    get_tokenizer().count("warm")
    if sys.platform.startswith("linux"):
        from ..session import tree_watch

        tree_watch.warm()
    return keep_listing(root, folder)


def keep_listing(root: str, folder: str) -> LiveListing | None:
    """Start the listing kept in memory (a git work tree on Linux; else calls list afresh)."""
    from ..repo.universe import Repo
    from .kept_listing import LiveListing

    repo = Repo(Path(root))
    if repo.git is None or not sys.platform.startswith("linux") or os.environ.get("JITCTX_SERVER_LISTING") == "0":
        return None
    live = LiveListing(repo.root, repo.git.git_dir, repo.git.common_dir, folder, repo.configured_excludes())
    live.start()
    return live
