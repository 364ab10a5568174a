"""Which configuration to measure next so that the law's prediction at a target configuration is
settled for the least cost, and when to stop.

The uncertainty at the target has two parts: which law is right (the laws of the search that fit
the data about as well as the noise allows, counted alike) and the chosen law's constants (their
least-squares covariance where the law is linear in them, else its bootstrap samples, taught the
repeated runs that a bootstrap of whole configurations cannot see). Both are expressed as an
ensemble of log-predictions over the candidate configurations and the target, planned on by
:mod:`exprsearch.design`. Runs are not chosen one greedy step at a time (which favours cheap runs
that barely inform the target): the remaining budget is spread over the configurations so that
the target's variance after all of them is least, and the next run is the one of the configurations
the plan gives a whole run that removes most of the variance now per unit of cost (the plan decides
where the budget goes; the rate only orders its runs). Further suggestions condition the ensemble
as if the previous ones were measured and plan the rest of the budget again.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import sympy

from . import advice, design
from .configs import ConfigError, amount, check_factors, setting, values_wanted
from .law import Law
from .optimize import hours_per, rate_needs_work, table_price
from .plausible import NOISE_FLOOR, plausible
from .search import Result
from .uncertainty import linear_spread
from .vocabulary import to_readable

if TYPE_CHECKING:
    import pandas as pd

PLAUSIBLE_COUNT = 24  # plausible laws besides the chosen one (exprsearch/plausible.py)
MINIMUM_SPARE = 2  # settled only with at least this many more configurations than constants
MINIMUM_VALUES = 3  # and with every factor measured at this many values at least
MAXIMUM_GAP = 4.0  # no two neighbouring measured values of a factor further apart than this ratio
MINIMUM_GAIN = 0.01  # after the first suggestion, ones that would remove under 1 % are left out
WORK_USES = "meet a budget, carry a run's overhead or be priced"  # what a rate's runs need --work for


@dataclass(frozen=True)
class Suggestion:
    config: dict[str, float]
    cost: float
    gain: float  # share of the target's variance now that measuring here, after the suggestions before it, removes
    measured: bool  # the data holds this configuration already: a repeat run
    sentence: str
    repeats: int | None = None  # the earlier suggestion of this answer it repeats (numbered from 1)


@dataclass(frozen=True)
class Advice:
    """What to measure next (also when ``settled``: the runs that would narrow it further)."""

    suggestions: tuple[Suggestion, ...]
    settled: bool
    prediction_at: float
    interval_at: tuple[float, float]
    plausible: tuple[tuple[str, str, float, float], ...]  # (law, its form, weight, prediction at the target)
    sentences: tuple[str, ...] = field(default=())
    cost_basis: str = ""  # what a suggestion's cost is made of: p × predicted time, or in hours × a price


def candidates(space: Mapping[str | tuple[str, ...], np.ndarray], factors: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Every combination of the ``--vary`` values; all the law's factors must vary or be fixed. A
    key of several factors holds their values together, a row per combination (factors measured
    together, such as a model's parameters and layers): only those combinations are offered."""
    blocks = [(key if isinstance(key, tuple) else (key,), np.asarray(values, float)) for key, values in space.items()]
    check_factors([name for key, _ in blocks for name in key], factors, "--vary")
    held = {name for key, _ in blocks for name in key}
    missing = [f for f in factors if f not in held]
    if missing:
        raise ConfigError(f"give factor '{missing[0]}' its values to measure: --vary {missing[0]}=…")
    parts = []  # each block's rows on the law's factors it holds
    for key, values in blocks:
        used = [j for j, name in enumerate(key) if name in factors]
        if used:
            rows = values.reshape(len(values), len(key))[:, used]
            parts.append(([key[j] for j in used], np.unique(rows, axis=0) if len(key) > 1 else rows))
    parts.sort(key=lambda part: min(factors.index(name) for name in part[0]))  # the law's order of factors
    size = math.prod(len(rows) for _, rows in parts)
    if size > 200_000:
        raise ConfigError(f"the --vary space has {size:,} configurations; use coarser ranges")
    combos = np.array([np.concatenate(rows) for rows in itertools.product(*(r for _, r in parts))], dtype=float)
    order = [name for names, _ in parts for name in names]
    return {f: combos[:, order.index(f)] for f in factors}


