"""What an answer says about the code index's background build.

Owns the notices of the answers that rest on an index still being built: a
``symbols`` answer that came partly from grep (how far the build is), and a
``locate`` answer from the index as it is or from a quick pass (what the
answer rests on, what is not indexed yet). Each starts the build first, or
finds it under way (``build.start``: a process of its own, even from the
server, since a thread would share its GIL with the calls). Does not own
the build, its plan or its progress (``build``).
"""

from __future__ import annotations

from . import build

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .structure import CodeIndex

__all__ = ["for_locate", "for_symbols"]


def for_symbols(code: CodeIndex) -> str:
    """Start (or find) the background build; say how far it is."""
    index_path = code.index.path
    if index_path is None:
        return f"({code.index.notice}: no index is kept, so none is built.)"
    running = build.start(str(code.repo.root), index_path)
    got = build.progress(index_path)
    if running and got is not None and got.total:
        return f"The index is being built in the background ({got.phase}: {got.percent()}% of {got.total:,} files)."
    if running:
        return "The index is being built in the background."
    why = build.failed(index_path)
    if why:
        return f"The index cannot be built ({why})."
    wait = build.waiting(index_path)
    return f"{wait}: this one starts at a later call." if wait else "No background build could start."


def for_locate(code: CodeIndex, plan: build.Plan) -> str:
    """Start (or find) the background build and say what this answer rests on."""
    index_path = code.index.path
    if index_path is None:
        return f"{code.index.notice}: this answer comes from a quick pass over what grep finds (the index cannot be kept, so none is built)"
    running = build.start(str(code.repo.root), index_path)
    got = build.progress(index_path)
    far = f"{got.percent()}% of {got.total:,} files to read" if got is not None and got.total else f"{plan.indexed:,} of {plan.listed:,} files indexed"
    why = None if running else build.failed(index_path)
    if running:
        state = f"the index is being built in the background ({far})"
    elif why is not None:
        state = f"the index cannot be built ({why}; tried again {build.RETRY_SECONDS // 60} minutes after that)"
    elif (wait := build.waiting(index_path)) is not None:
        state = f"the index is behind the tree ({far}); {wait}, so this one starts at a later call"
    else:
        state = f"the index is behind the tree ({far}) and no background build could start"
    if plan.mode == "quick":
        return f"{state}: this answer comes from a quick pass over what grep finds" + ("; ranking may improve once it is built" if running else "")
    shown = ", ".join(plan.work[:5]) + (f" and {len(plan.work) - 5:,} more" if len(plan.work) > 5 else "")
    gone = f"; {len(plan.removed):,} files gone since are left out" if plan.removed else ""
    return f"{state}: this answer is partly old: {len(plan.work):,} changed or new files are not indexed yet ({shown}){gone}"
