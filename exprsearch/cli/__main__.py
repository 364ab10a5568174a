"""``python -m exprsearch.cli``: the console script."""

from . import entry

entry()
