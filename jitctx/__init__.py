"""jitctx: the smallest set of high-signal tokens about a repository, just in time.

The public API. Heavy dependencies (tiktoken, gitpython, mcp) load only when
a call needs them.
"""

from __future__ import annotations

from .errors import BackendError, JitctxError, PathError, QueryError, RepoError, TokenizerError
from .refs import Excerpt, FileRef, LineRef, Result, Skipped
from .workspace import Workspace

__version__ = "0.1.0"

__all__ = [
    "BackendError",
    "Excerpt",
    "FileRef",
    "JitctxError",
    "LineRef",
    "PathError",
    "QueryError",
    "RepoError",
    "Result",
    "Skipped",
    "TokenizerError",
    "Workspace",
    "__version__",
]
