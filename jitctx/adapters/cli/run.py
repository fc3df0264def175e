"""The CLI's entry: ``main`` (parse, run a command, map its errors to an exit code),
``call`` (as a process runs it) and ``entry`` (the console script's end).

Owns the one place CLI errors are caught: a ``JitctxError`` is a message and a
hint as flags on stderr (and one JSON object under ``--json``), exit 2; any other
exception an internal error without a traceback; a closed pipe exits 0; an
interrupt 130. Does not own the parser (``parser``) or the commands (``commands``).
"""

from __future__ import annotations

import os
import sys

from ... import __version__
from ...call import Caller
from .commands import COMMANDS, elsewhere
from .early import early_glob, take_early
from .exits import EXIT_ERROR, EXIT_FOUND, error, json_error
from .parser import SUBCOMMANDS, parser_for, subparser

__all__ = ["call", "entry", "main"]


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
    early = early_glob(argv) if caller.serves is None else None  # before the parser is built: it imports the Queries (dataclasses, ~20 ms)
    parser = parser_for(argv[0] if argv and argv[0] in SUBCOMMANDS else None, caller, argv)
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
        args.prefetched = take_early(early, args)
    from ...errors import JitctxError

    if args.command not in COMMANDS:  # serve: the server runs the CLI, so the CLI does not start it
        error(
            caller.err,
            f"jitctx {args.command} is run by the jitctx command (jitctx.client), not by adapters.cli.main",
            "run it from a shell, or call jitctx.server.serve.main(argv)",
        )
        return EXIT_ERROR
    try:
        caller.elsewhere = elsewhere(args, caller)
        if caller.elsewhere is not None:  # nothing was written: the client asks that root's server
            return EXIT_ERROR
        code = COMMANDS[args.command](args, caller)
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
            from ..cliview import CliView

            view = CliView()
        message = exc.message
        named = exc.fields.get("path")
        if isinstance(named, str) and not os.path.isabs(named):  # the path as this shell names it
            message = message.replace(repr(named), repr(view.path(named)))
        error(caller.err, view.hint(message), view.hint(exc.hint) if exc.hint else None)
        if getattr(args, "json", False):
            json_error(caller.out, exc.to_dict())  # --json: the error is one JSON object on stdout too, as a tool call's
        return EXIT_ERROR
    except Exception as exc:  # the one broad catch of the CLI: a message, never a traceback
        if os.environ.get("JITCTX_DEBUG"):
            raise
        message, hint = f"internal error: {type(exc).__name__}: {exc}", "set JITCTX_DEBUG=1 for a traceback and report it"
        error(caller.err, message, hint)
        if getattr(args, "json", False):
            json_error(caller.out, {"type": "internal_error", "message": message, "hint": hint})
        return EXIT_ERROR
    finally:
        repo = getattr(args, "prefetched", None)
        if repo is not None:
            repo.close()  # a listing nobody took (an error came first)


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
