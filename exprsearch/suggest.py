"""Which configuration to measure next so that the law's prediction at a target configuration is
settled for the least cost, and when to stop.

The uncertainty at the target has two parts: which law is right (the laws on the front that fit
the data about as well as the noise allows, counted alike) and the chosen law's constants (its
bootstrap samples). Both are
expressed as an ensemble of log-predictions over the candidate configurations and the target;
measuring at x, with the measured noise, removes cov(x, target)² / (var(x) + noise²) of the
target's variance (the linear-Gaussian value of a measurement). Suggestions are the cheapest per
unit of gain among the runs that would remove at least half as much as the most informative one
(so that cheap runs which barely inform the target are not repeated forever), chosen one after
another, each conditioning the ensemble as if the previous ones were measured.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import sympy

from .configs import ConfigError, check_factors
from .law import Law
from .search import Result
from .vocabulary import to_readable

PLAUSIBLE_ERROR = 1.5  # laws fitting within 1.5x the best law's error (or twice the noise) are plausible
WORTHWHILE = 0.5  # a suggestion removes at least this share of what the most informative run would
MINIMUM_SPARE = 2  # settled only with at least this many more configurations than constants
MINIMUM_VALUES = 3  # and with every factor measured at this many values at least
MINIMUM_GAIN = 0.01  # after the first suggestion, ones that would remove under 1 % are left out
NOISE_FLOOR = 0.005  # relative noise assumed at least this large (a measurement is never exact)


@dataclass(frozen=True)
class Suggestion:
    config: dict[str, float]
    cost: float
    gain: float  # share of the target's variance that measuring here is expected to remove
    measured: bool
    sentence: str


@dataclass(frozen=True)
class Advice:
    """What to measure next (also when ``settled``: the runs that would narrow it further)."""

    suggestions: tuple[Suggestion, ...]
    settled: bool
    prediction_at: float
    interval_at: tuple[float, float]
    plausible: tuple[tuple[str, float, float], ...]  # (law, weight, prediction at the target)
    sentences: tuple[str, ...] = field(default=())


def candidates(space: Mapping[str, np.ndarray], factors: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Every combination of the ``--vary`` values; all the law's factors must vary or be fixed."""
    check_factors(list(space), factors, "--vary")
    missing = [f for f in factors if f not in space]
    if missing:
        raise ConfigError(f"give factor '{missing[0]}' its values to measure: --vary {missing[0]}=…")
    combos = np.array(list(itertools.product(*(space[f] for f in factors))), dtype=float)
    if len(combos) > 200_000:
        raise ConfigError(f"the --vary space has {len(combos):,} configurations; use coarser ranges")
    return {f: combos[:, i] for i, f in enumerate(factors)}


def advise(result: Result, space: Mapping[str, np.ndarray], at: Mapping[str, float], count: int = 3,
           devices: str | None = None, price: float = 1.0, tolerance: float = 0.05) -> Advice:
    """Suggestions from a search ``result`` (with bootstrap samples) over the ``space``."""
    law = result.law
    check_factors(list(at), law.factors, "--at")
    missing = [f for f in law.factors if f not in at]
    if missing:
        raise ConfigError(f"give factor '{missing[0]}' a value in --at")
    if devices is not None:
        check_factors([devices], law.factors, "--devices")
    grid = candidates(space, law.factors)
    columns = {f: np.append(grid[f], at[f]) for f in law.factors}  # the target is the last column
    noise_sd = max(result.ranking.noise.relative_sd or law.residual_sd or 0.0, NOISE_FLOOR)
    laws, weights = _plausible(result, noise_sd)
    if not law.bootstrap:
        raise ConfigError("suggestions need the law's bootstrap samples: run with --bootstrap of at least 20")
    with np.errstate(all="ignore"):
        predictions = np.array([Law(law.target, law.factors, template, values, 0).predict(columns)
                                for template, values in laws])
        samples = law.bootstrap_curves(columns)
        logs = np.log(predictions)
        boot = np.log(samples)
    usable = np.all(np.isfinite(logs), axis=0) & np.all(np.isfinite(boot), axis=0) & np.all(predictions > 0, axis=0)
    if not usable[-1]:
        raise ConfigError("the plausible laws do not all predict a positive time at --at; choose another target")
    covariance = _covariance(logs, weights, boot)
    noise = noise_sd**2
    measured = _measured(result, grid)
    cost = predictions[0, :-1] * (grid[devices] if devices else 1.0) * price
    chosen, gains = [], []
    total = covariance[-1, -1]
    for _ in range(min(count, len(cost))):
        with np.errstate(all="ignore"):
            gain = covariance[:-1, -1] ** 2 / (np.diag(covariance)[:-1] + noise) / total if total > 0 else \
                np.zeros(len(cost))
        # the cheapest per unit of gain among the configurations that would remove at least half
        # as much as the best one: cheap runs that barely inform the target are not worth repeating
        open_ = usable[:-1].copy()
        open_[chosen] = False
        worthwhile = open_ & (gain >= WORTHWHILE * np.max(np.where(open_, gain, 0.0)))
        if (worthwhile & ~measured).any():  # a new configuration also tests the form; a repeat cannot
            worthwhile &= ~measured
        score = np.where(worthwhile, gain / np.maximum(cost, 1e-300), -np.inf)
        best = int(np.argmax(score))
        if not np.isfinite(score[best]) or gain[best] < MINIMUM_GAIN and chosen:
            break
        chosen.append(best)
        gains.append(float(gain[best]))
        # as if measured: condition the ensemble on that configuration
        k = covariance[:, best] / (covariance[best, best] + noise)
        covariance = covariance - np.outer(k, covariance[best, :])
    point = float(predictions[0, -1])
    low, high = np.percentile(samples[:, -1], [2.5, 97.5])
    agree = max(abs(p / point - 1) for p in predictions[:, -1])
    # the bootstrap of a law with hardly more configurations than constants is not to be trusted
    # nor one with a factor measured at two values, which cannot show the shape of its term
    spare = len(np.unique(result.dataset.configurations())) - len(law.constants)
    values = min(len(np.unique(result.dataset.column(f))) for f in result.dataset.factors)
    settled = bool(agree < tolerance and (high - low) / 2 / point < tolerance and spare >= MINIMUM_SPARE
                   and values >= MINIMUM_VALUES)
    plausible = tuple((to_readable(t), float(w), float(p)) for (t, _), w, p in zip(laws, weights, predictions[:, -1]))
    suggestions = tuple(
        Suggestion({f: float(grid[f][i]) for f in law.factors}, float(cost[i]), g, bool(measured[i]),
                   _sentence(i, g, cost[i], predictions, laws, law.factors, grid, devices))
        for i, g in zip(chosen, gains))
    sentences = _summary(point, low, high, agree, settled, tolerance, len(laws), at)
    return Advice(suggestions, settled, point, (float(low), float(high)), plausible, sentences)


