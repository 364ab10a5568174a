"""How sure a law is: bootstrap intervals on its constants and on predictions.

Configurations are resampled with replacement (all repetitions of a drawn configuration come
along), the chosen law is refitted on each resample with the same cost and fitting method, and
percentiles of the refitted constants give confidence intervals. A prediction interval at a
point combines the spread of the refitted laws there with the law's relative residual spread.
For a law linear in its constants, their least-squares covariance gives the spread in closed form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import sympy

from .candidates import Candidate
from .compile import CompiledCandidate, Compiler, to_function
from .data import Dataset
from .fit import Fit, FitSettings
from .law import Law
from .linear import ridge
from .lockstep import polish, polish_pooled
from .pooled import group_sums, pooled

# past this many rows a law with exponents is refitted on each resample's configurations: below
# it the stacked polish of the rows is faster than compiling each resample (0.18 against 0.29 s
# for 200 refits on 72 rows of 24 configurations)
POOLED_ROWS = 2000


@dataclass(frozen=True)
class Bootstrap:
    """Refitted constants, one row per resample, in the order of ``names``."""

    names: tuple[str, ...]
    samples: np.ndarray
    residual_sd: float

    def intervals(self, level: float = 0.95) -> dict[str, list[float]]:
        tail = 100 * (1 - level) / 2
        low, high = np.percentile(self.samples, [tail, 100 - tail], axis=0)
        return {n: [float(a), float(b)] for n, a, b in zip(self.names, low, high)}


def bootstrap(
    compiled: CompiledCandidate, y: np.ndarray, configurations: np.ndarray, fitted: Fit,
    resamples: int = 200, settings: FitSettings = FitSettings(), compiler: Compiler | None = None,
) -> Bootstrap:
    """Refit ``fitted``'s candidate on ``resamples`` resamples of the configurations; with the
    ``compiler`` of ``compiled`` and the squared loss, a law with exponents is refitted on one
    row per configuration drawn where configurations repeat among more than :data:`POOLED_ROWS`
    rows (:func:`_pooled_refits`)."""
    names = tuple(s.name for s in compiled.candidate.constants)
    rng = np.random.default_rng(settings.seed)
    _, group = np.unique(configurations, return_inverse=True)
    rows = np.bincount(group)  # of each configuration
    order = np.argsort(group, kind="stable")  # rows, configuration by configuration
    draws = _draws(rng, len(rows), resamples, min(len(names), len(rows)))
    if _linear(compiled) and settings.loss == "squared":
        samples = _linear_refits(compiled, y, group, order, rows, draws, settings)
    else:
        if compiler is not None and settings.loss == "squared" and len(y) > POOLED_ROWS and rows.max(initial=0) > 1:
            refits = _pooled_refits(compiler, compiled.candidate, y, group, order, rows, draws, fitted, settings)
        else:
            resampled = [_rows_of(drawn, order, rows) for drawn in draws]
            # warm start: exponents polished locally from the full-data fit, not searched afresh
            refits = polish([compiled] * len(resampled), y, settings, [fitted] * len(resampled), resampled)
        samples = [[refit.values[n] for n in names] for refit in refits if refit.ok]
    residual = np.sqrt(fitted.mse) if np.isfinite(fitted.mse) else 0.0
    return Bootstrap(names, np.array(samples, dtype=float).reshape(-1, len(names)), float(residual))


def _draws(rng: np.random.Generator, count: int, resamples: int, distinct: int) -> list[np.ndarray]:
    """Resamples of ``count`` configurations that hold at least ``distinct`` different ones: a
    resample with fewer configurations than the law has constants cannot determine them, and its
    arbitrary refit would widen every interval (a common case on the first few measurements)."""
    draws: list[np.ndarray] = []
    for _ in range(50 * resamples):
        if len(draws) == resamples:
            break
        drawn = rng.integers(0, count, count)
        if len(np.unique(drawn)) >= distinct:
            draws.append(drawn)
    return draws


def _rows_of(drawn: np.ndarray, order: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The rows of the configurations ``drawn``, in the order drawn, each configuration's rows
    in ``order``'s order; built at once, as a loop over configurations took most of a bootstrap
    of tens of thousands of configurations."""
    counts = rows[drawn]
    ends = np.cumsum(counts)
    shift = (np.cumsum(rows) - rows)[drawn] - (ends - counts)  # from a row's place in the resample to its place in order
    return order[np.arange(ends[-1] if len(ends) else 0) + np.repeat(shift, counts)]


def _pooled_refits(compiler: Compiler, candidate: Candidate, y: np.ndarray, group: np.ndarray, order: np.ndarray,
                   rows: np.ndarray, draws: list[np.ndarray], fitted: Fit, settings: FitSettings) -> list[Fit]:
    """The refits of a law with exponents, each on its resample's configurations, one row each
    weighted by how often it was drawn (:mod:`exprsearch.pooled`): the same constants, to
    rounding, as the refits on every row, and a per-step log of 24 configurations measured
    4,000 times each is refitted on 24 rows instead of 96,000."""
    per_configuration = (order[np.cumsum(rows) - rows], *group_sums(group, y))  # each one's first row and sums
    resamples = [pooled(*per_configuration, np.bincount(drawn, minlength=len(rows)).astype(float)) for drawn in draws]
    compiled = [compiler.subset(resample.rows).compile(candidate) for resample in resamples]
    # warm start: exponents polished locally from the full-data fit, not searched afresh
    return polish_pooled(compiled, resamples, settings, [fitted] * len(draws))


