"""The Pareto front of error and complexity: of each complexity the best fit, where it fits better
than every simpler one. Of laws the data cannot tell apart the front keeps the lowest-order one
where they fit alike, and the simplest where the better fit is only weakly better (docs/method.md)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import sympy

from .candidates import Term
from .fit import Fit
from .rank import EBIC_STRONG, MSE_FLOOR, bic

MSE_TIE = 1e-7  # relative MSEs this close are one fit (shapes the data cannot tell apart), not two
MSE_EXACT = 1e-12  # below it a fit is exact but for rounding, whose differences say nothing of shapes


def pareto_front(fits: list[Fit], order: Callable[[Fit], tuple[float, ...]] | None = None,
                 n_rows: int | None = None) -> list[Fit]:
    """Fits no other fit beats on both complexity and cost, simplest first. Fits whose errors
    agree to :data:`MSE_TIE` fit alike (shapes of a factor its values do not pin down): the
    regularisation's share of the cost then decides nothing the data say, so a more complex one
    does not enter, and of one complexity the lowest ``order`` is kept (the lowest-order shape
    among laws the data cannot tell apart; docs/method.md). With ``n_rows``, a law of as many
    constants that the best of its complexity beats by less than strong evidence (BIC) and that
    takes fewer operations is kept instead: three runs that fit ``a + b/p²`` a little better than
    ``a + b/p`` do not show that time falls with the square of the workers. Laws with fitted
    exponents are left to them: their template's operations do not say how simple the fit is; so
    are exact fits (noise-free data, rounded), where the laws' differences are the rounding's."""
    ordered = sorted((f for f in fits if f.ok), key=lambda f: (f.candidate.complexity, f.cost))
    front: list[Fit] = []
    for _, group in itertools.groupby(ordered, key=lambda f: f.candidate.complexity):
        best, *others = group
        if front and (best.cost >= front[-1].cost * (1 - 1e-9) or _tied(best, front[-1])):
            continue  # no better than a simpler law
        tied = [f for f in others if _tied(f, best)]
        pick = min([best, *tied], key=order) if order is not None and tied else best
        if n_rows is not None and not pick.candidate.n_nonlinear and best.mse > MSE_EXACT:
            simpler = [f for f in others if not f.candidate.n_nonlinear and f.mse > MSE_EXACT
                       and _weakly_better(best, f, n_rows) and _operations(f) < _operations(pick)]
            if simpler:
                fewest = min(map(_operations, simpler))  # the order asked only of the fewest's laws
                simplest = [f for f in simpler if _operations(f) == fewest]
                pick = min(simplest, key=lambda f: (order(f) if order is not None else (), f.cost))
        front.append(pick)
    return front


def _operations(fit: Fit) -> int:
    """How many operations the law's form takes (``a + b/p``: 2, ``a + b/p²``: 3): its terms'
    and one addition between each two, as sympy counts its template (no term of a law is
    negative), without building the template, which costs more than the rest of the front."""
    terms = fit.candidate.terms
    return sum(_term_operations(t) for t in terms) + len(terms) - 1


@functools.lru_cache(maxsize=4096)  # terms are kept per process, and a profile's series share them
def _term_operations(term: Term) -> int:
    return int(sympy.count_ops(term.pattern))


def _weakly_better(best: Fit, other: Fit, n_rows: int) -> bool:
    """Whether ``best`` fits better than ``other``, of as many constants, by less than strong
    evidence: their BICs differ by less than 6."""
    return (other.candidate.n_constants == best.candidate.n_constants
            and bic(other, n_rows) - bic(best, n_rows) < EBIC_STRONG)


def _tied(a: Fit, b: Fit) -> bool:
    return abs(a.mse - b.mse) <= MSE_TIE * max(a.mse, b.mse, MSE_FLOOR)
