"""The command line's view of a result: paths from the working directory, hints as flags.

Owns the one translation from the library's canonical hint syntax (tool
arguments: ``read on with head path=src/app.py start=68``, ``pass
fixed_strings=true``, ``raise limit``) into what a shell user types
(``jitctx head app.py --start 68``, ``pass --fixed-strings``, ``raise
--limit``), and printing repo-relative paths relative to the working
directory, as rg and git grep do, so a printed path pastes back into the
same shell. The calls on jitctx's own lines of a prefix or a window (cut
markers, labels, the read-next block) are translated too (``calls``); the
file content around them is not. Tool and MCP callers see the canonical
form (they speak tool arguments and have no working directory). Does not own what a result holds
or how it is laid out (``render``).
"""

from __future__ import annotations

import posixpath
import re

from ..render import View

__all__ = ["CliView", "flag_for"]

# a value: quoted, a number with digit groups, or a run up to a space or punctuation that ends a clause
# (a value with a space, a quote or brackets is quoted: jitctx.text.hints.call)
_VALUE = r"(?:\.\.\.|'[^']*'|\"[^\"]*\"|\d{1,3}(?:,\d{3})+(?![\d,])|[^\s,;()]*[^\s,;().:\]])"  # a bare value never ends a marker's "]"
_ARG = rf"[a-z_]+={_VALUE}"


class _Rx:
    """The translation's patterns, compiled at the first hint (a glob that prints
    no notice pays nothing: ~2 ms of a CLI call)."""

    def __init__(self) -> None:
        from ..query import PRIMITIVES, params

        # each primitive's positional arguments on the command line: what it offers without a flag, in field order
        self.positional = {q.name: tuple(p.name for p in params(q) if p.arg.cli and not p.arg.flags) for q in PRIMITIVES}
        self.named = frozenset(name for names in self.positional.values() for name in names) - {"path"}
        self.call = re.compile(rf"\b({'|'.join(self.positional)})((?: {_ARG})+)")
        self.arg = re.compile(rf"([a-z_]+)=({_VALUE})")
        self.loose = re.compile(rf"(?<![\w-])([a-z_]+)=({_VALUE})")
        self.raise_ = re.compile(r"\braise (limit|max_tokens|timeout|n)\b")
        self.words = re.compile(r"(?<![\w=-])(max_tokens|fixed_strings|include_ignored|ignore_case|multiline)(?![\w=])")
        self.bound = re.compile(r"(?<![\w-])([a-z_]+) ?(>=|<=) ?(\d[\d,]*)")  # pass limit>=1
        self.subject = re.compile(r"^(?:([a-z]+): )?([a-z_]+)(?= must )")  # "limit must be ..." (an error's subject)
        self.plain = re.compile(r"[\w.,*/-]+")  # needs no shell quoting
        # the lines of a prefix or a window that are jitctx's own, not file content: a cut marker
        # (preload, nested instructions), a label, the read-next block (context)
        self.own = re.compile(r"(?m)^(?:\[… [^\n]*\]|==> [^\n]* <==)$|^--- read next \(not in this window\) ---\n(?:[^\n]+\n?)*")


_rx: _Rx | None = None


def _patterns() -> _Rx:
    global _rx
    if _rx is None:
        _rx = _Rx()
    return _rx


# the options that are not a primitive's Query field (preload, context, watch; every subcommand's --root)
_EXTRA_FLAGS = {"max_tokens": "--max-tokens", "budget": "--budget", "readme_budget": "--readme-budget", "timeout": "--timeout", "n": "-n", "root": "--root", "cwd": "--cwd"}


def flag_for(name: str) -> str | None:
    """The CLI option for a parameter name (the long one; ``-n`` for ``n``), or ``None``."""
    if name in _EXTRA_FLAGS:
        return _EXTRA_FLAGS[name]
    from ..query import FindQuery, HeadQuery, LocateQuery, NotesQuery, OutlineQuery, SearchQuery, SymbolsQuery, TailQuery, params

    for query in (SearchQuery, FindQuery, HeadQuery, TailQuery, OutlineQuery, SymbolsQuery, LocateQuery, NotesQuery):
        for p in params(query):
            if p.name == name and p.arg.flags and p.arg.cli:
                longs = [f for f in p.arg.flags if f.startswith("--")]
                return longs[-1] if longs else p.arg.flags[0]
    return None


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


class CliView(View):
    """Paths relative to ``cwd`` (the working directory, repo-relative; ``""`` at
    the root or outside it), hints in command-line syntax."""

    def __init__(self, cwd: str = "") -> None:
        self.cwd = "" if cwd in ("", ".") else cwd.strip("/")

    def path(self, path: str) -> str:
        if not self.cwd or not path or path.startswith("/"):
            return path
        if path == ".":
            return posixpath.relpath(".", self.cwd)
        return posixpath.relpath(path, self.cwd)

    def hint(self, text: str) -> str:
        rx = _patterns()
        if "=" in text:
            text = rx.call.sub(self._call, text)
            text = rx.loose.sub(self._loose, text)
        text = rx.bound.sub(lambda m: f"{flag_for(m.group(1))} {m.group(3)} {'or more' if m.group(2) == '>=' else 'or less'}" if flag_for(m.group(1)) else m.group(0), text)
        text = rx.subject.sub(
            lambda m: (m.group(1) + ": " if m.group(1) else "") + (flag_for(m.group(2)) or m.group(2)) if m.group(2) not in ("path", "pattern", "query") else m.group(0), text
        )
        text = rx.raise_.sub(lambda m: f"raise {flag_for(m.group(1))}", text)
        return rx.words.sub(lambda m: flag_for(m.group(1)) or m.group(1), text)

    def calls(self, text: str) -> str:
        rx = _patterns()
        if "=" not in text:
            return text
        return rx.own.sub(lambda m: rx.call.sub(self._call, m.group(0)), text)

    def _arg(self, name: str, value: str) -> str | None:
        """One argument as the CLI writes it; ``None`` to leave it as it is."""
        from shlex import quote

        raw = _unquote(value)
        if name == "path":
            return "PATH" if raw == "..." else quote(self.path(raw))
        if name in _patterns().named:  # positional: the value alone
            return quote(raw)
        flag = flag_for(name)
        if flag is None:
            return None
        if raw in ("true", "True"):
            return flag
        if raw in ("false", "False"):
            return f"no {flag}"
        if raw == "...":
            return f"{flag} {name.upper()}"
        return f"{flag} {raw if _patterns().plain.fullmatch(raw) else quote(raw)}"

    def _call(self, m: re.Match) -> str:
        from shlex import quote

        tool = m.group(1)
        rx = _patterns()
        args = rx.arg.findall(m.group(2))
        names = rx.positional[tool]
        positional = {name: _unquote(value) for name, value in args if name in names}
        words = ["jitctx", tool]
        for name in names:
            if name in positional:
                value = positional[name]
                words.append(quote(self.path(value) if name == "path" else value))
        for name, value in args:
            if name in names:
                continue
            shown = self._arg(name, value)
            words.append(shown if shown is not None else f"{name}={value}")
        return " ".join(words)

    def _loose(self, m: re.Match) -> str:
        shown = self._arg(m.group(1), m.group(2))
        return m.group(0) if shown is None else shown
