"""Where jitctx keeps files between calls (the index, token counts, rg's deny list).

Owns the one location rule, and opening a file there as untrusted
(``open_untrusted``: a regular file of this user, no link followed, no open
that blocks); not what is kept there (``code.store``, ``code.counts``,
``primitives.engines.rg``, ``code.build``). Never inside a served repository: the callers
check, and keep nothing when it would be.
"""

from __future__ import annotations

import os
import re

__all__ = ["cache_dir", "index_file", "open_untrusted", "what_is_at"]


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


def open_untrusted(path: str, flags: int, mode: int = 0o600) -> int:
    """``os.open`` for a file of the cache or run folder, which anything may have been put at
    (a FIFO, a folder, a link to another file): no link followed, no blocking open, and
    only a regular file of this user is kept (the descriptor is blocking again when
    returned). Raises ``OSError`` whose text names the path and what to do."""
    import stat

    try:
        fd = os.open(path, flags | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, mode)
    except OSError as exc:
        raise OSError(exc.errno, what_is_at(path, exc.strerror or str(exc))) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
        os.close(fd)
        raise OSError(0, f"{path} is not a file of yours: remove it")
    os.set_blocking(fd, True)
    return fd


def what_is_at(path: str, reason: str) -> str:
    """Why ``path`` could not be opened as jitctx's own file, and what to do."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return f"{path} cannot be opened ({reason}): check its folder"
    kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
    return f"{path} is {kind}, where jitctx keeps a file of its own: remove it"
