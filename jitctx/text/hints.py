"""The canonical syntax of a call named in a hint or a notice.

Owns writing ``head path=src/app.py start=68`` (tool-argument syntax: the
tool, then ``name=value`` pairs, a value quoted when it holds anything but
a plain word). Library text names its next calls this way, once; each
surface shows them in its own syntax (``adapters/cliview`` for the command
line) and a tool caller pastes them as arguments. Does not own the
translation, nor which surface offers which argument.
"""

from __future__ import annotations

__all__ = ["call", "value"]

_SAFE = frozenset("_./*@+-")  # with letters and digits: a value that needs no quotes (no space, quote, comma, parenthesis)


def value(v: object) -> str:
    """One argument's value: ``true``/``false``, a number, a plain word as it is, else quoted."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    text = str(v)
    plain = text and text[-1] not in ".:" and all(c.isalnum() or c in _SAFE for c in text)  # a full stop at the end reads as the sentence's
    return text if plain else repr(text)


def call(tool: str, **args: object) -> str:
    """``tool name=value ...`` for the arguments that are not ``None``, in the order given."""
    return " ".join([tool, *(f"{k}={value(v)}" for k, v in args.items() if v is not None)])
