"""The ``jitctx`` command line: parse, call the library, render, map errors.

``parser`` (options and help), ``commands`` (each subcommand's run), ``run``
(``main``, ``call``, ``entry``: the error mapping and exit codes 0 found, 1
nothing found, 2 error), ``early`` (git's listing started before the rest
imports), ``exits``. ``jitctx --help`` imports none of tiktoken, tree-sitter,
watchdog or mcp: every heavy import happens inside a command. Re-exported
here: the entry points, ``main(argv)`` (the exit code) and ``entry()`` (the
console's fallback, ``jitctx.client``); the server imports ``run.call`` and
the parser from their modules.
"""

from .run import entry, main

__all__ = ["entry", "main"]
