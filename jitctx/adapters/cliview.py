"""The command line's view of a result: paths from the working directory, hints as flags.

Owns the one translation from the library's canonical hint syntax (tool
arguments: ``read on with head path=src/app.py start=68``, ``pass
fixed_strings=true``, ``raise limit``) into what a shell user types
(``jitctx head app.py --start 68``, ``pass --fixed-strings``, ``raise
--limit``), and printing repo-relative paths relative to the working
directory, as rg and git grep do, so a printed path pastes back into the
same shell. Tool and MCP callers see the canonical form (they speak tool
arguments and have no working directory). Does not own what a result holds
or how it is laid out (``render``).
"""

from __future__ import annotations

import posixpath
import re
import shlex

from ..render import View

__all__ = ["CliView", "flag_for"]

_TOOLS = ("head", "tail", "glob", "grep")
_POSITIONAL = {"head": ("path",), "tail": ("path",), "glob": ("pattern", "path"), "grep": ("pattern", "path")}
# a value: quoted, a number with digit groups, or a run up to a space or punctuation that ends a clause
_VALUE = r"(?:\.\.\.|'[^']*'|\"[^\"]*\"|\d{1,3}(?:,\d{3})+(?![\d,])|[^\s,;()]*[^\s,;().:])"
_ARG = rf"[a-z_]+={_VALUE}"
_CALL = re.compile(rf"\b({'|'.join(_TOOLS)})((?: {_ARG})+)")
_LOOSE = re.compile(rf"(?<![\w-])([a-z_]+)=({_VALUE})")
_RAISE = re.compile(r"\braise (limit|max_tokens|timeout|n)\b")
_WORDS = re.compile(r"(?<![\w=-])(max_tokens|fixed_strings|include_ignored|ignore_case|multiline)(?![\w=])")
_PLAIN = re.compile(r"[\w.,*/-]+")  # needs no shell quoting
_PAGING = re.compile(r"\(offset/limit/path\)")

_EXTRA_FLAGS = {"max_tokens": "--max-tokens", "budget": "--budget", "readme_budget": "--readme-budget", "timeout": "--timeout", "n": "-n"}


def flag_for(name: str) -> str | None:
    """The CLI option for a parameter name (the long one; ``-n`` for ``n``), or ``None``."""
    if name in _EXTRA_FLAGS:
        return _EXTRA_FLAGS[name]
    from ..query import FindQuery, HeadQuery, SearchQuery, TailQuery, params

    for query in (SearchQuery, FindQuery, HeadQuery, TailQuery):
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
        if "=" in text:
            text = _CALL.sub(self._call, text)
            text = _LOOSE.sub(self._loose, text)
        text = _RAISE.sub(lambda m: f"raise {flag_for(m.group(1))}", text)
        text = _PAGING.sub("(--offset/--limit/PATH)", text)
        return _WORDS.sub(lambda m: flag_for(m.group(1)) or m.group(1), text)

    def _arg(self, name: str, value: str) -> str | None:
        """One argument as the CLI writes it; ``None`` to leave it as it is."""
        raw = _unquote(value)
        if name == "path":
            return "PATH" if raw == "..." else shlex.quote(self.path(raw))
        if name == "pattern":
            return shlex.quote(raw)
        flag = flag_for(name)
        if flag is None:
            return None
        if raw in ("true", "True"):
            return flag
        if raw in ("false", "False"):
            return f"no {flag}"
        if raw == "...":
            return f"{flag} {name.upper()}"
        return f"{flag} {raw if _PLAIN.fullmatch(raw) else shlex.quote(raw)}"

    def _call(self, m: re.Match) -> str:
        tool = m.group(1)
        args = re.findall(rf"([a-z_]+)=({_VALUE})", m.group(2))
        positional = {name: _unquote(value) for name, value in args if name in _POSITIONAL[tool]}
        words = ["jitctx", tool]
        for name in _POSITIONAL[tool]:
            if name in positional:
                value = positional[name]
                words.append(shlex.quote(self.path(value) if name == "path" else value))
        for name, value in args:
            if name in _POSITIONAL[tool]:
                continue
            shown = self._arg(name, value)
            words.append(shown if shown is not None else f"{name}={value}")
        return " ".join(words)

    def _loose(self, m: re.Match) -> str:
        shown = self._arg(m.group(1), m.group(2))
        return m.group(0) if shown is None else shown
