"""Which columns of a table are its factors: those named, checked against the table, or, where
none are named, its numeric columns less labels, measurements of the runs, a log's numbering and
metrics logged on rows of their own, each left out with a note saying why."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from . import reciprocal
from .cells import dated, flags, mostly_numbers, refuse_strays
from .errors import DataError, did_you_mean
from .reciprocal import reciprocal_of
from .roles import RUN, STEP, column_named, reads_as_time, settings
from .tables import lazy_pandas, rows_named
from .vocabulary import law_name

if TYPE_CHECKING:
    import pandas as pd


def inferred(frame: pd.DataFrame, target: str, drop_missing: bool, where: str, numbering: int | np.ndarray,
             across: bool = True, whole: pd.DataFrame | None = None) -> tuple[list[str], np.ndarray, list[str], list[str]]:
    """The factors of a table whose columns were not named (its numeric columns but the target,
    less labels and measurements of the runs), their values and the target's as numbers, the
    notes saying what was left out, and the columns left out as no setting. ``across`` False
    leaves out whether one law spans their values (:func:`across_note`), which a table split
    into groups says per group. ``whole``: the file's rows where ``frame`` holds only those --where
    kept, whose columns' roles are the file's: one series repeats no factor's levels, which is
    what tells a count of samples from a setting."""
    pd = lazy_pandas()
    columns = list(frame.columns)
    # True/False columns are labels (xla on or off), not scales: a law gets them only by --factors;
    # so are dates and times (when a run was logged), which are no setting of it
    labels = {c for c in columns if flags(frame[c]) or pd.api.types.is_datetime64_any_dtype(frame[c])}
    # a column with no value at all (a comma at the end of every line) says nothing of any run
    empty = [c for c in columns if c != target and frame[c].isna().all()]
    labels |= set(empty)
    factors = [c for c in columns if c != target and c not in labels and pd.api.types.is_numeric_dtype(frame[c])]
    for c in columns:
        if c in labels:
            continue
        if c != target and c not in factors and mostly_numbers(frame[c].astype(str).str.replace(
                r"(?<=\d)[,_' ](?=\d{3})", "", regex=True).where(frame[c].notna())) and not mostly_numbers(frame[c]):
            first = int(np.flatnonzero(frame[c].notna().to_numpy())[0])
            raise DataError(f"{where} column '{c}' holds numbers written with thousands separators "
                            f"({frame[c].iloc[first]!r} at {rows_named(np.array([first]), numbering)}): write them "
                            "without separators, or leave the column out with --factors")
        if c != target and c not in factors and mostly_numbers(frame[c]):
            if not drop_missing:
                refuse_strays(frame[c], c, where, numbering)
            # its stray rows are dropped below, and said so; a column of numbers pandas kept as
            # objects (an integer beyond 64 bits, a sheet's mixed cells) has none
            factors.append(c)
    # a metric logged on rows of its own (Lightning's val_loss beside step rows) is empty wherever
    # the target is given: it sets nothing of the runs the target measures
    measured = pd.to_numeric(frame[target], errors="coerce").notna().to_numpy()
    apart = [c for c in factors if measured.any() and frame[c].isna().to_numpy()[measured].all()]
    factors = [c for c in columns if c in factors and c not in apart]
    ignored = [c for c in columns if c != target and c not in factors and c not in empty and c not in apart]
    values = frame[[*factors, target]].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    context = None if whole is None else file_values(whole, factors, target)
    factors, values, note = settings(target, factors, values, context)
    spanned = across_note(frame, ignored, factors) if across else None
    notes = [f"ignored non-numeric column(s) {', '.join(ignored)}" + (f"; {spanned}" if spanned else "")] \
        if ignored else []
    notes += [f"left out {', '.join(column_named(c) for c in empty)}: empty on every row"] if empty else []
    notes += [f"left out {', '.join(column_named(c) for c in apart)}: empty on every row that gives {target} (logged "
              "on rows of its own)"] if apart else []
    check_factor_columns(factors, target, columns, where)
    check_settings(factors, where)
    return factors, values, notes + ([note] if note else []), ignored


def file_values(whole: pd.DataFrame, factors: list[str], target: str) -> np.ndarray:
    """The ``factors``' columns and the target's of every row of ``whole`` as numbers (NaN where
    a cell is none), as :func:`settings` reads a table's values."""
    pd = lazy_pandas()
    whole = whole.set_axis([str(c) for c in whole.columns], axis=1)
    numbers = whole[factors].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    return np.column_stack([numbers, reciprocal.values(whole, target)])


def check_settings(factors: list[str], where: str) -> None:
    """Refuse a log of one run's steps, whose only factors (as inferred) are its step and times
    (TensorBoard's export of a scalar: Wall time, Step, Value): no setting of the runs varies."""
    steps = [f for f in factors if STEP.match(f)]
    if steps and all(f in steps or reads_as_time(f) for f in factors):
        raise DataError(f"{where} holds the steps of one run ({steps[0]} numbers them) and no setting of it: a law "
                        "needs runs that differ in how they were set; give each run's settings as columns (gpus, "
                        "batch) beside its steps, or name the factors with --factors")


