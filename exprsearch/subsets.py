"""Least-squares arithmetic for choosing sums of term columns (:mod:`exprsearch.screen`): the
gain of adding a column to a model, the best pairs of all, exchanging a model's terms, the sums
that could reach the Pareto front, copies of one column, and orthonormal bases. Columns are
relative, weighted and of unit length."""

from __future__ import annotations

from collections import Counter

import numpy as np

PAIR_COLUMNS = 4000  # columns whose every pair best_pairs solves, at most (those best alone)
ANCHORED_COLUMNS = 500  # columns whose pairs anchored_triples solves beside each anchor (those best beside it)


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
        cost[rows], reachable[rows] = solved(design, residual, which)
    keep = np.isnan(cost)
    estimated = np.flatnonzero(~keep)
    best = np.inf
    for level in np.unique(size[estimated]):
        members = estimated[size[estimated] == level]
        if reachable[members].any():
            best = min(best, float(cost[members[reachable[members]]].min()))
        keep[members] = cost[members] <= (1 + margin) * best + 1e-9 * total
    return [c for c, k in zip(combos, keep) if k]


def solved(design: np.ndarray, residual: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The squared error of each sum of columns ``which`` (one row of column indices per sum)
    fitted to ``residual`` by least squares, and whether its coefficients are all non-negative."""
    part = design[:, which]  # (n, sums, length)
    gram = np.einsum("nsk,nsl->skl", part, part)
    rhs = np.einsum("nsk,n->sk", part, residual)
    # unit columns: a tiny ridge keeps a sum of (nearly) collinear columns solvable
    z = np.linalg.solve(gram + 1e-10 * np.eye(which.shape[1]), rhs[:, :, None])[:, :, 0]
    return float(residual @ residual) - np.einsum("sk,sk->s", z, rhs), (z >= 0).all(axis=1)


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
            best = first_best(score, float(residual @ residual))
            new = residual_sse(design, residual, rest) - float(score[best])
            if new < sse * (1 - 1e-9) and best != columns[k]:
                sse, columns, improved = new, (*rest, best), True
    return sse, columns


TIE = 1e-9  # gains closer than this share of the residual's squares are one gain (terms alike here)


def first_best(score: np.ndarray, total: float) -> int:
    """The first column whose score is within :data:`TIE` of the best: of columns that fit alike
    (collinear beside the model) the order of the columns decides, not the last bits of the
    arithmetic, which another machine's rounding or a nudge of 1e-12 to the data changes."""
    top = float(score.max())
    return int(np.flatnonzero(score >= top - TIE * max(total, abs(top)))[0])


def best_pairs(design: np.ndarray, residual: np.ndarray, owner: np.ndarray, nonlinear: np.ndarray, room: int,
               columns: np.ndarray, count: int, share: int = 2, chunk: int = 128) -> list[tuple[float, tuple[int, int]]]:
    """The ``count`` pairs of ``columns`` (indices into ``design``; of two items, ``owner``
    naming each column's) that fit ``residual`` best together with non-negative coefficients and
    within ``room`` fitted exponents: their squared error and columns, best first, one pair per
    pair of items and no item in more than ``share`` of them (else the best pairs are one good
    term beside every shape of another factor). Every pair is solved in closed form (unit
    columns), a block at a time, so that two terms that each fit poorly alone but well together
    are found, where forward selection passes the first of them over."""
    total = float(residual @ residual)
    x = np.ascontiguousarray(design[:, columns].T)  # a row per column: 4× faster products
    a = x @ residual
    own, cost = owner[columns], nonlinear[owner[columns]]
    shared_owner, any_cost = len(np.unique(own)) < len(own), bool(cost.any())
    found: dict[tuple[int, int], tuple[float, int, int]] = {}
    for start in range(0, len(columns), chunk):
        end = min(start + chunk, len(columns))
        r = x[:end] @ x[start:end].T  # every pair (i, j) with i < j < end and j >= start
        left, right = a[:end, None], a[None, start:end]
        # the two coefficients times det are u = left - r·right and v = right - r·left; computed
        # in place, one block-sized array reused (a third faster than a new array per step)
        gain = r * right
        bad = gain > left  # u < 0: the sign of a difference of floats is exact
        np.multiply(r, left, out=gain)
        np.subtract(right, gain, out=gain)  # v
        bad |= gain < 0
        det = np.subtract(1.0, np.multiply(r, r, out=r), out=r)
        bad |= det <= 1e-8  # det ~ 0: (nearly) one column twice
        with np.errstate(all="ignore"):
            np.multiply(gain, gain, out=gain)
            gain /= det
            gain += left * left
        bad[start:end] |= np.tri(end - start, dtype=bool)  # i >= j
        if shared_owner:
            bad |= own[:end, None] == own[None, start:end]
        if any_cost or room < 0:
            bad |= cost[:end, None] + cost[None, start:end] > room
        gain[bad] = -np.inf
        flat = gain.ravel()
        top = np.argpartition(-flat, 8 * count)[: 8 * count] if flat.size > 8 * count else np.arange(flat.size)
        for k in top[np.isfinite(flat[top])].tolist():
            i, j = divmod(k, end - start)
            i, j = int(columns[i]), int(columns[start + j])
            key = (min(owner[i], owner[j]), max(owner[i], owner[j]))
            if key not in found or flat[k] > found[key][0]:
                found[key] = (float(flat[k]), i, j)
    best, times = [], Counter()
    for g, i, j in sorted(found.values(), key=lambda g: (-g[0], g[1], g[2])):
        if times[owner[i]] < share and times[owner[j]] < share:
            best.append((total - g, (i, j)))
            times.update((owner[i], owner[j]))
            if len(best) == count:
                break
    return best


def anchored_triples(design: np.ndarray, residual: np.ndarray, owner: np.ndarray, nonlinear: np.ndarray, room: int,
                     columns: np.ndarray, anchors: list[int], count: int,
                     limit: int = ANCHORED_COLUMNS) -> list[tuple[float, tuple[int, int, int]]]:
    """For each column of ``anchors``, the ``count`` pairs of ``columns`` that fit ``residual`` best
    beside it (:func:`best_pairs` on what the anchor leaves; of the ``limit`` columns that fit it
    best alone there), each triple with non-negative coefficients: their squared error and
    columns, best first. Three terms of which no two fit well together are found from any one of
    them that the beam holds (the partners of the random laws' triples ranked 308th or better
    beside their anchor)."""
    found: dict[frozenset, tuple[float, tuple[int, int, int]]] = {}
    for a in anchors:
        anchor = design[:, a]
        rest = columns[owner[columns] != owner[a]]
        part = design[:, rest] - np.outer(anchor, anchor @ design[:, rest])
        norms = np.sqrt(np.einsum("nc,nc->c", part, part))
        live = norms > 1e-6
        rest, part = rest[live], part[:, live] / norms[live]
        left = residual - anchor * float(anchor @ residual)
        if len(rest) > limit:
            keep = np.sort(np.argsort(-np.abs(part.T @ left), kind="stable")[:limit])
            rest, part = rest[keep], part[:, keep]
        for _, (i, j) in best_pairs(part, left, owner[rest], nonlinear, room - int(nonlinear[owner[a]]),
                                    np.arange(len(rest)), count, 2):
            triple = (a, int(rest[i]), int(rest[j]))
            x = design[:, list(triple)]
            z, *_ = np.linalg.lstsq(x, residual, rcond=None)
            if (z < 0).any():
                continue
            sse = float(np.sum((residual - x @ z) ** 2))
            key = frozenset(int(owner[c]) for c in triple)
            if key not in found or sse < found[key][0]:
                found[key] = (sse, triple)
    return sorted(found.values())


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


def column_ids(design: np.ndarray) -> list[int]:
    """An id per column of ``design``, shared by columns equal to 9 decimals (unit columns): a
    fitted exponent at a grid value that is a fixed shape (``n**k`` at 2 and ``n**2``) is a copy."""
    rounded = np.ascontiguousarray(np.round(design.T, 9) + 0.0)  # + 0.0: -0.0 and 0.0 alike
    rows = rounded.view(np.dtype((np.void, rounded.dtype.itemsize * rounded.shape[1]))).ravel()
    return np.unique(rows, return_inverse=True)[1].ravel().tolist()


def first_columns(same: list[int], design: np.ndarray, residual: np.ndarray,
                  wanted: np.ndarray) -> tuple[np.ndarray, int]:
    """The ``wanted`` columns, one of each distinct content (the first), and at most
    :data:`PAIR_COLUMNS` of them, those that fit ``residual`` best alone: the exact scan of pairs;
    and how many there were before that cap."""
    ids = np.asarray(same)
    first = np.sort(np.unique(ids, return_index=True)[1]) if len(ids) else np.zeros(0, dtype=np.intp)
    first = first[wanted[first]]
    found = len(first)
    if found > PAIR_COLUMNS:
        fit = np.abs(design[:, first].T @ residual)
        first = np.sort(first[np.argsort(-fit, kind="stable")[:PAIR_COLUMNS]])
    return first, found


def distinct_models(models: list[tuple], same: list[int]) -> list[tuple]:
    """``models`` (ranked) without the later copies of one set of columns: ten places of the
    seeded sums held {n², b·p^k} three ways (``n**k`` at 2, ``n**2·p**k`` at 0), and the sum the
    law grows from, {n², 1/p}, was eighteenth."""
    seen, kept = set(), []
    for model in models:
        key = frozenset(same[c] for c in model[2])
        if key not in seen:
            seen.add(key)
            kept.append(model)
    return kept
