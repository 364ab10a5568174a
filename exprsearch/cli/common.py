"""What every command shares: the app, the consoles, and turning the library's errors into one sentence."""

import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text
from typer.core import TyperGroup

from .. import __version__
from ..errors import ExprsearchError, SettingsError

if TYPE_CHECKING:
    import pandas as pd


def _read(command, args: list[str]) -> tuple[list[tuple[object, str]], list[str]]:
    """``args`` as click will read them for ``command``: each option given, with the spelling used,
    and the other arguments, in order (up to ``--``)."""
    options = {name: param for param in getattr(command, "params", ())
               for name in [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())] if name.startswith("-")}
    given, positional, i = [], [], 0
    while i < len(args) and args[i] != "--":
        name, eq, _ = args[i].partition("=") if args[i].startswith("--") else (args[i], "", "")
        param = options.get(name)
        if param is None:
            positional.append(args[i])
            i += 1
            continue
        given.append((param, name))
        i += 1 if eq or param.is_flag or param.count else 2
    return given, positional


def _repeated(command, args: list[str]) -> tuple[str, int] | None:
    """The first option among ``args`` that takes one value but is given more than once, with
    how many times (spellings like ``-t`` and ``--target`` count together)."""
    uses: dict[str, list[str]] = {}
    for param, name in _read(command, args)[0]:
        if not (param.is_flag or param.count or param.multiple):
            uses.setdefault("/".join(sorted(param.opts, key=len, reverse=True)), []).append(name)
    return next(((option, len(names)) for option, names in uses.items() if len(names) > 1), None)


def _stray_setting(command, args: list[str]) -> str | None:
    """The first argument beyond the command's own that reads as a setting ``name=value``
    (``predict LAW.json p=128``), where the command takes settings with ``--at``."""
    params = getattr(command, "params", ())
    if not any("--at" in getattr(param, "opts", ()) for param in params):
        return None
    arguments = sum(1 for param in params if param.param_type_name == "argument")
    positional = _read(command, args)[1]
    return next((a for a in positional[arguments:] if "=" in a and not a.startswith("-")), None)


class _OnceGroup(TyperGroup):
    """Commands whose one-value options refuse a second value (click would keep the last one
    silently: ``explain --vary p=… --vary n=…`` would explain n alone), and that say where a
    configuration given without ``--at`` goes (click said only "unexpected extra argument")."""

    def resolve_command(self, ctx, args):
        name, command, rest = super().resolve_command(ctx, args)
        repeated = _repeated(command, rest)
        if repeated:
            ctx.fail(f"{repeated[0]} was given {repeated[1]} times but takes one value; keep the one you mean")
        stray = _stray_setting(command, rest)
        if stray:
            ctx.fail(f"'{stray}' reads as a configuration: give it with --at {stray}")
        return name, command, rest


app = typer.Typer(
    help="Discover interpretable closed-form performance laws from measurements.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False, cls=_OnceGroup,
)
grammar_app = typer.Typer(help="List, show and check grammar files.", no_args_is_help=True, cls=_OnceGroup)
app.add_typer(grammar_app, name="grammar")
out = Console()
err = Console(stderr=True)
T = TypeVar("T")


def _guard(action: Callable[[], T]) -> T:
    """Run ``action``; turn the library's errors into one sentence on stderr and exit code 2."""
    try:
        return action()
    except ExprsearchError as exc:
        _error(str(exc))
        raise typer.Exit(2) from None


def _error(message: str) -> None:
    err.print(Text("error: ", style="bold red") + Text(message), highlight=False, soft_wrap=True)


def _note(message: str, soft_wrap: bool = False) -> None:
    """A note on stderr, as every command says one: what was read, left out or chosen."""
    err.print(Text("note: ", style="yellow") + Text(message), highlight=False, soft_wrap=soft_wrap)


def robust_loss_note(datasets: dict, loss: str) -> list[str]:
    """The note of a robust loss on many repeats (:func:`robust_note`), once, for the largest
    series (named where there are several)."""
    if not datasets:
        return []
    name, largest = max(datasets.items(), key=lambda item: len(item[1].y))
    from ..repeats import robust_note

    note = robust_note(largest, loss)
    return [] if note is None else [f"{name}: {note}" if len(datasets) > 1 else note]


def _warn(message: str) -> None:
    """A warning on stderr: a result to be careful with (an extrapolation, a loose constant)."""
    err.print(Text("warning: ", style="yellow") + Text(message), highlight=False)


