"""Pick configurations with a law: the fastest (a scalability optimiser) or the cheapest within a
time budget, with the Pareto set of time vs cost."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .cells import TIME_UNITS
from .configs import (
    ConfigError,
    check_factors,
    check_varies,
    constraint_mask,
    defined,
    describe,
    grid,
    measured_span,
    setting,
)
from .law import Law
from .tables import file_lines, rows_named

SECONDS = {"ms": 0.001, "s": 1.0, "min": 60.0, "h": 3600.0}


def measured_space(law: Law, fixed: dict[str, float]) -> dict[str, np.ndarray]:
    """Where to search when no range is given: each factor the law uses and ``fixed`` leaves open,
    over its measured range, doubling from the smallest value and ending at the largest (where the
    law interpolates; beyond it a range must be asked for)."""
    check_varies(law, "every configuration is as good as another")
    space = {}
    for factor in law.factors:
        if factor in fixed or not law.uses(factor):
            continue
        low, high = law.domain.get(factor, [None, None])
        if low is None:
            raise ConfigError(f"the law records no measured range of {factor}; give --vary {factor}=LOW..HIGH")
        space[factor] = measured_span(low, high)
    if not space:
        raise ConfigError("every factor the law uses is fixed; give one to search with --vary p=1..512")
    return space


@dataclass(frozen=True)
class Choice:
    """One configuration with its predicted time (target units) and cost (None without prices);
    ``value`` is the law's target there: the time itself, or the rate a time is the work over
    (``time`` is None for a rate given no work)."""

    config: dict[str, float]
    time: float | None
    cost: float | None
    value: float = math.nan
    # the upper end of a run's time at its 95 % prediction interval (a rate's lower end gives it);
    # None where the law keeps no bootstrap or gives no time
    slowest: float | None = None
    # a rate given no work has no run time: the lower end of the rate's 95 % prediction interval instead
    lowest: float | None = None


@dataclass(frozen=True)
class Optimum:
    best: Choice
    objective: str  # "time" or "cost"
    pareto: tuple[Choice, ...]
    considered: int  # configurations in the grid
    feasible: int  # of those, meeting the constraints and the budget
    left_out: tuple[tuple[str, int, str], ...] = ()  # (why, how many, the first) of configurations not considered
    ties: int = 1  # feasible configurations as cheap (or fast) as the best, to 9 digits: it is the fastest of them
    # with a budget the best's run may overrun at the upper end of its interval: the best whose does not,
    # by the plausible laws either (None where the best's does not, or none searched is: ``safe_searched``
    # says how many were)
    safe: Choice | None = None
    safe_searched: int = 0
    # per law of law.json's search.plausible that finds a feasible configuration: its choice, and how
    # much more the best costs (or takes) by that law than its choice (inf: over the budget by it)
    rivals: tuple[tuple[dict[str, float], float], ...] = ()


@dataclass(frozen=True)
class Pricing:
    """Cost = time in hours × price per hour × devices; a table gives the price per configuration;
    devices alone, without a price, make the cost devices × time in the target's unit."""

    price: float | None = None
    devices: str | None = None
    table: pd.DataFrame | None = None
    time_unit: str = "s"
    source: str = "the price table"  # how messages name the table (the CLI names its file)


def rate_needs_work(target: str, uses: str = "meet a budget or be priced") -> str:
    """Why a rate's runs need ``--work``: its law gives the time of one unit of work, not of a run,
    and a budget, a price or a run's overhead is of whole runs."""
    return (f"{target} is a rate: give --work, the amount one run processes (samples, tokens), so that its time, "
            f"work / {target}, can {uses}")


