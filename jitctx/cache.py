"""Where jitctx keeps files between calls (the index, token counts, rg's deny list).

Owns the one location rule; not what is kept there (``code.store``,
``code.counts``, ``_backends.rg``). Never inside a served repository: the
callers check, and keep nothing when it would be.
"""

from __future__ import annotations

import os

__all__ = ["cache_dir"]


def cache_dir() -> str:
    """Where jitctx keeps its stores: ``$JITCTX_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/jitctx`` (an absolute value only, as the XDG spec
    says), else ``~/.cache/jitctx``. Not created here."""
    own = os.environ.get("JITCTX_CACHE_DIR")
    if own:
        return os.path.abspath(os.path.expanduser(own))
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "jitctx")
    return os.path.join(os.path.expanduser("~"), ".cache", "jitctx")
