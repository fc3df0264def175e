"""Whether what a jitctx tool call returned is still current: the question compaction asks.

Owns judging a kept result of head, tail or outline against the file now: by
its content when the caller kept it (every line it shows is the file's line
now, the lines a note vouched for are still held, an outline's rows are the
outline now), else, for a file the session delivered, by the session's
record (changed since, or not). Does not own what a session was shown
(``rereads``), what it delivered (``ledger``) or compaction (``window.compact``).
"""

from __future__ import annotations

import json
import os

from ..errors import JitctxError, PathError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..repo.policy import PathPolicy
    from .rereads import Rereads

__all__ = ["is_current"]


def is_current(
    call,
    content: str | None,
    *,
    policy: PathPolicy,
    rereads: Rereads | None,
    delivered: Callable[[str], bool],
    stale: Callable[[], list[dict]],
    outline: Callable[[str, int], str],
) -> bool | None:
    """``Workspace.current``: ``True``, ``False`` or ``None`` (cannot be told). ``delivered(rel)``:
    whether the session delivered that file; ``stale()``: the session's stale entries;
    ``outline(rel, limit)``: the file's outline now, as text."""
    if getattr(call, "name", None) not in ("head", "tail", "outline"):
        return None
    try:
        args = json.loads(call.arguments or "{}")
        rel = policy.resolve(str(args["path"]), want="any").path
    except PathError as exc:  # gone since: its content is judged (not current) and let go
        if exc.reason != "not_found" or not isinstance(args, dict):
            return None
        rel = os.path.normpath(str(args["path"])).replace(os.sep, "/")
    except (ValueError, KeyError, TypeError, JitctxError):
        return None
    if content is not None and rereads is not None:
        if call.name == "outline":
            return _outline_current(rel, args, content, rereads, outline)
        return rereads.current(rel, content)
    if not delivered(rel):
        return None
    return not any(s["path"] == rel for s in stale())


def _outline_current(rel: str, args: dict, content: str, rereads: Rereads, outline: Callable[[str, int], str]) -> bool | None:
    """An outline's text against the outline of the file now: the same rows, or not."""
    rows = [ln for ln in content.split("\n") if ln and not ln.startswith(("==>", "["))]
    if "outline unchanged since shown" in content:
        got, now = rereads.outlines.get(rel), rereads.now(rel)
        return None if got is None or now is None else got[3] == now.sha256
    if not rows:
        return None
    try:
        limit = args.get("limit", 500)
        fresh = outline(rel, limit if isinstance(limit, int) else 500)
    except (JitctxError, OSError):
        return False
    return rows == [ln for ln in fresh.split("\n") if ln and not ln.startswith(("==>", "["))]
