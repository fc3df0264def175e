"""``python -m jitctx``: the same as the ``jitctx`` command."""

from .adapters.cli import entry

entry()
