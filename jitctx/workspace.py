"""The Workspace: one repository root and one agent session.

Owns wiring the primitives to a root, its path policy, HEAD and the session
ledgers (what was delivered, which nested instructions were shown), and
filling every result's ``git_head``, ``stale`` and ``instructions``. Does not
own how any primitive works.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace

from .policy import DEFAULT_ALLOW, DEFAULT_DENY, PathPolicy
from .query import check_tokens
from .refs import Excerpt, Result, mtime_of
from .repo import Repo, find_root

__all__ = ["Workspace"]

DEFAULT_ENCODING = "cl100k_base"  # jitctx.budget.DEFAULT_ENCODING, without importing it at start-up
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from .budget import Tokenizer


class Workspace:
    """A served repository: ``glob``, ``grep``, ``head``, ``tail``, ``preload``...

    ``root``: see :func:`jitctx.repo.find_root`. ``deny``/``allow``: basename
    globs for the deny list. ``max_tokens``: default cap on every primitive's
    rendered output (``None``: item limits only). ``tokenizer``: any object with
    ``count``/``truncate`` (tests pass fakes); default tiktoken ``encoding``.
    """

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        *,
        cwd: str | os.PathLike | None = None,
        deny: tuple[str, ...] = DEFAULT_DENY,
        allow: tuple[str, ...] = DEFAULT_ALLOW,
        max_tokens: int | None = None,
        encoding: str = DEFAULT_ENCODING,
        tokenizer: "Tokenizer | None" = None,
    ) -> None:
        self.root = find_root(root, cwd=cwd)
        self.repo = Repo(self.root)
        self.policy = PathPolicy(self.root, tuple(deny), tuple(allow))
        self.max_tokens = check_tokens(max_tokens)
        self.encoding = encoding
        self._tokenizer = tokenizer
        self._lock = threading.RLock()
        self._ledger = None  # created with the first delivery: a one-shot call never imports it
        self._preload_args: dict | None = None
        from .jit import JitInstructions

        self.jit = JitInstructions(self)

    @property
    def ledger(self):
        """The :class:`jitctx.watch.Ledger` of what this session delivered."""
        if self._ledger is None:
            from .watch import Ledger

            with self._lock:
                if self._ledger is None:
                    self._ledger = Ledger()
        return self._ledger

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    @property
    def tokenizer(self) -> "Tokenizer":
        """Loaded on first use (~150 ms), then shared."""
        if self._tokenizer is None:
            from .budget import get_tokenizer

            self._tokenizer = get_tokenizer(self.encoding)
        return self._tokenizer

    def head_sha(self) -> str | None:
        """HEAD as a sha, read from git's files (cheap); ``None`` outside git."""
        return self.repo.head()

    # -- primitives -----------------------------------------------------------

    def glob(
        self,
        pattern: str,
        path: str = ".",
        *,
        sort: str = "mtime",
        limit: int = 100,
        include_ignored: bool = False,
        ignore_case: bool = False,
        max_tokens: int | None = None,
    ) -> Result:
        """Files matching a gitignore-style ``pattern`` under ``path``, as references."""
        from .find import FindQuery, find

        q = FindQuery.make(pattern, path, sort, limit, include_ignored, ignore_case)
        res, paths = find(self, q)
        return self._finish(res, paths, max_tokens, content=False)

    def head(self, path: str, n: int = 100, *, start: int = 1, max_tokens: int | None = None) -> Result:
        """Lines ``start`` .. ``start+n-1`` of a text file (n at most 2,000)."""
        from .peek import PeekQuery

        q = PeekQuery.make(path, n, start)
        return self._peek("head", q, max_tokens)

    def tail(self, path: str, n: int = 100, *, max_tokens: int | None = None) -> Result:
        """The last ``n`` lines of a text file, read from the end."""
        from .peek import PeekQuery

        q = PeekQuery.make(path, n)
        return self._peek("tail", q, max_tokens)

    def _peek(self, tool: str, q, max_tokens: int | None) -> Result:
        from .peek import read_head, read_tail

        target = self.policy.resolve(q.path, want="file")
        size = target.st.st_size
        if tool == "head":
            span = read_head(target.real, target.path, size, q.n, q.start)
        else:
            span = read_tail(target.real, target.path, size, q.n)
        content = "".join(line + "\n" for line in span.lines)
        end = span.start_line + len(span.lines) - 1 if span.start_line is not None else None
        excerpt = Excerpt(
            target.path,
            size,
            mtime_of(target.st),
            span.start_line,
            end,
            span.total_lines,
            content,
            ignored=self.repo.is_ignored(target.path),
            replaced=span.replaced,
        )
        res = Result(tool, [excerpt], total=1)
        if q.notice:
            res.add_notice(q.notice)
        if not span.lines and span.total_lines == 0:
            res.add_notice(f"{target.path} is empty: nothing to read.")
        elif tool == "head" and not span.lines and span.total_lines is not None and q.start > span.total_lines:
            res.add_notice(f"start={q.start:,} is past the end: {target.path} has {span.total_lines:,} lines; read the end with tail path={target.path}.")
        elif tool == "head" and not span.lines and span.total_lines is None:
            res.add_notice(f"start={q.start:,} is past the end of {target.path}; read the end with tail path={target.path}.")
        if span.total_lines is None and span.lines:
            if tool == "tail":
                res.add_notice(f"{target.path} is over 8 MiB, so lines were not counted: numbers run from the end (-{len(span.lines)} is the first shown).")
            else:
                res.add_notice(f"{target.path} is over 8 MiB, so total_lines was not counted.")
        if span.replaced:
            res.add_notice("invalid UTF-8 was replaced with U+FFFD.")
        if span.cut_lines:
            res.add_notice(f"{span.cut_lines:,} line(s) over 2,000 chars were cut with a marker.")
        head = self.head_sha()
        self.ledger.record(target.path, target.real, "read", head)
        res = self._finish(res, [target.path], max_tokens, content=True, count_excerpt=True, head=head)
        _add_read_on(res)  # after any token cut: it names the lines actually shown
        return res

    def grep(
        self,
        pattern: str,
        path: str = ".",
        *,
        glob: list[str] | tuple[str, ...] = (),
        ignore_case: bool = False,
        fixed_strings: bool = False,
        multiline: bool = False,
        before: int = 0,
        after: int = 0,
        context: int | None = None,
        mode: str = "files",
        limit: int = 100,
        offset: int = 0,
        include_ignored: bool = False,
        backend: str = "auto",
        timeout: float = 20.0,
        max_tokens: int | None = None,
    ) -> Result:
        """Search file contents (ripgrep regex syntax) under ``path``."""
        from .search import SearchQuery, search

        q = SearchQuery.make(
            pattern, path, glob=glob, ignore_case=ignore_case, fixed_strings=fixed_strings, multiline=multiline,
            before=before, after=after, context=context, mode=mode, limit=limit, offset=offset,
            include_ignored=include_ignored, backend=backend, timeout=timeout,
        )
        res, paths = search(self, q)
        return self._finish(res, paths, max_tokens, content=False)

    last_preload = None  # the prefix the last preload() (or refresh()) rendered; None before the first

    def preload(self, cwd: str | None = None, *, budget: int = 8000, readme_budget: int = 2000, fallbacks: tuple[str, ...] | list[str] | None = None):
        """The stable prefix: instruction files root -> ``cwd``, then README, within ``budget`` tokens.

        ``fallbacks`` replaces the fallback instruction names (default
        ``CLAUDE.md``, ``GEMINI.md``) for the prefix and just-in-time delivery.
        The result is also kept as :attr:`last_preload`, so callers that only
        need the session's current prefix (the assembler, the MCP resource)
        reuse it instead of re-rendering it between refreshes.
        """
        from .preload import preload

        self._preload_args = {"cwd": cwd, "budget": budget, "readme_budget": readme_budget, "fallbacks": fallbacks}  # refresh() repeats it
        pre = preload(self, cwd=cwd, budget=budget, readme_budget=readme_budget, fallbacks=fallbacks)
        self.last_preload = pre
        return pre

    # -- session --------------------------------------------------------------

    def stale(self) -> list[dict]:
        """Delivered files that changed, vanished or appeared since they were delivered.

        Judged by content (sha256), so a HEAD move that leaves a file's bytes
        alone invalidates nothing. Each entry: ``path``, ``kind`` (preload |
        read | instructions), ``change`` (changed | deleted | added),
        ``old_head`` (HEAD at delivery) and ``new_head`` (HEAD now). Entries stay
        until :meth:`refresh` (or, for a read, until the file is read again).
        """
        return self._stale_for(self.head_sha())

    def _finish(self, res: Result, paths: list[str], max_tokens: int | None, *, content: bool, count_excerpt: bool = False, head: str | None = None) -> Result:
        """Fill the session fields, then apply the token cap."""
        head = self.head_sha() if head is None else head
        res.git_head = head
        res.instructions = self.jit.on_paths(paths, content=content)
        res.stale = self._stale_for(head)
        cap = check_tokens(max_tokens) if max_tokens is not None else self.max_tokens
        if cap is not None:
            from .render import fit_tokens

            res = fit_tokens(res, cap, self.tokenizer)
        elif count_excerpt:
            res.results = [replace(e, tokens=self.tokenizer.count(e.content)) for e in res.results]
        return res

    # -- staleness, refresh, watching (the watcher issue) ----------------------

    _checked_head: object = object()  # HEAD at the last staleness check (unset: the first check re-hashes)
    _watcher = None  # a running HeadWatcher, or None
    _stream: tuple = (None, ())  # (HEAD, stale keys) last announced to watch_events subscribers
    _subscribers: tuple = ()  # queues of running watch_events generators

    def _stale_for(self, head: str | None, *, full: bool = False) -> list[dict]:
        with self._lock:
            full = full or head != self._checked_head  # HEAD moved since the last look: re-hash everything
            self._checked_head = head
            return [] if self._ledger is None else self._ledger.check(head, full=full)

    def refresh(self):
        """Start over at a boundary the caller chooses: re-render the prefix, clear ``stale``.

        Stale files stop being tracked (the agent was told; it re-reads what it
        needs), preload entries are replaced by the new rendering, files still
        fresh stay tracked. Returns a :class:`jitctx.watch.Refreshed` with the
        new ``prefix_hash`` (``None`` if :meth:`preload` never ran) and the
        new prefix as ``preload``. Between refreshes the prefix never changes.
        """
        from .watch import Refreshed

        with self._lock:
            head = self.head_sha()
            cleared = self._stale_for(head, full=True)
            self.ledger.forget([s["path"] for s in cleared])
            # a nested instruction file that changed is delivered again when next met
            self.jit.forget([s["path"] for s in cleared if s.get("kind") == "instructions"])
            pre = None
            if self._preload_args is not None:
                self.ledger.forget(kind="preload")
                pre = self.preload(**self._preload_args)
            self._stream = (head, ())
            return Refreshed(getattr(pre, "prefix_hash", None), head, tuple(cleared), pre)

    def start_watching(self, poll: bool = False):
        """Start the watcher (idempotent) and return it; :meth:`close` stops it.

        Not needed for correctness: every request re-checks HEAD and the
        delivered files anyway. The watcher makes changes visible as they
        happen (``watch_events``). ``poll`` forces the polling observer, which
        is also used automatically when native events are unavailable.
        """
        from .watcher import GitPaths, HeadWatcher

        with self._lock:
            if self._watcher is None:
                layout = self.repo.git
                git = GitPaths(str(layout.git_dir), str(layout.common_dir)) if layout is not None else None
                head = self.head_sha()
                self._stream = (head, _stale_keys(self._stale_for(head)))
                watcher = HeadWatcher(self.root, git, self.ledger, self._on_settle, poll=poll)
                watcher.start()
                self._watcher = watcher
            return self._watcher

    def close(self) -> None:
        """Stop the watcher and end every ``watch_events`` stream; joins their threads."""
        with self._lock:
            watcher, self._watcher = self._watcher, None
            subscribers = self._subscribers
        for q in subscribers:
            q.put(None)
        if watcher is not None:
            watcher.stop()  # outside the lock: its thread may be waiting for it

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _on_settle(self, reasons: frozenset) -> None:
        """The watcher's callback: turn a settled burst of events into stream events."""
        events = []
        with self._lock:
            head = self.head_sha()
            old_head, old_keys = self._stream
            if head != old_head:
                events.append({"event": "head_moved", "old_head": old_head, "new_head": head, "branch": self._branch()})
            stale = self._stale_for(head, full="overflow" in reasons)
            keys = _stale_keys(stale)
            if keys != old_keys:
                events.append({"event": "stale", "git_head": head, "stale": stale})
            self._stream = (head, keys)
            subscribers = self._subscribers
        for event in events:
            for q in subscribers:
                q.put(event)

    def _branch(self) -> str | None:
        """The checked-out branch name, ``None`` when detached or outside git."""
        if self.repo.git is None:
            return None
        try:
            text = (self.repo.git.git_dir / "HEAD").read_text("utf-8", "replace").strip()
        except OSError:
            return None
        return text[len("ref: refs/heads/"):] if text.startswith("ref: refs/heads/") else None

    def watch_events(self, timeout: float | None = None, poll: bool = False, *, refresh: bool = True):
        """Yield event dicts as things change, until ``timeout`` seconds pass or :meth:`close`.

        ``{"event": "head_moved", "old_head", "new_head", "branch"}``;
        ``{"event": "stale", "git_head", "stale": [entries]}`` whenever the set
        of stale files changes (the full current list); ``{"event":
        "refreshed", "prefix_hash", "git_head", "cleared": [paths]}``. With
        ``refresh`` (the default, what ``jitctx watch`` does) the stream is
        its own session: it preloads first (announced as ``refreshed``) and
        refreshes right after each non-empty ``stale`` event, so the next
        change is reported too. Subscribes at the call, so nothing after it
        is missed; starts the watcher if needed and stops it again when the
        stream ends (or at :meth:`close`, for a stream never iterated).
        ``timeout=math.inf`` is the same as ``None``; any finite timeout,
        however large, is honoured (each wait is capped at
        ``threading.TIMEOUT_MAX``). A negative or NaN timeout is a
        ``QueryError``.
        """
        import math
        import queue
        import time

        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or math.isnan(timeout) or timeout < 0):
            from .errors import QueryError

            raise QueryError(f"timeout must be a number of seconds >= 0, got {timeout!r}", hint="pass e.g. timeout=30, or None to watch until interrupted", timeout=timeout)
        if timeout is not None and math.isinf(timeout):
            timeout = None  # no time cap
        deadline = None if timeout is None else time.monotonic() + timeout
        q: queue.Queue = queue.Queue()
        with self._lock:
            started = self._watcher is None
            first = None
            if refresh:
                if self._preload_args is None:
                    pre = self.preload()
                    first = {"event": "refreshed", "prefix_hash": getattr(pre, "prefix_hash", None), "git_head": self.head_sha(), "cleared": []}
                else:
                    first = self.refresh().to_event()
            self.start_watching(poll=poll)
            self._subscribers = (*self._subscribers, q)  # subscribed now: nothing from here on is missed
        return self._events(q, first, deadline, refresh, started)

    def watch(self, timeout: float | None = None, poll: bool = False, *, refresh: bool = True):
        """DESIGN's name for :meth:`watch_events` (same arguments, same stream)."""
        return self.watch_events(timeout, poll, refresh=refresh)

    def _events(self, q, first: dict | None, deadline: float | None, refresh: bool, started: bool):
        import queue
        import time

        try:
            if first is not None:
                yield first
            while True:
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    return
                try:
                    # a far deadline is waited for in steps: Queue.get refuses waits past TIMEOUT_MAX
                    event = q.get(timeout=None if wait is None else min(wait, threading.TIMEOUT_MAX))
                except queue.Empty:
                    continue  # the deadline check above ends the stream
                if event is None:  # close()
                    return
                yield event
                if refresh and event["event"] == "stale" and event["stale"]:
                    yield self.refresh().to_event()
        finally:
            with self._lock:
                self._subscribers = tuple(s for s in self._subscribers if s is not q)
                watcher = self._watcher if started and not self._subscribers else None
                if watcher is not None:
                    self._watcher = None
            if watcher is not None:
                watcher.stop()


def _stale_keys(stale: list[dict]) -> tuple:
    """What makes two stale lists "the same news": paths and what happened to them."""
    return tuple((s["path"], s["change"]) for s in stale)


def _add_read_on(res: Result) -> None:
    """The call that reads past a head/tail excerpt, from the lines it shows."""
    e = res.results[0]
    if res.tool == "head" and e.end_line is not None and e.content:
        if e.total_lines is not None and e.end_line < e.total_lines:
            res.add_notice(f"{e.total_lines - e.end_line:,} more lines; read on with head path={e.path} start={e.end_line + 1}.")
        elif e.total_lines is None and res.truncated:
            res.add_notice(f"read on with head path={e.path} start={e.end_line + 1}.")
    elif res.tool == "tail" and e.start_line is not None and e.start_line > 1:
        res.add_notice(f"{e.start_line - 1:,} earlier lines; read them with head path={e.path} start=1 (or a later start).")
