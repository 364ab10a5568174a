"""Where the time goes along one factor: each term's contribution, speedup, efficiency and the
scalability limit (the root of dT/dx found to machine precision where the law has a minimum in
the range, the point of diminishing returns otherwise)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import sympy

from .compile import factor_symbol, to_function
from .configs import ConfigError, check_defined, check_factors, check_varies, setting, values_wanted
from .law import Law
from .vocabulary import to_readable


@dataclass(frozen=True)
class Limit:
    """Where adding more of the factor stops paying off."""

    value: float
    time: float
    exact: bool
    kind: str  # "minimum" (time rises beyond), "maximum" (a rate falls beyond) or "diminishing" (gains below the threshold)


@dataclass(frozen=True)
class Regime:
    """Where the arguments of a max or min in the law cross: which one sets the time on each side,
    and how far the law's bootstrap refits move the crossing."""

    value: float
    kind: str  # "max" or "min"
    below: str  # the argument that is larger (max) or smaller (min) below ``value``
    above: str
    interval: tuple[float, float] | None = None  # 95 % of the refits' crossings (None: no bootstrap)
    missing: int = 0  # refits with no such crossing in the varied range
    refits: int = 0


@dataclass(frozen=True)
class Explanation:
    factor: str
    values: np.ndarray
    fixed: dict[str, float]
    total: np.ndarray
    labels: tuple[str, ...]
    terms: tuple[str, ...]
    contributions: np.ndarray  # (terms, values)
    speedup: np.ndarray
    efficiency: np.ndarray
    limit: Limit | None
    sentences: tuple[str, ...]
    regimes: tuple[Regime, ...] = ()
    rate: bool = False  # the law's target is a rate (higher is better): speedup is its growth

    def dominant(self) -> list[int]:
        return [int(i) for i in np.argmax(self.contributions, axis=0)]


def explain(law: Law, factor: str, values: np.ndarray, fixed: dict[str, float], threshold: float = 0.05) -> Explanation:
    """Break the law down along ``factor`` with the other factors at ``fixed``."""
    check_factors([factor, *fixed], law.factors, "--vary/--fix", law.held, fixed)
    others = [f for f in law.factors if f != factor and f not in fixed and law.uses(f)]
    if others:
        raise ConfigError(values_wanted(others, law.domain))
    values = np.asarray(values, dtype=float)
    if len(np.unique(values)) < 2:
        raise ConfigError(f"--vary {factor}: the law is followed along {factor}, which needs at least two values; "
                          f"give a range ({factor}=1..64) or a list")
    # a factor the law does not use may be left out of --fix: any value stands for it
    check_defined(law, {f: values if f == factor else np.full(values.shape, fixed.get(f, 1.0)) for f in law.factors},
                  "--vary")
    x = factor_symbol(factor)
    fix = {factor_symbol(k): sympy.Float(v) for k, v in fixed.items()}
    # a term whose coefficient was fitted at 0 (its bound) adds nothing anywhere: said, not tabulated
    kept = [(label, term) for label, term in law.terms() if term.is_zero is not True] or law.terms()
    zeros = [label for label, term in law.terms() if term.is_zero is True and (label, term) not in kept]
    pieces = [(label, term.xreplace(fix)) for label, term in kept]
    contributions = np.array([np.broadcast_to(to_function(t, (factor,))([values]), values.shape)
                              for _, t in pieces])
    total = contributions.sum(axis=0)
    speedup = total / total[0] if law.rate else total[0] / total
    # efficiency is speedup per multiple of the first value: none from 0 (a count of 0 extra workers)
    efficiency = speedup / (values / values[0]) if values[0] > 0 else np.full(values.shape, np.nan)
    curve = sympy.Add(*(t for _, t in pieces))
    limit = _exact_turn(curve, x, values, law.rate) or _numeric_limit(values, total, threshold, law.rate)
    labels = tuple(_label(label, term, fixed_term, x) for (label, term), (_, fixed_term) in zip(kept, pieces))
    terms = tuple(_short(t) for _, t in pieces)
    regimes = _regimes(law, x, fix, values)
    explanation = Explanation(factor, values, dict(fixed), total, labels, terms, contributions,
                              speedup, efficiency, limit, (), regimes, law.rate)
    sentences = tuple(_sentences(explanation, [t for _, t in pieces], threshold))
    if zeros:
        sentences += (f"{len(zeros)} term(s) of the law's form ({', '.join(zeros)}) were fitted at 0 and are "
                      f"left out: the data gave them no share of the {'rate' if law.rate else 'time'}.",)
    parting = _parting(law, factor, values, fixed, total) + _turns_apart(law, factor, values, fixed, limit, threshold)
    return replace(explanation, sentences=sentences + parting + tuple(_regime_sentences(regimes, factor)))


