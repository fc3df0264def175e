"""Running the injected ``analyze`` over file contents, here or in worker processes.

Owns calling ``analyze(path, data)`` for many files and handing back what it
returned as plain rows, in this process or in a pool of worker processes
(``spawn``: ``analyze`` must then be a module-level function, so that it
pickles by name). One file's exception is that file's ``failed`` outcome; a
worker that dies (a crash in native code) costs only the file it was on
(``crashed``): the files lost with the pool are retried one at a time.
Does not read files (the caller does, in its own process: reads go through
the project's safe-open seam) nor write anything.
"""

from __future__ import annotations

import pickle
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

__all__ = ["DefinitionRow", "Outcome", "analyze_one", "run"]

# (kind, name, qualname, start_line, end_line, signature, depth, parent, tokens, stub)
DefinitionRow = tuple
# ("ok", (rows, path_terms, content_terms)) | ("declined", None) | ("failed", why) | ("crashed", None);
# rows None: definitions not asked for (parts "words", a file with a grammar); path_terms and
# content_terms None: words not asked for (parts "definitions"). The words cross the pipe as text:
# compressing them here cost the writing process 7 s of decompressing on the real tree, and the store
# keeps them (compressed, lexdocs) only for the few files git cannot tell them again

Outcome = tuple

_CHUNK_FILES = 64
_CHUNK_BYTES = 512 * 1024
# Chunks in flight per worker: enough to never starve one, bounded memory.
_PENDING_PER_WORKER = 3


def _text(terms: object) -> str:
    if isinstance(terms, str):
        return terms
    return " ".join(terms)  # type: ignore[arg-type]


def _row(d: object) -> DefinitionRow:
    tokens = getattr(d, "tokens", None)
    parent = getattr(d, "parent", None)
    return (
        str(d.kind),  # type: ignore[attr-defined]
        str(d.name),  # type: ignore[attr-defined]
        str(d.qualname),  # type: ignore[attr-defined]
        int(d.start_line),  # type: ignore[attr-defined]
        int(d.end_line),  # type: ignore[attr-defined]
        str(getattr(d, "signature", "")),
        int(getattr(d, "depth", 0)),
        None if parent is None else int(parent),
        None if tokens is None else int(tokens),
        bool(getattr(d, "stub", False)),
    )


def analyze_one(analyze: Callable, path: str, data: bytes, parts: str = "all") -> Outcome:
    """Call ``analyze`` on one file for ``parts`` (``all``, ``words``, ``definitions``:
    ``analyze(path, data, parts)``, the parts argument left out for ``all``) and
    normalise its answer to an outcome."""
    try:
        result = analyze(path, data) if parts == "all" else analyze(path, data, parts)
        if result is None:
            return ("declined", None)
        definitions, path_terms, content_terms = result
        rows = None if definitions is None else tuple(_row(d) for d in definitions)
        if parts == "definitions":
            return ("ok", (rows, None, None))
        return ("ok", (rows, _text(path_terms), _text(content_terms)))
    except Exception as exc:  # noqa: BLE001 -- one file's failure is data; the refresh goes on
        return ("failed", type(exc).__name__)


def _analyze_chunk(analyze: Callable, items: Sequence[tuple]) -> list[tuple[str, Outcome]]:
    """The unit of work a worker process runs (module level: it pickles)."""
    return [(item[0], analyze_one(analyze, *item)) for item in items]


def run(
    analyze: Callable,
    items: Iterable[tuple],
    *,
    workers: int = 1,
) -> Iterator[tuple[str, Outcome]]:
    """Yield ``(path, outcome)`` for every ``(path, data)`` or ``(path, data, parts)``
    in ``items``, in completion order. ``items`` is pulled lazily, so the caller may read
    files inside it; with ``workers`` > 1 at most a few chunks per worker
    are in flight. Raises ``TypeError`` when ``workers`` > 1 and ``analyze``
    does not pickle."""
    if workers <= 1:
        for item in items:
            yield item[0], analyze_one(analyze, *item)
        return
    try:
        pickle.dumps(analyze)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise TypeError(f"analyze must be a module-level function to run in {workers} worker processes: {exc}") from None
    yield from _Pool(analyze, workers).run(iter(items))


def _chunks(items: Iterator[tuple]) -> Iterator[list[tuple]]:
    chunk: list[tuple] = []
    size = 0
    for item in items:
        chunk.append(item)
        size += len(item[1])
        if len(chunk) >= _CHUNK_FILES or size >= _CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


class _Pool:
    """A process pool that survives its workers dying."""

    def __init__(self, analyze: Callable, workers: int) -> None:
        self._analyze = analyze
        self._workers = workers
        self._executor = self._start()

    def _start(self) -> ProcessPoolExecutor:
        import multiprocessing

        # spawn, not fork: the parent may run threads (watcher, MCP server), and a
        # forked copy of a lock held by one of them deadlocks the child.
        return ProcessPoolExecutor(self._workers, mp_context=multiprocessing.get_context("spawn"))

    def _restart(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._executor = self._start()

    def run(self, items: Iterator[tuple]) -> Iterator[tuple[str, Outcome]]:
        chunks = _chunks(items)
        pending: dict = {}  # future -> (chunk, isolated: a lone retry after a crash)
        retry: deque[tuple] = deque()
        exhausted = False
        limit = self._workers * _PENDING_PER_WORKER
        try:
            while True:
                if retry:
                    if not pending:  # lost files run alone, so a second crash names its file
                        item = retry.popleft()
                        pending[self._executor.submit(_analyze_chunk, self._analyze, [item])] = ([item], True)
                else:
                    while not exhausted and len(pending) < limit:
                        chunk = next(chunks, None)
                        if chunk is None:
                            exhausted = True
                            break
                        pending[self._executor.submit(_analyze_chunk, self._analyze, chunk)] = (chunk, False)
                if not pending:
                    break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                broken = False
                for future in done:
                    chunk, isolated = pending.pop(future)
                    try:
                        results = future.result()
                    except BrokenProcessPool:
                        broken = True
                        if isolated:
                            yield chunk[0][0], ("crashed", None)
                        else:
                            retry.extend(chunk)
                        continue
                    yield from results
                if broken:
                    for chunk, _isolated in pending.values():
                        retry.extend(chunk)
                    pending.clear()
                    self._restart()
        finally:
            self._executor.shutdown(wait=True, cancel_futures=True)
