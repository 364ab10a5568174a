"""A configuration's repeated measurements pooled into one weighted row, exactly for the cost.

Under the squared relative cost the rows of one configuration x (targets y₁…yₖ) enter as

    Σᵢ (1 − f(x)/yᵢ)² = w · (1 − f(x)/ȳ)² + (k − w),   ȳ = Σ(1/yᵢ) / Σ(1/yᵢ²),  w = (Σ 1/yᵢ)² / Σ(1/yᵢ²),

so a fit on one row per configuration, at target ȳ with weight w, plus a constant, has the same
cost at every constant as the fit on every row: the same constants, costs and errors, at a
fraction of the work where a table repeats its configurations (a per-step log of 16 setups has
16 rows to fit rather than 100,000). Robust losses weigh each row by its own residual and are
not pooled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .rowsets import row_groups


@dataclass(frozen=True)
class Pooled:
    """One row per configuration: the data row it stands for, its target and weight; and the
    cost the pooling leaves out (the same for every law)."""

    rows: np.ndarray  # the first data row of each configuration (configurations in sorted order)
    y: np.ndarray  # ȳ of each configuration
    weights: np.ndarray  # w · (configurations / rows): a mean over configurations is then one over rows
    constant: float  # Σ (k − w) / rows


def sums(columns: Sequence[np.ndarray], y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The first row of each configuration of ``columns`` (factor columns, one value per row;
    configurations in sorted order), and per configuration Σ 1/y, Σ 1/y² and the row count: all a
    squared relative cost needs of its rows (the batched fits' normal equations, :func:`pool`)."""
    key = np.column_stack(columns) if len(columns) else np.zeros((len(y), 1))
    first, inverse = row_groups(key)
    return (first, *group_sums(inverse, y))


def group_sums(group: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group (a number from 0 per row, every number taken) Σ 1/y, Σ 1/y² and the row count."""
    return np.bincount(group, weights=1.0 / y), np.bincount(group, weights=1.0 / y**2), np.bincount(group)


def pool(columns: Sequence[np.ndarray], y: np.ndarray, loss: str = "squared") -> Pooled | None:
    """The configurations of ``columns`` (factor columns, one value per row) with their rows of
    ``y`` pooled, or None where no configuration is measured twice (nothing to gain) or the
    ``loss`` is robust (its weights are each row's own)."""
    if loss != "squared":
        return None
    first, inverse_sum, inverse_square, count = sums(columns, y)
    if len(first) == len(y):
        return None
    return pooled(first, inverse_sum, inverse_square, count)


def pooled(first: np.ndarray, inverse_sum: np.ndarray, inverse_square: np.ndarray, count: np.ndarray,
           times: np.ndarray | None = None) -> Pooled:
    """Configurations pooled from their first rows and sums (as :func:`sums` gives them), each
    counted ``times`` over where given (a bootstrap resample's draws; a configuration drawn no
    time is left out), else once."""
    if times is None:
        times = np.ones(len(first))
    else:
        kept = np.flatnonzero(times)
        first, inverse_sum, inverse_square, count, times = (a[kept] for a in (first, inverse_sum, inverse_square,
                                                                              count, times))
    n = float(np.sum(times * count))
    weight = inverse_sum**2 / inverse_square
    return Pooled(first, inverse_sum / inverse_square, times * weight * len(first) / n,
                  float(np.sum(times * (count - weight)) / n))