def _parting(law: Law, factor: str, values: np.ndarray, fixed: dict[str, float], total: np.ndarray) -> tuple[str, ...]:
    """Where along ``factor`` the laws the data could not tell from this one (law.json's
    search.plausible) part from it by more than 5 %: beyond there its course is the search's
    choice among forms, not a measurement."""
    predicted = law.plausible_predictions({factor: values, **{f: np.full(values.shape, v) for f, v in fixed.items()}})
    if not len(predicted):
        return ()
    with np.errstate(all="ignore"):
        ratio = predicted / total
    apart = np.flatnonzero(np.nanmax(np.abs(ratio - 1), axis=0) > 0.05)
    if not apart.size:
        return (f"The {len(predicted)} law(s) that fit the measurements about as well (law.json's search.plausible) "
                f"stay within 5 % of this one from {factor} = {setting(values[0])} to {setting(values[-1])}.",)
    low, high = (round(100 * (float(f(ratio[:, apart[-1]])) - 1)) for f in (np.nanmin, np.nanmax))
    return (f"From {factor} ≈ {setting(values[apart[0]])} the {len(predicted)} law(s) that fit the measurements about "
            f"as well (law.json's search.plausible) part from this one by more than 5 % (at {factor} = "
            f"{setting(values[apart[-1]])}: {low:+d} % to {high:+d} %): the course there is "
            "the search's choice among forms, not a measurement; exprsearch suggest says which runs would settle it.",)


TURN_LOSS = 0.05  # a law by which this one's turning point loses more than this to its own disagrees


def _turns_apart(law: Law, factor: str, values: np.ndarray, fixed: dict[str, float], limit: Limit | None,
                 threshold: float) -> tuple[str, ...]:
    """Where the laws the data could not tell from this one put the lowest time (a rate's highest)
    along ``factor``, where by them this one's turning point (or, where it has none, the far end of
    the range) loses more than :data:`TURN_LOSS`: the turning point is what a user buys by, and
    beyond the measurements it is the search's choice among forms."""
    turn = "maximum" if law.rate else "minimum"
    low, high = float(values.min()), float(values.max())
    own = limit.value if limit is not None and limit.kind == turn else None
    chosen = own if own is not None else high  # where this law would buy
    # on a fine grid of the range: a turn found on its doubling values would be off by up to 2x
    fine = np.append(np.geomspace(low, high, 1024) if low > 0 else np.linspace(low, high, 1024), chosen)
    predicted = law.plausible_predictions({factor: fine, **{f: np.full(fine.shape, v) for f, v in fixed.items()}})
    whole = bool(np.all(values == np.round(values)))
    best, losses = [], []
    for curve in predicted:
        ok = np.isfinite(curve[:-1]) & (curve[:-1] > 0)
        if not ok.any() or not (np.isfinite(curve[-1]) and curve[-1] > 0):
            continue
        i = int(np.flatnonzero(ok)[np.argmax(curve[:-1][ok]) if law.rate else np.argmin(curve[:-1][ok])])
        loss = curve[i] / curve[-1] - 1 if law.rate else curve[-1] / curve[i] - 1
        if loss > TURN_LOSS:
            best.append(float(np.round(fine[i])) if whole else float(f"{fine[i]:.3g}"))
            losses.append(float(loss))
    if not best:
        return ()
    best.sort()
    where = f"≈ {_value(best[0])}" if best[0] == best[-1] else f"≈ {_value(best[0])}–{_value(best[-1])}"
    noun = "the highest rate" if law.rate else "the lowest time"
    this = ("" if own is not None else "the end of the range, ") + \
        f"where this one's {'rate is highest' if law.rate else 'time is lowest'}"
    worst = max(losses)
    if law.rate:  # a rate short of the best by that much: a share of it, below the whole
        loses = f"gives up to {100 * worst / (1 + worst):.0f} % less"
    else:
        loses = f"takes up to {100 * worst:.0f} % longer" if worst < 1 else f"takes up to {1 + worst:.3g}× as long"
    return (f"{len(best)} of the {len(predicted)} law(s) that fit the measurements about as well (law.json's "
            f"search.plausible) put {noun} at {factor} {where}, and by them {factor} = {_value(chosen)}, {this}, "
            f"{loses}. Where it lies is the search's choice among forms, not a measurement; exprsearch suggest "
            f"--at {factor}={_value(best[len(best) // 2])} says which runs would settle it.",)


