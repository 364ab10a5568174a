"""Score the fitted candidates of the Pareto front (front.py) and choose one law.

The rule (docs/method.md): where repetitions measure the noise, a law is *adequate* when a
lack-of-fit F-test cannot tell its residuals from that noise (p ≥ ``alpha``). The chosen law is
the adequate law with the fewest constants (the best-fitting one among those), so a gain smaller
than the noise never buys a more complex law; the constant alone, which says no factor matters,
is kept out when laws with terms fit significantly better by an F-test against the same noise
or by the extended BIC (the lack-of-fit test has little power with few repetitions), and an
adequate law with more constants is taken where it fits significantly better by that F-test and
its extended BIC is strongly lower (a term the others half absorb; other shapes that fit
better, where no law holding the chosen one's terms does). Without
repetitions, or when no law is adequate, the chosen law has the lowest extended BIC, which
charges for every constant and for how many laws of at most that size the grammar offered.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import mpmath
import numpy as np
from mpmath.libmp import NoConvergence

from .fit import Fit

MSE_FLOOR = 1e-20  # relative errors below 1e-10 are numerically exact fits
T_PINNED = 2.0  # a term whose coefficient is within two standard errors of zero is not pinned down
EBIC_TIE = 2.0  # extended BICs closer than this are not evidence for one law over the other
EBIC_STRONG = 6.0  # a difference beyond this is strong evidence (Kass and Raftery's scale)
ALPHA = 0.01  # a lack-of-fit p below this: the law misses the configurations by more than their noise


@dataclass(frozen=True)
class Noise:
    """Pure error from repeated configurations, in relative units. ``summarised``: the rows are
    each configuration's statistic of its runs (``--measure``), so a law's residuals hold the
    whole noise (``sum_squares / dof`` is one row's) rather than leaving the repeats' part aside."""

    sum_squares: float
    dof: int
    configurations: int
    summarised: bool = False

    @property
    def relative_sd(self) -> float | None:
        return math.sqrt(self.sum_squares / self.dof) if self.dof > 0 else None


@dataclass(frozen=True)
class Scored:
    """A law on the front with every figure the selection rule and the user look at."""

    fit: Fit
    complexity: int
    n_constants: int
    mape: float
    rmse: float
    r2: float
    cv_mape: float
    ebic: float
    lack_of_fit_p: float | None
    holdout_mape: float | None = None  # error on each factor's largest value, fitted without it (mean)
    weakest_t: float | None = None  # smallest |t| among the coefficients of the terms that vary


@dataclass(frozen=True)
class Ranking:
    """The Pareto front (simplest first) and the index of the chosen law in it."""

    front: tuple[Scored, ...]
    chosen: int
    rule: str
    noise: Noise

    @property
    def law(self) -> Scored:
        return self.front[self.chosen]


def alternatives(fits: Sequence[Fit], n_rows: int, count: int = 100) -> tuple[Fit, ...]:
    """The ``count`` accepted fits of lowest BIC, one per law: the laws besides the front's (which
    keeps one per complexity) that the data may not rule out."""
    ok = [f for f in fits if f.ok and math.isfinite(f.mse)]
    scores = [bic(f, n_rows) for f in ok]
    return tuple(ok[i] for i in heapq.nsmallest(count, range(len(ok)), key=lambda i: (scores[i], i)))


def bic(fit: Fit, n_rows: int) -> float:
    """n·ln(MSE) + k·ln(n): how :func:`alternatives` (and ``suggest``'s plausible laws) order fits."""
    return bic_of(fit.mse, n_rows, fit.candidate.n_constants)


def bic_of(mse: float, n_rows: int, constants: int) -> float:
    """:func:`bic` from a relative MSE and a count of constants (a law fitted in parts, per level)."""
    return n_rows * math.log(max(mse, MSE_FLOOR)) + constants * math.log(n_rows)


def contenders(fits: Sequence[Fit], potential: Sequence[float], margin: float) -> list[int]:
    """Indices of the fits that refining could put on the Pareto front: those whose ``potential``
    (the cost refining might reach) is within ``margin`` (relative) of the lowest cost of every
    other fit at most as complex. The others cannot beat the front, so need no refinement."""
    cost = np.array([f.cost if f.ok else np.inf for f in fits])
    level = np.array([f.candidate.complexity for f in fits])
    order = np.lexsort((cost, level))
    threshold = np.empty(len(fits))
    below = np.inf
    for size in np.unique(level):
        members = order[level[order] == size]  # cheapest first
        first = cost[members[0]]
        second = cost[members[1]] if len(members) > 1 else np.inf
        threshold[members] = min(below, first)
        threshold[members[0]] = min(below, second)
        below = min(below, first)
    return [i for i in range(len(fits)) if fits[i].ok and potential[i] <= threshold[i] * (1 + margin)]


def noise(y: np.ndarray, configurations: np.ndarray, given: tuple[float, int] | None = None) -> Noise:
    """Pooled within-configuration variation of ``y`` relative to each measurement; or, where
    ``given`` (one row's relative variance and its degrees of freedom, from the runs each row
    summarises), that noise."""
    if given is not None:
        variance, dof = given
        return Noise(variance * dof, dof, len(np.unique(configurations)), summarised=True)
    _, group = np.unique(configurations, return_inverse=True)
    count = np.bincount(group)
    mean = np.bincount(group, weights=y) / count
    total = float(np.sum(((y - mean[group]) / y) ** 2))
    dof = int(np.sum(count[count > 1] - 1))
    return Noise(total, dof, len(count))


def metrics(y: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """MAPE (%), RMSE (target units) and R² of ``predicted`` against ``y``."""
    residual = predicted - y
    spread = float(np.sum((y - y.mean()) ** 2))
    return {
        "mape": float(100 * np.mean(np.abs(residual / y))),
        "rmse": float(np.sqrt(np.mean(residual**2))),
        "r2": float(1 - np.sum(residual**2) / spread) if spread > 0 else 1.0,
    }


def extended_bic(mse: float, n_rows: int, n_constants: int, space: int) -> float:
    """n·ln(MSE) + (k+1)·ln(n) + 2·ln(laws of this size the grammar offered)."""
    return (
        n_rows * math.log(max(mse, MSE_FLOOR))
        + (n_constants + 1) * math.log(n_rows)
        + 2 * math.log(max(space, 1))
    )


def lack_of_fit_p(mse: float, n_rows: int, n_constants: int, pure: Noise) -> float | None:
    """p-value of the lack-of-fit F-test, or None without repetitions to test against. Rows that
    summarise their runs (``pure.summarised``) hold no repeats, so their whole residual is held
    against one row's noise."""
    lof_dof = pure.configurations - n_constants
    if pure.dof < 2 or lof_dof < 1 or pure.sum_squares <= 0:
        return None
    lack = max(n_rows * mse - (0.0 if pure.summarised else pure.sum_squares), 0.0) / lof_dof
    return f_survival(lof_dof, pure.dof, lack / (pure.sum_squares / pure.dof))


def f_survival(d1: float, d2: float, f: float) -> float:
    """P(F > f) for an F distribution with (d1, d2) degrees of freedom, as the regularised
    incomplete beta function: mpmath comes with sympy, while importing scipy.special costs 0.12 s
    of a one-second run (about 0.1 ms a call here). With thousands of degrees of freedom mpmath's
    series slows (24 ms a call at 5,000 configurations; 0.05-4 s a call against 5,000-96,000
    repeats) or does not converge at all ("hypsum() failed to converge" at 10,000 configurations,
    "converges too slowly" for a far misfit in a per-step log); scipy.special answers there, in a
    run of seconds."""
    if d1 < 1000 and d2 < 2000:
        try:
            return float(mpmath.betainc(d2 / 2, d1 / 2, 0, d2 / (d2 + d1 * f), regularized=True))
        except (ValueError, NoConvergence):
            pass
    from scipy.special import fdtrc

    return float(fdtrc(d1, d2, f))


def space_sizes(counts: Mapping[int, int]) -> dict[int, int]:
    """How many laws the grammar offered with at most each number of constants, from how many
    it offered with exactly each number."""
    return {k: sum(v for size, v in counts.items() if size <= k) for k in counts}


def score(
    fitted: Fit, y: np.ndarray, predicted: np.ndarray, cv_mape: float, space: dict[int, int],
    pure: Noise, holdout_mape: float | None = None, weakest_t: float | None = None,
) -> Scored:
    """All figures for one fitted law."""
    k = fitted.candidate.n_constants
    m = metrics(y, predicted)
    return Scored(
        fit=fitted,
        complexity=fitted.candidate.complexity,
        n_constants=k,
        mape=m["mape"],
        rmse=m["rmse"],
        r2=m["r2"],
        cv_mape=100 * cv_mape,
        ebic=extended_bic(fitted.mse, len(y), k, max((v for size, v in space.items() if size <= k), default=1)),
        lack_of_fit_p=lack_of_fit_p(fitted.mse, len(y), k, pure),
        holdout_mape=None if holdout_mape is None else 100 * holdout_mape,
        weakest_t=weakest_t,
    )


def extrapolating(front: list[Scored], pure: Noise, slack: float = 1.5, validation: str = "largest",
                  n_rows: int | None = None) -> list[int]:
    """Laws whose validation error — on the held-out largest configurations, or cross-validated
    with ``validation="kfold"`` — is within ``slack`` × the best one's (or within twice the
    measured noise of it): the ones worth trusting beyond the data. With ``n_rows``, a law that
    a law of no more constants fits better by strong evidence (BIC) is none of them: a few held-out
    rows, refitted without, cannot outweigh every row's (:func:`outfitted`)."""
    errors = [s.cv_mape if validation == "kfold" else s.holdout_mape for s in front]
    if any(e is None or math.isnan(e) for e in errors):
        return list(range(len(front)))
    noise = 2 * 100 * (pure.relative_sd or 0.0)
    beaten = outfitted(front, n_rows) if n_rows else set()
    best = min(e for i, e in enumerate(errors) if i not in beaten)
    return [i for i, e in enumerate(errors) if e <= max(slack * best, best + noise) and i not in beaten]


def outfitted(front: Sequence[Scored], n_rows: int) -> set[int]:
    """The laws of ``front`` that another of no more constants fits better by more than strong
    evidence (BIC lower by :data:`EBIC_STRONG`)."""
    scores = [bic_of(s.fit.mse, n_rows, s.n_constants) for s in front]
    return {i for i, s in enumerate(front)
            if any(o.n_constants <= s.n_constants and scores[j] < scores[i] - EBIC_STRONG for j, o in enumerate(front))}


def select(front: list[Scored], pure: Noise, alpha: float = ALPHA, robust: bool = False,
           validation: str = "largest", n_rows: int | None = None) -> Ranking:
    """Choose the law on ``front`` by the rule in the module docstring (``n_rows``, the rows the
    laws were fitted on, enables the test of the constant alone).

    With a robust loss the outliers that the loss discounts still inflate the measured noise, so
    the noise test would call every law adequate: the extended BIC decides alone.
    """
    pool = extrapolating(front, pure, validation=validation, n_rows=n_rows)
    what = "cross-validated folds" if validation == "kfold" else "held-out largest values (top octave) of each factor"
    held = "" if len(pool) == len(front) else f", among the {len(pool)} law(s) that best predict the {what}"
    pinned = [i for i in pool if front[i].weakest_t is None or front[i].weakest_t >= T_PINNED]
    if pinned and len(pinned) < len(pool):
        pool = pinned
        held += f" and whose every term the data pin down (|t| >= {T_PINNED:g})"
    adequate = [] if robust else [
        i for i in pool if front[i].lack_of_fit_p is not None and front[i].lack_of_fit_p >= alpha]
    flat = [i for i in adequate if not _varies(front[i])]
    beaten = _dependence_shown(flat[0], pool, front, pure, n_rows, alpha) if flat and n_rows else ""
    if beaten:
        adequate = [i for i in adequate if i != flat[0]]
        held += beaten
    if adequate:
        chosen, tied = _simplest_of_best(adequate, front)
        chosen, stepped = _stepped_up(chosen, adequate, front, pure, n_rows, alpha)
        rule = (
            f"fewest constants among the {len(adequate)} law(s) on the front whose misfit is "
            f"within the measured noise (lack-of-fit p >= {alpha}){held}{tied}{stepped}"
        )
    else:
        why = ("robust loss: the noise test does not apply" if robust else
               "no law with terms fits within the measured noise" if beaten else _untested(pool, front, pure))
        chosen = min(pool, key=lambda i: (front[i].ebic, front[i].complexity))
        rule = f"lowest extended BIC on the front ({why}){held}"
    return Ranking(tuple(front), chosen, rule, pure)


def _untested(pool: list[int], front: Sequence[Scored], pure: Noise) -> str:
    """Why no law in ``pool`` passed the lack-of-fit test: none fits within the noise, or the
    test could not be made (no repetitions, too few, or repetitions that agree exactly)."""
    if pure.dof == 0:
        return "no repeated configurations"
    if pure.dof < 2:
        return "one repetition measures the noise; the lack-of-fit test needs two"
    if pure.sum_squares <= 0:
        return "the repeated configurations measured identical times, so there is no noise to test against"
    if all(front[i].lack_of_fit_p is None for i in pool):
        return "every law has as many constants as configurations, so none can be tested against the noise"
    return "no law fits within the measured noise"


def _varies(law: Scored) -> bool:
    return any(t.varies for t in law.fit.candidate.terms)


def _dependence_shown(flat: int, pool: list[int], front: Sequence[Scored], pure: Noise, n_rows: int,
                      alpha: float) -> str:
    """A phrase when the laws with terms in ``pool`` show that the factors matter, though the
    constant alone ``front[flat]`` (which every such law extends) passed the lack-of-fit test:
    the best-fitting of the simplest of them fits significantly better (an extra-sum-of-squares
    F-test against the measured noise, at ``alpha``), or one has an extended BIC lower by more
    than ``EBIC_TIE``. Else empty."""
    varying = [i for i in pool if _varies(front[i]) and front[i].n_constants > front[flat].n_constants]
    if not varying or pure.dof < 1 or pure.sum_squares <= 0:
        return ""
    fewest = min(front[i].n_constants for i in varying)
    best = min((i for i in varying if front[i].n_constants == fewest), key=lambda i: front[i].fit.mse)
    p = _extra_sum_p(front[flat], front[best], pure, n_rows)
    if p < alpha:
        return (f"; the constant alone left out, as law {best + 1} fits significantly better "
                f"(F-test against the measured noise, p = {p:.2g})")
    favoured = min(varying, key=lambda i: front[i].ebic)
    if front[favoured].ebic < front[flat].ebic - EBIC_TIE:
        return (f"; the constant alone left out, as law {favoured + 1} has an extended BIC lower by "
                f"{front[flat].ebic - front[favoured].ebic:.1f}")
    return ""


def _extra_sum_p(small: Scored, large: Scored, pure: Noise, n_rows: int) -> float:
    """The extra-sum-of-squares F-test of ``large`` (more constants) against ``small``, its gain
    per added constant measured against the noise of the repetitions: p-value."""
    extra = large.n_constants - small.n_constants
    gain = n_rows * max(small.fit.mse - large.fit.mse, 0.0) / extra
    return f_survival(extra, pure.dof, gain / (pure.sum_squares / pure.dof))


def _stepped_up(chosen: int, adequate: list[int], front: Sequence[Scored], pure: Noise, n_rows: int | None,
                alpha: float) -> tuple[int, str]:
    """A law with more constants than ``front[chosen]`` where the data show it: it fits
    significantly better by an extra-sum-of-squares F-test against the measured noise (p <
    ``alpha``/m, m the adequate laws with more constants: any could pass by chance, Bonferroni),
    and its extended BIC, which charges the search's size, is lower by more than
    ``EBIC_STRONG``: strong evidence, as a constant beyond the fewest adequate ones must bring.
    Repeated from the law stepped to. The lack-of-fit test alone has too little power to see a
    term the law's others half absorb (exposed communication beside a max), or a law of other
    shapes that fits better (``b + √n/b + 1/b`` at lack-of-fit p = 0.45 against 0.013 for
    ``n·log2(b)/b + log2(n)/b²``). Where the larger law does not hold the chosen one's terms the
    F-test is not exact, but it still weighs the gain per added constant against the noise; so a
    law that does, where one passes, is taken first (``1 + 50/p + 0.05·p`` went to ``c/p^k``
    beside ``c/p + c·p`` otherwise, 14 % off at p = 32 against 1.4 %)."""
    if not n_rows or pure.dof < 1 or pure.sum_squares <= 0:
        return chosen, ""
    start, p_value, tried = chosen, None, 1
    while True:
        terms = set(front[chosen].fit.candidate.terms)
        larger = [i for i in adequate if front[i].n_constants > front[chosen].n_constants]
        passed: dict[int, float] = {}
        for i in larger:
            if front[i].ebic >= front[chosen].ebic - EBIC_STRONG:
                continue
            p = _extra_sum_p(front[chosen], front[i], pure, n_rows)
            if p < alpha / len(larger):  # Bonferroni: any of the larger laws could pass by chance
                passed[i] = p
        if not passed:
            break
        # an extension of the law first: the F-test is exact there, and the law's own terms stay
        extensions = [i for i in passed if terms < set(front[i].fit.candidate.terms)]
        chosen, _ = _simplest_of_best(extensions or list(passed), front)  # as the choice itself picks among laws
        p_value, tried = passed[chosen], len(larger)
    if chosen == start:
        return chosen, ""
    nested = set(front[start].fit.candidate.terms) < set(front[chosen].fit.candidate.terms)
    how = f"holds law {start + 1}'s terms and more" if nested else f"has more constants than law {start + 1}"
    among = f" < {alpha:g}/{tried}, of {tried} larger laws" if tried > 1 else ""
    return chosen, (f"; law {chosen + 1} {how}, and fits significantly better (F-test against the measured "
                    f"noise, p = {p_value:.2g}{among}) with an extended BIC lower by more than {EBIC_STRONG:g}")


def _simplest_of_best(pool: list[int], front: Sequence[Scored]) -> tuple[int, str]:
    """Of the laws in ``pool`` with the fewest constants, the least complex among those whose
    extended BIC is within ``EBIC_TIE`` of the lowest (the data cannot tell them apart: prefer the
    lowest-order shape), and a phrase saying so when that is not the lowest itself. Used among
    adequate laws only: without repetitions nothing says the laws are equally good (on the public
    single-factor series applying it there raised the CM-DARE median error from 8.4 % to 9.6 %)."""
    fewest = min(front[i].n_constants for i in pool)
    pool = [i for i in pool if front[i].n_constants == fewest]
    best = min(pool, key=lambda i: (front[i].ebic, front[i].complexity))
    tied = [i for i in pool if front[i].ebic <= front[best].ebic + EBIC_TIE]
    chosen = min(tied, key=lambda i: (front[i].complexity, front[i].ebic))
    if chosen == best:
        return chosen, ""
    return chosen, (f"; the simplest of the {len(tied)} law(s) within {EBIC_TIE:g} of the lowest extended BIC, "
                    "which the data cannot tell apart")
