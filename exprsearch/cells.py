"""How a table's cells are written where a law needs numbers: dates, clock-time durations that
read two ways (10:40) and numbers with a unit are refused with what to write instead, since read
as numbers they would be nanoseconds since 1970, or missing on every line; durations written as
[d-]hh:mm:ss or with a unit of time are read in seconds; and which columns hold numbers at all (flags, a few stray words
among numbers)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from .dialect import NUMBER
from .errors import DataError
from .tables import lazy_pandas, rows_named

if TYPE_CHECKING:
    import pandas as pd


def check_dates(frame: pd.DataFrame, names: list[str], where: str, role: str) -> None:
    """Refuse columns of dates and times (when a run was logged) in ``role``: as numbers they would
    be nanoseconds since 1970."""
    dated = [c for c in names if lazy_pandas().api.types.is_datetime64_any_dtype(frame[c])]
    if dated:
        raise DataError(f"{where} column '{dated[0]}' holds dates and times, not a quantity to be {role}")


def dated(frame: pd.DataFrame, columns: list[str] | None = None) -> list[str]:
    """The text columns of ``frame`` (or of ``columns`` among them) whose values are mostly dates
    and times (MLflow's start_time, W&B's Created): they say when a run was logged, not how long
    it took or how it was set up."""
    import warnings

    pd = lazy_pandas()
    found = []
    for column in frame.columns if columns is None else columns:
        values = frame[column].dropna()
        if values.dtype.kind != "O" or not len(values) or pd.to_numeric(values, errors="coerce").notna().mean() > 0.5:
            continue  # numbers, if a few are written otherwise, are no dates (dateutil reads 12.5 as one)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pandas warns when it guesses the format per value
            parsed = pd.to_datetime(values.astype(str), errors="coerce", utc=True, format="mixed")
        # dateutil reads 'm0' as minute 0 of year 1: no log was written before 1970
        if (parsed.dt.year >= 1970).mean() > 0.5:
            found.append(str(column))
    return found


_WITH_UNIT = re.compile(rf"^\s*({NUMBER})\s*([a-zA-Zµ%][a-zA-Zµ%/]*)\s*$")
_COMMA = re.compile(r"^\s*[+-]?\d+,\d+\s*$")  # 10,5 or 1,000 in a file of commas: a quoted field or a text cell
_DURATION = re.compile(r"^\s*(?:(\d+)-)?(\d+):(\d{2})(?::(\d{2}(?:\.\d+)?))?\s*$")  # [d-]hh:mm:ss, mm:ss


def check_written(frame: pd.DataFrame, names: list[str], where: str, numbering: int | np.ndarray) -> None:
    """Refuse a column of durations written as clock times (Slurm's Elapsed, 1-02:03:04 or
    01:10:00), naming the first and what it is in seconds, or of numbers written with a unit
    (12.3 ms) or a comma (a quoted "10,5", a workbook's text "1,000"): read as numbers they would
    all be missing."""
    types = lazy_pandas().api.types
    for name in names:
        if name not in frame.columns or types.is_numeric_dtype(frame[name]) or types.is_datetime64_any_dtype(frame[name]):
            continue
        found = _mostly(frame[name], _DURATION)
        if found is not None:
            first, text = found
            days, a, b, c = _DURATION.match(text).groups()
            seconds = int(days or 0) * 86400 + (int(a) * 3600 + int(b) * 60 + float(c) if c else int(a) * 60 + int(b))
            raise DataError(f"{where} column '{name}' holds durations written as clock times ({text!r} at "
                            f"{rows_named(np.array([first]), numbering)}); write them in seconds ({seconds:g} there), "
                            "as a law needs numbers")
        found = _mostly(frame[name], _WITH_UNIT)
        if found is not None:
            first, text = found
            unit = _WITH_UNIT.match(text).group(2)
            raise DataError(f"{where} column '{name}' holds numbers with a unit ({text.strip()!r} at "
                            f"{rows_named(np.array([first]), numbering)}); write the numbers alone, and the unit in "
                            f"the column's name ({name}_{unit.strip().replace('/', '_per_')})")
        found = _mostly(frame[name], _COMMA)
        if found is not None:
            first, text = found
            raise DataError(f"{where} column '{name}' holds numbers written with a comma ({text.strip()!r} at "
                            f"{rows_named(np.array([first]), numbering)}); write a decimal with a point (10.5) and a "
                            "thousand without a separator (1000)")


_ELAPSED = re.compile(r"^\s*(?:(\d+)-)?(\d+):(\d{2}):(\d{2}(?:\.\d+)?)\s*$")  # [d-]hh:mm:ss: no mm:ss in it


def clock_seconds(column: pd.Series) -> pd.Series | None:
    """A column of text durations that are all written as [days-]hours:minutes:seconds (Slurm's
    Elapsed: 1-02:03:04, 01:10:00.5), in seconds (empty cells stay missing); else None. Two parts
    (10:30) may be minutes or hours, so such a column is left to :func:`check_written`."""
    return _seconds(column, _ELAPSED,
                    lambda parts: parts.astype(float).fillna(0.0).to_numpy() @ np.array([86400.0, 3600.0, 60.0, 1.0]))


TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0,
               "seconds": 1.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0, "h": 3600.0,
               "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0, "d": 86400.0, "day": 86400.0,
               "days": 86400.0}
_TIMED = re.compile(rf"^\s*({NUMBER})\s*(" + "|".join(sorted(TIME_UNITS, key=len, reverse=True)) + r")\s*$",
                    re.IGNORECASE)


def unit_seconds(column: pd.Series) -> pd.Series | None:
    """A column of text durations that are all a number and a unit of time (MLflow's Duration:
    1.2min, 37.5s; 350 ms, 2 h), in seconds (empty cells stay missing); else None. A unit that
    could be another (m: minutes or metres) is left to :func:`check_written`."""
    # a case-blind µ matches the Greek μ that keyboards type, which lower() leaves Greek
    scale = {**TIME_UNITS, **{u.replace("µ", "μ"): v for u, v in TIME_UNITS.items() if "µ" in u}}
    return _seconds(column, _TIMED, lambda parts: parts[0].astype(float).to_numpy() *
                    parts[1].str.lower().map(scale).to_numpy(dtype=float))


def _seconds(column: pd.Series, pattern: re.Pattern, to_seconds) -> pd.Series | None:
    """``column`` in seconds where every value it holds is written as ``pattern`` (``to_seconds``:
    its matched groups → seconds), empty cells missing; else None."""
    if column.dtype.kind != "O":
        return None
    present = column.dropna().astype(str)
    if not len(present) or not pattern.fullmatch(present.iloc[0]):
        return None  # the first value alone sets most columns aside (names, labels) without a scan
    parts = present.str.extract(pattern.pattern, flags=pattern.flags & re.IGNORECASE)
    if parts.isna().all(axis=1).any():  # a value written otherwise
        return None
    seconds = np.full(len(column), np.nan)
    seconds[column.notna().to_numpy()] = to_seconds(parts)
    return lazy_pandas().Series(seconds, index=column.index, name=column.name)


def _mostly(column: pd.Series, pattern: re.Pattern) -> tuple[int, str] | None:
    """The row and text of the first value of ``column`` written as ``pattern``, where more than
    half of its non-empty values are; else None."""
    present = column.dropna().astype(str)
    matched = present.str.fullmatch(pattern.pattern).to_numpy(dtype=bool)
    if not len(present) or matched.mean() <= 0.5:
        return None
    first = int(np.flatnonzero(column.notna().to_numpy())[int(np.argmax(matched))])
    return first, str(column.iloc[first])


def flags(column: pd.Series) -> bool:
    """Whether a column holds only True and False (some cells may be empty)."""
    pd = lazy_pandas()
    if pd.api.types.is_bool_dtype(column):
        return True
    if column.dtype != object:  # numbers or text: not a column of flags (and not worth a walk)
        return False
    present = column.dropna()
    return len(present) > 0 and all(isinstance(v, (bool, np.bool_)) for v in present)


def mostly_numbers(column: pd.Series) -> bool:
    """Whether most of a column's non-empty values are numbers (so the rest are likely typos)."""
    present = column.dropna()
    parsed = lazy_pandas().to_numeric(present, errors="coerce")
    return len(present) > 0 and parsed.notna().sum() > len(present) / 2


def strays(column: pd.Series) -> pd.Series:
    """The non-empty values of a column that are not numbers."""
    present = column.dropna()
    return present[lazy_pandas().to_numeric(present, errors="coerce").isna()]


def refuse_strays(column: pd.Series, name: str, where: str, numbering: int | np.ndarray, target: bool = False) -> None:
    """Stop at a column of numbers with a few values that are not (a typo, a unit on one), naming
    them and their lines; ``target``: the column is the measured time."""
    stray = strays(column)
    if not len(stray):
        return
    rows = np.flatnonzero(column.index.isin(stray.index))
    shown = ", ".join(repr(str(v)) for v in stray.iloc[:3]) + (", …" if len(stray) > 3 else "")
    raise DataError(f"{where} {'target' if target else 'column'} '{name}' is numbers except {shown} at "
                    f"{rows_named(rows, numbering)}: fix those values" + (" (all in one unit)" if target else "")
                    + ", pass --drop-missing to drop those rows"
                    + ("" if target else ", or leave the column out with --factors"))


def is_number(text: str) -> bool:
    """Whether Python reads ``text`` as a number (``1e3``, `` 4 ``, ``inf``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
