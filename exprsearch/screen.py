"""Choosing by the data where a grammar's space is too large to enumerate.

Two choices, both made on the measurements averaged per configuration (relative errors, each
configuration weighted by its repetitions), before any law is fitted exactly:

- **Atoms of a product** (``<rule>*{a,b}``): each factor's transforms are ranked as Extra-P's
  multi-parameter modeler ranks single-parameter functions: every transform is fitted alone along
  each line of the measurement grid where only its factor varies (an intercept and a non-negative
  slope per line), and the ones with the least summed error are kept.
- **Sums of terms** (``c + <term>{a,b}``): forward selection with a beam. Every term is a column
  (a term with fitted exponents one column per value of a coarse grid); the exact least-squares
  gain of adding each column to each model of the beam is computed at once, the best ``beam``
  models of each size are kept, and every sum of up to ``high`` of the terms that took part is
  handed on to be fitted exactly (the exhaustive search over survivors of SISSO). The exhaustive
  enumeration in :mod:`exprsearch.candidates` stays the reference for spaces that fit the budget.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .candidates import Choice, Expansion, Term
from .compile import Compiler
from .grammar import Limits
from .identify import ShapeRule

GRID = {1: 13, 2: 9, 3: 5}  # values per nonlinear constant, by the number of them in a term


@dataclass(frozen=True)
class ScreenSettings:
    """``beam`` models kept per size; at most ``survivors`` terms are combined exhaustively."""

    beam: int = 10
    survivors: int = 20
    first: int = 8  # terms kept for their gain alone, beside those the beam used


class DataScreen:
    """The :class:`exprsearch.candidates.Strategy` that decides by the measurements."""

    def __init__(self, compiler: Compiler, y: np.ndarray, kinds: dict[str, tuple[float, float]],
                 settings: ScreenSettings = ScreenSettings(), shapes: ShapeRule | None = None) -> None:
        self.compiler, self.kinds, self.settings, self.shapes = compiler, kinds, settings, shapes
        raw = np.column_stack(compiler.columns) if compiler.columns else np.zeros((len(y), 0))
        configs, inverse, counts = np.unique(raw, axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        self.configs = configs
        self.mean = np.bincount(inverse, weights=y) / counts
        self.weight = np.sqrt(counts.astype(float))
        self.first_row = np.array([np.flatnonzero(inverse == i)[0] for i in range(len(configs))])

    # -- columns -----------------------------------------------------------------------------
    def _columns(self, term: Term) -> tuple[np.ndarray, np.ndarray]:
        """Relative weighted columns ``(configs, G)`` of a term without its coefficient, and the
        values of its nonlinear constants ``(G, q)`` (a grid across their bounds)."""
        q = term.n_nonlinear
        if q == 0:
            values = self.compiler.value(term.key)[self.first_row][:, None]
            thetas = np.zeros((1, 0))
        else:
            kinds = [k for i, k in enumerate(term.kinds) if i != term.coefficient]
            axes = [np.linspace(*self.kinds[k], GRID.get(q, 4)) for k in kinds]
            if not all(np.isfinite(a).all() for a in axes):
                return np.zeros((len(self.configs), 0)), np.zeros((0, q))
            thetas = np.array(list(itertools.product(*axes)))
            function = self.compiler.function(term.key, q)
            with np.errstate(all="ignore"):
                raw = function(self.compiler.columns, [thetas[:, i, None] for i in range(q)])
            values = np.broadcast_to(raw, (len(thetas), self.compiler.n_rows))[:, self.first_row].T
        with np.errstate(all="ignore"):
            relative = values / self.mean[:, None] * self.weight[:, None]
        keep = np.isfinite(relative).all(axis=0)
        return relative[:, keep], thetas[keep]

    # -- products ----------------------------------------------------------------------------
    def atoms(self, groups: list[list[Expansion]], keep: int) -> list[list[Expansion]]:
        return [self._best_atoms(group, keep) for group in groups]

    def _best_atoms(self, group: list[Expansion], keep: int) -> list[Expansion]:
        names = sorted({s.name for e in group for t in e for s in t.generic.free_symbols} &
                       set(self.compiler.factors))
        own = [self.compiler.factors.index(n) for n in names]
        others = [i for i in range(self.configs.shape[1]) if i not in own]
        _, line = np.unique(self.configs[:, others], axis=0, return_inverse=True)
        line = line.reshape(-1)
        distinct = np.array([len(np.unique(self.configs[line == g][:, own], axis=0)) for g in range(line.max() + 1)])
        usable = distinct[line] >= 3
        if not usable.any():  # no line of the grid varies this factor alone: judge on all configurations
            line, usable = np.zeros(len(self.configs), dtype=int), np.ones(len(self.configs), dtype=bool)
        scores = []
        for expansion in group:
            if len(expansion) != 1:
                scores.append(np.inf)
                continue
            term = expansion[0]
            columns, _ = self._columns(_bare(term))
            scores.append(_line_fit(columns[usable], self.weight[usable] / self.mean[usable], self.weight[usable],
                                    line[usable]))
        order = sorted(range(len(group)), key=lambda i: (scores[i], group[i][0].complexity if group[i] else 0, i))
        return [group[i] for i in sorted(order[:keep])]

    # -- sums --------------------------------------------------------------------------------
    def sums(self, fixed: Expansion, items: list[Expansion], low: int, high: int, limits: Limits) -> Choice:
        s = self.settings
        undefined = 0
        base, target = self._fixed(fixed)
        blocks, owner, thetas = [], [], []
        always: list[int] = []
        if self.shapes is not None:
            self.shapes.prepare(t for item in items for t in item)
        for i, item in enumerate(items):
            if len(item) != 1 or item[0].coefficient is None or self.kinds[item[0].kinds[item[0].coefficient]][0] < 0:
                always.append(i)  # not a single non-negative term: kept without screening
                continue
            if self.shapes is not None and self.shapes.reason((*fixed, *item)):
                continue  # a shape the data cannot identify: rejected later in any sum
            columns, values = self._columns(item[0])
            undefined += columns.shape[1] == 0
            blocks.append(columns)
            owner.extend([i] * columns.shape[1])
            thetas.extend(map(tuple, values))
        design = np.hstack(blocks) if blocks else np.zeros((len(self.configs), 0))
        owner = np.array(owner, dtype=np.intp)
        # Unit columns, then everything relative to what the fixed terms explain; a column the
        # fixed terms (nearly) explain themselves can add nothing.
        with np.errstate(all="ignore"):
            design = design / np.sqrt(np.einsum("nc,nc->c", design, design))
        basis = _orthonormal(base)
        design = design - basis @ (basis.T @ design)
        residual = target - basis @ (basis.T @ target)
        norms = np.sqrt(np.einsum("nc,nc->c", design, design))
        live = np.isfinite(norms) & (norms > 1e-6)
        design, owner, norms = design[:, live], owner[live], norms[live]
        thetas = [t for t, ok in zip(thetas, live) if ok]
        design = design / norms

        nonlinear = np.array([sum(t.n_nonlinear for t in item) for item in items])
        room = limits.max_nonlinear - sum(t.n_nonlinear for t in fixed)
        most = min(high, limits.max_terms - len(fixed))
        best_column: dict[int, tuple[float, int]] = {}  # item → (sse of the best model using it, column)
        models: list[tuple[float, tuple[int, ...]]] = [(float(residual @ residual), ())]
        visited: list[tuple[int, ...]] = []
        first_gain = None
        for _ in range(most):
            found: dict[frozenset, tuple[float, tuple[int, ...]]] = {}
            for sse, columns in models:
                used = set(owner[list(columns)]) if columns else set()
                gain, sign = self._gains(design, residual, columns)
                if first_gain is None:
                    first_gain = np.where(sign >= 0, gain, 0.0)
                spent = sum(nonlinear[i] for i in used)
                allowed = (sign >= 0) & (nonlinear[owner] + spent <= room)
                if used:
                    allowed &= ~np.isin(owner, list(used))
                for c in np.flatnonzero(allowed)[np.argsort(-gain[allowed], kind="stable")][: 4 * s.beam]:
                    key = frozenset(used | {int(owner[c])})
                    new = (sse - float(gain[c]), (*columns, int(c)))
                    if key not in found or new[0] < found[key][0]:
                        found[key] = new
            models = sorted(found.values(), key=lambda m: (m[0], sorted(owner[list(m[1])])))[: s.beam]
            for sse, columns in models:
                visited.append(tuple(sorted(int(owner[c]) for c in columns)))
                for c in columns:
                    i = int(owner[c])
                    if i not in best_column or sse < best_column[i][0]:
                        best_column[i] = (sse, c)
            if not models:
                break
        ranked = []
        if first_gain is not None and len(first_gain):
            per_item: dict[int, float] = {}
            for c in np.argsort(-first_gain, kind="stable"):
                per_item.setdefault(int(owner[c]), float(first_gain[c]))
                if int(owner[c]) not in best_column:
                    best_column[int(owner[c])] = (np.inf, int(c))
            ranked = [i for i, g in per_item.items() if g > 0][: s.first]
        survivors: list[int] = []
        for i in [i for model in visited for i in model] + ranked:
            if i not in survivors:
                survivors.append(i)
        survivors = sorted(survivors[: s.survivors]) + always
        combos = {tuple(sorted(m)) for m in visited}
        for size in range(max(low, 1), most + 1):
            for combo in itertools.combinations(survivors, size):
                if sum(nonlinear[i] for i in combo) <= room:
                    combos.add(combo)
        if low == 0:
            combos.add(())
        guesses = {items[i][0]: thetas[c] for i, (_, c) in best_column.items() if nonlinear[i]}
        how = (f"screened {design.shape[1]:,} term columns by forward selection (beam {s.beam}) and "
               f"fitted every sum of up to {most} of the {len(survivors)} terms that took part ({len(combos):,} sums)")
        if undefined:
            how += f"; {undefined} term(s) undefined (NaN or infinite) on the data were left out"
        return Choice(sorted(combos, key=lambda c: (len(c), c)), guesses, how, undefined)

    def _fixed(self, fixed: Expansion) -> tuple[np.ndarray, np.ndarray]:
        """Columns of the fixed terms' coefficients, and the target less the fixed offsets."""
        columns, target = [], self.weight.copy()
        for term in fixed:
            if term.n_nonlinear:
                continue  # an exponent outside the sum: screened as if absent
            value = self.compiler.value(term.key)[self.first_row] / self.mean * self.weight
            if term.coefficient is None:
                target = target - value
            else:
                columns.append(value)
        return (np.column_stack(columns) if columns else np.zeros((len(self.configs), 0))), target

    @staticmethod
    def _gains(design: np.ndarray, residual: np.ndarray, columns: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Least-squares gain of adding each (unit) column to the model of ``columns``, and the
        sign of its coefficient there."""
        if columns:
            basis = _orthonormal(design[:, list(columns)])
            residual = residual - basis @ (basis.T @ residual)
            inside = basis.T @ design
            rest = np.maximum(1.0 - np.einsum("mc,mc->c", inside, inside), 0.0)
        else:
            rest = np.ones(design.shape[1])
        corr = design.T @ residual
        with np.errstate(all="ignore"):
            gain = np.where(rest > 1e-8, corr**2 / rest, 0.0)
        return gain, np.sign(corr)


def _bare(term: Term) -> Term:
    """A transform without a coefficient treated as its own column (for ranking atoms)."""
    if term.coefficient is not None:
        return term
    return Term(term.generic, term.pattern, term.kinds, None, term.key, term.complexity, term.order, term.merge)


def _orthonormal(columns: np.ndarray) -> np.ndarray:
    if columns.shape[1] == 0:
        return columns
    q, r = np.linalg.qr(columns)
    keep = np.abs(np.diag(r)) > 1e-10 * max(float(np.abs(np.diag(r)).max()), 1e-300)
    return q[:, keep]


def _line_fit(columns: np.ndarray, intercept: np.ndarray, target: np.ndarray, line: np.ndarray) -> float:
    """Least relative error, over the columns, of an intercept plus a non-negative slope fitted
    separately on each line: the error of a transform along its own factor."""
    if columns.shape[1] == 0:
        return np.inf
    total = np.zeros(columns.shape[1])
    for g in np.unique(line):
        rows = line == g
        u, x, t = intercept[rows], columns[rows], target[rows]
        uu = u @ u
        xc = x - np.outer(u, (u @ x) / uu)
        tc = t - u * (u @ t) / uu
        sxx = np.einsum("nc,nc->c", xc, xc)
        with np.errstate(all="ignore"):
            slope = np.where(sxx > 0, np.maximum((xc.T @ tc) / sxx, 0.0), 0.0)
        miss = tc[:, None] - xc * slope
        total += np.einsum("nc,nc->c", miss, miss)
    return float(total.min())
