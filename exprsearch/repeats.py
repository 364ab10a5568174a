"""What the repeated runs of one configuration say about the measurements: a run far from its
repeats (a stall, a failed run), and repeats so far apart that the rows may mix two setups."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .tables import rows_named

if TYPE_CHECKING:
    import pandas as pd

MIXED = 0.2  # repeats of one setup rarely differ by a fifth; DLPerf's mixed series by 23-39 % (median)


def stray_runs(X: np.ndarray, y: np.ndarray, positions: np.ndarray, numbering: int | np.ndarray) -> str | None:
    """A note on repeated runs far from the others of their configuration (a stall, a failed
    run): off their median by more than 8 times the pooled spread of repeats and by half (timings
    of short runs on a shared machine stray by a quarter: the bundled MLP epochs hold one at 1.28x)."""
    _, config = np.unique(X, axis=0, return_inverse=True)
    config = config.ravel()
    counts = np.bincount(config)
    ordered = y[np.lexsort((y, config))]  # by configuration, then time: each one's median in place
    start = np.cumsum(counts) - counts
    median = ((ordered[start + (counts - 1) // 2] + ordered[start + counts // 2]) / 2)[config]
    off = y / median - 1
    repeats = np.abs(off[(counts[config] >= 3) & (off != 0)])
    spread = 1.4826 * float(np.median(repeats)) if repeats.size else 0.0
    stray = np.flatnonzero((counts[config] >= 3) & (np.abs(off) > max(8 * spread, 0.5)))
    if not stray.size:
        return None
    shown = ", ".join(f"{rows_named(positions[[i]], numbering)} ({y[i] / median[i]:.3g}× the median of its "
                      f"{counts[config[i]]} runs)" for i in stray[:3])
    return (f"{len(stray)} run(s) lie far from the other runs of their configuration: {shown}"
            f"{', …' if len(stray) > 3 else ''}; stalls or failed runs? They are kept: --loss huber keeps them from "
            "dragging the law, or remove them")


def mixed_setups(others: pd.DataFrame, X: np.ndarray, y: np.ndarray) -> str | None:
    """A note where the repeats of a configuration differ by more than :data:`MIXED` (the median over
    configurations of largest / smallest - 1) and other columns (``others``, aligned with the rows
    of ``X``) take different values between them: the rows may hold two setups that the law will
    take for noise (MindSpore's BERT runs in DLPerf, with and without kernel fusion, 39 % apart)."""
    finite = np.isfinite(X).all(axis=1) & np.isfinite(y) & (y > 0)
    if others.shape[1] == 0 or finite.sum() < 4:
        return None
    _, config = np.unique(X[finite], axis=0, return_inverse=True)
    config = config.ravel()
    counts = np.bincount(config)
    repeated = np.flatnonzero(counts >= 2)
    if len(repeated) < 2:
        return None
    low = np.full(len(counts), np.inf)
    high = np.zeros(len(counts))
    np.minimum.at(low, config, y[finite])
    np.maximum.at(high, config, y[finite])
    spread = float(np.median(high[repeated] / low[repeated] - 1))
    if spread <= MIXED:
        return None
    rows = others[finite].reset_index(drop=True)
    differing = [c for c in rows.columns
                 if (rows[c].groupby(config).nunique(dropna=False).to_numpy()[repeated] > 1).mean() >= 0.5]
    # a label (a zone, a variant) names a setup, unless it differs on every row (a run's name, its log
    # file): that names runs; numbers beside the time (a run's id, a statistic) are named only where
    # no label differs
    named = {c for c in differing if rows[c].dtype.kind not in "iuf" and rows[c].nunique(dropna=False) == len(rows)}
    differing = [c for c in differing if c not in named]
    labels = [c for c in differing if rows[c].dtype.kind not in "iuf"]
    differing = [str(c) for c in (labels or differing)]
    if not differing:
        return None
    return (f"repeats of one configuration differ by {100 * spread:.0f} % (median of largest / smallest), more than "
            f"runs of one setup usually do, and column(s) {', '.join(differing)} differ between them: if they name "
            "different setups, pass --by with them, or the law takes the difference for noise")