def check_work(target: str, rate: bool, steps: str | None, clock: bool, work: float | None,
               budget: float | None, overhead: float, priced: bool) -> None:
    """Without ``work`` a cost is of one unit of work (a rate, a throughput's reciprocal) or one
    step (a per-step log), against which a budget, a price or an overhead of whole runs cannot be
    set: a rate's are refused (as optimize refuses them), and any run's overhead there. Called by
    the CLI before its search, so that it says so at once."""
    if work is not None:
        return
    if rate and (budget is not None or overhead > 0 or priced):
        raise ConfigError(rate_needs_work(target, WORK_USES))
    if overhead > 0 and (per := advice.costed_per(target, steps, clock)):
        raise ConfigError(f"--run-overhead {overhead:g} is a time per run, but a cost here is that of one {per}: "
                          f"give --work, the {'steps' if per == 'step' else 'units'} one run processes, so that a "
                          "run's time and its overhead add up")


def advise(result: Result, space: Mapping[str, np.ndarray], at: Mapping[str, float], count: int = 3,
           devices: str | None = None, price: float = 1.0, tolerance: float = 0.05,
           budget: float | None = None, work: float | None = None, runs: int = 1,
           time_unit: str | None = None, prices: pd.DataFrame | None = None, unit: str | None = None,
           overhead: float = 0.0) -> Advice:
    """Suggestions from a search ``result`` (with bootstrap samples) over the ``space``, planned for
    ``budget`` more cost and within it (default: planned for as much as the measurements so far
    cost, without a limit). Search with ``near_front=False``, as ``exprsearch suggest`` does, so
    that the laws off the front that fit nearly as well are among the plausible ones. A run of a
    law of a rate (:attr:`Law.rate`) takes ``work`` / rate (one unit of work where not given, which a
    budget, a price or an overhead of whole runs cannot be set against: refused), a law of a time
    per step ``work`` × time. ``runs``: each configuration is measured that many times and
    fitted as one statistic of them (``--measure``), so a suggestion costs ``runs`` runs, and the
    measurements so far cost about ``runs`` runs a configuration. ``price`` is per device and unit
    of the target's time; with ``time_unit`` (ms, s, min or h, the unit of that time) it is per
    device-hour, as ``optimize`` takes it; ``prices`` (a table of factor columns and a ``price``
    per hour, per device with ``devices``) prices each configuration instead, those it prices at
    0 or not at all left out and said. ``unit``: the target's unit of time where known, in which
    costs not priced per hour are written (device-seconds, not bare numbers). ``overhead``: the time
    each run takes beyond what the law predicts (queueing, start-up), in the unit of a run's time,
    added to every run's cost: the law leaves it out, and it makes many cheap runs dearer."""
    if runs < 1:
        raise ConfigError(f"runs per configuration must be at least 1, got {runs}")
    if not 0 <= overhead < math.inf:
        raise ConfigError(f"the overhead of a run must be a finite time of at least 0, got {overhead:g}")
    hourly = time_unit is not None or prices is not None
    law = result.law
    check_work(law.target, law.rate, result.dataset.steps, result.dataset.clock, work, budget, overhead,
               hourly or price != 1.0)
    per_hour = hours_per(time_unit or "s") if hourly else 1.0  # a price per hour, paid for the time in hours
    check_factors(list(at), law.factors, "--at", law.held, at)
    missing = [f for f in law.factors if f not in at]
    if missing:
        data = result.dataset  # a measured configuration, the largest of the first factor missing
        row = int(np.argmax(data.column(missing[0]))) if missing[0] in data.factors else None
        raise ConfigError(values_wanted(missing, law.domain, at, None if row is None else
                                        {f: float(data.column(f)[row]) for f in missing if f in data.factors}))
    if devices is not None:
        check_factors([devices], law.factors, "--devices", law.held)
    if budget is not None and not 0 <= budget < math.inf:
        raise ConfigError(f"the budget must be a finite cost of at least 0, got {budget:g}")
    grid = candidates(space, law.factors)
    columns = {f: np.append(grid[f], at[f]) for f in law.factors}  # the target is the last column
    noise_sd = max(result.ranking.noise.relative_sd or law.residual_sd or 0.0, NOISE_FLOOR)
    if not law.bootstrap:
        raise ConfigError("suggestions need the law's bootstrap samples: run with --bootstrap of at least 20")
    laws = _plausible(result, noise_sd)
    with np.errstate(all="ignore"):
        predictions = np.array([Law(law.target, law.factors, template, values, 0).predict(columns)
                                for template, values in laws])
        # an alternative that predicts no positive time somewhere in the space is no contender there;
        # where the chosen law predicts none either (p = 0 under a 1/p term) nothing can be run
        possible = np.isfinite(predictions[0]) & (predictions[0] > 0)
        valid = np.all((np.isfinite(predictions) & (predictions > 0))[:, possible], axis=1)
        valid[0] = True
        laws, predictions = [w for w, v in zip(laws, valid) if v], predictions[valid]
        weights = np.full(len(laws), 1 / len(laws))
        samples = law.bootstrap_curves(columns)
        logs = np.log(predictions)
        boot = np.log(samples)
    usable = np.all(np.isfinite(logs), axis=0) & np.all(np.isfinite(boot), axis=0) & np.all(predictions > 0, axis=0)
    if not usable[-1]:
        raise ConfigError(_no_time_at(law, at, predictions[0, -1], samples[:, -1]))
    within = linear_spread(law, result.dataset, columns, noise_sd)
    features = design.features(logs, weights, design.bootstrap_spread(boot) if within is None else within)
    noise = noise_sd**2
    runs_made = _runs(result, grid)
    measured = runs_made > 0
    nearest = _nearest(grid, at)
    near_measured = bool(measured[nearest])
    if prices is None:
        offered = price
    else:  # free or unpriced: not offered
        listed = table_price(prices, grid, "the price table")
        offered = np.where(listed > 0, listed, np.nan)
    scale = (grid[devices] if devices else 1.0) * offered * per_hour * runs
    per_run = 1.0 if work is None else work

    def occupied(values: np.ndarray) -> np.ndarray:
        """How long a run holds its devices where the law gives ``values``: its time and the overhead."""
        return law.durations(values, per_run) + overhead

    with np.errstate(all="ignore"):
        cost = occupied(predictions[0, :-1]) * scale
        # a run fits a budget only if it fits at the upper end of its bootstrap interval: a run
        # predicted just under the budget overruns it about half the time (a rate: the lower end)
        slowest = np.percentile(samples[:, :-1], 2.5 if law.rate else 97.5, axis=0)
        dearest = np.nan_to_num(occupied(slowest) * scale, nan=np.inf)
    dearest = np.maximum(dearest, cost)
    capped = budget is not None  # a budget given is a limit; the default is only a planning horizon
    if budget is None:
        data = result.dataset
        paid = price if prices is None else _measured_prices(prices, data, law.factors)
        budget = float(np.sum(occupied(data.y) * (data.column(devices) if devices else 1.0) * paid * per_hour)) * runs
    point = float(predictions[0, -1])
    low, high = np.percentile(samples[:, -1], [2.5, 97.5])
    agree = max(abs(p / point - 1) for p in predictions[:, -1])
    # the bootstrap of a law with hardly more configurations than constants is not to be trusted
    # nor one with a factor measured at two values, which cannot show the shape of its term
    spare = len(np.unique(result.dataset.configurations())) - len(law.constants)
    values = min(len(np.unique(result.dataset.column(f))) for f in result.dataset.factors)
    agreed = bool(agree < tolerance and (high - low) / 2 / point < tolerance and spare >= MINIMUM_SPARE
                  and values >= MINIMUM_VALUES)
    # and never before the configuration nearest the target has been measured: there the laws'
    # disagreement about the target shows first, and agreement elsewhere does not rule it out
    settled = agreed and near_measured
    precision = np.eye(len(features)) if within is not None else design.repeated(features, runs_made, noise)
    taken = {f: set(np.unique(result.dataset.column(f)).tolist()) for f in law.factors}
    in_data = measured.copy()
    chosen, gains = [], []
    left = 1.0  # of the target's variance now, what the suggestions so far would leave
    short = ""  # why fewer than ``count`` runs are suggested
    for _ in range(count):
        open_ = usable[:-1] & (cost > 0) & (dearest <= budget if capped else True)
        if not open_.any():
            short = f"the budget left ({amount(budget, 4)}) pays for no further run"
            break
        widening = open_ & _widens(grid, taken)
        if agreed and not measured[nearest] and open_[nearest]:  # what stands between the laws and settled
            open_ = np.arange(len(open_)) == nearest
        elif widening.any():  # first give every factor the values its form can be told from
            open_ = widening
        else:
            filling = open_ & _fills(grid, taken)
            if filling.any():  # then no stretch of a factor where a wrong form could hide
                open_ = filling
        spend = design.plan(features, precision, noise, cost, max(budget, cost[open_].min()), open_)
        best = design.next_run(spend, cost, measured, features, precision, noise)
        gain = left * design.gain(features, precision, noise, best)  # of the variance now, not of what is left
        if gain < MINIMUM_GAIN and chosen:
            short = f"a further run would remove under {100 * MINIMUM_GAIN:g} % of the uncertainty at the target"
            break
        chosen.append(best)
        gains.append(gain)
        left -= gain
        measured[best] = True  # a second suggestion of it in this answer is a repeat
        taken = {f: taken[f] | {float(grid[f][best])} for f in law.factors}
        # as if measured: condition the ensemble on that configuration, and plan the rest
        precision = precision + np.outer(features[:, best], features[:, best]) / noise
        budget = max(budget - (dearest[best] if capped else cost[best]), 0.0)
    plausible = tuple((advice.written(t, v, 4), to_readable(t), float(w), float(p))
                      for (t, v), w, p in zip(laws, weights, predictions[:, -1]))
    suggestions, basis = [], advice.basis(devices, None if prices is not None else price,
                                          law.target if law.rate else None, work, runs, hourly, unit, overhead)
    for k, (i, g) in enumerate(zip(chosen, gains)):
        first = chosen.index(i)  # below k where this answer suggested it before
        sentence = (advice.again(i, g, cost[i], law.factors, grid, basis, first + 1) if first < k else
                    advice.sentence(i, g, cost[i], predictions, laws, law.factors, grid, basis, bool(in_data[i])))
        suggestions.append(Suggestion({f: float(grid[f][i]) for f in law.factors}, float(cost[i]), g,
                                      bool(in_data[i]), sentence, first + 1 if first < k else None))
    sentences = advice.summary(point, low, high, agree, settled, tolerance, len(laws), at)
    close = agree < tolerance and (high - low) / 2 / point < tolerance
    if close and not agreed:  # the figures are within tolerance, but the data cannot vouch for them
        sentences = (sentences[0], advice.untrusted(result.dataset, spare, len(law.constants), tolerance,
                                                       MINIMUM_VALUES, MINIMUM_SPARE))
    if agreed and not near_measured:
        where = ", ".join(f"{f}={setting(grid[f][nearest])}" for f in law.factors)
        sentences = (sentences[0], f"Not settled: the laws agree, but the configuration nearest the target ({where}) "
                     "has not been measured yet; measure next, in this order:")
    if not usable[:-1].all():
        left = np.flatnonzero(~usable[:-1])
        where = "; ".join(", ".join(f"{f}={setting(grid[f][i])}" for f in law.factors) for i in left[:3])
        sentences = (sentences[0], f"Left out {len(left)} configuration(s) of the --vary space where the law or its "
                     f"bootstrap predicts no positive time ({where}{', …' if len(left) > 3 else ''}).", *sentences[1:])
    if prices is not None and (unpriced := np.flatnonzero(usable[:-1] & ~(cost > 0))).size:
        where = "; ".join(", ".join(f"{f}={setting(grid[f][i])}" for f in law.factors) for i in unpriced[:3])
        sentences = (sentences[0], f"Left out {len(unpriced)} configuration(s) of the --vary space that the price "
                     f"table prices at 0 or not at all ({where}{', …' if len(unpriced) > 3 else ''}).", *sentences[1:])
    if settled and (wider := advice.beyond(law, at)):
        sentences = (*sentences, wider)
    if short and chosen and not settled:
        sentences = (*sentences[:-1], f"{len(chosen)} of the {count} runs asked for (--count): {short}.", sentences[-1])
    if chosen and gains[0] < MINIMUM_GAIN and not settled and (beyond := advice.out_of_reach(grid, at)):
        sentences = (*sentences[:-1], beyond, sentences[-1])
    if capped and not chosen and not settled:
        sentences = (*sentences[:-1], f"Not settled (tolerance {100 * tolerance:g} %), and no configuration in the "
                     f"--vary space costs at most the budget of {amount(budget, 4)} (at the upper end of its 95 % interval): a "
                     "larger --cost-budget or cheaper configurations are needed.")
    return Advice(tuple(suggestions), settled, point, (float(low), float(high)), plausible, sentences, basis[1:-1])