def optimize(
    law: Law, vary: dict[str, np.ndarray], fixed: dict[str, float], where: list[str] = (),
    pricing: Pricing | None = None, budget: float | None = None, work: float | None = None,
) -> Optimum:
    """Minimise time, or cost subject to ``time <= budget`` when ``pricing`` is given. A law of a
    rate (:attr:`Law.rate`) is maximised; its time, for a budget or prices, is ``work`` / rate. A
    law of a time per step is a run's time ``work`` times over, where ``work`` is given."""
    if not vary:
        raise ConfigError("give at least one --vary FACTOR=RANGE to search over")
    if work is not None and not 0 < work < math.inf:
        raise ConfigError(f"--work {work:g}: give the positive amount one run processes (for a time per step, the "
                          "steps of a run)")
    if law.rate and work is None and (budget is not None or pricing is not None):
        raise ConfigError(rate_needs_work(law.target))
    # a factor of the data the law leaves out needs no value (it changes nothing)
    factors = tuple(f for f in law.factors if law.uses(f) or f in vary or f in fixed)
    columns = grid(factors, vary, fixed, law.domain, held=law.held)
    value, ok = defined(law, columns)
    if not ok.any():
        raise ConfigError(f"the law gives no {'rate' if law.rate else 'time'} (positive and finite) anywhere in the "
                          f"--vary grid, e.g. at {describe(columns, 0)}: {value[0]:g}; search near the measured values")
    per_run = 1.0 if work is None else work  # a rate's time for one unit of work orders the runs as any work does
    with np.errstate(all="ignore"):
        time = law.durations(value, per_run)
    left_out = [_left_out("where the law gives no time (positive and finite)", ~ok, columns)]
    keep = constraint_mask(list(where), columns) & ok
    if not keep.any():
        raise ConfigError("no configuration meets the --where constraints; relax them")
    priced = pricing is not None and (pricing.price is not None or pricing.table is not None or pricing.devices is not None)
    if priced and pricing.devices is not None and pricing.devices not in columns:
        _devices_left_out(law, pricing.devices)
    cost = _cost(time, columns, pricing, keep) if priced else None
    if cost is not None:
        unpriced = keep & ~np.isfinite(cost)
        left_out.append(_left_out("that the price table gives no price for", unpriced, columns))
        keep &= ~unpriced
        if not keep.any():
            raise ConfigError(f"the price table prices none of the configurations searched (the first is "
                              f"{describe(columns, int(np.flatnonzero(unpriced)[0]))}); add rows for them")
    feasible = keep & (time <= budget) if budget is not None else keep
    if not feasible.any():
        fastest = int(np.flatnonzero(keep)[np.argmin(time[keep])])
        raise ConfigError(
            f"no configuration's predicted time is within the budget of {budget:g}; the fastest is "
            f"{describe(columns, fastest)} at {time[fastest]:.4g}"
            + (f" ({law.target} {value[fastest]:.4g})" if law.rate else "")
            + ": raise --budget, or --vary the factors over other values"
        )
    objective = "cost" if cost is not None else "time"
    score = cost if cost is not None else time
    index = np.flatnonzero(feasible)
    rounded = _digits(score)
    order = _best_first(index, time, rounded)
    best = int(order[0])
    pareto = _pareto(index, time, rounded) if cost is not None else [best]
    timed = not law.rate or work is not None
    bounded = timed and bool(getattr(law, "bootstrap", None))  # a folder of segments' laws keeps none
    slowest = dict(zip([best, *pareto], _slowest(law, columns, np.array([best, *pareto]), per_run))) if bounded else {}
    safe, searched = None, 0
    if budget is not None and slowest.get(best, -math.inf) > budget:
        safe, searched, end = _safe(law, columns, order, per_run, budget)
        if safe is not None:
            slowest[safe] = end
    lowest = {}
    if not timed and getattr(law, "bootstrap", None):
        low, _ = law.predict_interval({k: v[[best]] for k, v in columns.items()})
        lowest[best] = float(low[0])
    choose = lambda i: Choice({k: float(v[i]) for k, v in columns.items()},  # noqa: E731
                              float(time[i]) if timed else None, None if cost is None else float(cost[i]),
                              float(value[i]), slowest.get(i), lowest.get(i))
    rivals = _rivals(law, columns, keep, best, pricing if priced else None, budget, per_run)
    return Optimum(choose(best), objective, tuple(choose(i) for i in pareto), len(time), int(feasible.sum()),
                   tuple(entry for entry in left_out if entry[1]), int(np.sum(rounded[index] == rounded[best])),
                   None if safe is None else choose(safe), searched, rivals)


def _best_first(index: np.ndarray, time: np.ndarray, rounded: np.ndarray) -> np.ndarray:
    """The configurations of ``index`` by their score to 9 digits (``rounded``), the fastest first
    among equals: the order in which :func:`optimize` chooses."""
    return index[np.lexsort((time[index], rounded[index]))]


def _rivals(law: Law, columns: dict[str, np.ndarray], keep: np.ndarray, best: int, pricing: Pricing | None,
            budget: float | None, per_run: float) -> tuple[tuple[dict[str, float], float], ...]:
    """What each law the data could not tell from this one (law.json's search.plausible) would
    choose over the same configurations, by the same rule, and how much more ``best`` costs (or
    takes) by that law than its own choice: the decision is only as settled as the law's form."""
    predicted = getattr(law, "plausible_predictions", None)  # a folder of segments' laws keeps none
    out = []
    for value in predicted(columns) if predicted else []:
        with np.errstate(all="ignore"):
            value = np.broadcast_to(value, keep.shape)
            time = law.durations(value, per_run)
            ok = keep & np.isfinite(value) & (value > 0)
            score = _cost(time, columns, pricing, ok) if pricing is not None else time
            ok &= np.isfinite(score) & (time <= budget if budget is not None else True)
        if not ok.any():
            continue
        chosen = int(_best_first(np.flatnonzero(ok), time, _digits(score))[0])
        extra = float(score[best] / score[chosen] - 1) if ok[best] else math.inf
        out.append(({k: float(v[chosen]) for k, v in columns.items()}, max(extra, 0.0)))
    return tuple(out)


