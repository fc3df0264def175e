"""What one CLI call is for, and where its answer goes.

Owns the one object a surface hands the CLI for a call (``adapters.cli.main(argv,
caller=...)``): the streams it writes to, the working directory its paths are
taken from, the width its usage text wraps at, and, when a warm server answers
for another process, how that server makes the call's Workspace and which root
it serves. A call in a process of its own takes the process's streams,
directory and terminal (``Caller.here()``). Does not own running the call (the
CLI), the server's life or its wire protocol (``server``, ``calls``). Stdlib
``os`` only: the console entry imports it before anything else.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # as typing's, without importing typing (start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

__all__ = ["Caller", "terminal_columns"]


class Caller:
    """One call's surroundings, passed down explicitly (no process-wide stream swap,
    no module global, no exception used as a message).

    ``out``/``err``: the streams the call writes to. ``cwd``: the directory its
    relative paths and its root are taken from (``None``: the process's).
    ``columns``: the width usage text wraps at (``None``: ``terminal_columns()``).
    ``serves`` and ``workspace``: a server's root, and ``workspace(record)`` making
    the call's Workspace of it (its warm listing, the caller's session); ``None``
    in a process of its own. ``elsewhere``: set by the CLI when the call names
    another root than ``serves``; nothing was written, and the server's client
    asks that root's server (or runs the call itself).
    """

    __slots__ = ("columns", "cwd", "elsewhere", "err", "out", "serves", "workspace")

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        cwd: str | None = None,
        columns: int | None = None,
        serves: str | None = None,
        workspace: Callable[[bool], Any] | None = None,
    ) -> None:
        self.out = out
        self.err = err
        self.cwd = cwd
        self.columns = columns
        self.serves = serves
        self.workspace = workspace
        self.elsewhere: str | None = None

    @classmethod
    def here(cls) -> Caller:
        """A call in this process: its own stdout and stderr (``/dev/null`` for one
        started closed, ``>&-``: written nowhere, quietly), directory and terminal."""
        out, err = sys.stdout, sys.stderr
        return cls(out if out is not None else _nowhere(), err if err is not None else _nowhere())

    def width(self) -> int:
        """The width usage and help text wrap at."""
        return self.columns if self.columns is not None else terminal_columns()


def _nowhere() -> TextIO:
    return open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process


def terminal_columns() -> int:
    """The width argparse's help takes, as ``shutil.get_terminal_size`` finds it
    ($COLUMNS, else the terminal, else 80), without importing shutil: argparse
    makes a formatter for every option it adds, and shutil's import (bz2, lzma)
    costs ~2 ms of a one-shot call."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ is not None else 0
        except (ValueError, OSError):  # not a terminal, or closed
            columns = 0
    return columns if columns > 0 else 80
