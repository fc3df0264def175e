"""Where a root's warm server listens, and what a request to it carries.

Owns the rules the thin client (``jitctx.client``) and the server
(``jitctx.server.serve``) must agree on: the private folder of the sockets, the
name of a root's socket (one server per user, root and environment that can
change an answer), the environment fingerprint, and the request and reply
encodings. Imports nothing beyond ``os`` and ``sys`` at module level: the
client runs this on every call, and its budget is a few milliseconds.
Does not own starting, serving or answering (``server``), or deciding what
goes to a server (``client``).
"""

import os
import sys

__all__ = ["CONTROL", "PACKAGE", "PROTOCOL", "SEEN_WINDOW", "answer_keys", "decode_request", "digest", "encode_request", "fingerprint", "inside", "run_dir", "socket_name"]

PROTOCOL = "jitctx-serve/2"  # 2: the caller's descriptors only once the call starts, and a writing handshake
CONTROL = "jitctx-control/1"  # --status, --stop
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # which jitctx answers: part of the fingerprint
SOCKET_MAX = 100  # bytes of a socket path (sun_path holds 108 with its NUL); longer: no server
SEEN_WINDOW = 600.0  # seconds: calls of a root counted together (its ".seen" mark) to decide on starting a server

# the environment that can change an answer: each distinct value gets a server of its own
_EXACT = ("HOME", "PATH", "LANG", "LANGUAGE", "TMPDIR", "TEMP", "TMP", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "PYTHONPATH", "PYTHONIOENCODING", "PYTHONUTF8")
_PREFIXES = ("GIT_", "LC_", "JITCTX_")
# JITCTX_ keys that only steer the server itself, never an answer
_OWN = frozenset({"JITCTX_SESSION", "JITCTX_SERVER", "JITCTX_SERVER_IDLE", "JITCTX_SERVER_MAX", "JITCTX_LOG"})


def answer_keys(environ: dict[str, str] | os._Environ) -> list[str]:
    """The environment keys set in ``environ`` that can reach an answer, sorted."""
    return sorted(k for k in environ if (k in _EXACT or k.startswith(_PREFIXES)) and k not in _OWN)


def fingerprint(environ: dict[str, str] | os._Environ, package: str, version: str) -> str:
    """What a server must share with a caller to answer as the caller's own process would:
    the interpreter, the jitctx package (its folder and version), the user and the
    environment keys that reach an answer (git's, the locale, the cache folders, jitctx's
    own). NUL-separated text: the server compares it whole, the socket name hashes it."""
    parts = [PROTOCOL, sys.executable, package, version, str(os.getuid())]
    parts += [f"{k}={environ[k]}" for k in answer_keys(environ)]
    return "\0".join(parts)


_PRIME = (1 << 127) - 1


def digest(text: str) -> str:
    """32 hex digits naming a text (a socket's name, a fingerprint's comparison; not a
    secret): its bytes as one number modulo the prime 2**127-1, scrambled by raising 3 to
    that power (one-to-one, and any change moves every digit). No import: even
    ``_blake2``'s costs ~0.2 ms of a call whose budget is a few."""
    residue = int.from_bytes(b"\x01" + os.fsencode(text), "big") % _PRIME
    return format(pow(3, residue, _PRIME), "032x")


def run_dir(environ: dict[str, str] | os._Environ, *, make: bool = True, root: str | None = None) -> str | None:
    """The user's private folder for sockets: ``$XDG_RUNTIME_DIR/jitctx``, else the cache
    folder's ``run/`` (``$JITCTX_CACHE_DIR``, ``$XDG_CACHE_HOME/jitctx``, ``~/.cache/jitctx``).

    Made mode 0700 if missing (``make``); ``None`` when it cannot be made, is not a real
    folder, belongs to someone else or is open to others, or lies inside ``root`` (a
    repository it would serve: nothing is written there), and then no server is used."""
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        folder = os.path.join(runtime, "jitctx")
    else:
        own = environ.get("JITCTX_CACHE_DIR")
        xdg = environ.get("XDG_CACHE_HOME")
        if own:
            if not os.path.isabs(own):
                return None  # relative: it names another folder from every working directory
            cache = own
        elif xdg and os.path.isabs(xdg):
            cache = os.path.join(xdg, "jitctx")
        else:
            home = environ.get("HOME") or os.path.expanduser("~")
            cache = os.path.join(home, ".cache", "jitctx")
        folder = os.path.join(cache, "run")
    if root is not None and inside(os.path.realpath(folder), root):
        return None
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        if not make:
            return None
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.lstat(folder)
        except OSError:
            return None
    except OSError:
        return None
    if (st.st_mode & 0o170000) != 0o040000 or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # a symlink, a file, someone else's, or readable by others
    return folder


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both real, absolute paths)."""
    root = root.rstrip("/")
    return path == root or path.startswith(root + "/")


def socket_name(folder: str, root: str, fingerprint_text: str) -> str | None:
    """The socket of ``root``'s server for this fingerprint, or ``None`` if its path would be
    too long for a Unix socket."""
    path = os.path.join(folder, digest(root + "\0" + fingerprint_text)[-20:] + ".sock")
    return path if len(os.fsencode(path)) <= SOCKET_MAX else None


def encode_request(fields: list[str]) -> bytes:
    """The request as bytes: a 4-byte length, then the fields joined by NUL (no argv,
    path or environment value can hold a NUL)."""
    body = b"\0".join(os.fsencode(f) for f in fields)
    return len(body).to_bytes(4, "big") + body


def decode_request(body: bytes) -> list[str]:
    return [os.fsdecode(f) for f in body.split(b"\0")]
