"""Rows that each summarise several runs, with the runs' spread beside them (``--spread sd,count``:
a mean of ``count`` runs and their standard deviation, as benchmark reports give them): the noise
the selection's rule tests laws against, read from those columns where no configuration repeats
to measure it (docs/method.md). The two columns are no factors and leave the table as it is read."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .columns import require_column
from .errors import DataError, RepeatedSummaries
from .reciprocal import reciprocal_of
from .repeats import pooled_noise
from .roles import statistic
from .rowsets import row_groups
from .tables import lazy_pandas, placed, rows_named

if TYPE_CHECKING:
    import pandas as pd

    from .data import Dataset

# a median of n runs varies about pi/2 times as much as their mean (normal runs, n large)
FACTOR = {None: 1.0, "mean": 1.0, "median": math.pi / 2}


def parse(spread: str | Sequence[str] | None) -> tuple[str, str] | None:
    """``--spread sd,count`` (or the pair as a sequence) as its two column names, the second or a
    whole number, the count of every row (``--spread time_std,5``); None where not given."""
    if spread is None:
        return None
    names = [s.strip() for s in spread.split(",")] if isinstance(spread, str) else [str(s) for s in spread]
    if len(names) != 2 or not all(names) or names[0] == names[1]:
        raise DataError(f"--spread {spread if isinstance(spread, str) else ','.join(names)}: give two columns, the "
                        "runs' standard deviation and how many runs each row summarises: --spread ttt_std,n_runs "
                        "(or the count of every row: --spread ttt_std,5)")
    if names[1].isdigit() and int(names[1]) < 1:
        raise DataError(f"--spread {','.join(names)}: a row summarises at least one run; give their count, 1 or more")
    return names[0], names[1]


def split_off(frame: pd.DataFrame | Mapping[str, np.ndarray], spread: tuple[str, str] | None, target: str,
              where: str) -> tuple[pd.DataFrame | dict, np.ndarray | None]:
    """The table without the ``spread`` columns (so that they are no factors), and those columns'
    values ``(rows, 2)``, aligned with its rows (a count given as a number, in every row); the
    table as it is and None without ``spread``."""
    if spread is None:
        return frame, None
    columns = [str(c) for c in frame.columns] if hasattr(frame, "columns") else [str(c) for c in frame]
    named = [name for name in spread if not (name == spread[1] and fixed(name, columns))]
    for name, what in zip(named, ("--spread standard deviation", "--spread count")):
        require_column(name, columns, where, what)
        if name == target:
            raise DataError(f"--spread {name}: that is the target; give the columns of the runs' spread and count")
    pd = lazy_pandas()
    rows = len(frame[spread[0]])
    values = np.column_stack([pd.to_numeric(pd.Series(np.asarray(frame[name])), errors="coerce").to_numpy(dtype=float)
                              if name in named else np.full(rows, float(name)) for name in spread])
    rest = frame.drop(columns=named) if hasattr(frame, "drop") else {
        k: v for k, v in frame.items() if str(k) not in named}
    return rest, values


def fixed(count: str, columns: Sequence[str] = ()) -> bool:
    """Whether ``--spread``'s count is a number for every row (5), not a column (a column so named wins)."""
    return count not in columns and count.isdigit()


def attach(dataset: Dataset, values: np.ndarray | None, numbering: int | np.ndarray, spread: tuple[str, str] | None,
           where: str) -> Dataset:
    """``dataset`` with the noise of one of its rows (:attr:`Dataset.noise`) from each row's spread
    and count of runs, ``values`` (of the table's rows, whose places ``numbering`` gives, as the
    loader placed them); with a note saying so."""
    if values is None or spread is None:
        return dataset
    sd_name, count_name = spread
    counted = f"{count_name} runs each" if fixed(count_name) else f"their count in {count_name}"
    if dataset.steps is not None:
        raise DataError(f"--spread {sd_name},{count_name}: {where}'s rows are steps of runs, taken as runs; "
                        "--spread is for a table whose rows each summarise runs")
    kind = statistic(dataset.target)
    if kind not in FACTOR:
        raise DataError(f"--spread {sd_name},{count_name}: the target {dataset.target} reads as the {kind} of the "
                        "runs, whose noise their standard deviation does not give; fit their mean or median")
    _, config = row_groups(dataset.X)
    counts = np.bincount(config)
    if counts.max() > 1:
        from .configs import setting

        twice = np.flatnonzero(config == int(np.argmax(counts > 1)))
        named = ", ".join(f"{f}={setting(v)}" for f, v in zip(dataset.factors, dataset.X[twice[0]]))
        more = int(np.sum(counts > 1)) - 1
        others = f" (and {more} more configuration{'s' if more > 1 else ''} on several rows)" if more else ""
        raise RepeatedSummaries(
            f"--spread {sd_name},{count_name}: {where} holds {named or 'its one configuration'} at "
            f"{rows_named(twice, dataset.places)}{others}, but --spread takes one row per configuration: keep one "
            "with --where or another factor, or leave --spread out, and the rows' differences measure the noise")
    at = {place: k for k, place in enumerate(np.asarray(placed(np.arange(len(values)), numbering)).tolist())}
    rows = np.array([at[place] for place in np.asarray(dataset.places).tolist()], dtype=np.intp)
    sd, count = values[rows, 0], values[rows, 1]
    bad = ~(np.isfinite(count) & (count >= 1) & (count == np.round(count)))
    if bad.any():
        shown = rows_named(np.flatnonzero(bad), dataset.places)
        raise DataError(f"{where} column '{count_name}' (--spread) must count the runs each row summarises, a whole "
                        f"number of at least 1, but does not at {shown}; fix those values")
    bad = (count >= 2) & ~(np.isfinite(sd) & (sd >= 0))
    if bad.any():
        shown = rows_named(np.flatnonzero(bad), dataset.places)
        raise DataError(f"{where} column '{sd_name}' (--spread) must be the runs' standard deviation, at least 0, "
                        f"where a row summarises two runs or more, but is missing or negative at {shown}; fix them")
    repeated = count >= 2
    each = max(1, round(1 / float(np.mean(1 / count))))  # as many runs as make a row's noise the one measured
    # the spread of 1/x is that of x relative to it (to first order): sd / x = sd · (1/x)
    inverted = reciprocal_of(dataset.target) is not None
    relative = np.where(repeated, sd, 0.0) * (dataset.y if inverted else 1 / dataset.y)
    squares = np.where(repeated, (count - 1) * relative**2, 0.0)
    parts = np.column_stack([squares, count - 1, FACTOR[kind] / count])
    name = f"--spread {sd_name},{count_name}"
    pooled = pooled_noise(parts)
    if pooled is None:
        note = (f"{name}: the rows summarise too few runs to measure their noise, so the law is chosen without "
                "the noise rule")
        return replace(dataset, notes=(*dataset.notes, note), spread=spread, row_runs=each)
    variance, dof = pooled
    of = "median" if kind == "median" else "mean"
    of = f"reciprocal of the {of}" if inverted else of
    spread_of = f", of {reciprocal_of(dataset.target)}, whose relative spread its reciprocal shares" if inverted else ""
    note = (f"each row is taken as the {of} of its runs ({counted}, their standard deviation in "
            f"{sd_name}{spread_of}; {name}): the noise rule tests the law against such a {of}'s noise, "
            f"{100 * math.sqrt(variance):.3g} %, from {dof} degrees of freedom")
    return replace(dataset, noise=(variance, dof), row_noise=parts, notes=(*dataset.notes, note), spread=spread,
                   row_runs=each)