def _plausible(result: Result, noise: float) -> tuple[list[tuple[sympy.Expr, dict]], np.ndarray]:
    """The chosen law first, then the front's laws that fit the data about as well as the noise
    allows (mean relative error within twice the noise, or within 1.5× the best law's): the data
    cannot tell them apart, so they count alike."""
    front, chosen = result.ranking.front, result.ranking.chosen
    threshold = max(PLAUSIBLE_ERROR * min(s.mape for s in front), 2 * 100 * noise)
    keep = [chosen] + [i for i, s in enumerate(front) if i != chosen and s.mape <= threshold]
    return [(front[i].fit.candidate.template, front[i].fit.values) for i in keep], np.full(len(keep), 1 / len(keep))


def _covariance(logs: np.ndarray, weights: np.ndarray, boot: np.ndarray) -> np.ndarray:
    """Between-law covariance (weighted) plus the chosen law's bootstrap covariance, over the columns."""
    finite_logs = np.where(np.isfinite(logs), logs, 0.0)
    finite_boot = np.where(np.isfinite(boot), boot, 0.0)
    mean = weights @ finite_logs
    between = (finite_logs - mean).T @ ((finite_logs - mean) * weights[:, None])
    deviation = finite_boot - finite_boot.mean(axis=0)
    return between + deviation.T @ deviation / max(len(boot) - 1, 1)


def _measured(result: Result, grid: dict) -> np.ndarray:
    """Which candidate configurations the data already hold."""
    data = result.dataset
    taken = {tuple(row) for row in data.X}
    rows = np.column_stack([grid[f] for f in data.factors])
    return np.array([tuple(row) in taken for row in rows])


def _sentence(i: int, gain: float, cost: float, predictions: np.ndarray, laws, factors, grid, devices) -> str:
    where = ", ".join(f"{f}={grid[f][i]:g}" for f in factors)
    paid = f"costs about {cost:.3g}" + (f" ({devices} × predicted time)" if devices else " (its predicted time)")
    if len(laws) > 1:
        here = np.abs(np.log(predictions[:, i])[:, None] - np.log(predictions[:, i])[None, :])
        there = np.abs(np.log(predictions[:, -1])[:, None] - np.log(predictions[:, -1])[None, :])
        a, b = np.unravel_index(np.argmax(here * there), here.shape)
        if here[a, b] > 0:
            return (f"{where}: separates {to_readable(laws[a][0])} from {to_readable(laws[b][0])}, which differ by "
                    f"{_apart(here[a, b])} here and {_apart(there[a, b])} at the target; expected to remove {100 * gain:.0f} % of the uncertainty there; {paid}")
    return (f"{where}: narrows the spread of the law's constants; expected to remove {100 * gain:.0f} % of the "
            f"uncertainty at the target; {paid}")


def _apart(log_ratio: float) -> str:
    """How far apart two predictions are, from the log of their ratio, in words."""
    ratio = float(np.exp(log_ratio))
    return f"{100 * (ratio - 1):.2g} %" if ratio < 2 else f"a factor of {ratio:.3g}"


def _summary(point, low, high, agree, settled, tolerance, count, at) -> tuple[str, ...]:
    target = ", ".join(f"{k}={v:g}" for k, v in at.items())
    first = (f"At {target} the law predicts {point:.4g} (95 % bootstrap interval {low:.4g}..{high:.4g}); the "
             f"{count} plausible law(s) differ there by up to {_apart(np.log1p(agree))}.")
    if settled:
        return first, f"Settled: both are within {100 * tolerance:g} %; no further measurement is needed."
    return first, f"Not settled (tolerance {100 * tolerance:g} %): measure next, in this order:"
