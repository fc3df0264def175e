"""Answering one call on the warm server: the CLI run on the caller's streams.

Owns what happens once a queued call's turn comes: the client told to go, the
caller's stdout and stderr taken (exactly two usable descriptors, else the
call is refused), text streams made on them (``request.stream``), one
``call.Caller`` handed to the CLI (``adapters.cli.run.call``) with the caller's
working directory, width, the root served and its Workspaces, the call's
cancel token set, and the reply line (``ok CODE``, ``elsewhere ROOT``). An
error of the CLI is the caller's stderr line, never the server's end. Does
not own the queue or the server's life (``serve``), the wire (``request``)
or what an answer is (the CLI).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..adapters.cli.run import call as run_cli
from ..call import Caller
from . import request
from .request import Call

__all__ = ["answer"]

log = logging.getLogger("jitctx.server.serve")


def answer(call: Call, root: str, workspace: Callable[[bool], object]) -> str | None:
    """Run ``call`` on the caller's streams; the reply line to send once the call counts
    as answered, or ``None`` when it was not run (the client went away, its descriptors
    did not come, or it was refused: then the client answers it itself).
    ``workspace(record)``: the call's Workspace (``Sessions.workspace``)."""
    from .. import cancel

    if call.token.is_set():
        return None
    if not call.send("go") or not call.got_fds.wait(request.FRAME_SECONDS) or call.token.is_set():
        return None  # the client went away, or its descriptors did not come: it answers itself
    fds, call.fds = call.fds, []
    if len(fds) != 2 or any(request.unusable_fd(fd) for fd in fds):
        request.close_fds(fds)
        call.send("protocol")
        return None
    out = request.stream(fds[0], call.out, call)
    err = request.stream(fds[1], call.err, call)
    caller = Caller(out, err, cwd=call.cwd, columns=call.columns, serves=root, workspace=workspace)
    code: int | str
    try:
        with cancel.running(call.token):
            code = run_cli(call.argv, caller)
        if caller.elsewhere is not None:  # nothing was written: the caller asks that root's server
            code = f"elsewhere {caller.elsewhere}"
    except BaseException as exc:  # noqa: BLE001 - the server outlives any one call
        log.exception("call %s failed", call.argv[:1])
        code = 2
        try:
            err.write(f"jitctx: error: internal error: {type(exc).__name__}: {exc}\n  hint: set JITCTX_DEBUG=1 for a traceback and report it\n")
        except (OSError, ValueError):
            pass
    finally:
        request.close_stream(out)
        request.close_stream(err)
    return f"ok {code}" if isinstance(code, int) else code
