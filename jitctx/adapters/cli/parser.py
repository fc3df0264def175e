"""The CLI's parser and help: every subcommand's options and what its help says.

Owns argparse (writing to the call's streams at the call's width; a usage error
under ``--json`` is also one JSON object), the options of a primitive's subcommand
(derived from its definition, ``jitctx.query``: the same names, bounds and
descriptions as its tool's), the other subcommands' options, and each help's
description, examples and exit codes. A server reuses the parsers it built.
Does not own running a command (``commands``) or the exit codes (``exits``).
Imports no Query until a parser is built.
"""

from __future__ import annotations

import argparse
import sys

from ... import __version__
from ...call import Caller
from .exits import json_error

__all__ = ["HELP", "PRIMITIVE_COMMANDS", "SUBCOMMANDS", "build_parser", "parser_for", "query_options", "subparser"]


def _common(p: argparse.ArgumentParser, *, root: bool = True, json: bool = True, server: bool = True, json_help: str | None = None) -> None:
    """``--root`` and ``--json``, which every subcommand that reads a repository takes
    (DESIGN 11); a subcommand that would not use one (``root=False``/``json=False``)
    does not take it, so argparse refuses it with that subcommand's usage (exit 2).
    ``--no-server`` where the thin client could send the call to a server (``jitctx.client``)."""
    if root:
        p.add_argument("--root", metavar="DIR", help="repository root (default: $JITCTX_ROOT, else the git top level of the working directory)")
    if json:
        p.add_argument("--json", action="store_true", help=json_help or "print one JSON object instead of text (errors too, on stdout, exit 2)")
    if server:
        p.add_argument("--no-server", action="store_true", help="run in this process, not through the root's warm server (also JITCTX_SERVER=0)")


def _formats(p: argparse.ArgumentParser) -> None:
    """``--formats``: which agents' instruction and rule files are read (``jitctx.preload.formats``)."""
    p.add_argument(
        "--formats",
        metavar="LIST",
        help="agents' formats to read instructions and rules from, comma-separated: agents, claude, gemini, cursor, copilot, windsurf, cline, or all, none (default: $JITCTX_FORMATS, else all)",
    )


