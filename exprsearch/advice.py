"""The sentences of ``suggest``: a plausible law written with its constants, what each suggested
run separates and costs, and whether the prediction at the target is settled, or why not; and,
for ``suggest`` and ``optimize``, what a cost is where the target is the time of one step."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import sympy

from .configs import amount, setting
from .reciprocal import reciprocal_of
from .vocabulary import to_readable


def written(template: sympy.Expr, values: Mapping[str, float], digits: int = 3) -> str:
    """A plausible law as people read it: its fitted constants in place, rounded (its template
    alone, ``c0 + c1*p**k0``, reads in the wrong order and says nothing of the sizes)."""
    constants = {s: sympy.Float(values[s.name]) for s in template.free_symbols if s.name in values}
    return to_readable(template.xreplace(constants), digits)


def per_step(target: str, rate: bool, steps: str | None, clock: bool) -> list[str]:
    """The note that costs are per step, where the data were a per-step log (``steps`` numbering
    its steps) and the target the time of one step, not a clock; or per unit of work, where the
    target is a rate (``tokens_per_s``: a run takes work / rate) or a throughput's reciprocal
    (``1/tokens_per_s``). Without --work, suggest refuses what needs whole runs instead of noting:
    a rate's budget, price or overhead (:func:`exprsearch.optimize.rate_needs_work`), and any
    overhead where a cost is of a step or a unit (:func:`costed_per`)."""
    if rate:
        return [f"{target} is a rate: a run's time is taken as one unit of work over it, so costs here are those of one "
                "unit; pass --work with the units a run processes (samples, tokens) to cost whole runs"]
    per = costed_per(target, steps, clock)
    if per == "unit of work":
        return [f"{target} is the time of one unit of the work {reciprocal_of(target)} counts: costs and budgets here "
                "are those of one unit; pass --work with the units a run processes (tokens, samples) to cost whole runs"]
    if per is None:
        return []
    return [f"{target} is the time of one step (the data's rows were the steps of runs, numbered by {steps}): costs "
            "and budgets here are those of one step; pass --work with the steps of a run to cost whole runs"]


def costed_per(target: str, steps: str | None, clock: bool) -> str | None:
    """What a cost is of without --work where the target is a time: one unit of work (a throughput's
    reciprocal, ``1/tokens_per_s``), one step (a per-step log's rows, not a clock), or a whole run (None)."""
    if reciprocal_of(target) is not None:
        return "unit of work"
    return "step" if steps is not None and not clock else None


def basis(devices: str | None, price: float | None, rate: str | None = None, work: float | None = None,
          runs: int = 1, hourly: bool = False, unit: str | None = None, overhead: float = 0.0) -> str:
    """What a run's cost is made of, in words: ``(2 × p × predicted time)``; for a law of the
    ``rate``, the time is the work over it (``p × 1e+06 / predicted images_per_sec``); for a time
    per step, ``work`` times it (``p × 1000 × predicted time``); ``runs`` of them where each
    configuration is measured several times (``(3 runs × predicted time)``). ``hourly``: the price
    is per hour, so the time is counted in hours (``(p × predicted time in hours × 2.5 per hour)``;
    a ``price`` of None: each configuration's own, from a price table). ``unit``: that of the time
    where known and not priced per hour (``(p × predicted time in s)``). ``overhead``: the time a run
    takes beyond the law's (``(p × (predicted time in s + 30 of overhead))``)."""
    time = ("predicted time" if work is None else f"{work:g} × predicted time") if rate is None else \
        f"{1 if work is None else work:g} / predicted {rate}"
    if unit and rate is None and not hourly:
        time += f" in {unit}"
    if overhead:
        time = f"({time} + {overhead:g} of overhead)"
    if hourly:
        parts = ([f"{runs} runs"] if runs > 1 else []) + ([devices] if devices else []) + [time]
        each = "its price" if price is None else f"{price:g}"
        return f"({' × '.join(parts)} in hours × {each} per hour)"
    parts = ([f"{price:g}"] if price != 1 else []) + ([f"{runs} runs"] if runs > 1 else []) + \
        ([devices] if devices else []) + [time]
    return f"({' × '.join(parts)})" if len(parts) > 1 or rate is not None or work is not None else f"(its {time})"


def share(gain: float) -> str:
    """A share of the uncertainty as a percentage that never rounds a part to the whole or to
    nothing: 99.6 % is "over 99 %", since a "100 %" followed by a further gain reads as a contradiction."""
    if 0.99 < gain < 1:
        return "over 99 %"
    return "under 1 %" if 0 < gain < 0.01 else f"{100 * gain:.0f} %"


def sentence(i: int, gain: float, cost: float, predictions: np.ndarray, laws, factors, grid, basis: str,
              again: bool = False) -> str:
    where = ", ".join(f"{f}={setting(grid[f][i])}" for f in factors) + (" once more" if again else "")
    paid = f"costs about {amount(cost)} {basis}"
    if len(laws) > 1:
        here = np.abs(np.log(predictions[:, i])[:, None] - np.log(predictions[:, i])[None, :])
        there = np.abs(np.log(predictions[:, -1])[:, None] - np.log(predictions[:, -1])[None, :])
        a, b = np.unravel_index(np.argmax(here * there), here.shape)
        if here[a, b] > 0:
            return (f"{where}: separates {written(*laws[a])} from {written(*laws[b])}, which differ by "
                    f"{apart(here[a, b])} here and {apart(there[a, b])} at the target; expected to remove {share(gain)} of the uncertainty there; {paid}")
    return (f"{where}: narrows the spread of the law's constants; expected to remove {share(gain)} of the "
            f"uncertainty at the target; {paid}")


def again(i: int, gain: float, cost: float, factors, grid, basis: str, first: int) -> str:
    """The sentence of a configuration this answer already suggested: what the earlier one said
    holds, so only the further gain and the cost."""
    where = ", ".join(f"{f}={setting(grid[f][i])}" for f in factors)
    paid = f"costs about {amount(cost)} {basis}"
    return (f"{where} once more, as in suggestion {first}: expected to remove a further {share(gain)} of the "
            f"uncertainty at the target; {paid}")


def out_of_reach(grid, at) -> str | None:
    """Where no run of the space narrows the target and the target lies beyond the space in some
    factors: the sentence saying so and the ``--vary`` that reaches it; else None."""
    far = {f: values for f, values in grid.items() if not values.min() <= at[f] <= values.max()}
    if not far:
        return None
    where = "; ".join(f"{f} offered {setting(v.min())}..{setting(v.max())}, the target at {setting(at[f])}"
                      for f, v in far.items())
    reach = " ".join(f"--vary {f}={_reaching(v, at[f])}" for f, v in far.items())
    return (f"No run of the space narrows the prediction at the target: the plausible laws agree on all of it and "
            f"part beyond it ({where}); {reach} offers runs nearer the target.")


def _reaching(values: np.ndarray, target: float) -> str:
    """Values from the space's far end to ``target``, halving from the target (doubling where it
    lies below the space), for a ``--vary`` that reaches it: 20..60 and 64 give 20,32,64."""
    low, high = float(values.min()), float(values.max())
    if low <= 0 or target <= 0:
        return f"{setting(min(low, target))}..{setting(max(high, target))}"
    chain, step, end = [target], (0.5 if target > high else 2.0), (low if target > high else high)
    while (chain[-1] * step > end) if step < 1 else (chain[-1] * step < end):
        chain.append(chain[-1] * step)
    return ",".join(setting(v) for v in sorted({*chain, end}))


def apart(log_ratio: float) -> str:
    """How far apart two predictions are, from the log of their ratio, in words."""
    ratio = float(np.exp(log_ratio))
    return f"{100 * (ratio - 1):.2g} %" if ratio < 2 else f"a factor of {ratio:.3g}"


def untrusted(data, spare: int, constants: int, tolerance: float, least_values: int, least_spare: int) -> str:
    """Why laws that agree within ``tolerance`` on a narrow interval are not settled: a factor
    measured at fewer than ``least_values`` values, or fewer than ``least_spare`` configurations
    beside the law's constants."""
    few = {f: len(np.unique(data.column(f))) for f in data.factors}
    few = {f: n for f, n in few.items() if n < least_values}
    if few:
        why = (f"{', '.join(f'{f} is measured at {n} value(s)' for f, n in few.items())}, too few to show the "
               f"shape of a term (at least {least_values} each), so the laws may agree only because the data "
               "cannot tell them apart")
    else:
        why = (f"the data hold {spare + constants} configuration(s) for a law of {constants} constants, and its "
               f"bootstrap is trusted from {least_spare} more")
    return (f"Not settled: the laws agree and the interval is within {100 * tolerance:g} %, but {why}; measure "
            "next, in this order:")


def summary(point, low, high, agree, settled, tolerance, count, at) -> tuple[str, ...]:
    target = ", ".join(f"{k}={setting(v)}" for k, v in at.items())
    others = (f"the {count} plausible law(s) differ there by up to {apart(np.log1p(agree))}" if count > 1 else
              "no other law fits the measurements about as well")
    first = f"At {target} the law predicts {point:.4g} (95 % bootstrap interval {low:.4g}..{high:.4g}); {others}."
    if settled:
        return first, f"Settled: both are within {100 * tolerance:g} %; no further measurement is needed."
    return first, f"Not settled (tolerance {100 * tolerance:g} %): measure next, in this order:"


def beyond(law, at: dict[str, float]) -> str | None:
    """Where ``at`` lies beyond the measured range and the law's form erred on its own top octave,
    the sentence giving ``predict``'s wider interval there and why; else None."""
    point = {f: np.array([float(at[f])]) for f in law.factors if f in at}
    doublings = float(law.octaves_outside(point)[0]) if law.octave_error > 0 and law.bootstrap else 0.0
    if doublings <= 0:
        return None
    low, high = law.predict_interval(point)
    return (f"`predict` gives {low[0]:.4g}..{high[0]:.4g} there: its 95 % interval adds the runs' own spread and, "
            f"{doublings:.2g} doubling(s) beyond the measured range, {100 * law.octave_error:.3g} % per doubling, "
            "the error the law's form made on its own top octave when refitted without it.")
