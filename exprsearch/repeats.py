"""What the repeated runs of one configuration say about the measurements: a run far from its
repeats (a stall, a failed run), and repeats so far apart that the rows may mix two setups."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .errors import SettingsError
from .rowsets import medians, quantiles, row_groups
from .tables import lazy_pandas, rows_named

if TYPE_CHECKING:
    import pandas as pd

    from .data import Dataset

MIXED = 0.2  # repeats of one setup rarely differ by a fifth; DLPerf's mixed series by 23-39 % (median)
UNNAMED = 0.5  # said even where no column tells the repeats apart: CM-DARE's 13 repeats differ by 5 %
ROBUST_ROWS = 2000  # a robust loss on this many rows takes minutes (24 configurations x 250 steps: 40 s and more)


def stray_runs(X: np.ndarray, y: np.ndarray, positions: np.ndarray, numbering: int | np.ndarray,
               drop: bool = False) -> tuple[str | None, np.ndarray]:
    """A note on repeated runs far from the others of their configuration (a stall, a failed
    run), and their rows: off their median by more than 8 times the pooled spread of repeats and
    by half (timings of short runs on a shared machine stray by a quarter: the bundled MLP epochs
    hold one at 1.28x). With ``drop`` the note says they were dropped (``--drop-stray``)."""
    _, config = row_groups(X)
    counts = np.bincount(config)
    median = medians(config, y)[config]
    off = y / median - 1
    repeats = np.abs(off[(counts[config] >= 3) & (off != 0)])
    spread = 1.4826 * float(np.median(repeats)) if repeats.size else 0.0
    stray = np.flatnonzero((counts[config] >= 3) & (np.abs(off) > max(8 * spread, 0.5)))
    if not stray.size:
        return None, stray
    listed = functools.partial(_listed, y=y, median=median, counts=counts[config], positions=positions,
                               numbering=numbering)
    if drop:
        return f"dropped {listed(stray, 'far from')} (--drop-stray)", stray
    above, below = stray[off[stray] > 0], stray[off[stray] < 0]
    notes = []
    if above.size:
        notes.append(f"{listed(above, 'lie far above')}; stalls or failed runs? They are kept: the relative error misses "
                     "each by less than its whole value, --loss huber discounts them, and --drop-stray drops them")
    if below.size:
        worst = float(np.max(median[below] / y[below] - 1))
        notes.append(f"{listed(below, 'lie far below')}; a stalled step of a rate, a run cut short? They are kept, but "
                     "relative errors make a run far below its repeats weigh as many runs: a law that follows the "
                     f"repeats misses it by up to {100 * worst:,.0f} % of its value, so these can decide the law, "
                     "under --loss huber too; --drop-stray drops them")
    return "; and ".join(notes), stray


def _listed(which: np.ndarray, side: str, *, y, median, counts, positions, numbering) -> str:
    shown = ", ".join(f"{rows_named(positions[[i]], numbering)} ({y[i] / median[i]:.3g}× the median of its "
                      f"{counts[i]} runs)" for i in which[:3])
    return (f"{len(which)} run(s) {side} the other runs of their configuration: {shown}"
            f"{', …' if len(which) > 3 else ''}")


def mixed_setups(others: pd.DataFrame | Mapping[str, np.ndarray], X: np.ndarray, y: np.ndarray) -> str | None:
    """A note where the repeats of a configuration differ by more than :data:`MIXED` (the median over
    configurations of largest / smallest - 1, of the 90th / 10th percentile among ten or more
    repeats) and other columns (``others``, aligned with the rows of ``X``; not those that name runs
    or steps) take different values between them: the rows may hold two setups that the law will
    take for noise (MindSpore's BERT runs in DLPerf, with and without kernel fusion, 39 % apart).
    Repeats more than :data:`UNNAMED` apart get a note even where no column differs between them
    (Hivemind's two models in one table of GPU counts and rates, 158 % apart)."""
    finite = np.isfinite(X).all(axis=1) & np.isfinite(y) & (y > 0)
    if finite.sum() < 4:
        return None
    _, config = row_groups(X[finite])
    counts = np.bincount(config)
    repeated = np.flatnonzero(counts >= 2)
    if len(repeated) < 2:
        return None
    many = counts >= 10
    spread = float(np.median(_ratios(config, y[finite], counts)[repeated] - 1))
    if spread <= MIXED:
        return None
    measure = "90th / 10th percentile" if many[repeated].any() else "largest / smallest"
    said = (f"repeats of one configuration differ by {100 * spread:.0f} % (median of {measure}), more than runs of "
            "one setup usually do")
    unnamed = (f"{said}, and no column names what differs between them: if the rows mix setups (another model, GPU "
               "type or place), add a column that names them and pass --by with it; otherwise the law takes the "
               "difference for noise") if spread > UNNAMED else None
    if not len(getattr(others, "columns", others)):  # a DataFrame's columns, or a mapping's keys
        return unnamed
    rows = lazy_pandas().DataFrame(others)[finite].reset_index(drop=True)
    distinct = {c: rows[c].groupby(config).nunique(dropna=False).to_numpy()[repeated] for c in rows.columns}
    differing = [c for c in rows.columns if (distinct[c] > 1).mean() >= 0.5]
    # a column different on every row (a run's name or log file), or on every row of each
    # configuration of three or more (a run's number, a log's step), names runs, not setups
    several = counts[repeated] >= 3
    runs = {c for c in differing if rows[c].nunique(dropna=False) == len(rows)
            or (several.any() and (distinct[c] == counts[repeated])[several].all())}
    differing = [c for c in differing if c not in runs]
    # a label (a zone, a variant) names a setup; numbers beside the time (a statistic) are named
    # only where no label differs
    labels = [c for c in differing if rows[c].dtype.kind not in "iuf"]
    differing = [str(c) for c in (labels or differing)]
    if not differing:
        return unnamed
    return (f"{said}, and column(s) {', '.join(differing)} differ between them: if they name different setups, "
            "pass --by with them, or the law takes the difference for noise")


def _ratios(config: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each configuration's largest over smallest time; among ten or more repeats (a per-step log)
    its 90th over its 10th percentile, as the extremes of many draws of one setup lie far apart."""
    many = counts >= 10
    high, low = quantiles(config, y, np.where(many, 0.9, 1.0), np.where(many, 0.1, 0.0))
    return high / low


MEASURES = {"all": "every run", "mean": "mean", "median": "median", "min": "minimum", "max": "maximum"}


def check_measure(measure: str) -> None:
    """Refuse a --measure that names no statistic, before the data are read."""
    if measure not in MEASURES:
        raise SettingsError(f"--measure {measure}: give one of {', '.join(MEASURES)}")


def robust_note(dataset: Dataset, loss: str) -> str | None:
    """A note where a robust ``loss`` meets a table whose configurations repeat many times (a
    per-step log): its weights are refitted row by row for every law, minutes to hours there,
    while each configuration's median resists stray runs as well and is fitted on one row each."""
    rows, configurations = len(dataset.y), int(dataset.configurations().max(initial=-1)) + 1
    if loss == "squared" or rows < ROBUST_ROWS or rows < 10 * configurations:
        return None
    return (f"--loss {loss} weighs each of the {rows:,} rows again for every law it fits, which takes long where "
            f"{configurations:,} configurations are measured {rows / configurations:,.0f} times each on average; "
            "--measure median fits each configuration's median instead, which resists stray runs as well, on one "
            "row each")


def runs_each(dataset: Dataset) -> int:
    """How many runs a configuration of ``dataset`` has had: the median count, at least 1 (what one
    more configuration measured alike costs, where each is fitted as a statistic of its runs)."""
    counts = np.bincount(row_groups(dataset.X)[1])
    return max(1, int(np.median(counts[counts > 0]) + 0.5))


def summarised(dataset: Dataset, measure: str) -> Dataset:
    """One row per configuration, the ``measure`` of its runs (Extra-P's --measure: the minimum of
    repetitions is the usual choice on a shared machine, whose interference only adds time), with
    a note and, where runs repeat, each row's noise (:func:`noise_parts`, :func:`pooled_noise`) for the selection's
    noise rule; ``all`` keeps every run."""
    check_measure(measure)
    if measure == "all":
        return dataset
    if dataset.spread is not None:
        raise SettingsError(f"--measure {measure} summarises a configuration's repeated rows; with --spread each row "
                            "summarises its runs already: leave one of them out")
    first, config = row_groups(dataset.X)
    counts = np.bincount(config)
    parts = noise_parts(config, dataset.y, measure)
    noise = pooled_noise(parts)
    if counts.max() == 1:
        note = f"--measure {measure}: every configuration was measured once, so each is fitted as its one run"
    elif noise is None:
        note = (f"each configuration is fitted as the {MEASURES[measure]} of its runs (--measure {measure}); too few "
                "runs repeat to measure their noise, so the law is chosen without the noise rule")
    else:
        note = (f"each configuration is fitted as the {MEASURES[measure]} of its runs (--measure {measure}); the "
                f"noise rule tests the law against the noise of such a {MEASURES[measure]}, "
                f"{100 * np.sqrt(noise[0]):.3g} %, estimated from the spread of the runs")
    if measure == "median":
        y = medians(config, dataset.y)
    elif measure == "mean":  # each configuration's runs together, summed in the order they were read
        y = np.add.reduceat(dataset.y[np.argsort(config, kind="stable")], np.cumsum(counts) - counts) / counts
    else:
        (y,) = quantiles(config, dataset.y, 0.0 if measure == "min" else 1.0)
    return replace(dataset, X=dataset.X[first].copy(), y=np.asarray(y, dtype=float),
                   places=None if dataset.places is None else dataset.places[first], measure=measure,
                   noise=noise, row_noise=parts, notes=dataset.notes + (note,))


DRAWS = 20_000  # resampled sets of runs per count of runs: the variance factors to about 1 %
DRAW_VALUES = 4_000_000  # draws held at once (32 MB)


def pooled_noise(parts: np.ndarray) -> tuple[float, int] | None:
    """The relative noise variance of a row and its degrees of freedom (:attr:`Dataset.noise`) from
    each row's part: the squared relative deviations of its runs from their mean, their degrees of
    freedom, and the ratio of the row's variance (a mean's, median's… of its runs) to one run's.
    None where fewer than two degrees of freedom measure it."""
    squares, dof, factor = np.asarray(parts, dtype=float).reshape(-1, 3).T
    total = int(round(float(np.sum(dof))))
    if total < 2:
        return None
    return float(np.sum(squares) / total * np.mean(factor)), total


def noise_parts(config: np.ndarray, y: np.ndarray, measure: str) -> np.ndarray:
    """Each configuration's part of the noise of its ``measure`` (:func:`pooled_noise`). A mean of
    m runs has 1/m of one run's variance; a median, minimum or maximum has what m runs drawn from
    the pooled deviations give it (timing noise is skewed, so a normal law's factors would be
    off), drawn with a fixed seed."""
    counts = np.bincount(config)
    mean = np.bincount(config, weights=y) / counts
    deviation = (y - mean[config]) / y
    squares = np.bincount(config, weights=deviation**2, minlength=len(counts))
    dof = int(np.sum(counts - 1))
    sizes, size_of = np.unique(counts, return_inverse=True)
    if measure == "mean" or dof < 2 or not np.any(squares):
        factors = 1 / sizes
    else:
        repeated = counts[config] >= 2
        pool = deviation[repeated] * np.sqrt(counts[config][repeated] / (counts[config][repeated] - 1))
        rng = np.random.default_rng(0)
        take = {"median": np.median, "min": np.min, "max": np.max}[measure]
        one_run = float(np.mean(pool**2))
        factors = np.array([1.0 if m == 1 else float(np.var(_drawn(rng, pool, m, take))) / one_run for m in sizes])
    return np.column_stack([squares, counts - 1, factors[size_of.reshape(-1)]])


def _drawn(rng: np.random.Generator, pool: np.ndarray, m: int, take) -> np.ndarray:
    """``take`` (a median, minimum…) of each of :data:`DRAWS` sets of ``m`` runs drawn from ``pool``,
    drawn a block at a time: the same draws as all at once, without holding DRAWS × m of them (a
    per-step log of 4,000 steps a configuration held 640 MB, 1.35 GB at the peak)."""
    block = max(1, DRAW_VALUES // m)
    return np.concatenate([take(rng.choice(pool, (min(block, DRAWS - start), m)), axis=1)
                           for start in range(0, DRAWS, block)])
