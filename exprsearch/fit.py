"""Fit a compiled candidate's constants by minimising a regularised relative-error cost.

The cost of constants θ on measurements y is

    J(θ) = mean(((f(x; θ) − y) / y)²) + λ · Σᵢ (sᵢ · cᵢ)²

where cᵢ are the linear coefficients and sᵢ = rms(gᵢ / y) is the relative size of the basis
column gᵢ they multiply, so the penalty is a ridge on each term's share of the target and does
not depend on units. Linear coefficients are solved in closed form (variable projection); only
the nonlinear constants (exponents) are searched by differential evolution. See docs/method.md.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .candidates import Candidate
from .compile import CompiledCandidate
from .errors import SettingsError, number, whole
from .linear import least_squares, ridge
from .polish import polish_lbfgsb, polish_stencil
from .pooled import Pooled

INVALID_COST = 1e10  # cost given to constants whose predictions are not finite
LOSSES = ("squared", "huber", "absolute")


@dataclass(frozen=True)
class FitSettings:
    """How constants are fitted; ``plain_de`` searches every constant by DE (for comparison)."""

    seed: int = 0
    regularization: float = 1e-6
    popsize: int = 10
    maxiter: int = 60
    tol: float = 1e-3
    plain_de: bool = False
    loss: str = "squared"  # or "huber", "absolute": robust to outliers (IRLS on relative errors)
    robust_iterations: int = 20
    grid: int = 61  # values of a lone nonlinear constant tried by the batched fit
    prune_margin: float | None = 0.1  # refine by DE only what may come within this of the front; None: all

    def __post_init__(self) -> None:
        whole("seed (--seed)", self.seed, 0, 2**32 - 1)
        # above zero: it keeps the normal equations of collinear terms solvable (at 0 they are singular)
        number("regularization", self.regularization, 0.0, strict=True)
        whole("popsize", self.popsize, 1)
        whole("maxiter", self.maxiter, 1)
        number("tol", self.tol, 0.0, strict=True)
        if self.loss not in LOSSES:
            raise SettingsError(f"loss (--loss) must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        whole("robust_iterations", self.robust_iterations, 1)
        whole("grid", self.grid, 3)
        if self.prune_margin is not None:
            number("prune_margin", self.prune_margin, 0.0)


@dataclass(frozen=True)
class Fit:
    """Fitted constants of one candidate, or the reason it was rejected (``ok`` False)."""

    candidate: Candidate
    values: dict[str, float] = field(default_factory=dict)
    cost: float = float("inf")
    mse: float = float("inf")
    ok: bool = False
    reason: str = ""


def fit(
    compiled: CompiledCandidate, y: np.ndarray, settings: FitSettings = FitSettings(),
    rows: np.ndarray | None = None, start: Fit | None = None, refine: bool = True, local: bool = False,
    pooled: Pooled | None = None,
) -> Fit:
    """Fit ``compiled`` to targets ``y`` and check its predictions are finite and positive.

    ``rows`` (indices, repeats allowed) fits on those rows only, as a bootstrap resample does.
    With a robust ``settings.loss`` the fit is repeated with rows weighted by their residuals
    (iteratively reweighted least squares) until the weights settle. A ``start`` fit (from
    :func:`fit_separable`) is kept where differential evolution does not improve on it; with
    ``refine`` False its nonlinear constants are kept as they are and only the linear ones fitted;
    with ``local`` they are refined from the start alone, by the stencil polish (one) or L-BFGS-B
    (several; :mod:`exprsearch.lockstep` polishes many at once under the squared loss): a start
    from a grid is already in the right basin, and a search costs a hundred times more.
    ``pooled``: ``compiled`` and ``y`` are one row per configuration, pooled exactly
    (:mod:`exprsearch.pooled`; the squared loss only).
    """
    if settings.loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got '{settings.loss}'")
    if pooled is not None and (settings.loss != "squared" or rows is not None or len(y) != len(pooled.y)):
        raise ValueError("pooled rows are fitted whole, under the squared loss, with y = pooled.y")
    guess = None if start is None else _nonlinear_values(start)
    fitted, residual = _fit_once(compiled, y, settings, rows, pooled, guess, refine, local)
    if settings.loss == "squared":
        return fitted
    weights = None
    for _ in range(settings.robust_iterations):
        if not fitted.ok:
            break
        new = robust_weights(residual, settings.loss)
        if weights is not None and np.max(np.abs(new - weights)) < 1e-4:
            break
        weights = new
        fitted, residual = _fit_once(compiled, y, settings, rows, weights, guess, refine, local)
    return fitted


def verify(compiled: CompiledCandidate, y: np.ndarray, fitted: Fit, settings: FitSettings = FitSettings()) -> Fit:
    """Refit the linear coefficients of ``fitted`` at its nonlinear constants, one candidate at
    a time, and check its predictions are finite and positive (batched fits are not checked)."""
    return fit(compiled, y, settings, start=fitted, refine=False)


def _nonlinear_values(fitted: Fit) -> np.ndarray:
    return np.array([fitted.values[s.name] for s in fitted.candidate.nonlinear], dtype=float)


def robust_weights(residual: np.ndarray, loss: str, axis: int | None = None) -> np.ndarray:
    """IRLS weights for relative residuals: Huber (δ = 1.345 robust sd) or absolute error;
    ``axis=1`` weighs each row of a stack of residual vectors separately."""
    center = np.median(residual, axis=axis, keepdims=True)
    spread = np.maximum(1.4826 * np.median(np.abs(residual - center), axis=axis, keepdims=True), 1e-12)
    size = np.abs(residual)
    if loss == "huber":
        return np.minimum(1.0, 1.345 * spread / np.maximum(size, 1e-300))
    return 1.0 / np.maximum(size, 0.01 * spread)


def _fit_once(compiled, y, settings, rows, weights, guess, refine, local=False) -> tuple[Fit, np.ndarray]:
    """One fit; ``weights`` are the rows' IRLS weights, or the :class:`Pooled` rows' own."""
    candidate = compiled.candidate
    nonlinear_bounds = [candidate.bounds[s.name] for s in candidate.nonlinear]
    if not all(np.isfinite(b).all() for b in nonlinear_bounds):
        failed = Fit(candidate, reason="a nonlinear constant has an infinite bound; give it finite min and max")
        return failed, np.zeros(0)
    problem = _Problem(compiled, y, settings.regularization, rows, weights)
    if guess is not None and not refine:
        theta, coef = guess, None
    elif guess is not None and local and len(guess) == 1:
        low, high = np.array(nonlinear_bounds, dtype=float).T
        theta, coef = polish_stencil(problem.energy, guess, low, high, (high - low) / (settings.grid - 1)), None
    elif guess is not None and local:
        theta = polish_lbfgsb(lambda t: float(problem.energy(t[:, None])[0]), guess, nonlinear_bounds, problem.energy)
        coef = None
    elif settings.plain_de:
        theta, coef = problem.plain_de(settings, _seed(settings.seed, candidate))
    elif candidate.nonlinear:
        theta = problem.search_nonlinear(nonlinear_bounds, settings, _seed(settings.seed, candidate), guess)
        coef = None
    else:
        theta, coef = np.zeros(0), None
    return problem.result(theta, coef)


def _seed(seed: int, candidate: Candidate) -> int:
    """A per-candidate seed, so a candidate's fit does not depend on which others ran first."""
    return (seed * 1_000_003 + zlib.crc32(str(candidate).encode())) % (2**32)