def _no_time_at(law: Law, at: Mapping[str, float], chosen: float, refits: np.ndarray) -> str:
    """Why the target cannot be planned for: the law, or some of its bootstrap refits, predict no
    positive time (or rate) there."""
    what = "rate" if law.rate else "time"
    where = ", ".join(f"{f}={setting(at[f])}" for f in law.factors)
    if not (np.isfinite(chosen) and chosen > 0):
        return (f"--at {where}: the law predicts {chosen:.4g} there, not a positive {what} ({law.target} = "
                f"{to_readable(law.expression, 4)}); choose a target nearer the measurements, or a grammar whose laws stay "
                "positive (-g default)")
    bad = int(np.sum(~(np.isfinite(refits) & (refits > 0))))
    if not bad:  # a plausible law beside the chosen one
        return f"--at {where}: the plausible laws do not all predict a positive {what} there; choose another target"
    return (f"--at {where}: {bad} of the law's {len(refits)} bootstrap refits predict no positive {what} there, so "
            "the data do not pin the law down that far out; choose a target nearer the measurements, or measure nearer it")


def _measured_prices(prices: pd.DataFrame, data, factors: tuple[str, ...]) -> np.ndarray:
    """The price per hour of each measured row, for the default budget (the measurements' cost);
    one the table does not price stops it, named, since the budget would leave it out."""
    columns = {f: data.column(f) for f in factors}
    found = table_price(prices, columns, "the price table")
    missing = np.flatnonzero(~np.isfinite(found))
    if missing.size:
        where = ", ".join(f"{f}={setting(columns[f][missing[0]])}" for f in factors)
        raise ConfigError(f"the price table gives no price for the measured configuration {where}, so the "
                          "measurements' cost, the default budget, is unknown: add a row for it, or give --cost-budget")
    return found


