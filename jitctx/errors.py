"""Errors jitctx raises when a whole request fails.

Owns the exception tree and its structured form; not the mapping to exit
codes or tool errors (the adapters do that)::

    JitctxError
    ├── QueryError        the caller can fix the request (bad value)
    │   └── PathError     a path that is missing, outside the root, denied...
    ├── RepoError         the repository cannot be served
    ├── BackendError      the search engine failed
    └── TokenizerError    the token encoding cannot be loaded

One bad file inside a larger request is not an error: it is reported as data
(``Skipped``) and the run goes on.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "JitctxError",
    "PathError",
    "QueryError",
    "RepoError",
    "TokenizerError",
]


class JitctxError(Exception):
    """Base class. ``message`` says what went wrong, ``hint`` what to do."""

    kind = "error"

    def __init__(self, message: str, *, hint: str | None = None, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.fields = {k: v for k, v in fields.items() if v is not None}

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def to_dict(self) -> dict:
        """Structured form for tool callers: type, message, hint, fields."""
        return {"type": self.kind, "message": self.message, "hint": self.hint, **self.fields}


class QueryError(JitctxError):
    """A request the caller can fix: an invalid value, named in the message."""

    kind = "query_error"


class PathError(QueryError):
    """A path that cannot be served; ``reason`` is a stable code."""

    kind = "path_error"

    def __init__(self, message: str, *, path: str, reason: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint, path=path, reason=reason)
        self.path = path
        self.reason = reason


class RepoError(JitctxError):
    """The repository (root, git) cannot be served."""

    kind = "repo_error"


class BackendError(JitctxError):
    """The search backend failed or rejected the request."""

    kind = "backend_error"


class TokenizerError(JitctxError):
    """The token encoding could not be loaded."""

    kind = "tokenizer_error"
