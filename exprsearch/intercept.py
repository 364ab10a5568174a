"""A law that grows with every factor may start below zero.

The default grammar's constant is non-negative: beside a term that falls as a factor grows
(``b/p``), a negative constant bends the law down past the data towards times below zero, and
on the public tables such laws extrapolated worse (docs/method.md). Where every other term of a
law grows with each factor (``log2 p``, ``p²``), the constant only sets where the law starts, and
a non-negative one cannot write ``log2(p/1000) = log2 p − 9.97`` (Extra-P's ``one_parameter_6``).
So a fitted law whose lone constant (of a kind marked ``negative_if_growing``) the bound held at
zero, and whose other terms all grow, is fitted again with that constant free, beside the law
as it was; the ranking chooses between them as between any two laws.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Sequence

import numpy as np
import sympy

from .candidates import Candidate, Term, occurrence
from .compile import Compiler
from .fit import Fit, FitSettings, fit
from .grammar import fresh

DOUBLINGS = 2.0 ** np.arange(0, 11)  # a term grows if it never falls up to 1024 times a factor's measured values


def free_where_growing(fits: list[Fit], compiler: Compiler, y: np.ndarray, settings: FitSettings,
                       kinds: Collection[str]) -> list[Fit]:
    """``fits`` and, for each accepted fit whose lone constant of one of ``kinds`` sits at its
    bound of zero while every other term grows with each factor, the same law (its exponents as
    fitted) fitted again with that constant free, where it comes out negative."""
    if not kinds:
        return fits
    columns = np.unique(np.column_stack(compiler.columns), axis=0)  # each configuration once: a step log repeats them
    known: dict[tuple[Term, tuple[float, ...]], bool] = {}  # a term is shared by many fits

    def grows(term: Term, exponents: list[float]) -> bool:
        key = (term, tuple(exponents))
        if key not in known:
            known[key] = _grows(term, exponents, compiler, columns)
        return known[key]

    extra = []
    for fitted in fits:
        freed = _freed(fitted, compiler.factors, kinds, grows)
        if freed is None:
            continue
        candidate, start, name = freed
        again = fit(compiler.compile(candidate), y, settings, start=start, refine=False)
        if again.ok and again.values[name] < 0:
            extra.append(again)
    return fits + extra


def _freed(fitted: Fit, factors: Sequence[str], kinds: Collection[str],
           grows: Callable[[Term, list[float]], bool]) -> tuple[Candidate, Fit, str] | None:
    """The candidate of ``fitted`` with its lone constant of a kind in ``kinds`` free, a start at
    its exponents and the freed constant's name; None where the rule does not apply (``grows``
    says whether a term, at its exponents, grows with each factor)."""
    candidate = fitted.candidate
    alone = [i for i, t in enumerate(candidate.terms) if t.key == 1 and len(t.kinds) == 1 and t.coefficient == 0]
    if not fitted.ok or len(alone) != 1 or len(candidate.terms) < 2:
        return None
    i = alone[0]
    kind = candidate.terms[i].kinds[0]
    if kind not in kinds or candidate.limits[kind][0] != 0 or fitted.values[candidate.names[i][0]] > 0:
        return None
    exponents = {s.name: fitted.values[s.name] for s in candidate.nonlinear}
    for j, (term, names) in enumerate(zip(candidate.terms, candidate.names)):
        held = [exponents[n] for k, n in enumerate(names) if k != term.coefficient]
        if j != i and not grows(term, held):
            return None
    # as binding renames a kind: a name no kind has and whose numbered constants no factor is called
    name = fresh("a", lambda n: n in candidate.limits or any(re.fullmatch(rf"{n}\d+", f) for f in factors), "a")
    symbol = sympy.Symbol(name, real=True)
    old = candidate.terms[i]
    free = Term(symbol, occurrence(0), (name,), 0, old.key, old.complexity, symbol)
    freed = Candidate(candidate.terms[:i] + (free,) + candidate.terms[i + 1:], candidate.complexity,
                      {**candidate.limits, name: (-math.inf, math.inf)})
    start = Fit(freed, dict(zip((s.name for s in freed.nonlinear), exponents.values())), ok=True)
    return freed, start, freed.names[i][0]


def _grows(term: Term, exponents: list[float], compiler: Compiler, columns: np.ndarray) -> bool:
    """Whether ``term`` (its exponents at ``exponents``) never falls as any one factor doubles,
    up to 1024 times, from any measured configuration (the rows of ``columns``, each once); its key is
    compiled by ``compiler``, a product as its factors."""
    if not term.varies:
        return True
    function = compiler.function(term.key, len(exponents))
    values = [np.array(v) for v in exponents]
    for f in range(columns.shape[1]):
        grid = np.repeat(columns[None], len(DOUBLINGS), axis=0)
        grid[:, :, f] *= DOUBLINGS[:, None]
        flat = grid.reshape(-1, columns.shape[1])
        out = np.broadcast_to(function(list(flat.T), values), (len(flat),)).reshape(len(DOUBLINGS), -1)
        if not np.isfinite(out).all() or (np.diff(out, axis=0) < -1e-12 * np.abs(out[:-1])).any():
            return False
    return True
