"""Least-squares arithmetic for choosing sums of term columns (:mod:`exprsearch.screen`): the
gain of adding a column to a model, exchanging a model's terms, the sums that could reach the
Pareto front, and orthonormal bases. Columns are relative, weighted and of unit length."""

from __future__ import annotations

import numpy as np


def gains(design: np.ndarray, residual: np.ndarray, columns: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares gain of adding each (unit) column of ``design`` to the model of ``columns``,
    and the sign of its coefficient there."""
    if columns:
        basis = orthonormal(design[:, list(columns)])
        residual = residual - basis @ (basis.T @ residual)
        inside = basis.T @ design
        rest = np.maximum(1.0 - np.einsum("mc,mc->c", inside, inside), 0.0)
    else:
        rest = np.ones(design.shape[1])
    corr = design.T @ residual
    with np.errstate(all="ignore"):
        gain = np.where(rest > 1e-8, corr**2 / rest, 0.0)
    return gain, np.sign(corr)


def near_front(combos: list[tuple[int, ...]], columns: dict[int, int], sizes: dict[int, int],
               design: np.ndarray, residual: np.ndarray, margin: float) -> list[tuple[int, ...]]:
    """The sums of items worth fitting exactly: every sum with an item that has no single column
    in ``columns`` (a fitted exponent: its coarse grid cannot bound what refining reaches), and
    every sum whose least-squares fit to ``residual`` here comes within ``margin`` of the best fit
    with non-negative coefficients among the sums at most as complex (by the items' ``sizes``).

    Only a sum that beats every simpler one can be on the Pareto front of error and complexity
    from which the law is chosen; the margin leaves room for the exact fit's other weighting
    (every row, not the configurations' means) and for its non-negative coefficients.
    """
    total = float(residual @ residual)
    cost = np.full(len(combos), np.nan)  # NaN: not estimated here, kept
    reachable = np.zeros(len(combos), dtype=bool)  # a fit with non-negative coefficients
    size = np.zeros(len(combos))
    column_of = np.full(max(max((i for c in combos for i in c), default=-1), max(columns, default=-1)) + 1, -1)
    column_of[list(columns)] = list(columns.values())
    size_of = np.zeros(len(column_of))
    size_of[list(sizes)] = list(sizes.values())
    lengths = np.fromiter(map(len, combos), dtype=np.intp, count=len(combos))
    for length in np.unique(lengths).tolist():
        rows = np.flatnonzero(lengths == length)
        if length == 0:
            cost[rows], reachable[rows] = total, True
            continue
        members = np.array([combos[j] for j in rows.tolist()], dtype=np.intp).reshape(len(rows), length)
        which = column_of[members]
        known = (which >= 0).all(axis=1)
        rows, which = rows[known], which[known]
        size[rows] = size_of[members[known]].sum(axis=1)
        part = design[:, which]  # (n, sums, length)
        gram = np.einsum("nsk,nsl->skl", part, part)
        rhs = np.einsum("nsk,n->sk", part, residual)
        # unit columns: a tiny ridge keeps a sum of (nearly) collinear columns solvable
        z = np.linalg.solve(gram + 1e-10 * np.eye(length), rhs[:, :, None])[:, :, 0]
        cost[rows] = total - np.einsum("sk,sk->s", z, rhs)
        reachable[rows] = (z >= 0).all(axis=1)
    keep = np.isnan(cost)
    estimated = np.flatnonzero(~keep)
    best = np.inf
    for level in np.unique(size[estimated]):
        members = estimated[size[estimated] == level]
        if reachable[members].any():
            best = min(best, float(cost[members[reachable[members]]].min()))
        keep[members] = cost[members] <= (1 + margin) * best + 1e-9 * total
    return [c for c, k in zip(combos, keep) if k]


def exchanged_terms(design: np.ndarray, residual: np.ndarray, model: tuple[float, tuple[int, ...]],
                    owner: np.ndarray, nonlinear: np.ndarray, room: int) -> tuple[float, tuple[int, ...]]:
    """``model`` (its squared error and its columns of ``design``) after exchanging one column at
    a time for the one that fits best beside the others (of another item, ``owner`` naming each
    column's; with a non-negative coefficient; within ``room`` fitted exponents), for as long as
    that lowers the error: sequential replacement, which undoes an early greedy choice."""
    sse, columns = model
    improved = True
    while improved:
        improved = False
        for k in range(len(columns)):
            rest = columns[:k] + columns[k + 1:]
            used = [int(owner[c]) for c in rest]
            gain, sign = gains(design, residual, rest)
            spent = int(nonlinear[used].sum()) if used else 0
            allowed = (sign >= 0) & (nonlinear[owner] + spent <= room) & ~np.isin(owner, used)
            if not allowed.any():
                continue
            score = np.where(allowed, gain, -np.inf)
            best = int(np.argmax(score))
            new = residual_sse(design, residual, rest) - float(score[best])
            if new < sse * (1 - 1e-9) and best != columns[k]:
                sse, columns, improved = new, (*rest, best), True
    return sse, columns


def residual_sse(design: np.ndarray, residual: np.ndarray, columns: tuple[int, ...]) -> float:
    """The squared residual of the least-squares fit of ``residual`` by ``columns``."""
    if columns:
        basis = orthonormal(design[:, list(columns)])
        residual = residual - basis @ (basis.T @ residual)
    return float(residual @ residual)


def best_per_item(owner: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The column with the highest score of each item (columns are grouped by item)."""
    if len(owner) < 2 or bool((owner[1:] > owner[:-1]).all()):
        return np.arange(len(owner))  # one column per item
    order = np.lexsort((-score, owner))
    first = np.r_[True, owner[order][1:] != owner[order][:-1]]
    return order[first]


def orthonormal(columns: np.ndarray) -> np.ndarray:
    if columns.shape[1] == 0:
        return columns
    q, r = np.linalg.qr(columns)
    keep = np.abs(np.diag(r)) > 1e-10 * max(float(np.abs(np.diag(r)).max()), 1e-300)
    return q[:, keep]
