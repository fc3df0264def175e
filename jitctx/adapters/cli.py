"""The ``jitctx`` command line: parse, call the library, render, map errors.

Owns argv parsing, exit codes (0 found, 1 nothing found, 2 error) and the
one place CLI errors are caught. ``jitctx --help`` imports none of tiktoken,
tree-sitter or mcp: every heavy import happens inside a subcommand.
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import __version__
from ..call import Caller

__all__ = ["build_parser", "call", "main", "subparser"]

EXIT_FOUND, EXIT_EMPTY, EXIT_ERROR = 0, 1, 2


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


def _query_options(p: argparse.ArgumentParser, query: type) -> None:
    """The options of a primitive, from its Query's fields (``jitctx.query``):
    the same names, bounds and descriptions as the tool schema's."""
    from ..query import params

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


def _query_values(args, query: type) -> dict:
    """The parsed options that belong to ``query`` and were given (or are positional), by name."""
    from ..query import params

    return {q.name: getattr(args, q.name) for q in params(query) if q.arg.cli and (getattr(args, q.name) is not None or not q.arg.flags)}


_Formatter = argparse.HelpFormatter
_RawFormatter = argparse.RawDescriptionHelpFormatter


class _Io:
    """The call a parser tree answers for (shared by a parser and its subparsers):
    where argparse's help, usage and errors go, the width they wrap at, the argv
    (a usage error under ``--json`` is also a JSON object). Set per call by :func:`_parser`."""

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
            _json_error(self._caller().out, {"type": "usage_error", "message": message, "hint": f"see {self.prog} --help"})
        super().error(message)


def _json_error(out, err: dict) -> None:
    import json

    out.write(json.dumps({"error": err}, ensure_ascii=False) + "\n")
    out.flush()


