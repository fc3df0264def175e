"""The overflow tap (jitctx.session.overflow): watchdog's log line becomes a re-check."""

from __future__ import annotations

import logging

from jitctx.session.overflow import tap

LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")


class Listening:
    def __init__(self) -> None:
        self.reasons: list[str] = []

    def signal(self, reason: str) -> None:
        self.reasons.append(reason)


def test_issue_35_the_tap_signals_an_overflow_and_is_gone_with_its_last_watcher():
    a, b = Listening(), Listening()
    tap(a, True)
    tap(b, True)
    try:
        logging.getLogger(LOGGERS[0]).warning("Inotify queue overflowed; filesystem events were lost")
        logging.getLogger(LOGGERS[1]).warning("a watch was added")  # not an overflow: nothing
        assert a.reasons == b.reasons == ["overflow"]
        tap(a, False)
        assert all(logging.getLogger(n).handlers for n in LOGGERS)  # b still listens
        logging.getLogger(LOGGERS[1]).warning("queue OVERFLOW")
        assert (a.reasons, b.reasons) == (["overflow"], ["overflow", "overflow"])
    finally:
        tap(a, False)
        tap(b, False)
    assert not any(logging.getLogger(n).handlers for n in LOGGERS)
