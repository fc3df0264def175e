"""``python -m jitctx``: the same as the ``jitctx`` command."""

from .client import main

main()
