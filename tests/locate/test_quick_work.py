"""The quick pass is cut by work, and says where the clock cut it (issue 33, item 6).

The clock is patched (``quick.time.monotonic``): a fast machine's and a slow
one's are the same pass, as long as the work fits the deadline.
"""

from __future__ import annotations

import time

from test_quick import _paths, _quick

from jitctx.locate import quick as Q


class Clock:
    """A monotonic clock that moves ``step`` seconds at each reading."""

    def __init__(self, step: float) -> None:
        self.now = time.monotonic()
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _with_clock(monkeypatch, repo, task: str, step: float, budget: float, **kw):
    clock = Clock(step)
    monkeypatch.setattr(Q.time, "monotonic", clock)
    return _quick(repo.root, task, deadline=clock.now + budget, **kw)


def test_issue_33_reading_is_cut_by_bytes_not_by_the_clock(repo, monkeypatch):
    for i in range(30):
        repo.write(f"src/gen/m{i:02}.py", f"def greet_{i}():\n    return 'greet'\n" + "# filler\n" * 40)
    monkeypatch.setattr(Q, "READ_BYTES", 2_000)  # a few files' worth
    fast, fast_reader = _with_clock(monkeypatch, repo, "greet", 0.0, 60.0)
    slow, slow_reader = _with_clock(monkeypatch, repo, "greet", 0.05, 60.0)  # every reading of the clock 50 ms later
    assert _paths(fast) == _paths(slow) and [f.score for f in fast.files] == [f.score for f in slow.files]
    assert len(set(fast_reader.asked)) < 30  # the bytes bound, not the clock, stopped the reading
    assert "cut by time" not in (fast.notice or "") and "cut by time" not in (slow.notice or "")


def test_issue_33_cut_by_time_says_so_and_where(repo, monkeypatch):
    for i in range(30):
        repo.write(f"src/gen/m{i:02}.py", f"def greet_{i}():\n    return 'greet'\n")
    found, _ = _with_clock(monkeypatch, repo, "greet", 0.2, 6.0)  # a very slow machine: the clock runs out while reading
    assert found.notice is not None and "cut by time, so another call may answer otherwise: " in found.notice
    assert "likeliest matching files read" in found.notice
