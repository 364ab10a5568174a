"""Fits along the lines of a measurement grid, where one factor varies and the others stay put:
how Extra-P's multi-parameter modeler judges each factor's shapes on its own before it combines
them, and how :mod:`exprsearch.screen` ranks the transforms of a factor."""

from __future__ import annotations

import numpy as np

from . import shared
from .rank import f_survival
from .rowsets import row_groups

SHOWN = 0.01  # a factor whose levels differ by more than the repetitions' noise at this level shows


def lines(configs: np.ndarray, own: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Each configuration's line (the values of the other factors), and whether its line
    varies ``own`` over three or more values; all one line where none does (read-only arrays,
    kept per grid: a profile's series share their grid)."""
    known = shared.tables("lines", (configs.shape, configs.tobytes()), 1)[0]
    if tuple(own) not in known:
        found = _lines(configs, own)
        for array in found:
            array.setflags(write=False)
        known[tuple(own)] = found
    return known[tuple(own)]


def _lines(configs: np.ndarray, own: list[int]) -> tuple[np.ndarray, np.ndarray]:
    others = [i for i in range(configs.shape[1]) if i not in own]
    _, line = row_groups(configs[:, others])
    # the distinct values of ``own`` on each line: its distinct (line, values) pairs, counted at once
    first, _ = row_groups(np.column_stack([line, configs[:, own]]))
    distinct = np.bincount(line[first], minlength=line.max() + 1)
    usable = distinct[line] >= 3
    if not usable.any():
        return np.zeros(len(configs), dtype=int), np.ones(len(configs), dtype=bool)
    return line, usable


FLAT = 1e-20  # a column whose variation along a line is this small a share of its squares there is flat: rounding
EXACT = 1e-9  # a sum of squared errors this small a share of the target's variation is rounding (the sums below cancel to ~1e-13 of it)


def line_scores(columns: np.ndarray, owner: np.ndarray, count: int, intercept: np.ndarray, target: np.ndarray,
                line: np.ndarray) -> np.ndarray:
    """Each of ``count`` transforms' error along its factor's lines (its columns: those whose
    ``owner`` is its index), fitted alone (an intercept and a non-negative slope per line) or
    beside the one other transform that helps it most (an intercept and two non-negative slopes
    per line): a law falling as 1/p and rising as p, or a sum of two products, needs both to show
    its shape. A transform without a column scores infinity."""
    m = columns.shape[1]
    alone = np.zeros(m)
    paired = np.zeros((m, m))
    testable = 0  # lines with four or more points, where a pair leaves a point to test it
    spread = 0.0  # the target's variation about each line's intercept: what an exact fit's error is rounding of
    for g in np.unique(line):
        rows = line == g
        u, x, t = intercept[rows], columns[rows], target[rows]
        xc = x - np.outer(u, (u @ x) / (u @ u))
        tc = t - u * (u @ t) / (u @ u)
        gram, cross, total = xc.T @ xc, xc.T @ tc, float(tc @ tc)
        spread += total
        a = np.diag(gram)
        # a column that does not vary along the line beyond rounding (the constant shape x^0 beside
        # the intercept) has no slope there: else a slope of 1e16 fits the rounding, as a pair
        varies = a > FLAT * np.einsum("ij,ij->j", x, x)
        with np.errstate(all="ignore"):
            slope = np.where(varies, np.maximum(cross / a, 0.0), 0.0)
            single = total - 2 * slope * cross + slope**2 * a
            det = a[:, None] * a[None, :] - gram**2
            s1 = (a[None, :] * cross[:, None] - gram * cross[None, :]) / det
            s2 = (a[:, None] * cross[None, :] - gram * cross[:, None]) / det
            both = total - s1 * cross[:, None] - s2 * cross[None, :]
        fallback = np.minimum(single[:, None], single[None, :])  # a slope would be negative: one alone
        ok = (s1 >= 0) & (s2 >= 0) & (det > 1e-12 * a[:, None] * a[None, :]) & np.isfinite(both) \
            & varies[:, None] & varies[None, :]
        alone += single
        if rows.sum() >= 4:
            paired += np.where(ok, both, fallback)
            testable += 1
        else:
            paired += fallback
    paired[owner[:, None] == owner[None, :]] = np.inf
    # A pair spends one more slope on every line: compare by BIC, so that noise a second shape
    # happens to fit does not outrank a shape that fits alone.
    n, lines = len(target), len(np.unique(line))
    if not testable:
        paired[:] = np.inf
    # Errors below rounding of the target's variation are exact fits, equal: else on noise-free
    # data the last bits ranked them, and any shape beside the true one (at a slope of 0) fit "better"
    exact = max(EXACT * spread, 1e-300)
    with np.errstate(divide="ignore"):
        alone_bic = n * np.log(np.maximum(alone, exact) / n) + 2 * lines * np.log(n)
        pair_bic = (n * np.log(np.maximum(paired.min(axis=1, initial=np.inf), exact) / n)
                    + (2 * lines + testable) * np.log(n))
    scores = np.full(count, np.inf)
    np.minimum.at(scores, owner, np.minimum(alone_bic, pair_bic))
    return scores


def shows(levels: np.ndarray, line: np.ndarray, mean: np.ndarray, count: np.ndarray, margin: float,
          noise: tuple[float, int] | None = None) -> bool:
    """Whether a factor shows in the data: the configurations' mean times (``mean``, of ``count``
    runs each) differ between the factor's ``levels`` within its lines by more than they differ
    at one level (an analysis of variance of the log times, judged by BIC with ``margin``). Where
    every level of a line is one configuration (a grid), the levels' spread is held against
    ``noise``, the relative variance of one run and its degrees of freedom from repetitions (an
    F-test at :data:`SHOWN`); without it nothing tells the levels apart, and the factor counts as
    shown."""
    values = np.log(mean)
    _, level = row_groups(np.column_stack([line, levels]))

    def misfit(groups: np.ndarray) -> float:
        center = np.bincount(groups, weights=count * values) / np.bincount(groups, weights=count)
        return float(np.sum(count * (values - center[groups]) ** 2))

    if level.max() + 1 == len(values):
        if noise is None or noise[1] < 2 or noise[0] <= 0:
            return True
        # each level of a line is one configuration, its mean of ``count`` repetitions: the
        # levels' spread about their line's mean against what the repetitions' noise would leave
        dof = len(values) - (line.max() + 1)
        return dof < 1 or f_survival(dof, noise[1], misfit(line) / dof / noise[0]) < SHOWN

    n = len(values)
    within, between = misfit(level), misfit(line)
    if within <= 0:
        return True
    return (n * np.log(between / within) - (level.max() + 1 - (line.max() + 1)) * np.log(n)) > margin


def ranked(scores: list[float], keys: list[tuple], rel: float = 1e-9) -> list[int]:
    """Indices by score, lowest first, where scores within rounding of each other (``rel`` of their
    size) count as equal and ``keys`` order them. Scores tie by construction (the two shapes of the
    best pair on a line share its score; on lines of three points several pairs fit exactly), and
    the last bits of a tie differ between machines and libraries; the ranking must not."""
    order = sorted(range(len(scores)), key=lambda i: (scores[i], keys[i]))
    groups: list[list[int]] = []
    for i in order:
        first = scores[groups[-1][0]] if groups else None
        if first is not None and np.isfinite(first) and scores[i] - first <= rel * max(abs(first), 1.0):
            groups[-1].append(i)
        else:
            groups.append([i])
    return [i for group in groups for i in sorted(group, key=lambda i: keys[i])]