def to_follow(law: Law, fixed: dict[str, float]) -> str:
    """The factor to follow when none is named: the one the law uses that ``fixed`` leaves open."""
    check_varies(law, "it has no course to follow")
    open_ = [f for f in law.factors if f not in fixed and law.uses(f)]
    if len(open_) == 1:
        return open_[0]
    if not open_:
        raise ConfigError("every factor the law uses is fixed; give the one to follow: --vary "
                          f"{next(iter(fixed), 'p')}=1..64")
    ranges = ", ".join(f"{f} measured {measured_range(law, f)}" for f in open_)
    raise ConfigError(f"the law follows {len(open_)} factors ({ranges}); name the one to follow with --vary "
                      f"({open_[0]}=1..64, or {open_[0]} alone for its default range) and --fix the others")


def default_values(law: Law, factor: str) -> np.ndarray:
    """Where to follow ``factor`` when no range is given: from its smallest measured value, doubling,
    to at least 8× its largest, as far as predictions at a larger scale are usually asked for (a
    count measured from 0: 0, then from 1)."""
    low, high = law.domain.get(factor, [None, None])
    if low == 0 and high is not None and high >= 1:  # a count from 0 (extra workers, offloaded layers)
        return np.append(0.0, default_values(replace(law, domain={**law.domain, factor: [1.0, high]}), factor))
    if low is None or not 0 < low <= high:
        raise ConfigError(f"--vary {factor}: the law does not record a positive measured range of {factor}; "
                          f"give one ({factor}=1..64)")
    steps = int(np.ceil(np.log2(8 * high / low) - 1e-9))
    return low * 2.0 ** np.arange(steps + 1)


def measured_range(law: Law, factor: str) -> str:
    """Where ``factor`` was measured, as messages write it: ``1..32``."""
    low, high = law.domain.get(factor, [None, None])
    return f"{setting(low)}..{setting(high)}" if low is not None else "at unrecorded values"


def _regimes(law: Law, x: sympy.Symbol, fix: dict, values: np.ndarray) -> tuple[Regime, ...]:
    """Every point in the varied range where the two arguments of a max or min in the law cross,
    found on a dense grid and refined on their compiled difference (:func:`_root`); with the
    law's bootstrap refits, the spread of the same crossing over them."""
    low, high = float(values.min()), float(values.max())
    if not 0 < low < high:
        return ()
    params = [sympy.Symbol(name, real=True) for name in law.constants]
    inline = {p: sympy.Float(v, 17) for p, v in zip(params, law.constants.values())}
    constants = [np.array(v) for v in law.constants.values()]
    samples = np.array(law.bootstrap, dtype=float).reshape(len(law.bootstrap), len(params))
    grid = np.geomspace(low, high, 2049)
    found = []
    for node in sorted(law.template.xreplace(fix).atoms(sympy.Max, sympy.Min), key=sympy.default_sort_key):
        if len(node.args) != 2 or not node.has(x):
            continue
        first, second = node.args
        gap = to_function(first - second, (x.name,), params)
        signs = np.sign(np.broadcast_to(gap([grid], constants), grid.shape))
        refitted = np.broadcast_to(gap([grid], [samples[:, i, None] for i in range(len(params))]),
                                   (len(samples), len(grid)))
        for i in np.flatnonzero(signs[:-1] * signs[1:] < 0):
            root = _root(lambda v, gap=gap: np.broadcast_to(gap([v], constants), v.shape), grid[i], grid[i + 1])
            larger_below = signs[i] > 0
            kind = "max" if isinstance(node, sympy.Max) else "min"
            wins_below = first if larger_below == (kind == "max") else second
            wins_above = second if wins_below is first else first
            crossings = _crossings(refitted, grid, root, signs[i])
            interval = tuple(float(v) for v in np.percentile(crossings, [2.5, 97.5])) if len(crossings) else None
            found.append(Regime(float(root), kind, _short(wins_below.xreplace(inline)),
                                _short(wins_above.xreplace(inline)), interval, len(samples) - len(crossings),
                                len(samples)))
    return tuple(sorted(found, key=lambda r: r.value))