def _plausible(result: Result, noise: float) -> list[tuple[sympy.Expr, dict]]:
    """The chosen law first, then up to ``PLAUSIBLE_COUNT`` other laws the data cannot tell from it
    (:func:`exprsearch.plausible.plausible`, of the front and the search's lowest-BIC alternatives;
    the front alone keeps one law per complexity, so it misses the equally simple shapes the next
    runs should tell apart)."""
    pool = [s.fit for s in result.ranking.front] + list(result.alternatives)
    keep = plausible(result.ranking.law.fit, pool, result.dataset.n_rows, noise, PLAUSIBLE_COUNT)
    return [(f.candidate.template, f.values) for f in keep]


def _widens(grid: Mapping[str, np.ndarray], taken: Mapping[str, set]) -> np.ndarray:
    """Configurations that add a value of a factor measured at fewer than ``MINIMUM_VALUES``
    values: until it has that many, no law can show the shape of its terms in that factor, and
    the ensemble of plausible laws, which agree on the values measured, cannot say so."""
    short = [f for f in grid if len(taken[f]) < min(MINIMUM_VALUES, len(np.unique(grid[f])))]
    widens = np.zeros(len(next(iter(grid.values()))), dtype=bool)
    for f in short:
        widens |= ~np.isin(grid[f], list(taken[f]))
    return widens


