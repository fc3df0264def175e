"""``jitctx.tools``: the tool specs, schema export and ``dispatch`` for agents.

A stable import path for :mod:`jitctx.adapters.tools`; needs no ``mcp`` SDK.
"""

from __future__ import annotations

from .adapters.tools import (
    DEFAULT_MAX_TOKENS,
    FORMATS,
    TOOLS,
    ToolOutput,
    ToolSpec,
    dispatch,
    export_schemas,
)

__all__ = ["DEFAULT_MAX_TOKENS", "FORMATS", "TOOLS", "ToolOutput", "ToolSpec", "dispatch", "export_schemas"]