def _root(f: Callable[[np.ndarray], np.ndarray], low: float, high: float) -> float:
    """Where ``f`` changes sign between ``low`` and ``high`` (of opposite signs), to machine
    precision: each round evaluates ``f`` at once on a grid across the bracket and keeps the first
    interval where its sign changes, 2048 times narrower. Brent's method did this a value at a
    time, but importing scipy.optimize for it was a third of ``explain``'s time and of ``plot``'s."""
    below = np.sign(f(np.array([low]))[0])
    for _ in range(8):
        if high - low <= 4 * np.spacing(high):
            break
        grid = np.linspace(low, high, 2049)
        signs = np.sign(f(grid))
        j = int(np.argmax(signs != below))  # grid[0] is low itself, of sign ``below``
        if j == 0:  # no change on the grid (f not finite across the bracket): the bracket as it is
            break
        if signs[j] == 0:
            return float(grid[j])
        low, high = grid[j - 1], grid[j]
    return float((low + high) / 2)


def _crossings(gaps: np.ndarray, grid: np.ndarray, root: float, sign: float) -> np.ndarray:
    """For each refit's gap along ``grid`` ``(S, G)``, the crossing in the same direction as the
    law's (from ``sign`` to its opposite) nearest to ``root`` in ratio, interpolated in log x;
    refits without one are left out."""
    logs = np.log(grid)
    out = []
    for row in gaps:
        with np.errstate(all="ignore"):
            where = np.flatnonzero((np.sign(row[:-1]) == sign) & (np.sign(row[1:]) == -sign))
        if where.size == 0:
            continue
        at = logs[where] + (logs[where + 1] - logs[where]) * row[where] / (row[where] - row[where + 1])
        out.append(float(np.exp(at[np.argmin(np.abs(at - np.log(root)))])))
    return np.array(out)


def _regime_sentences(regimes: tuple[Regime, ...], factor: str) -> list[str]:
    return [f"The regime changes at {factor} ≈ {r.value:.4g}{_spread(r)}: below it {r.below} sets the {r.kind}, "
            f"above it {r.above} does." for r in regimes]


def _spread(r: Regime) -> str:
    if not r.refits:
        return ""
    if r.interval is None:
        return f" (none of {r.refits} bootstrap refits places such a change in the varied range)"
    lost = (f"; {r.missing} of {r.refits} refits place no such change in the varied range" if r.missing else "")
    return f" (95 % of {r.refits} bootstrap refits: {r.interval[0]:.4g}–{r.interval[1]:.4g}{lost})"


def _label(rule: str, term: sympy.Expr, fixed: sympy.Expr, x: sympy.Symbol) -> str:
    """The grammar rule a term came from; for generic rules, how the term moves with ``x``
    (judged on ``fixed``, the term with the other factors at their values)."""
    if rule not in ("term", ""):
        return rule
    if not term.has(x):
        return "constant" if not term.free_symbols else f"independent of {x}"
    # numerically: sympy leaves a fixed factor such as log2(256.0) unevaluated, and its sign with it
    slope = float(np.asarray(to_function(sympy.diff(fixed, x), (x.name,))([np.array(1.0)])))
    if not np.isfinite(slope) or slope == 0:
        return f"varies with {x}"
    return f"falls with {x}" if slope < 0 else f"grows with {x}"


def _short(expr: sympy.Expr) -> str:
    return to_readable(expr, 4)


def _exact_turn(curve: sympy.Expr, x: sympy.Symbol, values: np.ndarray, rate: bool = False) -> Limit | None:
    """The first turn of the law inside the varied range, a minimum of a time or a maximum of a
    ``rate``: where its slope changes sign on a dense grid, refined to machine precision on the
    compiled derivative (:func:`_root`; a symbolic solve can take unbounded time and memory on
    fitted powers)."""
    slope = to_function(sympy.diff(-curve if rate else curve, x), (x.name,))
    low, high = float(values.min()), float(values.max())
    if not 0 < low < high:
        return None
    grid = np.geomspace(low, high, 2049)
    signs = np.sign(np.broadcast_to(slope([grid]), grid.shape))
    for i in np.flatnonzero((signs[:-1] < 0) & (signs[1:] > 0)):
        root = _root(lambda v: np.broadcast_to(slope([v]), v.shape), grid[i], grid[i + 1])
        value = float(to_function(curve, (x.name,))([np.array(root)]))
        return Limit(root, value, True, "maximum" if rate else "minimum")
    return None