SAFE_SEARCHED = 65_536  # feasible configurations, best first, whose intervals are computed to find one within a budget


def _slowest(law: Law, columns: dict[str, np.ndarray], rows: np.ndarray, per_run: float) -> list[float]:
    """The upper end of a run's time at the 95 % prediction interval of each configuration of
    ``rows`` (``law.predict_interval``: its bootstrap, its runs' spread and, beyond the measured
    range, its form's error per doubling); a rate's lower end gives a run's longest time."""
    low, high = law.predict_interval({k: v[rows] for k, v in columns.items()})
    with np.errstate(all="ignore"):
        return [float(t) for t in law.durations(low if law.rate else high, per_run)]


def _safe(law: Law, columns: dict[str, np.ndarray], order: np.ndarray, per_run: float,
          budget: float) -> tuple[int | None, int, float | None]:
    """The first configuration of ``order`` whose run stays within ``budget`` at the upper end
    of its 95 % interval and by every law that fits the measurements as well (None where none of
    the first :data:`SAFE_SEARCHED` does), how many were searched, and that end of its interval.
    The plausible laws too: beyond the measurements the interval is narrower than the error
    (benchmarks/decisions.py: the configurations safe by it alone overran at 20 %, by both at 15 %)."""
    for start in range(0, min(len(order), SAFE_SEARCHED), 4096):
        chunk = order[start:min(start + 4096, SAFE_SEARCHED)]
        ends = np.array(_slowest(law, columns, chunk, per_run))
        plausible = law.plausible_predictions({k: v[chunk] for k, v in columns.items()})
        longest = ends
        if len(plausible):
            with np.errstate(all="ignore"):
                others = np.where(np.isfinite(plausible) & (plausible > 0), law.durations(plausible, per_run), np.inf)
            longest = np.maximum(ends, others.max(axis=0))
        within = np.flatnonzero(longest <= budget)
        if within.size:
            return int(chunk[within[0]]), start + int(within[0]) + 1, float(ends[within[0]])
    return None, min(len(order), SAFE_SEARCHED), None


def _left_out(why: str, mask: np.ndarray, columns: dict[str, np.ndarray]) -> tuple[str, int, str]:
    return why, int(mask.sum()), describe(columns, int(np.flatnonzero(mask)[0])) if mask.any() else ""


# each word for a unit of time (cells' table, as a cell such as "2 min" is read) as --time-unit names it
_UNITS = {word: unit for word, seconds in TIME_UNITS.items() for unit, per in SECONDS.items() if per == seconds}
_ALTERNATIVES = "|".join(sorted(_UNITS, key=len, reverse=True))
_NAMED = re.compile(rf"(?:^|[_\-. (])({_ALTERNATIVES})\)?$", re.IGNORECASE)  # epoch_s, ttt_min, time (h)
_PER = re.compile(rf"(?:per[_\-. ]?|/)({_ALTERNATIVES})$", re.IGNORECASE)  # images_per_sec, tokens/s
_SPELLED = {"ms": "milliseconds", "s": "seconds", "min": "minutes", "h": "hours"}


def named_unit(target: str, rate: bool = False) -> str | None:
    """The unit of time the target's name ends in (``epoch_s``, ``ttt_min_mean``; a rate's
    ``images_per_sec``): ms, s, min or h, or None where it names none."""
    from .roles import statistic, stem

    name = (stem(target) or target) if statistic(target) else target  # ttt_min_mean: the unit of ttt_min
    found = (_PER if rate else _NAMED).search(name)
    return _UNITS[found.group(1).lower()] if found else None


def priced_unit(target: str, given: str | None, rate: bool = False) -> tuple[str, str | None]:
    """The unit of the target's time a price per hour is paid for: ``given`` (--time-unit), else
    the one the target's name ends in (``ttt_min_mean``, ``epoch_s``; a rate's ``images_per_sec``),
    else seconds; and, where not given, the note saying which (minutes taken for seconds cost 60
    times too little)."""
    if given is not None:
        return given, None
    from .roles import statistic

    what = f"the time of {target}, work / {target}," if rate else f"the target {target}"
    unit = named_unit(target, rate)
    if unit is not None:
        return unit, (f"{what} is taken in {_SPELLED[unit]} for the price per hour, as its name says "
                      "(--time-unit sets another)")
    if statistic(target) == "min" and not rate and target.lower().endswith("min"):
        return "s", (f"{what} ends in 'min', a minimum or minutes: it is taken in seconds for the price per "
                     "hour; --time-unit min if it is minutes")
    return "s", (f"{what} is taken in seconds for the price per hour; its name gives no unit, and --time-unit ms, "
                 "min or h sets another")


