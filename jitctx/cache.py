"""Where jitctx keeps files between calls (the index, token counts, rg's deny list).

Owns the one location rule; not what is kept there (``code.store``,
``code.counts``, ``_backends.rg``). Never inside a served repository: the
callers check, and keep nothing when it would be.
"""

from __future__ import annotations

import os
import re

__all__ = ["cache_dir", "index_file"]


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


def index_file(root: str | os.PathLike, cache: str | None = None) -> str:
    """Where the code index of ``root`` lives: ``<cache>/index/<folder name>-<16 hex
    digits of the sha256 of its real path>.sqlite`` (see ``code.index``)."""
    import hashlib  # not at start-up: its OpenSSL load is ~2 ms

    real = os.path.realpath(root)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(real))[:48] or "root"
    return os.path.join(cache or cache_dir(), "index", f"{name}-{digest}.sqlite")