_EXITS = "exit status: 0 found, 1 nothing found, 2 error (message on stderr; with --json also a JSON error object on stdout)"
# per subcommand: what it prints, and examples (the help's epilog)
_HELP = {
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
    prints, examples = _HELP.get(name, ("", []))
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
    for name, build in _SUBCOMMANDS.items():
        if command is None or command == name:
            build(sub, name)
    return parser


_BUILT: dict[str | None, _Parser] = {}  # a server's parsers, by subcommand (the adapter's own cache)


def _parser(command: str | None, caller: Caller, argv: list[str]) -> _Parser:
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
    from ..query import PRIMITIVES

    query = next(q for q in PRIMITIVES if q.name == name)
    p = _sub(sub, name, query.summary)
    _query_options(p, query)
    _max_tokens(p)
    _formats(p)
    _common(p)


# the subcommands whose options come from a primitive's definition (jitctx.query.PRIMITIVES, in
# its order; a test keeps them equal): named here, since main looks a subcommand up before
# it imports the Queries
_PRIMITIVES = ("glob", "grep", "head", "tail", "outline", "symbols", "locate", "notes")


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
_SUBCOMMANDS = {
    **dict.fromkeys(_PRIMITIVES, _primitive),
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


def _workspace(args, caller: Caller):
    """The call's Workspace. A one-shot call records no deliveries: no later call
    of its session could be told they went stale (``watch`` does record)."""
    from ..session.workspace import Workspace
    from .cliview import CliView

    record = args.command == "watch"
    repo = getattr(args, "prefetched", None)
    if caller.workspace is not None:
        if caller.serves != getattr(args, "served_root", None):
            _root(args, caller)  # a bad root fails here, as a Workspace of it would in process
            raise RuntimeError(f"the server of {caller.serves} was asked for another root")  # _main checked it first
        ws = caller.workspace(record)  # the server's: warm listing, the caller's session
    else:
        ws = Workspace(repo=repo, record=record) if repo is not None else Workspace(args.root, record=record, cwd=caller.cwd)
    formats = getattr(args, "formats", None)
    if formats is not None or caller.workspace is not None:  # a server's session keeps its Workspace: each call says its own
        ws.set_formats(formats)
    ws.progress_to = caller.err  # a cold index build's progress line (on a terminal)
    # paths print from the working directory and hints as flags; token caps price that text
    ws.view = args.view = CliView(_cwd_in(ws, caller))
    return ws


def _root(args, caller: Caller):
    """The root the call names, resolved from the caller's working directory."""
    from ..repo.universe import find_root

    return find_root(args.root, cwd=caller.cwd)


def _elsewhere(args, caller: Caller) -> str | None:
    """For a server's call: the root the call names when it is not the one served (the
    client then asks that root's server); ``None`` when it is, or when resolving it fails
    (the command reports that where a call in process would)."""
    from ..errors import JitctxError

    if caller.serves is None or not hasattr(args, "root"):
        return None
    try:
        real = str(_root(args, caller))
    except JitctxError:
        return None
    args.served_root = real
    return real if real != caller.serves else None


def _cwd(caller: Caller):
    from pathlib import Path

    from ..repo.universe import working_directory

    return (Path(caller.cwd) if caller.cwd is not None else working_directory()).resolve()


def _cwd_in(ws, caller: Caller) -> str:
    """The working directory, repo-relative, when it is inside the root below it; else ``""``."""
    cwd = _cwd(caller)
    return cwd.relative_to(ws.root).as_posix() if cwd != ws.root and cwd.is_relative_to(ws.root) else ""


def _from_cwd(ws, caller: Caller, path: str) -> str:
    """A relative CLI path is taken from the working directory when that is inside the root.

    Like any Unix tool (``cd src && jitctx head app.py``); tool callers, which
    have no working directory, give paths from the root. Output paths stay
    repo-relative either way.
    """
    if not path or os.path.isabs(path):
        return path
    cwd = _cwd(caller)
    if cwd == ws.root or not cwd.is_relative_to(ws.root):
        return path  # as typed: an error message names it as the user wrote it
    rel = os.path.relpath(cwd / path, ws.root)
    if not os.path.lexists(cwd / path) and os.path.lexists(ws.root / path):
        return path  # a repo-relative path (as --json prints them) that only exists from the root
    # from the root when that stays inside it (`cd src && jitctx head x` names src/x)
    return str(cwd / path) if rel == ".." or rel.startswith(".." + os.sep) else rel


def _emit(args, caller: Caller, result) -> int:
    from ..render import render_json, render_text

    text = render_json(result) if args.json else render_text(result, view=args.view)
    if text:
        caller.out.write(text + "\n")
    return EXIT_EMPTY if result.is_empty else EXIT_FOUND


def _cmd_glob(args, caller: Caller) -> int:
    from ..query import FindQuery

    ws = _workspace(args, caller)
    values = _query_values(args, FindQuery)
    values["path"] = _from_cwd(ws, caller, values["path"])
    return _emit(args, caller, ws.glob(**values, max_tokens=args.max_tokens))


def _cmd_grep(args, caller: Caller) -> int:
    from ..query import SearchQuery

    ws = _workspace(args, caller)
    values = _query_values(args, SearchQuery)
    values["path"] = _from_cwd(ws, caller, values["path"])
    return _emit(args, caller, ws.grep(**values, max_tokens=args.max_tokens))


def _cmd_head(args, caller: Caller) -> int:
    from ..query import HeadQuery

    ws = _workspace(args, caller)
    values = _query_values(args, HeadQuery)
    return _emit(args, caller, ws.head(_from_cwd(ws, caller, values.pop("path")), **values, max_tokens=args.max_tokens))


def _cmd_outline(args, caller: Caller) -> int:
    from ..query import OutlineQuery

    ws = _workspace(args, caller)
    values = _query_values(args, OutlineQuery)
    return _emit(args, caller, ws.outline(_from_cwd(ws, caller, values.pop("path")), **values, max_tokens=args.max_tokens))


def _cmd_symbols(args, caller: Caller) -> int:
    from ..query import SymbolsQuery

    ws = _workspace(args, caller)
    values = _query_values(args, SymbolsQuery)
    values["path"] = _from_cwd(ws, caller, values["path"])
    return _emit(args, caller, ws.symbols(values.pop("query"), **values, max_tokens=args.max_tokens))


def _cmd_tail(args, caller: Caller) -> int:
    from ..query import TailQuery

    ws = _workspace(args, caller)
    values = _query_values(args, TailQuery)
    return _emit(args, caller, ws.tail(_from_cwd(ws, caller, values.pop("path")), **values, max_tokens=args.max_tokens))


def _cmd_locate(args, caller: Caller) -> int:
    from ..query import LocateQuery

    ws = _workspace(args, caller)
    return _emit(args, caller, ws.locate(**_query_values(args, LocateQuery), max_tokens=args.max_tokens))


def _cmd_notes(args, caller: Caller) -> int:
    from ..query import NotesQuery

    ws = _workspace(args, caller)
    values = _query_values(args, NotesQuery)
    values["paths"] = [_from_cwd(ws, caller, p) for p in values.get("paths") or ()]
    return _emit(args, caller, ws.notes(values.pop("action"), values.pop("text", None), **values, max_tokens=args.max_tokens))


def _cmd_preload(args, caller: Caller) -> int:
    ws = _workspace(args, caller)
    # the chain runs to the working directory, as agents load it, unless --cwd says otherwise
    cwd = _from_cwd(ws, caller, args.cwd if args.cwd is not None else ".")
    pre = ws.preload(cwd, budget=args.budget, readme_budget=args.readme_budget)
    if args.json:
        import json

        caller.out.write(json.dumps(pre.to_dict(), ensure_ascii=False) + "\n")
    elif pre.text:  # the prefix as it is, but a cut marker's read-on call as a command line
        text = args.view.calls(pre.text)
        caller.out.write(text if text.endswith("\n") else text + "\n")
    for w in [] if args.json else pre.warnings:
        caller.err.write(f"jitctx: warning: {args.view.hint(w)}\n")
    if not args.json:  # the prefix on stdout stays byte-stable; what it cost is said beside it
        if pre.text:
            caller.err.write(f"jitctx: prefix: {pre.tokens:,} tokens of a {pre.budget:,}-token budget, {len(pre.files):,} file{'s' if len(pre.files) != 1 else ''}\n")
        elif args.budget == 0:
            caller.err.write("jitctx: note: preloading is off (--budget 0): nothing to print\n")
        else:
            from ..preload.instructions import DEFAULT_FALLBACKS

            names = ", ".join(("AGENTS.override.md", "AGENTS.md", *DEFAULT_FALLBACKS))
            where = f"from the root down to {args.view.path(cwd)}" if cwd not in ("", ".") else "in the root"
            caller.err.write(f"jitctx: note: nothing to preload: no instruction file ({names}) {where}, and no README at the root\n")
    return EXIT_FOUND if pre.text else EXIT_EMPTY


def _cmd_watch(args, caller: Caller) -> int:
    """JSON lines until interrupted or ``--timeout``: exit 0 if HEAD moved or a file went stale, else 1."""
    import json
    from datetime import datetime, timezone

    _check_timeout(args.timeout)
    ws = _workspace(args, caller)
    changed = False
    with ws:
        named = _watched(ws, caller, [_from_cwd(ws, caller, p) for p in args.paths])
        # the session's prefix runs to the working directory, as `jitctx preload` does
        ws.preload(_from_cwd(ws, caller, "."))
        ws.ledger.record_all(named, ws.head_sha())
        events = ws.watch(timeout=args.timeout, poll=args.poll)
        try:
            for event in events:
                changed = changed or event["event"] in ("head_moved", "stale")
                if event["event"] == "refreshed" and named:
                    ws.ledger.record_all(named, ws.head_sha())  # a refresh forgets changed files: keep watching them
                stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
                caller.out.write(json.dumps({"time": stamp, **event}, ensure_ascii=False) + "\n")
                caller.out.flush()
        finally:
            events.close()
    return EXIT_FOUND if changed else EXIT_EMPTY


MAX_WATCHED = 10_000  # files `jitctx watch PATH...` tracks


def _check_timeout(timeout: float | None) -> None:
    import math

    from ..errors import QueryError

    if timeout is not None and (math.isnan(timeout) or timeout < 0):
        raise QueryError(f"timeout must be a number of seconds >= 0, got {timeout!r}", hint="pass e.g. --timeout 30, or leave it out to watch until interrupted", timeout=timeout)


def _watched(ws, caller: Caller, paths: list[str]) -> list:
    """The files named on ``jitctx watch``'s command line (a folder: its files, as glob lists them), as deliveries."""
    from ..refs import Delivered

    out: list = []
    for path in paths:
        target = ws.policy.resolve(path, want="any")
        names = [target.path]
        if target.is_dir:
            res = ws.glob("**", target.path, limit=MAX_WATCHED, sort="path")
            names = [r.path for r in res.results if not r.denied]
            if res.truncated:
                caller.err.write(f"jitctx: warning: watching the first {MAX_WATCHED:,} files of {_shown(ws, target.path)}\n")
        for name in names:
            t = ws.policy.resolve(name, want="file")
            out.append(Delivered(t.path, t.real, "read"))
        if len(out) > MAX_WATCHED:
            break
    return out[:MAX_WATCHED]


def _shown(ws, path: str) -> str:
    view = getattr(ws, "view", None)
    return view.path(path) if view is not None else path


def _cmd_context(args, caller: Caller) -> int:
    import json

    from ..window.assemble import check_budget
    from ..window.for_task import context_for_task

    check_budget(args.budget)  # a bad budget fails before any work
    ws = _workspace(args, caller)
    # the prefix runs to the working directory, as `jitctx preload` does; a failing preload is a warning
    ctx = context_for_task(ws, args.task, budget=args.budget, cwd=_from_cwd(ws, caller, "."))
    caller.out.write((json.dumps(ctx.to_dict(), ensure_ascii=False) if args.json else args.view.calls(ctx.text).rstrip("\n")) + "\n")
    caller.out.flush()  # warnings follow the window, not interleave with it
    for w in [] if args.json else ctx.warnings:
        caller.err.write(f"jitctx: warning: {args.view.hint(w)}\n")
    return EXIT_EMPTY if ctx.located == 0 else EXIT_FOUND


def _cmd_tools(args, caller: Caller) -> int:
    import json

    from .tools import export_schemas

    caller.out.write(json.dumps(export_schemas(args.format), indent=2) + "\n")
    return EXIT_FOUND


MCP_INSTALL = "from a jitctx checkout: pip install '.[mcp]'; else: pip install 'mcp>=2.3,<3' into jitctx's environment"


def _cmd_mcp(args, caller: Caller) -> int:
    try:
        from .mcp import serve
    except ImportError as exc:  # the `mcp` extra (the SDK, anyio, ...) is not installed
        missing = f" (no module {exc.name!r})" if getattr(exc, "name", None) else ""
        _error(caller.err, f"jitctx mcp needs the MCP SDK, which is not installed{missing}", MCP_INSTALL)
        return EXIT_ERROR
    return serve(args.root, formats=args.formats)


def _cmd_index(args, caller: Caller) -> int:
    import json
    import time

    from ..code import build
    from ..render import human_size

    ws = _workspace(args, caller)
    code = ws.code
    path = code.index.path
    if path is None:
        _error(caller.err, f"the index of {ws.root} cannot be kept: {code.index.notice}", "set XDG_CACHE_HOME or JITCTX_CACHE_DIR to a writable folder")
        return EXIT_ERROR
    if args.stop:
        pid = build.stop(path)
        text = f"stopped the background build (pid {pid})" if pid else "no background build runs"
        caller.out.write((json.dumps({"stopped": pid}) if args.json else text) + "\n")
        return EXIT_FOUND if pid else EXIT_EMPTY
    if args.status:
        st = build.state(code)
        current = st["built"] and not st["behind"] and st["building"] is None
        if args.json:
            caller.out.write(json.dumps(st) + "\n")
        else:
            lines = [f"index of {ws.root}: " + ("current" if current else "built" if st["built"] else "not built"), f"store: {path} ({human_size(st['bytes'])})"]
            if st["built"]:
                lines.append(f"files: {st['files']:,} indexed, {st['to_parse']:,} still to parse for definitions")
            if st["behind"]:
                lines.append(f"behind by {st['behind']:,} files (new, changed, not parsed yet or gone)")
            b = st["building"]
            if b is not None:
                far = f"{b['phase']}: {100 * b['done'] // b['total'] if b['total'] else 0}% of {b['total']:,} files" if b["total"] else "listing the files"
                lines.append(f"building in the background ({far}, pid {b['pid']}); stop it with jitctx index --stop")
            if st["failed"]:
                lines.append(f"the last build could not write the store: {st['failed']}")
            caller.out.write("\n".join(lines) + "\n")
        return EXIT_FOUND if current else EXIT_EMPTY
    from .progress import Reporter

    report = Reporter(caller.err)
    started = time.monotonic()
    try:
        while True:
            code.close()  # the builder opens its own
            got = build.build_here(str(ws.root), path, nice=False, progress=report)
            if got != 1:
                break
            # a background build holds the lock: follow it to its end, then bring the rest up to date
            while (running := build.progress(path)) is not None:
                report(running.phase, running.done, running.total)
                time.sleep(0.2)
    finally:
        report.close()
    if got == 3:
        _error(caller.err, f"the index cannot be written: {build.failed(path)}", "free some disk space, or set JITCTX_CACHE_DIR to a writable folder")
        return EXIT_ERROR
    if got != 0:
        _error(caller.err, "the index build failed", "set JITCTX_DEBUG=1 and run jitctx index again to see why")
        return EXIT_ERROR
    rows, _waiting = code.index.outlined()
    size = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    seconds = time.monotonic() - started
    if args.json:
        caller.out.write(json.dumps({"root": str(ws.root), "path": path, "files": rows, "bytes": size, "seconds": round(seconds, 2)}) + "\n")
    else:
        caller.out.write(f"index of {ws.root}: {rows:,} files, {human_size(size)} ({path}), in {seconds:.1f} s\n")
    return EXIT_FOUND


def _cmd_session(args, caller: Caller) -> int:
    caller.out.write(os.urandom(12).hex() + "\n")
    return EXIT_FOUND


_COMMANDS = {
    "glob": _cmd_glob,
    "grep": _cmd_grep,
    "head": _cmd_head,
    "tail": _cmd_tail,
    "outline": _cmd_outline,
    "symbols": _cmd_symbols,
    "locate": _cmd_locate,
    "notes": _cmd_notes,
    "preload": _cmd_preload,
    "watch": _cmd_watch,
    "context": _cmd_context,
    "tools": _cmd_tools,
    "mcp": _cmd_mcp,
    "session": _cmd_session,
    "index": _cmd_index,
}  # `serve` runs from the jitctx command (jitctx.client -> jitctx.server.serve), which sits above the CLI


def main(argv: list[str] | None = None, *, caller: Caller | None = None) -> int:
    """Run the CLI; returns the exit code (0 found, 1 nothing found, 2 error).

    ``caller``: what the call is for and where its answer goes (``jitctx.call``):
    a server answering for another process hands its streams, working directory,
    width and Workspaces (nothing is listed ahead: the server keeps a listing);
    ``None``: this process's own.
    """
    caller = caller if caller is not None else Caller.here()
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:  # before the parser: building it imports every Query (~20 ms)
        caller.out.write(f"jitctx {__version__}\n")
        return EXIT_FOUND
    early = _early_glob(argv) if caller.serves is None else None  # before the parser is built: it imports the Queries (dataclasses, ~20 ms)
    parser = _parser(argv[0] if argv and argv[0] in _SUBCOMMANDS else None, caller, argv)
    try:
        args, extra = parser.parse_known_args(argv)
    except SystemExit:
        if early is not None:
            early.close()
        raise
    if extra and len(extra) == 1 and not extra[0].startswith("-") and getattr(args, "path", None) == ".":
        # argparse fills an optional positional before it sees later options:
        # `jitctx grep PAT --mode content src` means path=src
        args.path, extra = extra[0], []
    if extra:  # refused with the subcommand's own usage, as argparse does for its other errors
        if early is not None:
            early.close()  # the listing started for a call that will not run
        subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    if hasattr(caller.out, "reconfigure"):
        # file names that are not UTF-8 print as their own bytes, as ls does
        caller.out.reconfigure(errors="surrogateescape")
    if not args.command:
        parser.print_help(caller.err)
        return EXIT_ERROR
    if early is not None:
        args.prefetched = _take_early(early, args)
    from ..errors import JitctxError

    if args.command not in _COMMANDS:  # serve: the server runs the CLI, so the CLI does not start it
        _error(
            caller.err,
            f"jitctx {args.command} is run by the jitctx command (jitctx.client), not by adapters.cli.main",
            "run it from a shell, or call jitctx.server.serve.main(argv)",
        )
        return EXIT_ERROR
    try:
        caller.elsewhere = _elsewhere(args, caller)
        if caller.elsewhere is not None:  # nothing was written: the client asks that root's server
            return EXIT_ERROR
        code = _COMMANDS[args.command](args, caller)
        caller.out.flush()
        return code
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): exit quietly, as cat does.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, caller.out.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_FOUND
    except KeyboardInterrupt:
        return 130
    except JitctxError as exc:
        view = getattr(args, "view", None)
        if view is None:
            from .cliview import CliView

            view = CliView()
        message = exc.message
        named = exc.fields.get("path")
        if isinstance(named, str) and not os.path.isabs(named):  # the path as this shell names it
            message = message.replace(repr(named), repr(view.path(named)))
        _error(caller.err, view.hint(message), view.hint(exc.hint) if exc.hint else None)
        if getattr(args, "json", False):
            _json_error(caller.out, exc.to_dict())  # --json: the error is one JSON object on stdout too, as a tool call's
        return EXIT_ERROR
    except Exception as exc:  # the one broad catch of the CLI: a message, never a traceback
        if os.environ.get("JITCTX_DEBUG"):
            raise
        message, hint = f"internal error: {type(exc).__name__}: {exc}", "set JITCTX_DEBUG=1 for a traceback and report it"
        _error(caller.err, message, hint)
        if getattr(args, "json", False):
            _json_error(caller.out, {"type": "internal_error", "message": message, "hint": hint})
        return EXIT_ERROR
    finally:
        repo = getattr(args, "prefetched", None)
        if repo is not None:
            repo.close()  # a listing nobody took (an error came first)


_GLOB_VALUE_FLAGS = frozenset({"--sort", "--limit", "--max-tokens", "--root"})  # tests check this against FindQuery


def _early_glob(argv: list[str]):
    """For ``jitctx glob``, start git's listing before the rest of jitctx imports.

    git then walks while the parser and the library load (it starts ~30 ms
    sooner; docs/benchmarks.md). The arguments are read by a small scan, not
    the parser (whose options come from the Queries, which import
    dataclasses): it is only a head start, and ``_take_early`` drops it when
    the real parse disagrees. Returns the Repo holding the started listing,
    or ``None``.
    """
    if not argv or argv[0] != "glob":
        return None
    positionals: list[str] = []
    root = None
    include_ignored = ignore_case = False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            positionals += argv[i + 1 :]
            break
        if a in _GLOB_VALUE_FLAGS:
            if a == "--root" and i + 1 < len(argv):
                root = argv[i + 1]
            i += 2
            continue
        if a.startswith("--root="):
            root = a[len("--root=") :]
        elif a == "--include-ignored":
            include_ignored = True
        elif a in ("-i", "--ignore-case"):
            ignore_case = True
        elif not a.startswith("-") or a == "-":
            positionals.append(a)
        i += 1
    if not positionals or not positionals[0].strip():
        return None  # an error to report, nothing to list
    path = positionals[1] if len(positionals) > 1 else "."
    return _prefetch(positionals[0], path, root, include_ignored, ignore_case)


def _take_early(early, args):
    """The early listing's Repo when the real arguments name its root, else ``None``
    (its listing stopped). A listing for other arguments is stopped by the Repo itself."""
    from ..errors import JitctxError
    from ..repo.universe import find_root

    try:
        same = args.command == "glob" and find_root(args.root) == early.root
    except (JitctxError, OSError):
        same = False
    if not same:
        early.close()
        return None
    return early


def _prefetch(pattern: str, path: str, root: str | None, include_ignored: bool, ignore_case: bool):
    """Start git's listing for a glob of ``pattern`` under ``path``; the Repo holding
    it, or ``None`` (a bad root or path is left for the real call to report)."""
    from pathlib import Path

    from ..errors import JitctxError
    from ..repo.universe import Repo, find_root
    from ..text.globs import glob_suffix

    try:
        repo = Repo(find_root(root))
        here = Path(os.path.realpath(os.getcwd())) if repo.git is not None else repo.root
        if not here.is_relative_to(repo.root):
            here = repo.root
        folder = Path(os.path.realpath(here / path))
        if not folder.is_dir() or not folder.is_relative_to(repo.root):
            return repo  # the real call reports it
    except (JitctxError, OSError, ValueError):  # a bad root or path: left for the real call to report
        return None
    under = "" if folder == repo.root else folder.relative_to(repo.root).as_posix()
    try:
        repo.prefetch(include_ignored=include_ignored, suffix=glob_suffix(pattern, ignore_case), under=under)
    except JitctxError:
        pass
    return repo


def _error(err, message: str, hint: str | None) -> None:
    err.write(f"jitctx: error: {message}\n")
    if hint:
        err.write(f"  hint: {hint}\n")


def entry() -> None:
    """Console-script entry point.

    Once the output is flushed the process ends without the interpreter's
    teardown, as mypy's CLI does: freeing every object costs ~7 ms after a
    100k-file glob, and nothing is left to clean up (``main`` has stopped
    any git process it started; watch and mcp have stopped their threads).
    """
    os._exit(call(sys.argv[1:]))


def call(argv: list[str], caller: Caller | None = None) -> int:
    """:func:`main` as a process runs it: the exit code also for ``--help`` and usage
    errors (argparse's ``SystemExit``), the caller's streams flushed."""
    caller = caller if caller is not None else Caller.here()
    try:
        code = main(argv, caller=caller)
    except SystemExit as exc:  # --help, --version, a usage error: argparse has printed
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_ERROR)
    try:
        caller.out.flush()
        caller.err.flush()
    except (OSError, ValueError):  # the reader went away: nothing more to say
        pass
    return code