def _linear(compiled: CompiledCandidate) -> bool:
    return all(isinstance(t, np.ndarray) for t in (*compiled.basis, *compiled.offset))


def _linear_refits(compiled: CompiledCandidate, y: np.ndarray, group: np.ndarray, order: np.ndarray, rows: np.ndarray,
                   draws: list[np.ndarray], settings: FitSettings) -> list[list[float]]:
    """The refits of a law without nonlinear constants, all at once and exactly as :func:`fit`
    does them one by one: each configuration's share of the normal equations is summed once,
    and a resample's equations are its configurations' shares times how often each was drawn."""
    n, m = len(y), len(compiled.basis)
    if not draws:
        return []
    with np.errstate(all="ignore"):
        design = np.column_stack([b / y for b in compiled.basis]) if m else np.zeros((n, 0))
        target = 1.0 - sum((o for o in compiled.offset), np.zeros(n)) / y
    starts = np.cumsum(rows) - rows

    def per_configuration(values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(values[order], starts, axis=0)

    outer = per_configuration(np.einsum("nm,nk->nmk", design, design).reshape(n, m * m))
    cross = per_configuration(design * target[:, None])
    squares = per_configuration(target**2)
    times = np.array([np.bincount(d, minlength=len(rows)) for d in draws], dtype=float)  # (R, C)
    size = times @ rows
    gram = (times @ outer).reshape(-1, m, m) / size[:, None, None]
    rhs = times @ cross / size[:, None]
    norm = times @ squares / size
    low, high = (np.array([compiled.candidate.bounds[s.name][i] for s in compiled.candidate.linear], dtype=float)
                 for i in (0, 1))
    valid = np.isfinite(gram).all(axis=(1, 2)) & np.isfinite(rhs).all(axis=1) & np.isfinite(norm)
    gram[~valid], rhs[~valid] = np.eye(m), 0.0
    coef = ridge(gram, rhs, norm, low, high, settings.regularization, valid)[0]
    # as fit() does: a refit is kept only if it predicts a positive time on every row it saw
    wrong = np.zeros((len(rows), len(draws)))
    for start in range(0, len(draws), 16):  # (n, 16) at a time keeps memory small for many rows
        part = slice(start, start + 16)
        positive = (1.0 + design @ coef[part].T - target[:, None]) > 0  # y > 0, so the sign of the prediction
        wrong[:, part] = per_configuration((~positive).astype(float))
    kept = valid & ((times * wrong.T).sum(axis=1) == 0)
    return coef[kept].tolist()


def linear_spread(law: Law, data: Dataset, columns: Mapping[str, np.ndarray], noise_sd: float) -> np.ndarray | None:
    """For a law linear in its constants, features whose ``F.T @ F`` is the covariance of its
    log-predictions over the columns that its constants' uncertainty causes: σ² g(x)ᵀ (GᵀG)⁻¹ g(y),
    with g the gradient of the log-prediction in the constants and G its rows at the measurements.
    Measuring at x adds g(x) to G, so a planner that conditions on these features expects a run to
    teach what the refit will learn (``suggest`` does). A bootstrap on a handful of configurations
    cannot stand in: its few distinct resamples tie the prediction at a measured value to the
    target's and make a repeat there look informative. None (use the bootstrap) for a law with a
    constant in an exponent, whose curvature the bootstrap keeps and a linearisation would lose,
    and where the measurements do not determine every constant."""
    if not law.constants:
        return None
    params = [sympy.Symbol(n, real=True) for n in law.constants]
    derivatives = [sympy.diff(law.template, c) for c in params]
    if any(d.free_symbols & set(params) for d in derivatives):
        return None
    values = [np.float64(v) for v in law.constants.values()]
    slopes = [to_function(d, law.factors, params) for d in derivatives]

    def gradient(where: Mapping[str, np.ndarray]) -> np.ndarray:
        """d log(prediction) / d constant at every point of ``where``: (constants, points)."""
        cols = [np.asarray(where[f], dtype=float) for f in law.factors]
        shape = np.broadcast_shapes(*(c.shape for c in cols))
        level = law.predict(where)
        with np.errstate(all="ignore"):
            return np.array([np.broadcast_to(slope(cols, values), shape) / level for slope in slopes])

    at_data = gradient({f: data.column(f) for f in law.factors})
    at_columns = gradient(columns)
    if not (np.all(np.isfinite(at_data)) and np.all(np.isfinite(at_columns))):
        return None
    scale = np.sqrt(np.sum(at_data**2, axis=1))  # columns of G scaled to unit length: conditioning only
    if not np.all(scale > 0):
        return None
    information, bases = np.linalg.eigh((at_data / scale[:, None]) @ (at_data / scale[:, None]).T)
    if information.min() <= 1e-10 * information.max():
        return None
    return noise_sd * (bases / np.sqrt(information)).T @ (at_columns / scale[:, None])