def hours_per(time_unit: str) -> float:
    """Hours in one ``time_unit`` (ms, s, min or h), for a price per hour."""
    if time_unit not in SECONDS:
        raise ConfigError(f"--time-unit must be one of {', '.join(SECONDS)}, got '{time_unit}'")
    return SECONDS[time_unit] / 3600


def _devices_left_out(law: Law, devices: str) -> None:
    """Raise for --devices naming a factor the search gave no value: one the law leaves out (held
    at one value by every measurement, or one the time does not change with), or no factor."""
    if devices in law.held:
        value = setting(law.held[devices])
        raise ConfigError(f"--devices {devices}: every measurement held {devices} at {value}, so the law leaves it "
                          f"out; give --fix {devices}={value} to count the devices")
    if devices in law.factors:
        raise ConfigError(f"--devices {devices}: the law leaves {devices} out (the time does not change with it), so "
                          f"it takes no value here; give it one with --fix {devices}=N, or --vary it, to count the devices")
    check_factors([devices], law.factors, "--devices")


def _cost(time: np.ndarray, columns: dict[str, np.ndarray], pricing: Pricing, keep: np.ndarray) -> np.ndarray:
    """Each configuration's cost: hours × price (× devices), or without a price devices × time in
    the target's unit (device-time, as suggest counts it)."""
    unpriced = pricing.price is None and pricing.table is None
    hours = time * (1.0 if unpriced else hours_per(pricing.time_unit))
    if pricing.devices is not None:
        hours = hours * columns[pricing.devices]
    if unpriced:
        return hours
    if pricing.table is None:
        return hours * pricing.price
    return hours * table_price(pricing.table, columns, pricing.source)


def table_price(table: pd.DataFrame, columns: dict[str, np.ndarray], source: str) -> np.ndarray:
    """Each configuration's price from the table (NaN where it has none), the table checked first;
    a bad row is named by its line of the file where the table was read from one."""
    if "price" not in table.columns:
        raise ConfigError(f"{source} needs a 'price' column (per hour, per device with --devices)")
    keys = [c for c in table.columns if c in columns]
    if not keys:
        raise ConfigError(f"{source} shares no column with the law's factors ({', '.join(columns)})")
    numbering = file_lines(table.index)
    numbering = 0 if numbering is None else numbering  # rows, for a table read without lines
    for name in [*keys, "price"]:
        values = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(values) | ((values < 0) if name == "price" else False))
        if bad.size:
            raise ConfigError(f"column '{name}' of {source} holds {table[name].iloc[bad[0]]!r} at "
                              f"{rows_named(bad[:1], numbering)}; give {'a price of 0 or more' if name == 'price' else 'a number'}")
    twice = np.flatnonzero(table.duplicated(keys, keep=False).to_numpy())
    if twice.size:
        raise ConfigError(f"{source} prices one configuration more than once ({rows_named(twice[:4], numbering)}); "
                          "keep one row each")
    frame = pd.DataFrame({k: columns[k] for k in keys})
    merged = frame.merge(table[[*keys, "price"]].astype(float), on=keys, how="left")
    return merged["price"].to_numpy(dtype=float)  # NaN where the table has no price: not offered


def _digits(values: np.ndarray, digits: int = 9) -> np.ndarray:
    """``values`` to ``digits`` significant digits: costs that are equal but for rounding (a law whose
    time halves as the devices double costs the same on any count) compare equal, so the faster
    of them is taken, not whichever the last bits favour."""
    with np.errstate(all="ignore"):
        scale = 10.0 ** (np.floor(np.log10(np.abs(values))) - (digits - 1))
        rounded = np.round(values / scale) * scale
    return np.where(np.isfinite(rounded), rounded, values)


def _pareto(index: np.ndarray, time: np.ndarray, cost: np.ndarray) -> list[int]:
    """Configurations no other is both faster and cheaper than (``cost`` rounded), fastest first."""
    order = index[np.lexsort((cost[index], time[index]))]
    front, cheapest = [], np.inf
    for i in order:
        if cost[i] < cheapest:
            front.append(int(i))
            cheapest = cost[i]
    return front
