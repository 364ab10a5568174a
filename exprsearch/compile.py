"""Candidate expressions → numpy functions, compiled once and evaluated on whole columns.

Every expression goes through :func:`to_function` (``sympy.lambdify`` with ``cse=True``).
Nonlinear constants are passed as arrays of shape ``(S, 1)`` so one call evaluates a whole
differential-evolution population over all rows, giving ``(S, n)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import sympy

from .candidates import Candidate

Function = Callable[[Sequence[np.ndarray], Sequence[np.ndarray]], np.ndarray]


def factor_symbol(name: str) -> sympy.Symbol:
    """The symbol a factor column has in every expression."""
    return sympy.Symbol(name, positive=True)


def to_function(
    expr: sympy.Expr, factors: Sequence[str], params: Sequence[sympy.Symbol] = ()
) -> Function:
    """Compile ``expr`` into ``f(columns, params)`` evaluated with numpy, broadcasting both."""
    symbols = [factor_symbol(f) for f in factors]
    raw = sympy.lambdify([symbols, list(params)], expr, modules="numpy", cse=True)

    def evaluate(columns: Sequence[np.ndarray], values: Sequence[np.ndarray] = ()) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(raw(list(columns), list(values)), dtype=float)

    return evaluate


Column = Callable[[Sequence[np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class CompiledCandidate:
    """A candidate's basis columns and offset on one dataset, as functions of its nonlinear
    constants; terms without nonlinear constants are arrays computed once."""

    candidate: Candidate
    basis: tuple[np.ndarray | Column, ...]
    offset: np.ndarray | Column | None
    n_rows: int

    def design(self, nonlinear: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Basis matrix ``(S, n, m)`` and offset ``(S, n)`` for nonlinear values ``(q, S)``."""
        values = [v[:, None] for v in nonlinear]
        size = nonlinear.shape[1]
        basis = np.empty((size, self.n_rows, len(self.basis)))
        for j, term in enumerate(self.basis):
            basis[:, :, j] = term if isinstance(term, np.ndarray) else term(values)
        offset = np.zeros((size, self.n_rows))
        if isinstance(self.offset, np.ndarray):
            offset[:] = self.offset
        elif self.offset is not None:
            offset[:] = self.offset(values)
        return basis, offset


class Compiler:
    """Compiles candidates on one dataset's columns, compiling and evaluating each distinct
    term once however many candidates share it."""

    def __init__(self, factors: Sequence[str], columns: np.ndarray) -> None:
        self.factors = tuple(factors)
        self.columns = [np.ascontiguousarray(columns[:, i]) for i in range(columns.shape[1])]
        self._functions: dict[sympy.Expr, Function] = {}
        self._values: dict[sympy.Expr, np.ndarray] = {}

    def compile(self, candidate: Candidate) -> CompiledCandidate:
        params = candidate.nonlinear
        basis = tuple(self._term(term, params) for term in candidate.basis)
        offset = None if candidate.offset == 0 else self._term(candidate.offset, params)
        return CompiledCandidate(candidate, basis, offset, len(self.columns[0]))

    def _term(self, expr: sympy.Expr, params: tuple[sympy.Symbol, ...]) -> np.ndarray | Column:
        used = tuple(p for p in params if p in expr.free_symbols)
        # Rename this candidate's constants so equal terms in different candidates share a key.
        local = tuple(sympy.Symbol(f"_theta{i}", real=True) for i in range(len(used)))
        key = expr.xreplace(dict(zip(used, local)))
        if not used:
            if key not in self._values:
                value = to_function(key, self.factors)(self.columns)
                self._values[key] = np.broadcast_to(value, (len(self.columns[0]),))
            return self._values[key]
        if key not in self._functions:
            self._functions[key] = to_function(key, self.factors, local)
        function, columns = self._functions[key], self.columns
        positions = [params.index(p) for p in used]
        return lambda values: function(columns, [values[i] for i in positions])
