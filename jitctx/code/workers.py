"""Running the injected ``analyze`` over file contents, here or in worker processes.

Owns calling ``analyze(path, data)`` for many files and handing back what it
returned as plain rows, in this process or in worker processes of its own (``analyze`` must
then be a module-level function, so that it pickles by name; workers die
with their parent). One file's exception is that file's ``failed`` outcome; a
worker that dies (a crash in native code) costs only the file it was on
(``crashed``): the files it held are retried one at a time.
Does not read files (the caller does, in its own process: reads go through
the project's safe-open seam) nor write anything.
"""

from __future__ import annotations

import os
import pickle
from collections import deque
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


# -- worker processes -------------------------------------------------------------------------
#
# Each worker is a process of its own reading frames (a 4-byte length, then a pickle) on a pipe
# from its parent and answering on another: first ``sys.path`` and ``analyze``, then chunks. It
# ends when its input ends (its parent closed it, or died: the kernel closes a dead process's
# pipes) and, on Linux, is killed by the kernel when its parent dies (``PR_SET_PDEATHSIG``). No
# multiprocessing: its resource tracker outlived a killed parent, held whatever stderr it was
# started with, and its pool's workers waited for ever on a queue nobody fed.

_BOOT = """import sys
sys.path.insert(0, %r)
from jitctx.code.workers import _serve
_serve(int(sys.argv[1]))
"""
_DEATHS = 3  # workers dying in a row without an answer in between: the rest runs in this process


def _read_frame(fd: int) -> bytes | None:
    head = _read_exactly(fd, 4)
    if head is None:
        return None
    return _read_exactly(fd, int.from_bytes(head, "big"))


def _read_exactly(fd: int, n: int) -> bytes | None:
    parts, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _frame(obj: object) -> bytes:
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return len(body).to_bytes(4, "big") + body


def _serve(parent: int) -> None:
    """A worker's life (``python -c _BOOT PARENT_PID``): answer chunks until the input ends."""
    import sys

    from .. import procs

    if not procs.die_with_parent(parent):
        return
    out = os.dup(1)  # the answers' pipe, private: fd 1 goes to stderr, so a stray print cannot corrupt a frame
    os.dup2(2, 1)
    path = _read_frame(0)
    code = _read_frame(0)
    if path is None or code is None:
        return
    sys.path[:] = pickle.loads(path)
    analyze = pickle.loads(code)
    while (frame := _read_frame(0)) is not None:
        answer = _frame(_analyze_chunk(analyze, pickle.loads(frame)))
        view = memoryview(answer)
        while view:
            view = view[os.write(out, view) :]


class _Worker:
    """One worker process and the chunks it was given, in order (the first is under way)."""

    __slots__ = ("chunks", "inbuf", "out", "pid", "reader", "writer")

    def __init__(self, preamble: bytes) -> None:
        import fcntl
        import sys

        from .. import procs

        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        try:
            package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            code = procs.MARK + "worker\n" + _BOOT % package_parent
            self.pid = procs.spawn([sys.executable, "-c", code, str(os.getpid())], stdin=to_r, stdout=from_w, group=False)
        except BaseException:
            for fd in (to_r, to_w, from_r, from_w):
                os.close(fd)
            raise
        os.close(to_r)
        os.close(from_w)
        for fd in (to_w, from_r):
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.writer, self.reader = to_w, from_r
        self.out = bytearray(preamble)
        self.inbuf = bytearray()
        self.chunks: deque[tuple[list[tuple], bool]] = deque()

    def give(self, chunk: list[tuple], isolated: bool) -> None:
        self.chunks.append((chunk, isolated))
        self.out += _frame(chunk)

    def flush(self) -> bool:
        """Write what the pipe takes now; False when the worker is gone."""
        try:
            n = os.write(self.writer, self.out)
        except BlockingIOError:
            return True
        except OSError:
            return False
        del self.out[:n]
        return True

    def answers(self) -> list[list[tuple[str, Outcome]]] | None:
        """The chunks' answers complete now, in order; ``None`` when the worker is gone."""
        try:
            data = os.read(self.reader, 1 << 20)
        except BlockingIOError:
            return []
        except OSError:
            return None
        if not data:
            return None
        self.inbuf += data
        done = []
        while len(self.inbuf) >= 4:
            size = int.from_bytes(self.inbuf[:4], "big")
            if len(self.inbuf) < 4 + size:
                break
            done.append(pickle.loads(bytes(self.inbuf[4 : 4 + size])))
            del self.inbuf[: 4 + size]
        return done

    def close(self, *, kill: bool) -> None:
        import signal

        for fd in (self.writer, self.reader):
            try:
                os.close(fd)
            except OSError:
                pass
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass


class _Pool:
    """Worker processes that survive one of them dying (a crash in native code costs only
    the file it was on)."""

    def __init__(self, analyze: Callable, workers: int) -> None:
        import sys

        self._analyze = analyze
        self._workers = workers
        self._preamble = _frame(list(sys.path)) + _frame(analyze)

    def run(self, items: Iterator[tuple]) -> Iterator[tuple[str, Outcome]]:
        import select

        chunks = _chunks(items)
        workers: list[_Worker] = []
        retry: deque[tuple[list[tuple], bool]] = deque()  # chunks to give again first
        exhausted = False
        deaths = 0
        try:
            workers = [_Worker(self._preamble) for _ in range(self._workers)]
            while True:
                for w in workers:
                    while len(w.chunks) < _PENDING_PER_WORKER:
                        if retry:
                            if retry[0][1] and w.chunks:
                                break  # a suspect file goes first in its worker, so a crash names it
                            w.give(*retry.popleft())
                        elif not exhausted:
                            chunk = next(chunks, None)
                            if chunk is None:
                                exhausted = True
                                break
                            w.give(chunk, False)
                        else:
                            break
                busy = [w for w in workers if w.chunks]
                if not busy:
                    if not retry:
                        break
                    continue
                readable, writable, _ = select.select([w.reader for w in busy], [w.writer for w in busy if w.out], [])
                for w in list(busy):
                    ok = w.flush() if w.writer in writable else True
                    got = w.answers() if ok and w.reader in readable else []
                    if ok and got is not None:
                        for results in got:
                            w.chunks.popleft()
                            deaths = 0
                            yield from results
                        continue
                    # the worker died: its first chunk was under way, the others not started
                    deaths += 1
                    workers.remove(w)
                    w.close(kill=True)
                    first, isolated = w.chunks.popleft()
                    if isolated:
                        yield first[0][0], ("crashed", None)
                    else:
                        retry.extend(([item], True) for item in first)
                    retry.extendleft(reversed(w.chunks))
                    if deaths >= _DEATHS:  # workers cannot run here at all: the rest in this process
                        for chunk, _ in retry:
                            for item in chunk:
                                yield item[0], analyze_one(self._analyze, *item)
                        retry.clear()
                        for others in workers:
                            for chunk, _ in others.chunks:
                                for item in chunk:
                                    yield item[0], analyze_one(self._analyze, *item)
                            others.chunks.clear()
                        for rest in chunks:
                            for item in rest:
                                yield item[0], analyze_one(self._analyze, *item)
                        return
                    workers.append(_Worker(self._preamble))
        finally:
            _end(workers)


def _end(workers: list[_Worker]) -> None:
    """Close the workers' input (idle ones leave at once), then make sure each has ended."""
    import time

    from .. import procs

    for w in workers:
        w.close(kill=bool(w.chunks))
    deadline = time.monotonic() + 2.0
    left = [w.pid for w in workers]
    while left and time.monotonic() < deadline:
        procs.reap()
        left = [pid for pid in left if procs.alive(pid)]
        if left:
            time.sleep(0.005)
    if left:
        procs.stop(left, grace=0.0)
    procs.reap()