def _fills(grid: Mapping[str, np.ndarray], taken: Mapping[str, set]) -> np.ndarray:
    """Configurations whose value of a factor lies near the geometric middle of a gap wider than
    ``MAXIMUM_GAP`` between two measured values: the plausible laws agree on both sides of such
    a gap, yet a form none of them holds can bend inside it, and only a run there can show it."""
    fills = np.zeros(len(next(iter(grid.values()))), dtype=bool)
    for f, values in grid.items():
        measured = np.array(sorted(taken[f]))
        for low, high in zip(measured[:-1], measured[1:]):
            if low <= 0 or high / low <= MAXIMUM_GAP:
                continue
            inside = (values > low) & (values < high)
            if not inside.any():
                continue
            distance = np.abs(np.log(np.where(inside, values, 1.0)) - 0.5 * math.log(low * high))
            fills |= inside & (distance <= distance[inside].min() + 1e-9)
    return fills


def _nearest(grid: Mapping[str, np.ndarray], at: Mapping[str, float]) -> int:
    """The configuration whose every factor is the value of the space nearest the target's (by
    ratio for positive values): the corner of the space closest to the target. Where factors
    offered together have no such configuration, the one nearest in the sum over the factors of
    those distances (a difference taken over its factor's span)."""
    closest = np.ones(len(next(iter(grid.values()))), dtype=bool)
    total = np.zeros(len(closest))
    for f, values in grid.items():
        positive = values.min() > 0 and at[f] > 0
        distance = np.abs(np.log(values / at[f])) if positive else np.abs(values - at[f])
        closest &= distance <= distance.min() * (1 + 1e-12) + 1e-300
        total += distance / (1.0 if positive else max(float(np.ptp(values)), 1e-300))
    if not closest.any():
        return int(np.argmin(total))
    return int(np.flatnonzero(closest)[0])


def _runs(result: Result, grid: dict) -> np.ndarray:
    """How many rows of the data each candidate configuration has (0: not measured yet)."""
    data = result.dataset
    counts = Counter(map(tuple, data.X))
    rows = np.column_stack([grid[f] for f in data.factors])
    return np.array([counts.get(tuple(row), 0) for row in rows], dtype=float)
