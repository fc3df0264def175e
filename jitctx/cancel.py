"""Cancellation: a request the caller gave up on stops its work.

Owns the one token a long-lived surface sets when its caller cancels or goes
away (an MCP client's ``notifications/cancelled``, a closed connection), and
how work under way asks for it. The token travels in a context variable, so
the primitives' signatures do not carry it: the MCP adapter runs each call
in a worker thread with the token set there, and the engines that can run
long (rg, the python backend, git listings) look at it. Pure, no I/O.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["call", "cancelled", "current", "running"]

_current: ContextVar[threading.Event | None] = ContextVar("jitctx_cancel", default=None)


def current() -> threading.Event | None:
    """The token of the request being served, if its surface can cancel it."""
    return _current.get()


def cancelled() -> bool:
    token = _current.get()
    return token is not None and token.is_set()


@contextmanager
def running(token: threading.Event) -> Iterator[None]:
    """Serve the work in this block under ``token`` (set it to cancel)."""
    reset = _current.set(token)
    try:
        yield
    finally:
        _current.reset(reset)


def call(token: threading.Event, fn: Callable[..., object], *args: object, **kwargs: object) -> object:
    """``fn(*args, **kwargs)`` under ``token`` (for a worker thread)."""
    with running(token):
        return fn(*args, **kwargs)
