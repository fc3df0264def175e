"""A build's progress shown to a person: a bar on a terminal, plain lines elsewhere.

Owns how ``jitctx index`` reports the phases of a build as it goes. On a
terminal (stderr is a TTY), a bar per phase drawn by tqdm, the one module
tqdm enters jitctx through, imported only then (``jitctx --help`` and every
other call never load it); elsewhere (a log, CI, a pipe), a plain line when a
phase starts, every tenth of it, and when it ends, so a log stays short and
greppable. Does not own the build (``build``) or what a phase is.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Reporter"]

_PHASES = {"words": "paths and words", "definitions": "definitions"}


class Reporter:
    """``reporter(phase, done, total)`` as a build calls it; ``close()`` at the end."""

    def __init__(self, stream=None, *, tty: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if tty is None:
            try:
                tty = self.stream.isatty()
            except (AttributeError, ValueError):
                tty = False
        self.tty = tty
        self._phase: str | None = None
        self._bar = None
        self._shown = -1  # the last tenth a plain line was written for
        self._started = time.monotonic()

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self._phase:
            self._end()
            self._phase, self._shown, self._started = phase, -1, time.monotonic()
            if self.tty and total:
                from tqdm import tqdm

                self._bar = tqdm(total=total, desc=_PHASES.get(phase, phase), unit=" files", file=self.stream, dynamic_ncols=True, leave=True)
        if self._bar is not None:
            self._bar.total = total
            self._bar.n = done
            self._bar.refresh()
        elif not self.tty and total:
            tenth = 10 * done // total
            if tenth > self._shown:
                self._shown = tenth
                self.stream.write(f"jitctx index: {_PHASES.get(phase, phase)}: {done:,} of {total:,} files ({10 * tenth}%)\n")
                self.stream.flush()

    def _end(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def close(self) -> None:
        self._end()
