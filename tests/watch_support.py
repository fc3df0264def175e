"""Shared by the watcher tests: a strict thread check, a fake preload, and a skip when
the machine's inotify limits are reached (issue 30: a machine limit is a skip, not a failure)."""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field

import pytest


@pytest.fixture(autouse=True)
def _no_threads_left():
    """Stricter than conftest: daemon threads (watchdog's) must be gone too."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5
    while True:
        left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left, f"threads left behind: {left}"


# -- a fake preload (the real one lives in jitctx.preload.prefix) ---------------------


@dataclass
class FakePrefix:
    text: str
    prefix_hash: str
    warnings: list = field(default_factory=list)


@pytest.fixture
def fake_preload(monkeypatch):
    """Preload = root AGENTS.md, recorded in the ledger as the real preload does."""
    calls: list[dict] = []

    def preload(policy, tokenizer, *, cwd=None, budget=8000, readme_budget=2000, fallbacks=(), head=None, **_):
        from jitctx.preload.prefix import Covered
        from jitctx.refs import Delivered

        calls.append({"cwd": cwd, "budget": budget, "readme_budget": readme_budget})
        p = policy.root / "AGENTS.md"
        text = p.read_text("utf-8") if p.exists() else ""
        pre = FakePrefix(text, hashlib.sha256(text.encode()).hexdigest())
        return pre, Covered((".",), (Delivered("AGENTS.md", p.resolve(), "preload"),))

    import jitctx.preload.prefix

    monkeypatch.setattr(jitctx.preload.prefix, "preload", preload, raising=False)
    return calls


def need_inotify() -> None:
    """Skip the calling test when no inotify instance can be had now (the user's
    ``fs.inotify.max_user_instances`` is used up by other programs): jitctx itself then
    polls or lists with git, which other tests cover; native events cannot be tested."""
    import errno
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux's")
    from watchdog.observers.inotify_c import InotifyFD

    try:
        fd = InotifyFD._create_inotify_fd()
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOMEM):
            pytest.skip(f"no inotify instance to be had now ({exc.strerror}): native events cannot be tested")
        raise
    import os

    os.close(fd)
