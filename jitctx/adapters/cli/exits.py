"""The CLI's exit codes and how it writes an error: a message and a hint on stderr,
and under ``--json`` also one JSON object on stdout (as a tool call's error).

Owns nothing else; the parser, the commands and ``run`` import it.
"""

from __future__ import annotations

__all__ = ["EXIT_EMPTY", "EXIT_ERROR", "EXIT_FOUND", "error", "json_error"]

EXIT_FOUND, EXIT_EMPTY, EXIT_ERROR = 0, 1, 2


def error(err, message: str, hint: str | None) -> None:
    """An error as the CLI says it on ``err``: ``jitctx: error: ...`` and its hint."""
    err.write(f"jitctx: error: {message}\n")
    if hint:
        err.write(f"  hint: {hint}\n")


def json_error(out, err: dict) -> None:
    """An error as one JSON object on ``out`` (``--json``), as a tool call's."""
    import json

    out.write(json.dumps({"error": err}, ensure_ascii=False) + "\n")
    out.flush()