def _max_tokens(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-tokens", type=int, metavar="N", help="cap the rendered output at N tokens (held to 200-50,000), cut at whole items (default: no cap)")


_CLI_TYPES = {"int": int, "float": float, "str": str}


def query_options(p: argparse.ArgumentParser, query: type) -> None:
    """The options of a primitive, from its Query's fields (``jitctx.query``):
    the same names, bounds and descriptions as the tool schema's."""
    from ...query import params

    for q in params(query):
        a = q.arg
        if not a.cli:
            continue
        shown = f"{a.doc} (default {q.default:g})" if isinstance(q.default, float) else f"{a.doc} (default {q.default})" if q.default not in (None, False, (), "", 0) else a.doc
        if not a.flags:
            kw: dict = {} if q.required else {"nargs": "?", "default": q.default}
            p.add_argument(q.name, help=shown, choices=a.choices or None, **kw)
        elif q.kind == "bool":
            p.add_argument(*a.flags, dest=q.name, action="store_true", help=a.doc)
        elif q.kind == "strs":
            p.add_argument(*a.flags, dest=q.name, action="append", default=[], metavar=a.metavar, help=a.doc + " (repeatable)")
        else:
            # no argparse default: the Query applies its own, and sees which options were given;
            # a required one is required here too, so its absence is a usage error naming it
            p.add_argument(*a.flags, dest=q.name, type=_CLI_TYPES[q.kind], choices=a.choices or None, default=None, metavar=a.metavar, help=shown, required=q.required)


_Formatter = argparse.HelpFormatter
_RawFormatter = argparse.RawDescriptionHelpFormatter


class _Io:
    """The call a parser tree answers for (shared by a parser and its subparsers):
    where argparse's help, usage and errors go, the width they wrap at, the argv
    (a usage error under ``--json`` is also a JSON object). Set per call by :func:`parser_for`."""

    __slots__ = ("argv", "caller")

    def __init__(self) -> None:
        self.argv: list[str] = []
        self.caller: Caller | None = None


class _Parser(argparse.ArgumentParser):
    """argparse, but writing to the call's streams at the call's width, and a usage
    error under ``--json`` is also one JSON object on stdout."""

    def __init__(self, *args, io: _Io | None = None, **kwargs) -> None:
        self.io = io if io is not None else _Io()
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def _caller(self) -> Caller:
        if self.io.caller is None:
            self.io.caller = Caller.here()
        return self.io.caller

    def _get_formatter(self):
        return self.formatter_class(prog=self.prog, width=self._caller().width() - 2)  # type: ignore[call-arg]

    def print_help(self, file=None) -> None:
        super().print_help(file if file is not None else self._caller().out)

    def print_usage(self, file=None) -> None:
        super().print_usage(file if file is not None else self._caller().out)

    def _print_message(self, message: str, file=None) -> None:
        if message:
            caller = self._caller()
            file = caller.err if file is None or file is sys.stderr else caller.out if file is sys.stdout else file
            try:
                file.write(message)
            except (AttributeError, OSError):
                pass

    def error(self, message: str):
        if "--json" in self.io.argv:
            json_error(self._caller().out, {"type": "usage_error", "message": message, "hint": f"see {self.prog} --help"})
        super().error(message)


_EXITS = "exit status: 0 found, 1 nothing found, 2 error (message on stderr; with --json also a JSON error object on stdout)"
# per subcommand: what it prints, and examples (the help's epilog)
HELP = {
    "glob": (
        "Prints one line per file: path (from the working directory), size, age. The pattern is relative to PATH:\n"
        "'*.md' is its top level, '**/*.md' every level; braces choose ('*.{ts,tsx}').",
        ["jitctx glob '**/*.py' src", "jitctx glob '*.md' --sort path", "jitctx glob 'src/**' --include-ignored --limit 20"],
    ),
    "grep": (
        "Prints matching files with match counts (--mode files), matching lines under each file's path as\n"
        "line:text, as rg --heading (content; -A/-B/-C imply it), or files by match count, most first (count).\n"
        "Paged with --limit/--offset.",
        ["jitctx grep 'def main' -g '*.py'", "jitctx grep TODO src -C 2", "jitctx grep -F 'a.b(' --mode count"],
    ),
    "head": ("Prints the lines numbered, under a header with the file's line count, size, age and tokens.", ["jitctx head README.md", "jitctx head src/app.py --start 120 -n 40"]),
    "tail": ("Prints the last lines numbered (counted from the end for files over 8 MiB); cheap on huge files.", ["jitctx tail CHANGELOG.md -n 30"]),
    "outline": (
        "Prints one line per definition, indented by nesting: first-last line, kind, signature, [tokens to read it whole].",
        ["jitctx outline src/app.py", "jitctx head src/app.py --symbol main  # then read one definition"],
    ),
    "symbols": (
        "Prints one line per definition: path:first-last, qualified name, signature, tokens; exact names first.",
        ["jitctx symbols Parser.parse", "jitctx symbols 'Rational.' --kind method", "jitctx symbols main src"],
    ),
    "preload": (
        "Prints the prefix an agent loads first: AGENTS.md (or CLAUDE.md, GEMINI.md) from the root down to here, then the README.",
        ["jitctx preload", "jitctx preload --budget 4000 --json"],
    ),
    "watch": (
        'Prints one JSON object a line, each with a UTC "time": head_moved (HEAD or the branch moved), stale\n'
        "(a watched file changed; the full current list), refreshed (the prefix was re-rendered). It watches git's\n"
        "HEAD and refs, the instruction files and README of its own prefix (the chain down to the working\n"
        "directory), and each PATH given; edits to other files give no event.",
        ["jitctx watch --timeout 60", "jitctx watch src/app.py docs"],
    ),
    "notes": (
        "Prints notes (#id, age, what it is about, [stale: ...] when a file or definition it names changed since).\n"
        "Kept per repository in the cache folder, outside the tree; context --task brings back the ones a task matches.",
        ["jitctx notes add 'retry lives in client.py, not session.py' --path src/client.py", "jitctx notes list", "jitctx notes read --id 3"],
    ),
    "locate": (
        "Prints the files a task is about, best first, each with why and its cost, and under each the regions\n"
        "(definitions or line windows) that matter: lines, symbol, tokens, why. Read one with head --symbol.",
        ['jitctx locate --task "where is the login form validated"', "jitctx locate --task 'fix Parser.parse on empty input' --limit 5 --json"],
    ),
    "context": (
        "Prints a context window for a task: the prefix, the regions locate ranks first, a read-next block\n"
        "(what did not fit: calls and token costs, and one line of counts), the task.",
        ['jitctx context --task "fix the login bug" --budget 8000'],
    ),
    "tools": ("Prints the tool schemas (JSON) for a provider's function calling.", ["jitctx tools --format anthropic"]),
    "mcp": ("Serves the tools over MCP on stdin/stdout until the client closes stdin. Needs the mcp extra.", ["jitctx mcp --root ~/src/project"]),
    "serve": (
        "Serves the CLI's calls for one root warm, one server per user and root (the CLI starts it on demand; it exits\n"
        "when idle); its socket lives in $XDG_RUNTIME_DIR/jitctx/ (else the cache folder's run/), mode 0700.\n"
        "Answers are the same as without it; --no-server or JITCTX_SERVER=0 bypasses it.",
        ["jitctx serve --status", "jitctx serve --stop", "jitctx serve --status --all", "jitctx serve --stop --all", "jitctx serve --idle 3600"],
    ),
    "session": ("Prints an id; export it as JITCTX_SESSION so later calls share what was shown (re-reads, changes since).", ["export JITCTX_SESSION=$(jitctx session new)"]),
    "index": (
        "Prints the build's progress (a bar on a terminal, plain lines otherwise; stderr), then a summary (stdout).\n"
        "It builds the paths and words locate needs first, then the definitions outline and symbols need. Calls never\n"
        "wait for it: without it, the index is built in the background.",
        ["jitctx index", "jitctx index --status", "jitctx index --stop"],
    ),
}


_EXITS_FOR = {
    "watch": "exit status: 0 if HEAD moved or a file changed before --timeout, 1 if nothing did, 2 error, 130 interrupted",
    "locate": "exit status: 0 files found, 1 nothing matched the task's words, 2 error (an empty or stop-words-only task)",
    "notes": "exit status: 0 done (list: notes found), 1 no notes (list), 2 error (an unknown id, a missing text)",
    "context": "exit status: 0 window printed, 1 nothing located for the task, 2 error (message on stderr; with --json also a JSON error object on stdout)",
    "tools": "exit status: 0, or 2 for a usage error",
    "mcp": "exit status: 0 when the client closes stdin, 2 for a bad root or a missing mcp extra (message on stderr)",
    "serve": "exit status: 0 served until idle or stopped (--status: running; --stop: stopped), 1 no server runs (--status, --stop; with --all: no jitctx process) or one already runs, 2 error",
    "session": "exit status: 0, or 2 for a usage error",
    "index": "exit status: 0 built (--status: current; --stop: a build was stopped), 1 --status: behind or being built, --stop: no build ran, 2 error",
}


def _sub(sub, name: str, text: str) -> argparse.ArgumentParser:
    """A subcommand whose help says what it does, what it prints, examples and exit codes."""
    prints, examples = HELP.get(name, ("", []))
    epilog = "\n".join([*(["examples:", *(f"  {e}" for e in examples)] if examples else []), _EXITS_FOR.get(name, _EXITS)])
    description = f"{text[0].upper()}{text[1:]}.\n{prints}".rstrip()
    return sub.add_parser(name, help=text, description=description, epilog=epilog, formatter_class=_RawFormatter, io=sub.io)


def build_parser(command: str | None = None, caller: Caller | None = None) -> _Parser:
    """The CLI's parser; with ``command``, only that subcommand's options are built
    (argparse builds each one's in full: ~5 ms of a one-shot call for all twelve).
    ``caller``: where its help, usage and errors go (``None``: this process's streams)."""
    io = _Io()
    io.caller = caller
    parser = _Parser(
        io=io,
        prog="jitctx",
        description="Repository context for coding agents: references, not file dumps.",
        epilog="Paths are taken from the working directory and printed from it. Exit status: "
        + _EXITS.split(": ", 1)[1]
        + ". jitctx COMMAND --help shows what it prints, with examples.",
    )
    parser.add_argument("--version", action="version", version=f"jitctx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.io = io  # type: ignore[attr-defined]  # each subcommand's parser answers for the same call
    for name, build in SUBCOMMANDS.items():
        if command is None or command == name:
            build(sub, name)
    return parser


_BUILT: dict[str | None, _Parser] = {}  # a server's parsers, by subcommand (the adapter's own cache)


def parser_for(command: str | None, caller: Caller, argv: list[str]) -> _Parser:
    """The parser for this call, answering for ``caller``; a server reuses each one it
    built (~0.8 ms a call: argparse builds every option and looks up its translations),
    a process builds one."""
    parser = _BUILT.get(command) if caller.serves is not None else None
    if parser is None:
        parser = build_parser(command, caller)
        if caller.serves is not None:
            _BUILT[command] = parser
    parser.io.caller, parser.io.argv = caller, argv
    return parser


def _primitive(sub, name: str) -> None:
    from ...query import PRIMITIVES

    query = next(q for q in PRIMITIVES if q.name == name)
    p = _sub(sub, name, query.summary)
    query_options(p, query)
    _max_tokens(p)
    _formats(p)
    _common(p)


# the subcommands whose options come from a primitive's definition (jitctx.query.PRIMITIVES, in
# its order; a test keeps them equal): named here, since main looks a subcommand up before
# it imports the Queries
PRIMITIVE_COMMANDS = ("glob", "grep", "head", "tail", "outline", "symbols", "locate", "notes")


def _preload_parser(sub, name: str) -> None:
    p = _sub(sub, name, "print the stable prefix: instruction files and README within a token budget")
    p.add_argument("--cwd", metavar="DIR", help="load instruction files from the root down to DIR (default: the working directory if inside the root, else the root)")
    p.add_argument("--budget", type=int, default=8000, metavar="TOKENS", help="token budget for all files (default 8,000; 0 turns preloading off)")
    p.add_argument("--readme-budget", type=int, default=2000, metavar="TOKENS", help="token cap for the README (default 2,000)")
    _formats(p)
    _common(p)


def _watch_parser(sub, name: str) -> None:
    p = _sub(sub, name, "stream HEAD moves and changed files as JSON lines")
    p.add_argument("paths", nargs="*", metavar="PATH", help="also watch these files, or the files in these folders (as glob lists them)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="stop after SECONDS; exit 0 if anything changed, 1 if not (default: until interrupted)")
    p.add_argument("--poll", action="store_true", help="use the polling observer instead of native file events")
    _formats(p)
    _common(p, server=False, json_help="an error is also one JSON object on stdout, exit 2 (events are JSON lines either way)")


def _context_parser(sub, name: str) -> None:
    p = _sub(sub, name, "assemble a context window for a task within a token budget")
    p.add_argument("--task", required=True, metavar="TEXT", help="what the agent is asked to do")
    p.add_argument("--budget", type=int, default=16000, metavar="TOKENS", help="token budget for the whole window (default 16,000)")
    _formats(p)
    _common(p)


def _tools_parser(sub, name: str) -> None:
    p = _sub(sub, name, "print the tool schemas for an agent")
    p.add_argument("--format", choices=("openai", "openai-responses", "anthropic"), default="openai", help="provider shape (default openai)")
    _common(p, root=False, json=False)


def _mcp_parser(sub, name: str) -> None:
    p = _sub(sub, name, "serve the tools glob, grep, head, tail, outline, symbols, locate, notes over MCP (stdio)")
    _formats(p)
    _common(p, json=False, server=False)


def _serve_parser(sub, name: str) -> None:
    p = _sub(sub, name, "run the root's warm server in the foreground (the CLI starts one on demand)")
    p.add_argument("--status", action="store_true", help="say whether the root's server runs: pid, uptime, calls, sessions, listing, memory")
    p.add_argument("--stop", action="store_true", help="stop the root's server and its index builder")
    p.add_argument("--all", action="store_true", help="with --status or --stop: every jitctx server, index builder and worker of this user (of the root only, with --root)")
    p.add_argument("--idle", type=float, metavar="SECONDS", help="exit after SECONDS without a call (default: $JITCTX_SERVER_IDLE, else 600; 60 until a second call)")
    p.add_argument("--spawned", metavar="DIGEST", help=argparse.SUPPRESS)  # started by the client: quiet, detached
    p.add_argument("--slot", type=int, help=argparse.SUPPRESS)  # the client's start slot (a locked descriptor), let go once warm
    _common(p, server=False)


def _index_parser(sub, name: str) -> None:
    p = _sub(sub, name, "build the root's code index in the foreground, or say how it stands (--status) or stop a background build (--stop)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--status", action="store_true", help="say how the index stands: built, files behind, a build under way, store size")
    which.add_argument("--stop", action="store_true", help="stop the background build (what it wrote stays; the next build goes on from there)")
    _common(p, server=False)


def _session_parser(sub, name: str) -> None:
    p = _sub(sub, name, "print a new session id: calls that export it as JITCTX_SESSION share one session")
    p.add_argument("action", choices=("new",), help="new: print a fresh id")
    _common(p, root=False, json=False, server=False)


# every subcommand's parser builder, in the order --help lists them
SUBCOMMANDS = {
    **dict.fromkeys(PRIMITIVE_COMMANDS, _primitive),
    "preload": _preload_parser,
    "watch": _watch_parser,
    "context": _context_parser,
    "tools": _tools_parser,
    "mcp": _mcp_parser,
    "serve": _serve_parser,
    "session": _session_parser,
    "index": _index_parser,
}


def subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    """The parser of ``command`` (the top-level one when there is none)."""
    for action in parser._subparsers._group_actions if parser._subparsers is not None else ():
        found = getattr(action, "choices", None) or {}
        if command in found:
            return found[command]
    return parser