def _version(value: bool) -> None:
    if value:
        out.print(f"exprsearch {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Discover interpretable closed-form performance laws from measurements."""


def _target_needed(data, lead: str = "pass --target COLUMN", what: str = "the measured time",
                   columns: list[str] | None = None, sheet: str | None = None) -> ExprsearchError:
    """The error for a table given without its target: the table's columns, to choose from."""
    from ..cells import dated
    from ..errors import DataError
    from ..runlogs import clocks
    from ..tables import read_table

    frame = read_table(data, sheet) if columns is None else None
    columns = columns if columns is not None else [str(c) for c in frame.columns]
    guesses = _likely_targets(columns, [] if frame is None else clocks(frame) + dated(frame))
    hint = "" if not guesses else f" (by its name perhaps --target '{guesses[0]}')" if len(guesses) == 1 else \
        f" (by their names perhaps --target one of {', '.join(repr(g) for g in guesses)})"
    return DataError(f"{lead}, {what}{hint}; the columns of '{data}' are {', '.join(columns)}")


def _likely_targets(columns: list[str], clocks: list[str] = ()) -> list[str]:
    """The columns whose names say they are a time (step_time_s, Elapsed), else a rate
    (images_per_sec); a spread (ttt_min_std) is neither, though named after one, nor a per-step
    log's ``clocks`` (W&B's _runtime: the time since the run began)."""
    from ..roles import reads_as_rate, reads_as_time, statistic

    for test in (reads_as_time, reads_as_rate):
        named = [c for c in columns if test(c) and statistic(c) not in _SPREADS and c not in clocks]
        if named:
            return named
    return []


_SPREADS = ("std", "var", "sem", "iqr", "mad")
# --drop-stray, as run, profile and suggest take it
DROP_STRAY_HELP = ("Drop runs far from the other runs of their configuration (a stall, a step cut short), which "
                   "the notes list, instead of keeping them.")
# the search's options, as run and suggest take them (suggest plans on the law run finds with the same ones)
FORMAT_HELP = ("table, extrap-text, extrap-json, extrap-jsonl, talpas, extrap-experiment, extrap3 or cube (a directory "
               "of CUBE runs; default: detected).")
MAP_HELP = "Bind grammar factor to a column: p=gpus (repeatable)."
INTRINSIC_HELP = "Comma-separated factors that are intrinsic (layers, parameters)."
JOBS_HELP = "Processes refining candidates (0: one per core); the law does not depend on it."
TIME_LIMIT_HELP = "Seconds: stop refining when they run out and keep the best law found so far."
LOSS_HELP = "squared, or huber / absolute to resist outliers (warm-up rows, failed runs)."
VALIDATION_HELP = "largest: prefer laws that predict the held-out largest configurations; kfold: 5-fold CV."
STRATEGY_HELP = ("auto: the data choose what to fit where the grammar's space is larger than its limits; exhaustive: "
                 "fit up to the limits and report what they cut.")


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, sep, column = value.partition("=")
        if not sep or not name or not column:
            _error(f"{option} takes NAME=COLUMN, got '{value}'")
            raise typer.Exit(2)
        pairs[name.strip()] = column.strip()
    return pairs


SPREAD_HELP = ("Where each row summarises several runs: the columns of their standard deviation and their count, "
               "ttt_std,n_runs (or ttt_std,5 where every row summarises 5); the noise rule then tests laws against "
               "the noise they give.")
WHERE_HELP = ("Fit only the rows that meet this condition: framework=PyTorch, model=a,b (any of them), gpus<=8 "
              "(also <, >=, >, !=); repeatable, all must hold. On an Extra-P file, a condition on its parameters.")


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


LOG_EVERY = 30.0  # seconds between the progress lines said where stderr is no terminal


class Heartbeat:
    """Progress said in a line every :data:`LOG_EVERY` seconds where stderr is no terminal (a log
    or a pipe, where the bars do not show), so that a long profile in a batch job shows that it is
    moving and when it should end. Nothing is said in the first LOG_EVERY seconds: short work stays quiet."""

    def __init__(self, what: str, unit: str, quiet: bool = False) -> None:
        self.what, self.unit, self.on = what, unit, not quiet and not err.is_terminal
        self.started = self.last = time.monotonic()

    def __call__(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if not self.on or now - self.last < LOG_EVERY:
            return
        self.last, elapsed = now, now - self.started
        of = f" of {total:,}" if total else ""
        left = f", about {_duration(elapsed * (total - done) / done)} left" if total and done else ""
        err.print(f"{self.what}: {done:,}{of} {self.unit} done in {_duration(elapsed)}{left}", highlight=False)


def _duration(seconds: float) -> str:
    whole = round(seconds)
    if whole < 100:
        return f"{whole} s"
    return f"{whole // 60} min {whole % 60:02d} s" if whole < 6000 else f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def _progress(quiet: bool) -> Progress:
    """A bar that clears itself; shown on a terminal only (piped to a log, each bar left a blank line)."""
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True, disable=quiet or not err.is_terminal,
    )


def _folder(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "series"


def _search_notes(result, front: bool = True, skip=()) -> list[str]:
    """What a search said beyond its data's notes (said before it) and ``skip``; without the front,
    not how the space was screened either (law.json's search keeps that, as front.csv the front)."""
    return [note for note in result.notes if note not in result.dataset.notes and note not in skip
            and (front or not note.startswith("the space holds"))]


def _check_kind(given: str | None) -> None:
    if given is not None and given not in ("time", "rate"):
        raise SettingsError(f"--target-kind {given}: give time or rate")


def too_few(failed: Mapping[str, str]) -> int:
    """How many failed groups (their reasons, :class:`~exprsearch.errors.Failure` where the kind of
    error is known) hold too few rows or configurations for a law, which --by with fewer columns would help."""
    from ..errors import FewConfigurations, ShortData

    return sum(issubclass(getattr(reason, "kind", type), (ShortData, FewConfigurations)) for reason in failed.values())


def _datasets(data: Path, target: str | None, factors: str | None, fmt: str | None, drops: tuple[bool, bool],
              by: str | None = None, sheet: str | None = None, where: list[str] = (), spread: str | None = None):
    """The series to fit: one table column (per --by group; ``sheet``: a workbook's), or an Extra-P
    file's CALLPATH:METRICs, of the rows (or points) ``where``'s --where conditions keep; and the
    --by groups that cannot be fitted, with the reason (an error where none can). ``drops``:
    --drop-missing and --drop-stray; ``spread``: --spread's columns of the runs each row summarises."""
    from ..data import DataError, load_table
    from ..errors import RepeatedSummaries, ShortData
    from ..grouped import load_grouped
    from ..readers import detect_format, load_series
    from ..rowfilter import parse
    from ..spread import parse as parse_spread

    conditions = parse(where)  # a malformed --where, before the file is read
    pair = parse_spread(spread)
    fmt = fmt or detect_format(data)
    drop_missing, drop_stray = drops
    if fmt == "table":
        if target is None:
            raise _target_needed(data, sheet=sheet)
        if by is not None:
            # a group too small for a law, or holding a summarised configuration twice, is named and the
            # others fitted; a bad value stops the run
            groups, failed = load_grouped(data, target, _split(by) or [by], _split(factors), drop_missing=drop_missing,
                                          tolerate=(ShortData, RepeatedSummaries), sheet=sheet, drop_stray=drop_stray,
                                          where=conditions, spread=pair)
            if not groups:
                name, reason = next(iter(failed.items()))
                if len(failed) == 1:
                    raise DataError(f"group {name}: {reason}")
                raise DataError(f"none of the {len(failed)} groups of --by {by} holds rows enough for a law (the "
                                f"first, {name}: {reason}); --by with fewer columns makes larger groups"
                                if 2 * too_few(failed) >= len(failed) else
                                f"none of the {len(failed)} groups of --by {by} can be fitted; the first, {name}: "
                                f"{reason}")
            return groups, failed
        return {"": load_table(data, target, _split(factors), drop_missing=drop_missing, sheet=sheet,
                               drop_stray=drop_stray, where=conditions, spread=pair)}, {}
    if sheet is not None:
        raise DataError(f"--sheet {sheet}: '{data}' is no Excel workbook; --sheet names a workbook's sheet")
    if pair is not None:
        raise DataError(f"--spread {spread}: '{data}' is an Extra-P file, whose repetitions give the noise already; "
                        "--spread reads two columns of a table")
    if by is not None:
        raise DataError("--by groups the rows of a table; an Extra-P file is already split into series")
    if drop_missing:
        raise DataError("--drop-missing drops a table's rows; an Extra-P file holds no missing values")
    return load_series(data, fmt, target, drop_stray, conditions), {}


def _check_prices(price: float | None, table: Path | None, sheet: str | None, time_unit: str | None) -> None:
    """The price options of optimize and suggest, checked before any work: one price or a table
    that exists, a sheet only of a table, a known --time-unit only beside a price."""
    from ..configs import ConfigError
    from ..optimize import hours_per

    if sheet is not None and table is None:
        raise ConfigError("--price-sheet names a sheet of the --price-table workbook; give --price-table")
    if price is not None and table is not None:
        raise ConfigError("--price prices every configuration alike and --price-table each its own: give one")
    if table is not None and not table.is_file():
        raise ConfigError(f"--price-table '{table}' does not exist")
    if time_unit is not None:
        hours_per(time_unit)
        if price is None and table is None:
            raise ConfigError("--time-unit says in what unit a price's hours are counted: give --price or --price-table")


def _read_prices(table: Path, sheet: str | None, factors) -> "pd.DataFrame":
    """The --price-table, its columns named as the law names its factors (a column 'num gpus'
    prices the factor num_gpus, as a table of measurements names it)."""
    from ..tables import read_table
    from ..vocabulary import law_name

    prices = read_table(table, sheet, "--price-sheet")
    return prices.rename(columns={c: law_name(str(c)) for c in prices.columns if law_name(str(c)) in factors})
