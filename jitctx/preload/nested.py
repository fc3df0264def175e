"""Nested instruction files and path-scoped rules, delivered just in time, once per session.

Owns the session record that hands a nested instruction file to the agent
the first time a result shows a path under its directory (DESIGN section
6), with the files it ``@``-imports, and a path-scoped rule of another
agent's format (DESIGN section 13) the first time a result shows a path its
globs match, again when its file changes: which directories the prefix
already covers, what was delivered (files and texts: an exact copy in
another format comes once), and the cached directory -> instruction-file
lookups. Returns what it delivered for the session's ledger; does not own
which file governs a directory or how it is read (``instructions``), finding
rules (``rules``), imports (``imports``), the prefix (``preload``) or
staleness (``ledger``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ..errors import QueryError
from ..refs import Delivered, mtime_of
from ..repo.policy import PathPolicy
from ..text.hints import call
from ..text.redact import redaction_note
from ..tokens.tokenizer import Tokenizer, fit_lines
from .formats import FORMATS, TITLES, Rule, chain_fallbacks, check_formats, find_rules
from .instructions import DEFAULT_FALLBACKS, Candidate, check_fallbacks, pick_instruction

__all__ = ["NESTED_TOKENS", "NestedInstructions"]

NESTED_TOKENS = 2000  # content cap for one just-in-time instruction file (head/tail results)


class NestedInstructions:
    """Delivers nested instruction files and path-scoped rules the first time a path they govern is shown.

    The prefix's domain is the chain of directories from the root to the
    preload ``cwd``; until a preload runs it is the root alone (a host that
    never calls preload is assumed to load the root's file itself). Any other
    directory's instruction file is delivered once per session, with content
    for head/tail and as a reference for glob/grep, root-most first, each
    followed by the files it imports. Then the path-scoped rules of the
    ``formats`` whose globs match a shown path, in precedence order; a rule
    whose file changed since it was delivered is delivered again. A text
    delivered once (in the prefix or here) is not delivered again under
    another name. Directory lookups are cached and re-checked only when the
    directory's mtime changes. Thread-safe. ``tokenizer`` is called for the
    tokenizer when a file's content must be priced (loading it is the
    caller's choice).
    """

    def __init__(
        self,
        policy: PathPolicy,
        tokenizer: Callable[[], Tokenizer],
        fallbacks: tuple[str, ...] | list[str] = DEFAULT_FALLBACKS,
        formats: tuple[str, ...] | list[str] | str | None = FORMATS,
    ) -> None:
        self.policy = policy
        self.tokenizer = tokenizer
        self.fallbacks = self._check(fallbacks)
        self.formats = check_formats(formats)
        self._lock = threading.Lock()
        self._domain: set[str] = {"."}
        self._done: set[str] = set()  # directories whose file was delivered
        self._ids: set[tuple[int, int]] = set()  # files delivered (prefix or here)
        self._texts: set[str] = set()  # digests of the texts delivered (prefix or here)
        # path-scoped rule met -> (digest of its text then, identity it delivered, whether this path gave that text)
        self._rules: dict[str, tuple[str, tuple[int, int] | None, bool]] = {}
        self._lookup: dict[str, tuple[int, Candidate | None]] = {}
        self._by_path: dict[str, tuple[str, tuple[int, int] | None, str | None]] = {}  # delivered path -> (dir, identity, digest)

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

    def set_formats(self, formats: tuple[str, ...] | list[str] | str | None) -> None:
        """Change which agents' formats are read (``rules.check_formats``; forgets cached lookups)."""
        checked = check_formats(formats)
        with self._lock:
            if checked != self.formats:
                self.formats = checked
                self._lookup.clear()

    def mark_prefix(self, dirs: list[str], identities, digests=()) -> None:
        """Record that the prefix covers ``dirs`` and delivered these files and texts."""
        with self._lock:
            self._domain.update(dirs)
            self._ids.update(identities)
            self._texts.update(digests)

    def reset(self) -> None:
        """Forget what was delivered (a new session): everything is due again."""
        with self._lock:
            self._domain = {"."}
            self._done.clear()
            self._ids.clear()
            self._texts.clear()
            self._rules.clear()
            self._lookup.clear()
            self._by_path.clear()

    def forget(self, paths) -> None:
        """Make these delivered instruction files and rules due again (e.g. after a refresh cleared them as stale)."""
        with self._lock:
            for p in paths:
                rule = self._rules.pop(p, None)
                if rule is not None and rule[2]:
                    self._texts.discard(rule[0])
                    self._ids.discard(rule[1])
                hit = self._by_path.pop(p, None)
                if hit is not None:
                    self._done.discard(hit[0])
                    self._ids.discard(hit[1])
                    self._texts.discard(hit[2])
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
        names = chain_fallbacks(self.fallbacks, self.formats)
        with self.policy.opener() as opener:
            c = pick_instruction(opener, d, names, NESTED_TOKENS, denied=self.policy.is_denied, agents="agents" in self.formats).chosen
        self._lookup[d] = (mtime, c)
        return c

    def _fresh(self, c: Candidate) -> bool:
        """Whether ``c``'s file and text were not delivered yet (and now are recorded so)."""
        if c.identity in self._ids:
            return False  # the same file (link) was delivered already
        digest = c.loaded.digest() if c.loaded is not None else None
        if digest in self._texts:
            return False  # the same text under another name
        if c.identity is not None:
            self._ids.add(c.identity)
        if digest is not None:
            self._texts.add(digest)
        return True

    def on_paths(self, paths: list[str], *, content: bool) -> tuple[list[dict], list[Delivered]]:
        """The ``instructions`` entries due for a result showing ``paths``, and
        the files they deliver (for the session's ledger)."""
        if not paths:
            return [], []
        due: list[tuple[str, Candidate, str | None]] = []  # (dir, file, importing file)
        rules: list[tuple[Rule, str]] = []  # (rule, the first shown path it matches)
        shown = set(paths) if content else set()
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
                    if not self._fresh(c):
                        continue
                    self._by_path[c.path] = (d, c.identity, c.loaded.digest() if c.loaded is not None else None)
                    due.append((d, c, None))
                    due += self._imports(d, c)
            if any(f in TITLES for f in self.formats):
                rules = self._due_rules(paths, shown)
        if not due and not rules:
            return [], []
        out = []
        delivered = []
        for d, c, by in due:
            if c.path not in shown:  # head/tail of the instruction file itself carries it already
                out.append(self._entry(d, c, content, by))
            delivered.append(Delivered(c.path, c.real, "instructions", named=self.policy.root / c.path))
        for rule, matched in rules:
            out.append(self._rule_entry(rule, matched, content))
            delivered.append(Delivered(rule.path, rule.cand.real, "instructions", named=self.policy.root / rule.path))
        return out, delivered

    def _imports(self, d: str, c: Candidate) -> list[tuple[str, Candidate, str | None]]:
        """The files a just-delivered instruction file imports, not delivered yet."""
        if c.loaded is None or not any("@" in line for line in c.loaded.lines):
            return []
        from .imports import resolve as resolve_imports  # only for a file that may import one

        with self.policy.opener() as opener:
            found, _ = resolve_imports(self.policy, opener, c, NESTED_TOKENS, set(self._ids))
        out: list[tuple[str, Candidate, str | None]] = []
        for imp in found:
            if imp.cand.reason is None and self._fresh(imp.cand):
                self._by_path[imp.cand.path] = (d, imp.cand.identity, imp.cand.loaded.digest() if imp.cand.loaded is not None else None)
                out.append((d, imp.cand, imp.by))
        return out

    def _due_rules(self, paths: list[str], shown: set[str]) -> list[tuple[Rule, str]]:
        """The path-scoped rules a result showing ``paths`` brings (lock held): each
        matching rule not delivered with its current text."""
        out = []
        for rule in find_rules(self.policy, self.formats).scoped("path"):
            was = self._rules.get(rule.path)
            if was is not None and was[0] == rule.digest:
                continue
            if rule.path in shown:  # a head of the rule file itself: it was read whole or in part
                self._rules[rule.path] = (rule.digest, None, rule.digest not in self._texts)
                self._texts.add(rule.digest)
                continue
            matched = next((p for p in paths if rule.matches(p)), None)
            if matched is None:
                continue
            again = was is not None  # delivered before, changed since
            if rule.digest in self._texts or (not again and rule.cand.identity in self._ids):
                self._rules[rule.path] = (rule.digest, None, False)
                continue  # the same text, or the same file, was delivered already
            self._rules[rule.path] = (rule.digest, rule.cand.identity, True)
            self._texts.add(rule.digest)
            if rule.cand.identity is not None:
                self._ids.add(rule.cand.identity)
            out.append((rule, matched))
        return out

    def _content(self, entry: dict, path: str, lines: tuple[str, ...], offset: int, loaded) -> None:
        """Put ``lines`` (a file's, from line ``offset + 1``) in ``entry``, cut to ``NESTED_TOKENS``."""
        tok = self.tokenizer()
        full = "".join(line + "\n" for line in lines)
        if loaded.complete and len(full) <= NESTED_TOKENS * 64 and tok.count(full) <= NESTED_TOKENS:
            entry["content"], entry["tokens"], entry["truncated"] = full, tok.count(full), False
        else:

            def render(k: int) -> str:
                kept = "".join(line + "\n" for line in lines[:k])
                of = f"of {offset + len(lines):,}" if loaded.complete else f"of a {loaded.size:,}-byte file"
                return (
                    kept
                    + f"[… {path} cut to {NESTED_TOKENS:,} tokens: kept lines {offset + 1:,}-{offset + k:,} {of}; read on with {call('head', path=path, start=offset + k + 1)}]\n"
                )

            k = fit_lines(tok.count, lines, NESTED_TOKENS, render) or 0
            text = render(k)
            entry["content"], entry["tokens"], entry["truncated"] = text, tok.count(text), True
        if loaded.replaced:
            entry["replaced"] = True
        if loaded.redacted:
            entry["warning"] = redaction_note(path, loaded.redacted)

    def _entry(self, d: str, c: Candidate, content: bool, by: str | None) -> dict:
        assert c.st is not None and c.loaded is not None  # a picked file was read
        entry: dict[str, object] = {"path": c.path, "dir": d, "size": c.st.st_size, "mtime": mtime_of(c.st)}
        if by is not None:
            entry["imported_by"] = by
        if content:
            self._content(entry, c.path, c.loaded.lines, 0, c.loaded)
        return entry

    def _rule_entry(self, rule: Rule, matched: str, content: bool) -> dict:
        st = rule.cand.st
        assert st is not None  # a picked file was read
        entry: dict[str, object] = {
            "path": rule.path,
            "size": st.st_size,
            "mtime": mtime_of(st),
            "rule": {"format": rule.format, "globs": list(rule.globs), "matched": matched, "start": rule.offset + 1},
        }
        if content:
            self._content(entry, rule.path, rule.body, rule.offset, rule.cand.loaded)
        return entry