def across_note(frame, ignored: list[str], factors: list[str]) -> str | None:
    """Where the values of the ``ignored`` columns differ from row to row of ``frame`` (a table,
    or one group of it), the note that one law is fitted across them (they may name separate
    series); else None."""
    dates = lazy_pandas().api.types.is_datetime64_any_dtype
    # which run a row is (a run's name) names no series
    counts = {c: int(frame[c].nunique()) for c in ignored if not dates(frame[c]) and not RUN.match(c)}
    # a value on every row of its own (a run's id, name or start) labels runs, not series of them,
    # and one per configuration of the factors, each naming one (1ps2v: one server, two workers), labels that
    configurations = len(frame[factors].drop_duplicates()) if factors else 0
    several = [c for c, n in counts.items() if 1 < n < len(frame) and not (
        n == configurations == len(frame[[*factors, c]].drop_duplicates()))]
    when = set(dated(frame, several))  # nor does when a run was logged, a day shared by several
    several = [c for c in several if c not in when]
    if not several:
        return None
    # a series label holds every configuration, as often, under each of its values (MPI library ×
    # operation over the ranks); values that come and go between configurations, or hold them unevenly,
    # read as outcomes of the runs (which statistic was smallest), not settings
    crossed = [c for c in several if configurations and _even(frame.groupby([*factors, c]).size(),
                                                            configurations * counts[c])]
    if not crossed or len(crossed) == len(several):
        return (f"one law is fitted across the values of {_counted(several, counts)}: where they name separate series "
                "(a framework, a model), pass --by with those columns to fit one law per series")
    others = [c for c in several if c not in crossed]
    return (f"one law is fitted across the values of {_counted(crossed, counts)}, each of which holds every "
            f"configuration of {', '.join(factors)} as separate series do: pass --by {','.join(crossed)} to fit one "
            f"law per series; the values of {_counted(others, counts)} are spread unevenly over the configurations, as "
            "outcomes of the runs are rather than settings")


def _even(cells, expected: int) -> bool:
    """Whether every combination of the factors' configurations and a column's values is measured,
    each as many times (``cells``: the rows per combination measured)."""
    return len(cells) == expected and cells.nunique() == 1


def _counted(columns: list[str], counts: dict[str, int]) -> str:
    return ", ".join(f"{c} ({counts[c]})" for c in columns)


def check_not_target(factors: list[str], target: str) -> None:
    """Refuse a factor that is the target, or the column a target ``1/COLUMN`` reads."""
    if target in factors or reciprocal_of(target) in factors:
        read = "" if target in factors else f" (--target {target} reads it)"
        raise DataError(f"'{target if target in factors else reciprocal_of(target)}' is the target{read}; it cannot "
                        "also be a factor")


def check_factor_columns(factors: list[str], target: str, columns: list[str], where: str) -> None:
    check_not_target(factors, target)
    for f in factors:
        require_column(f, columns, where, "factor")
    if not factors:
        raise DataError(f"{where} has no numeric factor column besides '{target}'; add one")
    named: dict[str, str] = {}
    for f in factors:
        if law_name(f) in named:
            raise DataError(f"{where} columns '{named[law_name(f)]}' and '{f}' would both be the factor "
                            f"{law_name(f)} in a law; rename one, or leave one out with --factors")
        named[law_name(f)] = f


def columns_named(factors: list[str] | None, columns: list[str]) -> list[str] | None:
    """The columns of factors given by name: a column's own name, or the name it has in a law."""
    if factors is None:
        return None
    in_laws = {law_name(c): c for c in columns}
    return [f if f in columns or f not in in_laws else in_laws[f] for f in rejoined(factors, columns)]


def rejoined(names: list[str], columns: list[str]) -> list[str]:
    """``names`` as an option split them at commas, with the pieces of a column whose own name holds
    commas put back together ('batch, per device' from --factors 'batch, per device,gpus'), where
    the pieces are not all columns themselves."""
    with_commas = {re.sub(r"\s*,\s*", ",", c.strip()): c for c in columns if "," in c}
    if not with_commas:
        return names
    found, i = [], 0
    while i < len(names):
        j = next((j for j in range(len(names), i + 1, -1) if ",".join(names[i:j]) in with_commas
                  and not all(n in columns for n in names[i:j])), None)
        found.append(names[i] if j is None else with_commas[",".join(names[i:j])])
        i = i + 1 if j is None else j
    return found


def require_column(name: str, columns: list[str], where: str, what: str) -> None:
    pieces = [piece.strip() for piece in name.split(",")]
    if name not in columns and what == "target" and len(pieces) > 1 and all(piece in columns for piece in pieces):
        data = where[1:-1] if where.startswith("'") and where.endswith("'") else "DATA"  # where: 'path'
        raise DataError(f"--target {name} names {len(pieces)} columns of {where}, and a law has one target: give "
                        f"one, or model each with 'exprsearch profile {data} --target {name}'")
    if name not in columns:
        # a name pasted with a stray space or line end ('time\r' from a Windows file) reads like the column's own
        shown = name if name.isprintable() and name == name.strip() else repr(name)[1:-1]
        hidden = " (it has spaces or unprinted characters around it)" if name.strip() in columns else ""
        raise DataError(
            f"{what} column '{shown}'{hidden} is not in {where}{'' if hidden else did_you_mean(name, columns)}; "
            f"its columns are {', '.join(columns)}"
        )
