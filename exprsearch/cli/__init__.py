"""Command line: ``exprsearch run``, ``predict``, ``explain``, ``optimize``, ``plot``, ``profile``,
``suggest`` and ``grammar …``; one module per group of commands, each thin: parse, call, print.
``entry`` is the console script.
The command modules do without ``from __future__ import annotations``: typer reads each command's
annotations whenever it builds the app, and written as strings they cost it 20 ms of ``eval`` a time."""

import gc
import signal
import sys

# each registers its commands on the app, and --help lists them in this order: a user's way from
# a table to a law to decisions
# isort: off
from . import run, predict, decide, figures  # noqa: F401
# isort: on
from . import grammars  # noqa: F401
from .common import _error, app
from .profile import profile
from .suggest import suggest

app.command("profile")(profile)
app.command("suggest")(suggest)


class _Terminated(BaseException):
    """SIGTERM, raised where the program is, so it stops like Ctrl-C does."""


def _terminate(signum, frame) -> None:
    raise _Terminated


def entry() -> None:
    """The console script: the app, with Ctrl-C and SIGTERM turned into one sentence and exit
    code 130 or 143 (result files are written whole or not at all: export.write_all)."""
    signal.signal(signal.SIGTERM, _terminate)
    # The modules' objects (sympy's above all) live until exit: keeping them out of the cyclic
    # collector saves its passes over them during the search and at interpreter shutdown.
    gc.freeze()
    interrupted = "interrupted (Ctrl-C); no result files were written or changed by the unfinished run"
    try:
        app()
    except KeyboardInterrupt:
        _error(interrupted)
        sys.exit(130)
    except SystemExit as exc:
        if exc.code == 130:  # typer's own answer to Ctrl-C, which says nothing
            _error(interrupted)
        raise
    except _Terminated:
        _error("terminated (SIGTERM); no result files were written or changed by the unfinished run")
        sys.exit(143)
