"""Nested instruction files, delivered just in time, once per session.

Owns the session record that hands a nested instruction file to the agent
the first time a result shows a path under its directory (DESIGN section
6): which directories the prefix already covers, what was delivered, and
the cached directory -> instruction-file lookups. Returns what it delivered
for the session's ledger; does not own which file governs a directory or how
it is read (``instructions``), the prefix (``preload``) or staleness
(``ledger``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from .errors import QueryError
from .hints import call
from .instructions import DEFAULT_FALLBACKS, Candidate, check_fallbacks, pick_instruction
from .policy import PathPolicy
from .redact import redaction_note
from .refs import Delivered, mtime_of
from .tokens import Tokenizer, fit_lines

__all__ = ["NESTED_TOKENS", "NestedInstructions"]

NESTED_TOKENS = 2000  # content cap for one just-in-time instruction file (head/tail results)


class NestedInstructions:
    """Delivers nested instruction files the first time a path under them is shown.

    The prefix's domain is the chain of directories from the root to the
    preload ``cwd``; until a preload runs it is the root alone (a host that
    never calls preload is assumed to load the root's file itself). Any other
    directory's instruction file is delivered once per session, with content
    for head/tail and as a reference for glob/grep, root-most first. Directory
    lookups are cached and re-checked only when the directory's mtime
    changes. Thread-safe. ``tokenizer`` is called for the tokenizer when a
    file's content must be priced (loading it is the caller's choice).
    """

    def __init__(self, policy: PathPolicy, tokenizer: Callable[[], Tokenizer], fallbacks: tuple[str, ...] | list[str] = DEFAULT_FALLBACKS) -> None:
        self.policy = policy
        self.tokenizer = tokenizer
        self.fallbacks = self._check(fallbacks)
        self._lock = threading.Lock()
        self._domain: set[str] = {"."}
        self._done: set[str] = set()  # directories whose file was delivered
        self._ids: set[tuple[int, int]] = set()  # files delivered (prefix or here)
        self._lookup: dict[str, tuple[int, Candidate | None]] = {}
        self._by_path: dict[str, tuple[str, tuple[int, int] | None]] = {}  # delivered path -> (dir, identity)

    def _check(self, fallbacks) -> tuple[str, ...]:
        names = check_fallbacks(fallbacks)
        for name in names:
            if self.policy.is_denied(name):
                raise QueryError(
                    f"fallback {name!r} is on the deny list", hint="instruction files are shown to the model; name a non-secret file such as 'CLAUDE.md'", field="fallbacks"
                )
        return names

    def set_fallbacks(self, fallbacks: tuple[str, ...] | list[str]) -> None:
        """Change the fallback names (forgets cached directory lookups)."""
        names = self._check(fallbacks)
        with self._lock:
            self.fallbacks = names
            self._lookup.clear()

    def mark_prefix(self, dirs: list[str], identities) -> None:
        """Record that the prefix covers ``dirs`` and delivered these files."""
        with self._lock:
            self._domain.update(dirs)
            self._ids.update(identities)

    def reset(self) -> None:
        """Forget what was delivered (a new session): everything is due again."""
        with self._lock:
            self._domain = {"."}
            self._done.clear()
            self._ids.clear()
            self._lookup.clear()
            self._by_path.clear()

    def forget(self, paths) -> None:
        """Make these delivered instruction files due again (e.g. after a refresh cleared them as stale)."""
        with self._lock:
            for p in paths:
                hit = self._by_path.pop(p, None)
                if hit is not None:
                    self._done.discard(hit[0])
                    self._ids.discard(hit[1])
                    self._lookup.pop(hit[0], None)

    def delivered(self) -> list[str]:
        """Directories whose instruction file was delivered just in time, sorted."""
        with self._lock:
            return sorted(self._done)

    def _find(self, d: str) -> Candidate | None:
        real = self.policy.root / d
        try:
            mtime = os.stat(real).st_mtime_ns
        except OSError:
            return None
        hit = self._lookup.get(d)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        with self.policy.opener() as opener:
            c = pick_instruction(opener, d, self.fallbacks, NESTED_TOKENS, denied=self.policy.is_denied).chosen
        self._lookup[d] = (mtime, c)
        return c

    def on_paths(self, paths: list[str], *, content: bool) -> tuple[list[dict], list[Delivered]]:
        """The ``instructions`` entries due for a result showing ``paths``, and
        the files they deliver (for the session's ledger)."""
        if not paths:
            return [], []
        due: list[tuple[str, Candidate]] = []
        with self._lock:
            skip = self._domain | self._done
            looked: set[str] = set()
            for p in paths:
                cut = p.rfind("/")
                if cut <= 0:
                    continue
                parent = p[:cut]
                if parent in looked:
                    continue
                parts = parent.split("/")
                for i in range(1, len(parts) + 1):
                    d = "/".join(parts[:i])
                    if d in looked:
                        continue
                    looked.add(d)
                    if d in skip:
                        continue
                    c = self._find(d)
                    if c is None:
                        continue
                    skip.add(d)
                    self._done.add(d)
                    if c.identity in self._ids:
                        continue  # the same file (link) was delivered already
                    self._ids.add(c.identity)  # type: ignore[arg-type]
                    self._by_path[c.path] = (d, c.identity)
                    due.append((d, c))
        if not due:
            return [], []
        shown = set(paths) if content else ()
        out = []
        delivered = []
        for d, c in due:
            if c.path not in shown:  # head/tail of the instruction file itself carries it already
                out.append(self._entry(d, c, content))
            delivered.append(Delivered(c.path, c.real, "instructions", named=self.policy.root / c.path))
        return out, delivered

    def _entry(self, d: str, c: Candidate, content: bool) -> dict:
        assert c.st is not None  # a picked file was read
        entry: dict[str, object] = {"path": c.path, "dir": d, "size": c.st.st_size, "mtime": mtime_of(c.st)}
        if not content:
            return entry
        loaded = c.loaded
        tok = self.tokenizer()
        lines = loaded.lines  # type: ignore[union-attr]
        full = "".join(line + "\n" for line in lines)
        if loaded.complete and len(full) <= NESTED_TOKENS * 64 and tok.count(full) <= NESTED_TOKENS:  # type: ignore[union-attr]
            entry["content"], entry["tokens"], entry["truncated"] = full, tok.count(full), False
        else:

            def render(k: int) -> str:
                kept = "".join(line + "\n" for line in lines[:k])
                of = f"of {len(lines):,}" if loaded.complete else f"of a {loaded.size:,}-byte file"  # type: ignore[union-attr]
                return kept + f"[… {c.path} cut to {NESTED_TOKENS:,} tokens: kept lines 1-{k:,} {of}; read on with {call('head', path=c.path, start=k + 1)}]\n"

            k = fit_lines(tok.count, lines, NESTED_TOKENS, render) or 0
            text = render(k)
            entry["content"], entry["tokens"], entry["truncated"] = text, tok.count(text), True
        if loaded.replaced:  # type: ignore[union-attr]
            entry["replaced"] = True
        if loaded.redacted:  # type: ignore[union-attr]
            entry["warning"] = redaction_note(c.path, loaded.redacted)  # type: ignore[union-attr]
        return entry