def _numeric_limit(values: np.ndarray, total: np.ndarray, threshold: float, rate: bool = False) -> Limit | None:
    """The smallest value where time stops falling, or where doubling it saves under ``threshold``
    (for a ``rate``: where it stops rising, or where doubling gains under ``threshold``)."""
    order = np.argsort(values)
    v, t = values[order], total[order]
    worse = np.flatnonzero(np.diff(t) < 0 if rate else np.diff(t) > 0)
    if worse.size:
        i = int(worse[0])
        return Limit(float(v[i]), float(t[i]), False, "maximum" if rate else "minimum")
    for i in range(len(v)):
        doubled = np.interp(2 * v[i], v, t) if 2 * v[i] <= v[-1] else None
        if doubled is not None and (doubled < (1 + threshold) * t[i] if rate else doubled > (1 - threshold) * t[i]):
            return Limit(float(v[i]), float(t[i]), False, "diminishing")
    return None


def _value(v: float) -> str:
    """A value of a factor as a user writes it (18432, not 1.843e+04); a turning point found
    exactly to four digits."""
    return setting(v) if float(v).is_integer() else f"{v:.4g}"


def _sentences(e: Explanation, pieces: list[sympy.Expr], threshold: float) -> list[str]:
    f = e.factor
    first, last = 0, len(e.values) - 1
    dom = e.dominant()
    share = e.contributions[dom[first], first] / e.total[first]
    out = [f"At {f} = {_value(e.values[first])} the term {e.terms[dom[first]]} ({e.labels[dom[first]]}) "
           f"is {100 * share:.0f} % of the {'rate' if e.rate else 'time'} ({e.total[first]:.4g})."]
    efficiency = "" if np.isnan(e.efficiency[last]) else f" and the parallel efficiency {100 * e.efficiency[last]:.3g} %"
    out.append(f"From {f} = {_value(e.values[first])} to {_value(e.values[last])} the speedup is "
               f"{e.speedup[last]:.3g}×{efficiency}.")
    limit = e.limit
    if e.rate:
        return out + [_rate_limit(e, threshold)]
    if limit is None:
        out.append(f"Within {_value(e.values.min())}..{_value(e.values.max())} time keeps falling and every doubling of "
                   f"{f} still saves at least {100 * threshold:.0f} %.")
    elif limit.kind == "minimum":
        # the term that rises most from the lowest point to the end of the range is why time rises
        # (the largest there may be a constant: lowest at p = 0, with a constant of 10 and 2·p)
        ends = np.array([limit.value, e.values.max()])
        rises = [np.diff(np.broadcast_to(to_function(t, (f,))([ends]), ends.shape))[0] for t in pieces]
        after = int(np.argmax(rises))
        how = f"found by solving d(time)/d{f} = 0 exactly" if limit.exact else "found on the varied values"
        out.append(f"Time is lowest at {f} ≈ {_value(limit.value)} ({limit.time:.4g}, {how}); beyond "
                   f"{f} ≈ {_value(limit.value)} the term {e.terms[after]} ({e.labels[after]}) grows and time rises.")
    else:
        out.append(f"Beyond {f} ≈ {_value(limit.value)}, doubling {f} saves less than {100 * threshold:.0f} % of the time.")
    return out


def _rate_limit(e: Explanation, threshold: float) -> str:
    """Where a rate stops paying off, in words."""
    f, limit = e.factor, e.limit
    if limit is None:
        return (f"Within {_value(e.values.min())}..{_value(e.values.max())} the rate keeps rising and every doubling of {f} "
                f"still gains at least {100 * threshold:.0f} %.")
    if limit.kind == "maximum":
        how = f"found by solving d(rate)/d{f} = 0 exactly" if limit.exact else "found on the varied values"
        return f"The rate is highest at {f} ≈ {_value(limit.value)} ({limit.time:.4g}, {how}); beyond it the rate falls."
    return f"Beyond {f} ≈ {_value(limit.value)}, doubling {f} gains less than {100 * threshold:.0f} % more rate."
