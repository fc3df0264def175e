"""jitctx: the smallest set of high-signal tokens about a repository, just in time.

The public API. Names load on first use (PEP 562), so ``jitctx --version``
and ``--help`` stay near bare interpreter start-up, and heavy dependencies
(tiktoken, gitpython, mcp) load only when a call needs them.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_WHERE = {
    "AssembleConfig": "assemble",
    "Context": "window",
    "Message": "sources",
    "Source": "sources",
    "ToolCall": "sources",
    "assemble": "assemble",
    "context_for_task": "taskctx",
    "BackendError": "errors",
    "Excerpt": "refs",
    "FileRef": "refs",
    "JitctxError": "errors",
    "LineRef": "refs",
    "PathError": "errors",
    "Preload": "preload",
    "PreloadFile": "preload",
    "QueryError": "errors",
    "RepoError": "errors",
    "Result": "refs",
    "Skipped": "refs",
    "TokenizerError": "errors",
    "Workspace": "workspace",
}

__all__ = sorted([*_WHERE, "__version__"])

TYPE_CHECKING = False  # typing costs ~5 ms at start-up; the constant is enough for checkers
if TYPE_CHECKING:  # pragma: no cover
    from .assemble import AssembleConfig, assemble
    from .preload import Preload, PreloadFile
    from .sources import Message, Source, ToolCall
    from .taskctx import context_for_task
    from .window import Context
    from .errors import BackendError, JitctxError, PathError, QueryError, RepoError, TokenizerError
    from .refs import Excerpt, FileRef, LineRef, Result, Skipped
    from .workspace import Workspace


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'jitctx' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
