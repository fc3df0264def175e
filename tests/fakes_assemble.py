"""Fakes for the assembler tests: a word-counting tokenizer, a scripted workspace."""

from __future__ import annotations

import re

from jitctx.refs import FileRef, Result


class WordTokenizer:
    """One token per whitespace-separated word: exact, additive, easy to reason about."""

    name = "words"

    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text.split())

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return ""
        words = list(re.finditer(r"\S+", text))
        return text if len(words) <= max_tokens else text[: words[max_tokens - 1].end()]


class FakePreload:
    def __init__(self, text: str, warnings=()) -> None:
        self.text = text
        self.tokens = len(text.split())
        self.prefix_hash = "fake"
        self.files = []
        self.warnings = list(warnings)


class FakeWorkspace:
    """Answers preload/grep/glob from scripts; records the calls made."""

    last_preload = None

    def __init__(self, preload=None, grep=None, globs=None, tokenizer=None, located=None, files=None) -> None:
        self._preload = preload
        self._grep = grep
        self._globs = globs or {}
        self._located = located
        self._files = files or {}
        self.tokenizer = tokenizer or WordTokenizer()
        self.calls: list[tuple] = []

    def stale(self) -> list[dict]:
        return []

    def preload(self, *args, **kwargs):
        self.calls.append(("preload",))
        if isinstance(self._preload, Exception):
            raise self._preload
        return self._preload

    def grep(self, pattern, path=".", **kwargs):
        """The scripted lines: counted per file (count mode) or those of ``path``."""
        self.calls.append(("grep", pattern, path, tuple(sorted(kwargs.items()))))
        if isinstance(self._grep, Exception):
            raise self._grep
        script = self._grep or Result("grep")
        if path != ".":
            mine = [r for r in script.results if r.path == path]
            return Result("grep", mine, total=len(mine))
        if kwargs.get("mode") == "count":
            counts: dict[str, FileRef] = {}
            for r in script.results:
                old = counts.get(r.path)
                counts[r.path] = FileRef(r.path, r.size, r.mtime, matches=(old.matches if old else 0) + 1)
            refs = sorted(counts.values(), key=lambda f: f.path)
            return Result("grep", refs, total=script.total if script.truncated else len(refs), truncated=script.truncated)
        return script

    def glob(self, pattern, path=".", **kwargs):
        """Scripted per single pattern; a brace choice answers with the union of its parts."""
        from jitctx.text.globs import expand_braces

        self.calls.append(("glob", pattern))
        got: list = []
        for one in expand_braces(pattern):
            part = self._globs.get(one, [])
            if isinstance(part, Exception):
                raise part
            got.extend(r for r in part if r not in got)
        return Result("glob", got, total=len(got))

    def locate(self, task, *, limit=10, file_tokens=True, **kwargs):
        """The scripted ``locate`` result (a Result of FileHits), or raise it."""
        self.calls.append(("locate", task, limit))
        if isinstance(self._located, Exception):
            raise self._located
        return self._located if self._located is not None else Result("locate")

    def head(self, path, n=100, *, start=1, **kwargs):
        """Lines of a scripted file, as an excerpt."""
        from jitctx.refs import Excerpt

        self.calls.append(("head", path, start, n))
        lines = self._files[path].split("\n")[:-1]
        shown = lines[start - 1 : start - 1 + n]
        content = "".join(line + "\n" for line in shown)
        return Result("head", [Excerpt(path, 100, 5.0, start, start + len(shown) - 1, len(lines), content, tokens=len(content.split()))], total=1)

    def read_regions(self, path, spans):
        """Each span as ``head`` would read it."""
        self.calls.append(("read_regions", path, tuple(spans)))
        items = []
        for start, end in spans:
            items.extend(self.head(path, end - start + 1, start=start).results)
            self.calls.pop()
        return Result("head", items, total=len(items))