REPEAT_TOLERANCE = 1e-4  # unit-RMS relative columns closer than this at every row are one column


def _repeated_columns(design: np.ndarray) -> bool:
    """Whether two columns of a scaled relative design ``(n, m)`` (each of unit RMS) are the
    same up to sign: a fitted exponent that lands on another term's shape (``p**k`` at k = 2
    beside ``p**2``) or on the constant (k = 0)."""
    live = [j for j in range(design.shape[1]) if np.any(design[:, j] != 0)]
    return any(min(np.max(np.abs(design[:, i] - design[:, j])), np.max(np.abs(design[:, i] + design[:, j])))
               < REPEAT_TOLERANCE for a, i in enumerate(live) for j in live[a + 1:])


class _Problem:
    """One candidate on one dataset: the relative design and the cost of constants."""

    def __init__(self, compiled: CompiledCandidate, y: np.ndarray, regularization: float,
                 rows: np.ndarray | None = None, weights: np.ndarray | Pooled | None = None) -> None:
        self.compiled = compiled
        self.candidate = compiled.candidate
        self.rows = rows
        self.pooled = weights if isinstance(weights, Pooled) else None
        self.constant = 0.0 if self.pooled is None else self.pooled.constant  # the cost pooling leaves out
        if self.pooled is not None:
            weights = self.pooled.weights
        self.root_weights = None if weights is None else np.sqrt(weights)
        self.y = y if rows is None else y[rows]
        self.lam = regularization
        bounds = [self.candidate.bounds[s.name] for s in self.candidate.linear]
        self.low = np.array([b[0] for b in bounds], dtype=float)
        self.high = np.array([b[1] for b in bounds], dtype=float)

    @property
    def reweighted(self) -> bool:
        """Whether the rows carry this fit's own IRLS weights (a robust loss), not pooled ones."""
        return self.root_weights is not None and self.pooled is None

    def relative(self, theta: np.ndarray, weighted: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Scaled relative design ``(S, n, m)``, its column scales, target ``(S, n)``, validity."""
        basis, offset = self.compiled.design(theta)
        if self.rows is not None:
            basis, offset = basis[:, self.rows], offset[:, self.rows]
        design = basis / self.y[None, :, None]
        target = 1.0 - offset / self.y[None, :]
        if weighted and self.root_weights is not None:
            design = design * self.root_weights[None, :, None]
            target = target * self.root_weights[None, :]
        valid = np.isfinite(design).all(axis=(1, 2)) & np.isfinite(target).all(axis=1)
        design[~valid] = 0.0
        target[~valid] = 0.0
        scale = np.sqrt(np.mean(design**2, axis=1))
        scale[~(scale > 0)] = 1.0
        return design / scale[:, None, :], scale, target, valid

    def solve(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Best coefficients (scaled), cost and mse for each column of ``theta`` ``(q, S)``."""
        design, scale, target, valid = self.relative(theta)
        z = self.least_squares(design, target, scale, valid)
        return (z, *self._cost(design, target, z, valid))

    def least_squares(self, design, target, scale, valid) -> np.ndarray:
        """Ridge solution of ``design · z ≈ target`` per member, within the coefficient bounds."""
        n, m = design.shape[1:]
        gram = np.einsum("snm,snk->smk", design, design) / n + self.lam * np.eye(m)
        rhs = np.einsum("snm,sn->sm", design, target) / n
        return least_squares(gram, rhs, self.low * scale, self.high * scale, valid)

    def _cost(self, design, target, z, valid) -> tuple[np.ndarray, np.ndarray]:
        residual = np.einsum("snm,sm->sn", design, z) - target
        mse = np.mean(residual**2, axis=1) + self.constant
        cost = mse + self.lam * np.sum(z**2, axis=1)
        bad = ~valid | ~np.isfinite(cost)
        cost[bad], mse[bad] = INVALID_COST, INVALID_COST
        return cost, mse

    def energy(self, theta: np.ndarray) -> np.ndarray:
        """The cost of each column of ``theta`` ``(q, S)``, as :meth:`solve` gives it, but from
        Gram blocks: columns that do not depend on the nonlinear constants enter once, so a
        population costs O(n·S·m) rather than O(n·S·m²) and no ``(S, n, m)`` design is built."""
        blocks = self._blocks
        return self.solve(theta)[1] if blocks is None else blocks.cost(theta, self)

    @cached_property
    def _blocks(self) -> _Blocks | None:
        return _Blocks.of(self)

    def search_nonlinear(self, bounds, settings: FitSettings, seed: int, guess: np.ndarray | None = None) -> np.ndarray:
        # imported here: 0.15 s of every start, and runs whose exponents all start from a grid never need it
        from scipy.optimize import differential_evolution

        energy = self.energy

        result = differential_evolution(
            energy, bounds, vectorized=True, updating="deferred", seed=seed,
            popsize=settings.popsize, maxiter=settings.maxiter, tol=settings.tol, polish=False,
        )
        best = polish_lbfgsb(lambda t: float(energy(t[:, None])[0]), result.x, bounds, energy)
        if guess is not None and energy(guess[:, None])[0] < energy(best[:, None])[0]:
            return guess
        return best

    def plain_de(self, settings: FitSettings, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """DE over every constant; infinite coefficient bounds become ±100 target-sized terms."""
        q = len(self.candidate.nonlinear)
        nl_bounds = [self.candidate.bounds[s.name] for s in self.candidate.nonlinear]
        middle = np.array([[(lo + hi) / 2] for lo, hi in nl_bounds]).reshape(q, 1)
        scale = self.relative(middle)[1][0]
        low = np.where(np.isfinite(self.low), self.low, -100 / scale)
        high = np.where(np.isfinite(self.high), self.high, 100 / scale)
        bounds = nl_bounds + list(zip(low, high))

        def energy(params: np.ndarray) -> np.ndarray:
            design, scale, target, valid = self.relative(params[:q])
            return self._cost(design, target, params[q:].T * scale, valid)[0]

        from scipy.optimize import differential_evolution

        result = differential_evolution(
            energy, bounds, vectorized=True, updating="deferred", seed=seed,
            popsize=settings.popsize, maxiter=settings.maxiter * 5, tol=settings.tol, polish=False,
        )
        best = polish_lbfgsb(lambda t: float(energy(t[:, None])[0]), result.x, bounds)
        return best[:q], best[q:]

    def result(self, theta: np.ndarray, coef: np.ndarray | None) -> tuple[Fit, np.ndarray]:
        """The checked fit at ``theta`` and its unweighted relative residuals (for IRLS)."""
        column = theta.reshape(-1, 1)
        design, scale, target, valid = self.relative(column)
        if coef is None:
            coef = self.least_squares(design, target, scale, valid)[0] / scale[0]
        cost, mse = self._cost(design, target, (coef * scale[0])[None, :], valid)
        names = [s.name for s in self.candidate.linear + self.candidate.nonlinear]
        values = dict(zip(names, [float(v) for v in (*coef, *theta)]))
        if not valid[0]:
            return Fit(self.candidate, values, reason=self._undefined_reason(column)), np.zeros(0)
        if _repeated_columns(design[0]):  # the ridge penalty favours a law written twice: it halves each coefficient
            return Fit(self.candidate, values, reason="with two terms that are one at their fitted exponents "
                       "(a simpler law written twice)"), np.zeros(0)
        plain, plain_scale, plain_target = (design, scale, target) if self.root_weights is None else \
            self.relative(column, weighted=False)[:3]
        residual = plain[0] @ (coef * plain_scale[0]) - plain_target[0]
        predicted = self.y * (1.0 + residual)
        bad = np.flatnonzero(~(predicted > 0))
        if bad.size:
            rows = ", ".join(str(r + 1) for r in self._data_rows(bad[:5]))
            return Fit(self.candidate, values, float(cost[0]), float(mse[0]),
                       reason=f"predicts zero or negative values at data rows {rows}"), residual
        return Fit(self.candidate, values, float(cost[0]), float(mse[0]), ok=True), residual

    def _data_rows(self, rows: np.ndarray) -> np.ndarray:
        """The data rows (from 0) that rows of this problem stand for."""
        return rows if self.pooled is None else self.pooled.rows[rows]

    def _undefined_reason(self, theta: np.ndarray) -> str:
        basis, offset = self.compiled.design(theta)
        for j, term in enumerate(self.candidate.basis):
            rows = np.flatnonzero(~np.isfinite(basis[0, :, j]))
            if rows.size:
                shown = ", ".join(str(r + 1) for r in self._data_rows(rows[:5]))
                return f"term {term} is undefined (NaN or infinite) at data rows {shown}"
        return "the law is undefined (NaN or infinite) on some rows"


@dataclass(frozen=True)
class _Blocks:
    """The parts of a candidate's normal equations that do not change with its nonlinear constants."""

    fixed: np.ndarray  # indices of the basis columns without nonlinear constants
    moving: np.ndarray  # and of those with
    design: np.ndarray  # relative (weighted) fixed columns, (n, len(fixed))
    target: np.ndarray  # relative (weighted) target, (n,)
    gram: np.ndarray
    rhs: np.ndarray
    norm: float
    valid: bool

    @staticmethod
    def of(problem: _Problem) -> _Blocks | None:
        """The blocks of ``problem``, or None when its offset depends on the nonlinear constants."""
        compiled = problem.compiled
        if any(not isinstance(o, np.ndarray) for o in compiled.offset):
            return None
        rows = slice(None) if problem.rows is None else problem.rows
        weight = np.ones(len(problem.y)) if problem.root_weights is None else problem.root_weights
        offset = sum((o[rows] for o in compiled.offset), np.zeros(len(problem.y)))
        fixed = np.array([j for j, b in enumerate(compiled.basis) if isinstance(b, np.ndarray)], dtype=np.intp)
        moving = np.array([j for j, b in enumerate(compiled.basis) if not isinstance(b, np.ndarray)], dtype=np.intp)
        with np.errstate(all="ignore"):
            design = np.column_stack([compiled.basis[j][rows] / problem.y * weight for j in fixed] or
                                     [np.zeros((len(problem.y), 0))])
            target = (1.0 - offset / problem.y) * weight
        valid = bool(np.isfinite(design).all() and np.isfinite(target).all())
        n = len(problem.y)
        return _Blocks(fixed, moving, design, target, design.T @ design / n, design.T @ target / n,
                       float(target @ target / n) + problem.constant, valid)

    def columns(self, theta: np.ndarray, problem: _Problem) -> np.ndarray:
        """The relative (weighted) columns that move with ``theta`` ``(q, S)``: ``(S, n, len(moving))``."""
        compiled, size = problem.compiled, theta.shape[1]
        rows = slice(None) if problem.rows is None else problem.rows
        weight = 1.0 if problem.root_weights is None else problem.root_weights
        values = [v[:, None] for v in theta]
        with np.errstate(all="ignore"):
            return np.stack([np.broadcast_to(compiled.basis[j](values), (size, compiled.n_rows))[:, rows]
                             for j in self.moving], axis=2) / problem.y[None, :, None] * np.reshape(weight, (1, -1, 1))

    def cost(self, theta: np.ndarray, problem: _Problem) -> np.ndarray:
        n, size, m = len(problem.y), theta.shape[1], len(problem.compiled.basis)
        if not self.valid:
            return np.full(size, INVALID_COST)
        moving = self.columns(theta, problem)
        valid = np.isfinite(moving).all(axis=(1, 2))
        moving[~valid] = 0.0
        gram = np.empty((size, m, m))
        rhs = np.empty((size, m))
        f, v = self.fixed, self.moving
        gram[:, f[:, None], f[None, :]] = self.gram
        across = np.swapaxes(moving, 1, 2)  # (S, v, n): matmul, unlike einsum, uses BLAS here
        cross = np.swapaxes(across @ self.design, 1, 2) / n
        gram[:, f[:, None], v[None, :]] = cross
        gram[:, v[:, None], f[None, :]] = np.swapaxes(cross, 1, 2)
        gram[:, v[:, None], v[None, :]] = across @ moving / n
        rhs[:, f] = self.rhs
        rhs[:, v] = across @ self.target / n
        cost = ridge(gram, rhs, self.norm, problem.low, problem.high, problem.lam, valid)[1]
        cost[~valid | ~np.isfinite(cost)] = INVALID_COST
        return cost
