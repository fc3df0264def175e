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
from .refs import Excerpt, Result
from .repo import Repo, find_root
from .watch import Ledger

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
        self.ledger = Ledger()
        self._preload_args: dict | None = None
        from .preload import JitInstructions

        self.jit = JitInstructions(self)

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
            round(target.st.st_mtime, 3),
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
        if tool == "head" and not span.lines and span.total_lines is not None and q.start > span.total_lines:
            res.add_notice(f"start={q.start:,} is past the end: {target.path} has {span.total_lines:,} lines; read the end with tail path={target.path}.")
        elif tool == "head" and not span.lines and span.total_lines is None:
            res.add_notice(f"start={q.start:,} is past the end of {target.path}; read the end with tail path={target.path}.")
        if span.total_lines is None and span.lines:
            if tool == "tail":
                res.add_notice(f"{target.path} is over 8 MiB, so lines were not counted: numbers run from the end (-{len(span.lines)} is the first shown).")
            else:
                res.add_notice(f"{target.path} is over 8 MiB, so total_lines was not counted.")
        if tool == "head" and span.total_lines is not None and end is not None and end < span.total_lines:
            res.add_notice(f"{span.total_lines - end:,} more lines; read on with head path={target.path} start={end + 1}.")
        elif tool == "tail" and span.start_line is not None and span.start_line > 1:
            res.add_notice(f"{span.start_line - 1:,} earlier lines; read them with head path={target.path} start=1 (or a later start).")
        if span.replaced:
            res.add_notice("invalid UTF-8 was replaced with U+FFFD.")
        if span.cut_lines:
            res.add_notice(f"{span.cut_lines:,} line(s) over 2,000 chars were cut with a marker.")
        self.ledger.record(target.path, target.real, "read", self.head_sha())
        return self._finish(res, [target.path], max_tokens, content=True, count_excerpt=True)

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

    def preload(self, cwd: str | None = None, *, budget: int = 8000, readme_budget: int = 2000, fallbacks: tuple[str, ...] | list[str] | None = None):
        """The stable prefix: instruction files root -> ``cwd``, then README, within ``budget`` tokens.

        ``fallbacks`` replaces the fallback instruction names (default
        ``CLAUDE.md``, ``GEMINI.md``) for the prefix and just-in-time delivery.
        """
        from .preload import preload

        self._preload_args = {"cwd": cwd, "budget": budget, "readme_budget": readme_budget, "fallbacks": fallbacks}  # refresh() repeats it
        return preload(self, cwd=cwd, budget=budget, readme_budget=readme_budget, fallbacks=fallbacks)

    # -- session --------------------------------------------------------------

    def stale(self) -> list[dict]:
        """Delivered files that changed or vanished since they were delivered."""
        return self.ledger.check(self.head_sha())

    def _finish(self, res: Result, paths: list[str], max_tokens: int | None, *, content: bool, count_excerpt: bool = False) -> Result:
        """Fill the session fields, then apply the token cap."""
        head = self.head_sha()
        res.git_head = head
        res.instructions = self.jit.on_paths(paths, content=content)
        res.stale = self.ledger.check(head)
        cap = check_tokens(max_tokens) if max_tokens is not None else self.max_tokens
        if cap is not None:
            from .render import fit_tokens

            res = fit_tokens(res, cap, self.tokenizer)
        elif count_excerpt:
            res.results = [replace(e, tokens=self.tokenizer.count(e.content)) for e in res.results]
        return res
