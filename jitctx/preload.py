"""Preload: instruction files and README as a byte-stable prefix.

Placeholder until the preload issue: the just-in-time hook returns nothing.
"""

from __future__ import annotations

__all__ = ["JitInstructions"]


class JitInstructions:
    """Delivers nested instruction files the first time a path under them is shown."""

    def __init__(self, ws) -> None:
        self.ws = ws

    def on_paths(self, paths: list[str], *, content: bool) -> list[dict]:
        return []
