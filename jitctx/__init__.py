"""jitctx: the smallest set of high-signal tokens about a repository, just in time.

The public API. Names load on first use (PEP 562), so ``jitctx --version``
and ``--help`` stay near bare interpreter start-up, and heavy dependencies
(tiktoken, tree-sitter, mcp) load only when a call needs them.
"""

__version__ = "0.1.0"

_WHERE = {
    "AssembleConfig": "window.assemble",
    "Context": "window.context",
    "Message": "window.sources",
    "Source": "window.sources",
    "ToolCall": "window.sources",
    "assemble": "window.assemble",
    "compact": "window.compact",
    "Compaction": "window.compact",
    "context_for_task": "window.for_task",
    "BackendError": "errors",
    "Excerpt": "refs",
    "FileRef": "refs",
    "JitctxError": "errors",
    "LineRef": "refs",
    "PathError": "errors",
    "Preload": "preload.prefix",
    "Refreshed": "session.workspace",
    "PreloadFile": "preload.prefix",
    "QueryError": "errors",
    "RepoError": "errors",
    "Result": "refs",
    "Skipped": "refs",
    "TokenizerError": "errors",
    "Workspace": "session.workspace",
}

__all__ = sorted([*_WHERE, "__version__"])


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'jitctx' has no attribute {name!r}")
    from importlib import import_module  # here, not at start-up: importlib pulls in warnings (~0.4 ms)

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
