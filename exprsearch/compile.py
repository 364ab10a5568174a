"""Candidate expressions → numpy functions, compiled once and evaluated on whole columns.

Every expression goes through :func:`to_function` (``sympy.lambdify`` with ``cse=True``).
A candidate's terms are compiled by their column key (:attr:`candidates.Term.key`), so a term
shared by thousands of candidates is compiled and evaluated once per dataset. Nonlinear
constants are passed as arrays of shape ``(S, 1)`` so one call evaluates a whole
differential-evolution population over all rows, giving ``(S, n)``.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import sympy

from . import shared
from .candidates import Candidate, theta

Function = Callable[[Sequence[np.ndarray], Sequence[np.ndarray]], np.ndarray]


def factor_symbol(name: str) -> sympy.Symbol:
    """The symbol a factor column has in every expression."""
    return sympy.Symbol(name, positive=True)


def to_function(
    expr: sympy.Expr, factors: Sequence[str], params: Sequence[sympy.Symbol] = ()
) -> Function:
    """Compile ``expr`` into ``f(columns, params)`` evaluated with numpy, broadcasting both
    (once per process: the series of a profile share most of their terms)."""
    return _compiled(expr, tuple(factors), tuple(params))


@functools.lru_cache(maxsize=8192)
def _compiled(expr: sympy.Expr, factors: tuple[str, ...], params: tuple[sympy.Symbol, ...]) -> Function:
    symbols = [factor_symbol(f) for f in factors]
    # numpy's own namespace: modules="numpy" runs ``from numpy import *``, which imports
    # numpy.f2py, numpy.testing and more (~40 ms) for functions numpy already holds.
    raw = sympy.lambdify([symbols, list(params)], expr, modules=np, cse=True)

    def evaluate(columns: Sequence[np.ndarray], values: Sequence[np.ndarray] = ()) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(raw(list(columns), list(values)), dtype=float)

    return evaluate


Column = Callable[[Sequence[np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class CompiledCandidate:
    """A candidate's basis columns and offset terms on one dataset, as functions of its
    nonlinear constants; terms without nonlinear constants are arrays computed once."""

    candidate: Candidate
    basis: tuple[np.ndarray | Column, ...]
    offset: tuple[np.ndarray | Column, ...]
    n_rows: int

    def design(self, nonlinear: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Basis matrix ``(S, n, m)`` and offset ``(S, n)`` for nonlinear values ``(q, S)``."""
        values = [v[:, None] for v in nonlinear]
        size = nonlinear.shape[1]
        basis = np.empty((size, self.n_rows, len(self.basis)))
        for j, term in enumerate(self.basis):
            basis[:, :, j] = term if isinstance(term, np.ndarray) else term(values)
        offset = np.zeros((size, self.n_rows))
        for term in self.offset:
            offset += term if isinstance(term, np.ndarray) else term(values)
        return basis, offset


class Compiler:
    """Compiles candidates on one dataset's columns, compiling and evaluating each distinct
    term once however many candidates share it."""

    def __init__(self, factors: Sequence[str], columns: np.ndarray) -> None:
        self.factors = tuple(factors)
        self.columns = [np.ascontiguousarray(columns[:, i]) for i in range(columns.shape[1])]
        self.n_rows = columns.shape[0]
        self._functions: dict[sympy.Expr, Function] = {}
        self._values, self.grids = self._shared()

    def _shared(self) -> tuple[dict, dict]:
        """The term columns evaluated on these factor columns, kept for the searches of this
        process on the same columns (a profile's series share their grid, not their times)."""
        digest = hashlib.sha1(np.ascontiguousarray(np.column_stack(self.columns) if self.columns else
                                                   np.zeros((self.n_rows, 0))).tobytes()).hexdigest()
        return shared.tables("values", (self.factors, self.n_rows, digest), 2)

    def __getstate__(self) -> dict:
        """Sent to a spawned worker without its caches: compiled functions are closures (they do
        not pickle) and the tables of values are the worker's own."""
        return {**self.__dict__, "_functions": {}, "_values": {}, "grids": {}}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._values, self.grids = self._shared()

    def subset(self, rows: np.ndarray) -> Compiler:
        """A compiler of the same terms on ``rows`` only, sharing the compiled functions (the
        screening evaluates thousands of terms on a few configurations, not on every row)."""
        part = Compiler(self.factors, np.column_stack(self.columns)[rows] if self.columns else
                        np.zeros((len(rows), 0)))
        part._functions = self._functions
        return part

    def compile(self, candidate: Candidate) -> CompiledCandidate:
        basis, offset, start = [], [], 0
        for term in candidate.terms:
            positions = tuple(range(start, start + term.n_nonlinear))
            start += term.n_nonlinear
            column = self._column(term.key, positions)
            (offset if term.coefficient is None else basis).append(column)
        return CompiledCandidate(candidate, tuple(basis), tuple(offset), self.n_rows)

    def value(self, key: sympy.Expr) -> np.ndarray:
        """The column of a constant-free term key, evaluated once; a product is the product of
        its factors' columns, so products of transforms share their compiled factors."""
        if key not in self._values:
            if key.is_Mul:
                with np.errstate(all="ignore"):
                    value = np.prod([self.value(a) for a in key.args], axis=0)
            else:
                value = to_function(key, self.factors)(self.columns)
            self._values[key] = np.broadcast_to(value, (self.n_rows,))
        return self._values[key]

    def values(self, key: sympy.Expr, thetas: np.ndarray) -> np.ndarray:
        """The column of a key with one nonlinear constant at each of ``thetas``: ``(G, n)``."""
        out = self.function(key, 1)(self.columns, [thetas[:, None]])
        return np.broadcast_to(out, (len(thetas), self.n_rows))

    def function(self, key: sympy.Expr, count: int) -> Function:
        """``key`` compiled with its nonlinear constants ``_theta0…`` as parameters; a product
        multiplies its factors, each compiled (once) with only the constants it holds."""
        if key not in self._functions:
            self._functions[key] = self._product(key, count) if key.is_Mul else \
                to_function(key, self.factors, [theta(i) for i in range(count)])
        return self._functions[key]

    def _product(self, key: sympy.Expr, count: int) -> Function:
        names = [theta(i) for i in range(count)]
        fixed = [a for a in key.args if not a.free_symbols & set(names)]
        parts = []
        for arg in key.args:
            held = [i for i, t in enumerate(names) if t in arg.free_symbols]
            if held:
                renamed = arg.xreplace({names[i]: theta(j) for j, i in enumerate(held)})
                parts.append((self.function(renamed, len(held)), held))
        # Each factor compiled once and multiplied at call time, with nothing cached from this
        # compiler's rows: the function may serve a compiler of other rows (subset).
        parts += [(self.function(a, 0), []) for a in fixed]

        def evaluate(columns: Sequence[np.ndarray], values: Sequence[np.ndarray] = ()) -> np.ndarray:
            out = np.ones(())
            with np.errstate(all="ignore"):
                for function, held in parts:
                    out = out * function(columns, [values[i] for i in held])
            return np.asarray(out, dtype=float)

        return evaluate

    def _column(self, key: sympy.Expr, positions: tuple[int, ...]) -> np.ndarray | Column:
        if not positions:
            return self.value(key)
        function, columns = self.function(key, len(positions)), self.columns
        return lambda values: function(columns, [values[i] for i in positions])
