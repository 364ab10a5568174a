"""Small bounded least-squares problems, many at once: the closed-form part of every fit.

Each problem minimises zᵀ·gram·z − 2·rhsᵀz within [low, high], with ``gram`` symmetric positive
definite (the ridge term sees to that); :func:`solve_bounded` takes a stack of them.
"""

from __future__ import annotations

import itertools

import numpy as np


def solve_bounded(gram: np.ndarray, rhs: np.ndarray, low: np.ndarray, high: np.ndarray,
                  start: np.ndarray | None = None) -> np.ndarray:
    """Minimise zᵀ·gram·z − 2·rhsᵀz within [low, high] for each of S small problems.

    A batched active-set method (clamp what leaves the bounds, free what the gradient pulls
    back inside), begun from the bounds that the unconstrained solution ``start`` breaks, settles
    almost every problem in one or two batched solves; the few that do not are solved by
    exhaustive enumeration.
    """
    size, m = rhs.shape
    z = np.zeros((size, m))
    todo = np.arange(size)
    at_low = np.zeros((size, m), dtype=bool) if start is None else start < low
    at_high = np.zeros((size, m), dtype=bool) if start is None else (start > high) & ~at_low
    eye = np.eye(m, dtype=bool)
    for _ in range(2 * m + 2):
        g, r, lo, hi = gram[todo], rhs[todo], low[todo], high[todo]
        clamped = at_low | at_high
        system = np.where(clamped[:, :, None], eye[None], np.where(clamped[:, None, :], 0.0, g))
        bound = np.where(at_low, lo, hi)
        free_rhs = r - np.einsum("smk,sk->sm", g, np.where(clamped, bound, 0.0))
        trial = np.linalg.solve(system, np.where(clamped, bound, free_rhs)[:, :, None])[:, :, 0]
        below, above = (trial < lo) & ~clamped, (trial > hi) & ~clamped
        gradient = np.einsum("smk,sk->sm", g, trial) - r
        wrong_low = at_low & (gradient < -1e-12 * (1 + np.abs(r)))
        wrong_high = at_high & (gradient > 1e-12 * (1 + np.abs(r)))
        unsettled = (below | above | wrong_low | wrong_high).any(axis=1)
        z[todo[~unsettled]] = trial[~unsettled]
        todo = todo[unsettled]
        if not todo.size:
            return z
        at_low = (at_low | below)[unsettled] & ~wrong_low[unsettled]
        at_high = (at_high | above)[unsettled] & ~wrong_high[unsettled]
    z[todo] = _bounded_quadratic(gram[todo], rhs[todo], low[todo], high[todo])
    return z


def _bounded_quadratic(gram: np.ndarray, rhs: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Exact minimiser of zᵀ·gram·z − 2·rhsᵀz within [low, high], for each of S small problems.

    The objective is strictly convex, so the optimum is the unconstrained optimum of its free
    variables with the others at a bound: trying every assignment of free / at-low / at-high and
    keeping the best feasible one is exact. With at most a handful of terms that is a few dozen
    small batched solves, far cheaper than a general bounded solver per member.
    """
    size, m = rhs.shape
    best = np.full((size, m), np.nan)
    best_cost = np.full(size, np.inf)
    finite_low, finite_high = np.isfinite(low).any(axis=0), np.isfinite(high).any(axis=0)
    states = [["free"] + (["low"] if finite_low[j] else []) + (["high"] if finite_high[j] else [])
              for j in range(m)]
    for pattern in itertools.product(*states):
        free = np.array([s == "free" for s in pattern])
        z = np.where(np.array([s == "low" for s in pattern]), low, high)
        z[:, free] = 0.0 if free.all() else z[:, free]
        if free.any():
            fixed = ~free
            reduced = rhs[:, free] - np.einsum("sfc,sc->sf", gram[:, free][:, :, fixed], np.where(fixed, z, 0)[:, fixed])
            z[:, free] = np.linalg.solve(gram[:, free][:, :, free], reduced[:, :, None])[:, :, 0]
        tolerance = 1e-10 * (1 + np.abs(z))
        feasible = ((z >= low - tolerance) | ~np.isfinite(low)).all(axis=1) & ((z <= high + tolerance) | ~np.isfinite(high)).all(axis=1)
        with np.errstate(invalid="ignore"):
            cost = np.einsum("sm,smk,sk->s", z, gram, z) - 2 * np.einsum("sm,sm->s", rhs, z)
        better = feasible & np.isfinite(z).all(axis=1) & (cost < best_cost)
        best[better], best_cost[better] = np.clip(z[better], low[better], high[better]), cost[better]
    return best


def least_squares(gram: np.ndarray, rhs: np.ndarray, low: np.ndarray, high: np.ndarray,
                  valid: np.ndarray | None = None) -> np.ndarray:
    """Solve a stack of problems ``(S, m, m)``, ``(S, m)``: unconstrained first, then bounded
    for the ``valid`` ones whose solution leaves [low, high]."""
    if rhs.shape[1] == 0:
        return np.zeros(rhs.shape)
    z = np.linalg.solve(gram, rhs[:, :, None])[:, :, 0]
    outside = ((z < low - 1e-12 * np.abs(low)) | (z > high)).any(axis=1)
    if valid is not None:
        outside &= valid
    if outside.any():
        z[outside] = solve_bounded(gram[outside], rhs[outside], low[outside], high[outside], z[outside])
    return z


def ridge(gram: np.ndarray, rhs: np.ndarray, norm: np.ndarray | float, low: np.ndarray, high: np.ndarray,
          regularization: float, valid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The regularised fit of a stack of problems given by their normal equations.

    ``gram`` ``(S, m, m)``, ``rhs`` ``(S, m)`` and ``norm`` are the row means of ``dᵢdⱼ``, ``dᵢt``
    and ``t²`` for relative columns ``d`` and target ``t``. Columns are scaled to unit RMS, so the
    ridge penalty ``regularization · Σ zᵢ²`` is on each term's share of the target (the cost of
    :mod:`exprsearch.fit`). Returns the coefficients (in the units of ``d``, within [low, high]),
    the cost and the mean squared error.
    """
    m = rhs.shape[1]
    scale = np.sqrt(np.einsum("smm->sm", gram))
    scale[~(scale > 0)] = 1.0
    gram = gram / (scale[:, :, None] * scale[:, None, :]) + regularization * np.eye(m)
    rhs = rhs / scale
    z = least_squares(gram, rhs, low * scale, high * scale, valid)
    cost = norm - 2 * np.einsum("sm,sm->s", rhs, z) + np.einsum("sm,smk,sk->s", z, gram, z)
    mse = np.maximum(cost - regularization * np.sum(z**2, axis=1), 0.0)
    return z / scale, cost, mse
