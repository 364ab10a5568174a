"""How well a fitted law holds up: its error on held-out rows, and how well the data pin down
each of its terms. Cross-validation and the t-values refit only the linear coefficients
(exponents keep their values); the held-out largest values refit the exponents too, all laws of
the Pareto front polished together, so that the rows held out have no say in the law tested."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import lockstep
from .compile import CompiledCandidate, Compiler
from .fit import Fit, FitSettings, _Problem
from .pooled import pool


def cross_validate(
    compiled: CompiledCandidate, y: np.ndarray, fitted: Fit, folds: np.ndarray,
    settings: FitSettings = FitSettings(),
) -> float:
    """Mean absolute relative error on held-out folds (``folds`` gives each row's fold).

    The linear coefficients are refitted on the other folds; nonlinear constants stay at their
    full-data values, which keeps this cheap enough to run on every law of the front.
    """
    return float(np.mean(_held_out(compiled, y, fitted, folds, np.unique(folds), settings)))


def predictions(compiled: CompiledCandidate, fitted: Fit) -> np.ndarray:
    """The fitted law's value on every row, from the compiled columns (no new compilation)."""
    candidate = compiled.candidate
    theta = np.array([fitted.values[s.name] for s in candidate.nonlinear], dtype=float).reshape(-1, 1)
    basis, offset = compiled.design(theta)
    coef = np.array([fitted.values[names[t.coefficient]] for t, names in zip(candidate.terms, candidate.names)
                     if t.coefficient is not None], dtype=float)
    with np.errstate(all="ignore"):
        return basis[0] @ coef + offset[0]


def holdouts(
    compiled: Sequence[CompiledCandidate], y: np.ndarray, fits: Sequence[Fit], tops: Sequence[np.ndarray],
    settings: FitSettings = FitSettings(), compiler: Compiler | None = None,
    configurations: np.ndarray | None = None,
) -> list[float | None]:
    """Each law's mean absolute relative error on the rows of each mask in ``tops`` (held out in
    turn), refitted on the others: its exponents polished from their full-data values (all laws
    together, :func:`exprsearch.lockstep.polish`), then its coefficients. Kept at their full-data
    values the exponents would be fitted to the held-out rows too. Infinite where a refit drops a
    term that varies (its coefficient at zero) which the full fit has: the term then rests on the
    held-out rows alone, so they cannot check what it predicts beyond them. Infinite too, with
    ``configurations`` (each row's), where a law with exponents has more constants than the
    configurations kept: its refit then fits them all exactly along a range of exponents, so they
    stay where the full fit, held-out rows included, put them. None without ``tops``.
    With the ``compiler`` of ``compiled``, repeats of a configuration among the rows kept are
    pooled for the polish (:mod:`exprsearch.pooled`; the squared loss)."""
    if not tops:
        return [None] * len(fits)
    refits = {}
    laws = [i for i, f in enumerate(fits) if f.candidate.nonlinear]
    for t, top in enumerate(tops):
        kept = np.flatnonzero(~top)
        pooled = None if compiler is None else pool([c[kept] for c in compiler.columns], y[kept], settings.loss)
        if pooled is None:
            polished = lockstep.polish([compiled[i] for i in laws], y, settings, [fits[i] for i in laws],
                                       [kept] * len(laws))
        else:
            part = compiler.subset(kept[pooled.rows])
            polished = lockstep.polish([part.compile(fits[i].candidate) for i in laws], pooled.y, settings,
                                       [fits[i] for i in laws], pooled=pooled)
        refits.update(((i, t), f) for i, f in zip(laws, polished))
    kept = [None if configurations is None else len(np.unique(configurations[~top])) for top in tops]
    return [float(np.mean([math.inf if _unchecked(f, kept[t]) else _holdout(compiled[i], y, f, top, settings,
                                                                           refits.get((i, t)))
                           for t, top in enumerate(tops)])) for i, f in enumerate(fits)]


def _unchecked(fitted: Fit, configurations: int | None) -> bool:
    """Whether a refit on ``configurations`` configurations leaves the law's exponents free: with
    more constants than configurations it fits every one of them exactly along a range of
    exponents, so what it predicts beyond them is what the full fit chose."""
    candidate = fitted.candidate
    return configurations is not None and bool(candidate.nonlinear) and candidate.n_constants > configurations


def _holdout(compiled: CompiledCandidate, y: np.ndarray, fitted: Fit, test: np.ndarray, settings: FitSettings,
             refit: Fit | None) -> float:
    values = fitted.values if refit is None else {**fitted.values, **refit.values}
    problem, (design, scale, target, valid) = _relative(compiled, y, values, settings)
    z = problem.least_squares(design[:, ~test], target[:, ~test], scale, valid)[0]
    names = [s.name for s in compiled.candidate.linear]
    terms = [t for t in compiled.candidate.terms if t.coefficient is not None]
    if any(t.varies and z[j] == 0 and fitted.values[names[j]] != 0 for j, t in enumerate(terms)):
        return math.inf
    return float(np.mean(np.abs(design[0, test] @ z - target[0, test])))


def _relative(compiled: CompiledCandidate, y: np.ndarray, values: dict, settings: FitSettings):
    """The law's least-squares problem and its relative design at the exponents in ``values``."""
    problem = _Problem(compiled, y, settings.regularization)
    theta = np.array([values[s.name] for s in compiled.candidate.nonlinear], dtype=float).reshape(-1, 1)
    return problem, problem.relative(theta)


def _held_out(compiled, y, fitted, folds, which, settings) -> np.ndarray:
    problem, (design, scale, target, valid) = _relative(compiled, y, fitted.values, settings)
    errors = np.full(len(y), np.nan)
    for fold in which:
        train, test = folds != fold, folds == fold
        z = problem.least_squares(design[:, train], target[:, train], scale, valid)
        errors[test] = np.abs(design[0, test] @ z[0] - target[0, test])
    return errors


def t_values(compiled: CompiledCandidate, y: np.ndarray, fitted: Fit, settings: FitSettings = FitSettings(),
             configurations: np.ndarray | None = None) -> np.ndarray:
    """|coefficient| / standard error of each linear coefficient (exponents held at their
    values), from the relative least-squares design: how well the data pin each term down.
    ``configurations`` (each row's), where the law misses them by more than their runs' noise:
    the error is then the lack-of-fit mean square, as in a fit of the configurations' means,
    since repeated runs of a configuration cannot pin down a term against a misfit they share."""
    _, (design, scale, target, valid) = _relative(compiled, y, fitted.values, settings)
    names = [s.name for s in compiled.candidate.linear]
    if not valid[0] or not names:
        return np.zeros(len(names))
    x = design[0] * scale[0]  # relative, unscaled: columns multiply the coefficients themselves
    coef = np.array([fitted.values[n] for n in names])
    residual = x @ coef - target[0]
    dof = max(len(y) - compiled.candidate.n_constants, 1)
    sigma2 = float(residual @ residual) / dof
    if configurations is not None:
        _, group, runs = np.unique(configurations, return_inverse=True, return_counts=True)
        means = np.bincount(group, weights=residual) / runs
        lack_dof = len(runs) - compiled.candidate.n_constants
        if lack_dof >= 1:
            sigma2 = max(sigma2, float(runs @ means**2) / lack_dof)
    try:
        covariance = sigma2 * np.linalg.pinv(x.T @ x)
    except np.linalg.LinAlgError:
        return np.zeros(len(names))
    error = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    with np.errstate(all="ignore"):
        t = np.where(error > 0, np.abs(coef) / error, np.inf)
    return np.where(np.abs(coef) > 0, t, 0.0)
