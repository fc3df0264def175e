"""The Workspace: one repository root and one agent session.

Owns composing the primitives with their collaborators (the repo, the path
policy, the tokenizer, the nested-instructions record), recording what each
primitive delivered in the session ledger, and filling every result's
``git_head``, ``stale`` and ``instructions``. Does not own how any primitive
works, nor what a locate call goes through (``locate.task``), the notices of
the index's background build (``code.build_notice``), several ranges of a file
read at once (``spans``), whether a kept result is current (``currency``) or
the watch streams (``events``); nothing else reaches into a Workspace.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import wraps

from ..query import FindQuery, HeadQuery, OutlineQuery, SearchQuery, SymbolsQuery, TailQuery, check_tokens
from ..refs import Result
from ..repo.policy import DEFAULT_ALLOW, DEFAULT_DENY, PathPolicy
from ..repo.universe import Repo, find_root
from ..text.redact import redact_result
from ..tokens.tokenizer import DEFAULT_ENCODING, ContentCounts, Tokenizer

TYPE_CHECKING = False  # as typing's: importing typing costs ~3 ms of a ~60 ms CLI call (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import TextIO

    from ..code.structure import CodeIndex
    from ..preload.nested import NestedInstructions
    from ..render import View
    from .events import Events
    from .ledger import Ledger
    from .rereads import Rereads

__all__ = ["Refreshed", "Workspace"]

QUICK_SECONDS = 2.5  # from a locate or symbols call's start: the deadline of its first pass when the index is being built


def _one_call(method):
    """A primitive of the session: one call of its caller (:meth:`Workspace.call`)."""

    @wraps(method)
    def run(self, *args, **kwargs):
        with self.call():
            return method(self, *args, **kwargs)

    return run


class Workspace:
    """A served repository: ``glob``, ``grep``, ``head``, ``tail``, ``preload``...

    ``root``: see :func:`jitctx.repo.universe.find_root` (or pass an open ``repo``).
    ``deny``/``allow``: basename
    globs for the deny list. ``max_tokens``: default cap on every primitive's
    rendered output (``None``: item limits only). ``tokenizer``: any object with
    ``count``/``truncate`` (tests pass fakes); default tiktoken ``encoding``.
    ``record=False``: a one-call Workspace (the CLI's): what it delivers is not
    recorded, since no later call of its session could be told it went stale
    (the ledger, and the file hashes it takes, are skipped). ``content_counts``:
    a :class:`jitctx.tokens.tokenizer.ContentCounts` to share (the server's, one for all
    its calls: the count store opened once). ``rereads`` (a recording session
    only): a head, tail or outline of content this session was shown and that
    is unchanged answers with a short note, only the lines not yet shown, or for
    a changed file the diff against what was shown when it is smaller
    (:mod:`jitctx.session.shown`); ``force=True`` on a call, or ``rereads=False`` here,
    shows the text again. ``formats``: which agents' instruction and rule files
    are read (:data:`jitctx.preload.formats.FORMATS`, a list or a comma-separated string;
    default ``$JITCTX_FORMATS``, else all), for the prefix and just-in-time
    delivery alike; :meth:`set_formats` changes it.
    """

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        *,
        cwd: str | os.PathLike | None = None,
        repo: Repo | None = None,
        deny: tuple[str, ...] = DEFAULT_DENY,
        allow: tuple[str, ...] = DEFAULT_ALLOW,
        max_tokens: int | None = None,
        encoding: str = DEFAULT_ENCODING,
        tokenizer: Tokenizer | None = None,
        record: bool = True,
        content_counts: ContentCounts | None = None,
        rereads: bool = True,
        formats: tuple[str, ...] | list[str] | str | None = None,
    ) -> None:
        self._formats: tuple[str, ...] | None = None  # None: all
        self._nested: NestedInstructions | None = None
        if formats is not None or os.environ.get("JITCTX_FORMATS"):
            self.set_formats(formats)  # a bad name fails here, before anything is read
        self.repo = repo if repo is not None else Repo(find_root(root, cwd=cwd))
        self.root = self.repo.root
        self.policy = PathPolicy(self.root, tuple(deny), tuple(allow))
        self.max_tokens = check_tokens(max_tokens)
        self.encoding = encoding
        self._tokenizer = tokenizer
        # an excerpt's count: remembered on disk by content, so a head of content counted before loads no tokenizer
        if content_counts is None:
            content_counts = ContentCounts(encoding, lambda: self.tokenizer, root=str(self.root), persist=tokenizer is None)
        self.content_counts = content_counts
        self._lock = threading.RLock()
        self._ledger: Ledger | None = None  # made with the first delivery
        self._record = record
        self._rereads: Rereads | None = None
        if record and rereads:
            from .rereads import Rereads

            self._rereads = Rereads(self.policy, lambda: self.content_counts)
        self.turn = 0  # calls made in this session, failed ones included: "shown at turn N"
        self._depth = 0  # calls under way (a call made inside another is part of it)
        self._preload_args: dict | None = None
        self._code: CodeIndex | None = None
        self._events: Events | None = None  # the watcher and the watch streams, made by the first that needs them

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def set_formats(self, formats: tuple[str, ...] | list[str] | str | None) -> None:
        """Which agents' instruction and rule files are read from the next call on
        (``None``: ``$JITCTX_FORMATS``, else all); a bad name is a ``QueryError``."""
        from ..preload.formats import check_formats

        checked = check_formats(formats if formats is not None else os.environ.get("JITCTX_FORMATS") or None)
        self._formats = checked
        if self._nested is not None:
            self._nested.set_formats(checked)

    @property
    def ledger(self) -> Ledger:
        """What this session delivered (:class:`jitctx.session.ledger.Ledger`)."""
        if self._ledger is None:
            from .ledger import Ledger

            with self._lock:
                if self._ledger is None:
                    self._ledger = Ledger()
        return self._ledger

    @property
    def events(self) -> Events:
        """The watcher and the ``watch`` streams (:class:`jitctx.session.events.Events`),
        made on first use: a call that watches nothing makes none."""
        if self._events is None:
            from .events import Events

            with self._lock:
                if self._events is None:
                    self._events = Events(
                        self._lock,
                        root=self.root,
                        repo=lambda: self.repo,
                        ledger=lambda: self.ledger,
                        stale=lambda head, full: self._stale_for(head, full=full),
                        begin=self._begin_stream,
                        refreshed=lambda: self.refresh().to_event(),
                    )
        return self._events

    @property
    def nested(self) -> NestedInstructions:
        """The instruction files met just in time (:class:`jitctx.preload.nested.NestedInstructions`),
        made on first use: a grep imports it while rg runs."""
        if self._nested is None:
            from ..preload.nested import NestedInstructions

            with self._lock:
                if self._nested is None:
                    nested = NestedInstructions(self.policy, lambda: self.content_counts)  # file contents: counts remembered
                    if self._formats is not None:
                        nested.set_formats(self._formats)
                    self._nested = nested
        return self._nested

    @property
    def tokenizer(self) -> Tokenizer:
        """Loaded on first use (~150 ms), then shared."""
        if self._tokenizer is None:
            from ..tokens.tokenizer import get_tokenizer

            self._tokenizer = get_tokenizer(self.encoding)
        return self._tokenizer

    def _record_all(self, delivered, head: str | None) -> None:
        if self._record:
            self.ledger.record_all(delivered, head)

    def use_repo(self, repo: Repo) -> None:
        """Serve the next calls from ``repo`` (of the same root). A host that keeps a
        session across calls (the server) gives each call a fresh Repo, so nothing a Repo
        remembers (a listing under way, the excludes setting) outlives its call."""
        if repo.root != self.root:
            raise ValueError(f"use_repo: {repo.root} is not this workspace's root {self.root}")
        self.repo = repo
        if self._code is not None:
            self._code.close()
            self._code = None

    def head_sha(self) -> str | None:
        """HEAD as a sha, read from git's files (cheap); ``None`` outside git."""
        return self.repo.head()

    # -- primitives -----------------------------------------------------------

    @_one_call
    def glob(self, pattern: str, path: str = ".", *, max_tokens: int | None = None, **options: object) -> Result:
        """Files matching a gitignore-style ``pattern`` under ``path``, as references.

        ``options``: the other fields of :class:`jitctx.query.FindQuery`
        (``sort``, ``limit``, ``include_ignored``, ``ignore_case``).
        """
        from ..primitives.find import find

        res, paths = find(self.repo, self.policy, FindQuery.make(pattern=pattern, path=path, **options))
        return self._finish(res, paths, max_tokens, content=False)

    @_one_call
    def head(self, path: str, n: int = 100, *, start: int = 1, symbol: str | None = None, force: bool = False, diff: bool = False, max_tokens: int | None = None) -> Result:
        """Lines ``start`` .. ``start+n-1`` of a text file (n at most 2,000); with
        ``symbol``, exactly that definition's lines (``n`` unused; ``start``, when
        several definitions bear the name, picks the one holding that line).
        ``force``/``diff``: see the class's ``rereads``."""
        q = HeadQuery.make(path=path, n=n, start=start, symbol=symbol, force=force, diff=diff)
        if q.symbol is None:
            return self._peek(q, max_tokens)
        from ..code.structure import resolve_file
        from ..errors import PathError
        from ..query import MAX_LINES

        try:
            rel = resolve_file(self.policy, q.path)
        except PathError as exc:
            if self._rereads is not None:
                self._rereads.gone(q.path, exc)  # deleted since shown: says so
            raise
        d = self.code.find_symbol(rel, q.symbol, start=q.start)
        lines = d.end_line - d.start_line + 1
        sq = HeadQuery.make(path=rel, n=min(lines, MAX_LINES), start=d.start_line, force=q.force, diff=q.diff)
        if lines > MAX_LINES:  # named after what the caller asked for, not an n it never passed
            sq = replace(
                sq,
                notice=f"{q.symbol} spans {lines:,} lines ({d.start_line:,}-{d.end_line:,}): its first {MAX_LINES:,} are shown (head reads at most {MAX_LINES:,} lines at once).",
            )
        res = self._peek(sq, max_tokens, until=d.end_line)
        note = self.code.defined_elsewhere(rel, d)  # a declaration: where its body is (the price counts it too)
        if note:
            res.add_notice(note)
        res.extra["symbol"] = {"kind": d.kind, "qualname": d.qualname, "start_line": d.start_line, "end_line": d.end_line}
        return res

    @_one_call
    def tail(self, path: str, n: int = 100, *, force: bool = False, diff: bool = False, max_tokens: int | None = None) -> Result:
        """The last ``n`` lines of a text file, read from the end."""
        return self._peek(TailQuery.make(path=path, n=n, force=force, diff=diff), max_tokens)

    def _peek(self, q: HeadQuery | TailQuery, max_tokens: int | None, *, until: int | None = None) -> Result:
        from ..primitives.headtail import head_or_tail

        rr = self._rereads
        now = rr.now(q.path) if rr is not None else None
        if rr is None or now is None:
            res, delivered = head_or_tail(self.repo, self.policy, q)
            head = self.head_sha()
            self._record_all([delivered], head)
            self._fill(res, [delivered.path], content=True, head=head)
            return self._cut(res, max_tokens, until=until)
        cap = self._cap(max_tokens)
        ans = rr.answer(q, now, self.turn, cap, ignored=self.repo.is_ignored(now.path))
        res = ans.result
        head = self.head_sha()
        self._record_read(now, head)
        self._fill(res, [now.path], content=True, head=head)
        if ans.kind == "lines":
            res = self._cut(res, max_tokens, ans.asked, until=until)
        rr.record(ans, res, now, self.turn)
        return res

    def _cut(self, res: Result, max_tokens: int | None, asked: tuple[int, int] | None = None, *, until: int | None = None) -> Result:
        """An excerpt priced and cut to the token cap, with the call that reads on (past
        ``asked`` when only part of the lines asked for are shown; none past ``until``, a
        definition shown to its end: see ``headtail.add_read_on``)."""
        from ..primitives.headtail import add_read_on, fit_excerpt

        cap = self._cap(max_tokens)
        if cap is not None:
            return fit_excerpt(res, cap, self.tokenizer, self.view, asked=asked, until=until)  # the read-on call is priced in
        res.results = [replace(e, tokens=self.content_counts.count(e.content)) for e in res.results]
        add_read_on(res, asked, until=until)
        return res

    def _record_read(self, now, head: str | None) -> None:
        """The ledger's delivery of a file a session read once: the hash of the bytes shown."""
        if self._record:
            from .ledger import Seen

            self.ledger.record(now.path, now.real, "read", head, seen=Seen(True, now.sig, now.sha256, now.at_ns))

    @property
    def code(self) -> CodeIndex:
        """The code-structure index of this repository (opened on first use)."""
        if self._code is None:
            from ..code.structure import CodeIndex

            with self._lock:
                if self._code is None:
                    self._code = CodeIndex(self.repo, self.policy, count=self.content_counts.count)  # definitions priced when shown
        self._code.progress_to = self.progress_to
        return self._code

    @_one_call
    def outline(self, path: str, *, limit: int = 500, force: bool = False, max_tokens: int | None = None) -> Result:
        """One file's definitions in source order, as symbol references (DESIGN 9):
        kind, qualname, lines (decorators and doc comment included), signature,
        exact tokens. A file type without a grammar: an empty result whose
        notice says so. In a session, an outline of unchanged content shown before
        is a short note (``force`` lists it again)."""
        from ..code.structure import resolve_file

        q = OutlineQuery.make(path=path, limit=limit, force=force)
        rel = resolve_file(self.policy, q.path)
        rr = self._rereads
        now = rr.now(rel) if rr is not None else None
        note = rr.outline_note(rel, now, q.limit) if rr is not None and now is not None and not q.force else None
        if note is not None:
            return self._finish(note, [rel], max_tokens, content=False)
        res = self._finish(self.code.outline(rel, limit=q.limit), [rel], max_tokens, content=False)
        if rr is not None and now is not None and not res.truncated:
            after = rr.now(rel)  # the outline read the file itself: recorded only when the bytes held still between
            if after is not None and after.sha256 == now.sha256:
                rr.outline_shown(rel, now, self.turn, len(res.results), q.limit)
        return res

    @_one_call
    def symbols(self, query: str, path: str = ".", *, kind: str | None = None, limit: int = 50, max_tokens: int | None = None) -> Result:
        """Definitions across the repository by name, qualified name or prefix
        (``__add__``, ``Rational.__add__``, ``Rational.``): exact before qualified
        before prefix, source before tests. Never waits for the index: when it is far
        behind (a first call on a big tree), the answer comes from what is indexed and
        the files grep finds defining the name, parsed now, within ``QUICK_SECONDS``; the
        notice says so, and the build goes on in the background."""
        started = time.monotonic()
        q = SymbolsQuery.make(query=query, path=path, kind=kind, limit=limit)
        under = self.policy.resolve(q.path, want="dir").path if q.path not in (".", "") else ""
        code = self.code
        res = code.symbols(q.query, under=under, kind=q.kind, limit=q.limit, deadline=started + QUICK_SECONDS)
        if "partial" in res.extra:  # the index is behind: the rest is built in the background (issue 30)
            from ..code.build_notice import for_symbols

            res.add_notice(for_symbols(code))
        return self._finish(res, [r.path for r in res.results], max_tokens, content=False)

    @_one_call
    def grep(self, pattern: str, path: str = ".", *, max_tokens: int | None = None, **options: object) -> Result:
        """Search file contents (ripgrep regex syntax) under ``path``.

        ``options``: the other fields of :class:`jitctx.query.SearchQuery`
        (``glob``, ``ignore_case``, ``fixed_strings``, ``multiline``,
        ``before``/``after``/``context``, ``mode``, ``limit``, ``offset``,
        ``include_ignored``, ``backend``, ``timeout``).
        """
        from ..primitives.search import search

        q = SearchQuery.make(pattern=pattern, path=path, **options)
        res, paths = search(self.repo, self.policy, q, beside=_warm_symbols if q.mode == "content" else _warm_results)
        self._add_symbols(res)
        return self._finish(res, paths, max_tokens, content=False)

    def _add_symbols(self, res: Result) -> None:
        """Content matches carry ``symbol``: the innermost definition around them (DESIGN 9)."""
        from ..refs import LineRef

        lines = [r for r in res.results if isinstance(r, LineRef)]
        if not lines:
            return
        try:
            wanted: dict[str, list[int]] = {}
            for r in lines:
                wanted.setdefault(r.path, []).append(r.line)
            lookups = self.code.enclosing(wanted)
        except Exception:  # noqa: BLE001 -- an annotation; the matches stand without it
            return
        if lookups:
            res.results = [replace(r, symbol=d.qualname) if isinstance(r, LineRef) and r.path in lookups and (d := lookups[r.path](r.line)) is not None else r for r in res.results]

    view: View | None = None  # how the caller's surface shows results (a render.View): token caps price that text
    progress_to: TextIO | None = None  # where a cold index build's progress line goes, on a terminal (None: stderr)

    @_one_call
    def locate(self, task: str, *, limit: int = 10, max_tokens: int | None = None, file_tokens: bool = True) -> Result:
        """The files and regions ``task`` is about, best first (DESIGN section 10).

        Each result is a file (path, size, mtime, score, role, why, whole-file
        tokens) with its best regions (definitions or line windows: lines,
        symbol, signature, exact tokens, why). No content beyond a signature
        line. The code index is brought up to date first when that is quick
        (a few hundred changed files); otherwise it is built in the background
        (``build``) and this answer comes from the index as it is (a notice names
        what is not in it yet) or, when little of the tree is indexed, from a
        quick pass without it (``quick``); the notice says how far the build is. ``extra``: the ``terms`` searched and the
        words ``dropped``, ``notes`` (the notice without the cut). Bad input (an
        empty task, only stop words) is a ``QueryError`` naming it.
        ``file_tokens=False`` skips pricing whole files (regions are always priced).
        """
        from ..locate.task import answer
        from ..query import LocateQuery

        deadline = time.monotonic() + QUICK_SECONDS
        q = LocateQuery.make(task=task, limit=limit)
        res = answer(self.code, self.policy, q, tokenizer=lambda: self.tokenizer, file_tokens=file_tokens, deadline=deadline)
        return self._finish(res, [f.path for f in res.results], max_tokens, content=False)

    def current(self, call, content: str | None = None) -> bool | None:
        """Whether what a jitctx tool call returned is still current; the ``is_current`` of
        :func:`jitctx.window.compact.compact`, which passes the result's ``content``.

        With ``content`` (head, tail, outline in a session): judged by that content itself,
        the text or JSON the caller kept: every line it shows is the file's line now (an
        excerpt's numbered lines, a diff's new side), the lines a note vouched for are
        still held as they are now, an outline's rows are the outline now. Without it, for
        a file this session delivered: ``False`` when the file changed since the latest
        delivery, else ``True``. ``None`` when it cannot be told (other tools, other
        files, nothing in the content to judge, a file over 8 MiB or binary)."""
        from .currency import is_current

        return is_current(
            call,
            content,
            policy=self.policy,
            rereads=self._rereads,
            delivered=lambda rel: self._ledger is not None and any(d.path == rel for d in self._ledger.deliveries()),
            stale=self.stale,
            outline=self._outline_text,
        )

    def _outline_text(self, rel: str, limit: int) -> str:
        from ..render import render_text

        return render_text(self.code.outline(rel, limit=limit), view=self.view)

    # -- notes (issue 22) ------------------------------------------------------------------

    @_one_call
    def notes(self, action: str, text: str | None = None, *, id: int | None = None, paths=(), symbols=(), max_tokens: int | None = None) -> Result:
        """Notes kept outside the window and the tree, per repository (:mod:`jitctx.session.notes`):
        ``add`` (``text``, optionally tied to ``paths`` and ``symbols``), ``list``, ``read``
        (``id``), ``delete`` (``id``). A note whose paths or symbols changed since it was
        written is marked stale when listed or read."""
        from ..query import NotesQuery
        from .notes import answer

        q = NotesQuery.make(action=action, text=text, id=id, paths=paths, symbols=symbols)
        res, shown = answer(self.note_store(), q, self.policy, lambda: self.code)
        return self._finish(res, shown, max_tokens, content=False)

    def note_store(self):
        """The notes of this repository (:class:`jitctx.session.notes.NoteStore`)."""
        from .notes import NoteStore

        return NoteStore(str(self.root))

    @_one_call
    def read_regions(self, path: str, spans: list[tuple[int, int]]) -> Result:
        """Several line ranges of one file read at once, as excerpts (``head``'s
        shape, exact tokens, secrets redacted with the whole file as context:
        :mod:`jitctx.session.spans`), recorded as read. For ``context_for_task``: one open
        per file instead of a ``head`` per region."""
        from .spans import read_spans

        got = read_spans(self.policy, path, spans, self.content_counts.count)
        now, lines = got.now, got.now.lines()
        head = self.head_sha()
        if got.whole:
            self._record_read(now, head)
            if self._rereads is not None:
                for start, end in spans:
                    if start <= min(end, len(lines)):
                        self._rereads.read_lines(now, start, min(end, len(lines)), self.turn)
        elif self._record:
            from ..refs import Delivered

            self.ledger.record_all([Delivered(now.path, now.real, "read")], head)
        return got.result

    last_preload = None  # the prefix the last preload() (or refresh()) rendered; None before the first

    @_one_call
    def preload(
        self,
        cwd: str | None = None,
        *,
        budget: int = 8000,
        readme_budget: int = 2000,
        fallbacks: tuple[str, ...] | list[str] | None = None,
        formats: tuple[str, ...] | list[str] | str | None = None,
    ):
        """The stable prefix: instruction files root -> ``cwd`` (with their imports), the
        rules that always apply, the list of rules on request, then README, within ``budget`` tokens.

        ``fallbacks`` replaces the fallback instruction names (default
        ``CLAUDE.md``, ``GEMINI.md``) for the prefix and just-in-time delivery;
        ``formats`` (default: the Workspace's) which agents' files are read, likewise.
        The result is also kept as :attr:`last_preload`, so callers that only
        need the session's current prefix (the assembler, the MCP resource)
        reuse it instead of re-rendering it between refreshes.
        """
        from ..preload.prefix import check_budgets, preload

        check_budgets(budget, readme_budget)
        if fallbacks is not None and tuple(fallbacks) != self.nested.fallbacks:
            self.nested.set_fallbacks(fallbacks)  # the just-in-time lookups use the same names
        if formats is not None:
            self.nested.set_formats(formats)
        self._preload_args = {"cwd": cwd, "budget": budget, "readme_budget": readme_budget, "fallbacks": fallbacks, "formats": formats}  # refresh() repeats it
        head = self.head_sha()
        nested = self.nested
        pre, covered = preload(
            self.policy, lambda: self.tokenizer, cwd=cwd, budget=budget, readme_budget=readme_budget, fallbacks=nested.fallbacks, formats=nested.formats, head=head
        )
        self._record_all(covered.delivered, head)
        nested.mark_prefix(list(covered.dirs), covered.identities, covered.digests)
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

    @contextmanager
    def call(self) -> Iterator[int]:
        """One call of the session's caller, as ``with ws.call() as turn:``. Every primitive
        is one; a call that fails counts too, and calls made inside one (``context --task``
        locates, reads regions and lists notes) are part of it: turn N is the caller's Nth call."""
        if not self._depth:
            self.turn += 1
        self._depth += 1
        try:
            yield self.turn
        finally:
            self._depth -= 1

    def _fill(self, res: Result, paths: list[str], *, content: bool, head: str | None = None) -> None:
        """The session fields: ``git_head``, ``instructions`` met just now (recorded as
        delivered), ``stale``."""
        redact_result(res)  # before anything is priced or shown
        head = self.head_sha() if head is None else head
        res.git_head = head
        res.instructions, delivered = self.nested.on_paths(paths, content=content)
        self._record_all(delivered, head)
        res.stale = self._stale_for(head)

    def _cap(self, max_tokens: int | None) -> int | None:
        return check_tokens(max_tokens) if max_tokens is not None else self.max_tokens

    def _finish(self, res: Result, paths: list[str], max_tokens: int | None, *, content: bool) -> Result:
        """Fill the session fields, then apply the token cap (lists of items)."""
        self._fill(res, paths, content=content)
        cap = self._cap(max_tokens)
        if cap is None:
            return res
        from ..render import fit_tokens

        return fit_tokens(res, cap, self.tokenizer, self.view)

    # -- staleness, refresh, watching (the watcher issue) ----------------------

    _checked_head: object = object()  # HEAD at the last staleness check (unset: the first check re-hashes)

    def _stale_for(self, head: str | None, *, full: bool = False) -> list[dict]:
        with self._lock:
            full = full or head != self._checked_head  # HEAD moved since the last look: re-hash everything
            self._checked_head = head
            return [] if self._ledger is None else self._ledger.check(head, full=full)

    def refresh(self):
        """Start over at a boundary the caller chooses: re-render the prefix, clear ``stale``.

        Stale files stop being tracked (the agent was told; it re-reads what it
        needs), preload entries are replaced by the new rendering, files still
        fresh stay tracked. Returns a :class:`Refreshed` with the
        new ``prefix_hash`` (``None`` if :meth:`preload` never ran) and the
        new prefix as ``preload``. Between refreshes the prefix never changes.
        """
        with self._lock:
            head = self.head_sha()
            cleared = self._stale_for(head, full=True)
            self.ledger.forget([s["path"] for s in cleared])
            # a nested instruction file that changed is delivered again when next met
            self.nested.forget([s["path"] for s in cleared if s.get("kind") == "instructions"])
            pre = None
            if self._preload_args is not None:
                self.ledger.forget(kind="preload")
                pre = self.preload(**self._preload_args)
            if self._events is not None:
                self._events.announced = (head, ())
            return Refreshed(getattr(pre, "prefix_hash", None), head, tuple(cleared), pre)

    def _begin_stream(self) -> dict:
        """The first event of a ``watch`` stream that refreshes: the prefix preloaded, or refreshed."""
        if self._preload_args is None:
            pre = self.preload()
            return {"event": "refreshed", "prefix_hash": getattr(pre, "prefix_hash", None), "git_head": self.head_sha(), "cleared": []}
        return self.refresh().to_event()

    def start_watching(self, poll: bool = False):
        """Start the watcher (idempotent) and return it; :meth:`close` stops it.

        Not needed for correctness: every request re-checks HEAD and the
        delivered files anyway. The watcher makes changes visible as they
        happen (``watch``). ``poll`` forces the polling observer, which
        is also used automatically when native events are unavailable.
        """
        return self.events.start(poll)

    def close(self) -> None:
        """Stop the watcher and end every ``watch`` stream; joins their threads."""
        if self._code is not None:
            self._code.close()
        if self._events is not None:
            self._events.close()
        self.repo.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def watch(self, timeout: float | None = None, poll: bool = False, *, refresh: bool = True):
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
        return self.events.stream(timeout, poll, refresh=refresh)


@dataclass(frozen=True, slots=True)
class Refreshed:
    """What :meth:`Workspace.refresh` did.

    ``prefix_hash``: sha256 of the re-rendered prefix (``None`` if nothing was
    ever preloaded); ``git_head``: HEAD at the refresh; ``cleared``: the stale
    entries the refresh settled; ``preload``: the new prefix object (``.text``).
    """

    prefix_hash: str | None
    git_head: str | None
    cleared: tuple = ()
    preload: object = None

    @property
    def text(self) -> str | None:
        return getattr(self.preload, "text", None)

    def to_event(self) -> dict:
        return {"event": "refreshed", "prefix_hash": self.prefix_hash, "git_head": self.git_head, "cleared": [s["path"] for s in self.cleared]}


def _warm_results() -> None:
    """While grep's rg runs: the imports its result needs next (the just-in-time instructions)."""
    from ..preload import nested  # noqa: F401


def _warm_symbols() -> None:
    """``_warm_results``, and the imports the ``symbol`` annotation needs (tree-sitter, the
    outline walk, and hashlib for the index's location: its OpenSSL load was ~4 ms after rg)."""
    _warm_results()
    import hashlib  # noqa: F401

    from ..code import outline, parse  # noqa: F401

    parse.warm()
