"""The distinct rows of a matrix: the configurations of a table and which rows repeat each, and
the median, the quantiles and the relative spread of the values of each group of rows."""

from __future__ import annotations

import numpy as np


def row_groups(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first row of each distinct row of ``matrix`` and each row's group, the groups in the
    lexicographic order of their values: what ``np.unique(matrix, axis=0, return_index=True,
    return_inverse=True)`` gives, from one-dimensional sorts of each column's ranks (about 6×
    faster on a 960,000-row log, where the sort of whole rows took 1.1 s)."""
    key = np.zeros(len(matrix), dtype=np.int64)
    for j in range(matrix.shape[1]):
        values, rank = np.unique(matrix[:, j], return_inverse=True)
        _, key = np.unique(key * len(values) + rank.reshape(-1), return_inverse=True)  # stays below the rows
        key = key.reshape(-1)
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    return first, group.reshape(-1)


def medians(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The median of ``values`` in each group (``group``: a number from 0 per row, every number
    taken), from one sort of all rows by group and value."""
    count = np.bincount(group)
    ordered = values[np.lexsort((values, group))]  # by group, then value: each group's median in place
    start = np.cumsum(count) - count
    return (ordered[start + (count - 1) // 2] + ordered[start + count // 2]) / 2


def quantiles(group: np.ndarray, values: np.ndarray, *levels: float | np.ndarray) -> list[np.ndarray]:
    """The quantile of ``values`` in each group at each of ``levels`` (a share, or one per group;
    0 is the smallest, 1 the largest), interpolated linearly between sorted values as numpy and
    pandas do, from one sort of all rows by group and value."""
    count = np.bincount(group)
    ordered = values[np.lexsort((values, group))]
    start = np.cumsum(count) - count
    out = []
    for level in levels:
        at = start + level * (count - 1)
        below = np.floor(at).astype(int)
        out.append(ordered[below] + (at - below) * (ordered[np.ceil(at).astype(int)] - ordered[below]))
    return out


def relative_variances(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The sample variance of ``values`` over its group's mean, in each group (``group``: a number
    from 0 per row, every number taken); NaN for a group of one row."""
    count = np.bincount(group)
    mean = np.bincount(group, weights=values) / count
    spread = np.bincount(group, weights=(values / mean[group] - 1) ** 2)
    with np.errstate(all="ignore"):
        return np.where(count > 1, spread / (count - 1), np.nan)
