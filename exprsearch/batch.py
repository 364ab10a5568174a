"""Fit thousands of separable candidates at once, from one table of shared columns.

A separable candidate is ``Σ cᵢ·gᵢ`` with at most one nonlinear constant, inside one gᵢ. Every
distinct column gᵢ is evaluated once; a column with a nonlinear constant is evaluated at
``settings.grid`` values across the constant's bounds. With the squared loss the cost of
:mod:`exprsearch.fit` depends on the data only through the Gram matrix of the scaled relative
columns, so each candidate (at each grid value) is a tiny ridge problem cut out of that one
matrix, and all of them are solved in a few batched calls whatever the number of rows. Robust
losses reweight rows per candidate, so their iterations use each candidate's own columns.

The result gives every candidate a fit with exact costs; a candidate with a nonlinear constant
is fitted at the best grid value, and ``potential`` estimates (by a parabola through the grid
minimum) what refining that constant could reach, which tells :func:`exprsearch.rank.contenders`
whether differential evolution is worth running on it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy

from .candidates import Candidate, Term
from .compile import Compiler
from .fit import INVALID_COST, Fit, FitSettings, robust_weights
from .linear import ridge
from .pooled import sums

_CHUNK = 20_000  # problems solved per batched call
_CELLS = 4_000_000  # with a robust loss, rows × columns gathered per batched call
# above this many term columns their Gram matrix (8·width² bytes: 6.4 GB for the 28,000 of ten
# factors) is not formed; each problem's few entries are summed from the design instead
_GRAM_COLUMNS = 4096


@dataclass(frozen=True)
class Screened:
    """Batched fits of separable candidates, and the cost each could reach once refined."""

    fits: tuple[Fit, ...]
    potential: np.ndarray


def batchable(candidate: Candidate, guesses: Mapping[Term, tuple[float, ...]]) -> bool:
    """Whether :func:`fit_separable` can fit ``candidate``: separable, or every term has a
    coefficient and each term with nonlinear constants has guessed values for them."""
    return candidate.separable or (all(t.coefficient is not None for t in candidate.terms) and
                                   all(t in guesses for t in candidate.terms if t.n_nonlinear))


def fit_separable(candidates: Sequence[Candidate], compiler: Compiler, y: np.ndarray,
                  settings: FitSettings = FitSettings(),
                  guesses: Mapping[Term, tuple[float, ...]] | None = None,
                  done: Callable[[float], None] | None = None) -> Screened:
    """Fit every :func:`batchable` candidate in batches; see the module docstring. A candidate
    with several nonlinear constants is fitted at its ``guesses``; its ``potential`` is half that
    cost, since refining exponents from a coarse grid can gain that much. ``done`` is told the
    share of the fits done after each batch (a robust loss's batches take minutes on many rows)."""
    guesses = guesses or {}
    for candidate in candidates:
        if not batchable(candidate, guesses):
            raise ValueError(f"{candidate} has several nonlinear constants and no guessed values for them; "
                             "fit it with exprsearch.fit.fit")
    table = _Table(compiler, y, settings, guesses)
    layouts = [table.layout(c) for c in candidates]
    table.finish()
    fits, potential = [], np.empty(len(candidates))
    for i, (cost, mse, coef) in enumerate(table.solve(layouts, done)):
        candidate, layout = candidates[i], layouts[i]
        best = int(np.argmin(cost))
        potential[i] = _parabola(cost, best)
        if not cost[best] < INVALID_COST:
            fits.append(Fit(candidate, reason=table.undefined(candidate, layout)))
            continue
        values = {names[t.coefficient]: float(v)
                  for t, names, v in zip(candidate.terms, candidate.names, coef[best])}
        if layout.varying is not None:
            term, names = candidate.terms[layout.varying], candidate.names[layout.varying]
            name = next(n for j, n in enumerate(names) if j != term.coefficient)
            values[name] = float(table.grids[layout.columns[layout.varying]][best])
        elif candidate.n_nonlinear:
            for term, names in zip(candidate.terms, candidate.names):
                others = [n for j, n in enumerate(names) if j != term.coefficient]
                values.update(zip(others, map(float, table.guesses.get(term, ()))))
            potential[i] = 0.5 * cost[best]
        fits.append(Fit(candidate, values, float(cost[best]), float(mse[best]), ok=True))
    return Screened(tuple(fits), potential)


@dataclass(frozen=True)
class _Layout:
    """A candidate's columns in the table and its coefficients' bounds; the ``varying`` term's
    column is the first of its block of grid values."""

    columns: tuple[int, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    varying: int | None


class _Table:
    """The distinct columns of a set of candidates, relative to ``y`` and scaled to unit RMS."""

    def __init__(self, compiler: Compiler, y: np.ndarray, settings: FitSettings,
                 guesses: Mapping[Term, tuple[float, ...]]) -> None:
        self.compiler, self.y, self.settings, self.guesses = compiler, y, settings, guesses
        self.rows = None  # with the squared loss, one row per configuration (see finish)
        self.source = compiler  # what the columns are evaluated on
        if settings.loss == "squared" and compiler.columns:
            # Σ 1/y and Σ 1/y² per configuration
            first, self.inverse, self.inverse_square, _ = sums(compiler.columns, y)
            self.rows = first
            if len(first) < len(y):  # repeats: each column evaluated once per configuration
                self.source = compiler.subset(first)
        self.blocks: list[np.ndarray] = []
        self.index: dict[object, int] = {}
        self.grids: dict[int, np.ndarray] = {}
        self.terms: dict[tuple[Term, object], tuple[int, float, float]] = {}
        self.width = 0

    def layout(self, candidate: Candidate) -> _Layout:
        guessed = candidate.n_nonlinear > 1
        places = [self._place(t, candidate.limits, guessed) for t in candidate.terms]
        varying = None if guessed else next((j for j, t in enumerate(candidate.terms) if t.n_nonlinear), None)
        return _Layout(*zip(*places), varying) if places else _Layout((), (), (), None)

    def _place(self, term: Term, limits, guessed: bool = False) -> tuple[int, float, float]:
        """A term's column and its coefficient's bounds (cached: terms recur in many candidates);
        ``guessed``: a term with nonlinear constants takes its guessed values, not a grid."""
        name = (term, id(limits), guessed and term.n_nonlinear > 0)
        if name not in self.terms:
            low, high = limits[term.kinds[term.coefficient]]
            kind = next((k for i, k in enumerate(term.kinds) if i != term.coefficient), None)
            if name[2]:
                block = self._block(term.key, None, self.guesses[term])
            else:
                block = self._block(term.key, None if kind is None else limits[kind])
            self.terms[name] = (block, low, high)
        return self.terms[name]

    def _block(self, key: sympy.Expr, bounds: tuple[float, float] | None, at: tuple[float, ...] = ()) -> int:
        name = (key, bounds, at)
        if name not in self.index:
            if at:
                function = self.source.function(key, len(at))
                with np.errstate(all="ignore"):
                    block = np.broadcast_to(function(self.source.columns, [np.array([v]) for v in at]),
                                            (self.source.n_rows,))[:, None]
            elif bounds is None:
                block = self.source.value(key)[:, None]
            else:
                grid = np.linspace(bounds[0], bounds[1], self.settings.grid)
                block = self.source.values(key, grid).T
                self.grids[self.width] = grid
            self.index[name] = self.width
            self.blocks.append(block if self.rows is None or self.source is not self.compiler else block[self.rows])
            self.width += block.shape[1]
        return self.index[name]

    def finish(self) -> None:
        """Relative, scaled columns; their Gram matrix and products with the target.

        With the squared loss the columns are kept once per configuration: repetitions share
        their columns, so Σ over rows of gᵢ·gⱼ/y² is Σ over configurations of gᵢ·gⱼ·Σ1/y², and
        the same for Σ gᵢ/y — exact, and a fraction of the memory when configurations repeat.
        """
        n = len(self.y)
        if self.rows is not None:
            self._finish_by_configuration(n)
            return
        # Filled block by block, each freed once copied: the design is the one large array
        # (at 100k rows its columns of fitted powers at every grid value are most of the memory).
        design = np.empty((n, self.width))
        position = 0
        for i, block in enumerate(self.blocks):
            with np.errstate(all="ignore"):
                np.divide(block, self.y[:, None], out=design[:, position:position + block.shape[1]])
            position += block.shape[1]
            self.blocks[i] = None
        self.blocks = []
        self.valid = np.isfinite(design).all(axis=0)
        design[:, ~self.valid] = 0.0
        scale = np.sqrt(np.einsum("nc,nc->c", design, design) / n)
        scale[~(scale > 0)] = 1.0
        design /= scale
        self.scale = scale
        self.rhs = design.mean(axis=0)
        self._keep_gram(design, n)
        self.design = None if self.settings.loss == "squared" else design  # robust losses reweight rows

    def _finish_by_configuration(self, n: int) -> None:
        design = np.empty((len(self.rows), self.width))
        position = 0
        for i, block in enumerate(self.blocks):
            design[:, position:position + block.shape[1]] = block
            position += block.shape[1]
            self.blocks[i] = None
        self.blocks = []
        self.valid = np.isfinite(design).all(axis=0)
        design[:, ~self.valid] = 0.0
        scale = np.sqrt(np.einsum("cj,cj,c->j", design, design, self.inverse_square) / n)
        scale[~(scale > 0)] = 1.0
        self.scale = scale
        self.rhs = (self.inverse @ design) / scale / n
        design *= np.sqrt(self.inverse_square)[:, None] / scale
        self._keep_gram(design, n)
        self.design = None

    def _keep_gram(self, scaled: np.ndarray, n: int) -> None:
        """The Gram matrix of the scaled columns over ``n`` rows, or, for too many columns to hold
        it, the columns themselves to sum each problem's entries from (:meth:`_gram`)."""
        self.n = n
        self.gram, self.scaled = (scaled.T @ scaled / n, None) if self.width <= _GRAM_COLUMNS else (None, scaled)

    def _gram(self, columns: np.ndarray) -> np.ndarray:
        """The Gram matrices of the problems whose columns are ``columns`` ``(S, m)``."""
        if self.gram is not None:
            return self.gram[columns[:, :, None], columns[:, None, :]]
        part = self.scaled[:, columns]  # (rows, S, m)
        return np.einsum("nsk,nsl->skl", part, part) / self.n

    def solve(self, layouts: list[_Layout], done: Callable[[float], None] | None = None):
        """Cost, mse and coefficients (original units) of every candidate at every grid value;
        ``done`` is told the share of the problems solved after each chunk."""
        grid = self.settings.grid
        groups: dict[tuple[int, bool], list[int]] = defaultdict(list)
        for i, layout in enumerate(layouts):
            groups[(len(layout.columns), layout.varying is not None)].append(i)
        out: list = [None] * len(layouts)
        total = sum(len(members) * (grid if profiled else 1) for (_, profiled), members in groups.items())
        solved = [0]

        def step(count: int) -> None:
            solved[0] += count
            if done is not None:
                done(solved[0] / total)
        for (m, profiled), members in groups.items():
            copies = grid if profiled else 1
            columns = np.repeat(np.array([layouts[i].columns for i in members], dtype=np.intp).reshape(-1, m), copies, axis=0)
            if profiled:
                varying = np.repeat([layouts[i].varying for i in members], copies)
                columns[np.arange(len(columns)), varying] += np.tile(np.arange(grid), len(members))
            low = np.repeat(np.array([layouts[i].low for i in members], dtype=float).reshape(-1, m), copies, axis=0)
            high = np.repeat(np.array([layouts[i].high for i in members], dtype=float).reshape(-1, m), copies, axis=0)
            cost, mse, coef = self._solve(columns, low, high, step)
            for k, i in enumerate(members):
                part = slice(k * copies, (k + 1) * copies)
                out[i] = (cost[part], mse[part], coef[part])
        return out

    def _solve(self, columns: np.ndarray, low: np.ndarray, high: np.ndarray, step: Callable[[int], None]):
        cost, mse = np.empty(len(columns)), np.empty(len(columns))
        coef = np.empty(columns.shape)
        size = _CHUNK if self.settings.loss == "squared" else max(1, _CELLS // (len(self.y) * columns.shape[1]))
        if self.gram is None:  # each chunk gathers its columns from the design: bounded as the robust loss's
            size = min(size, max(1, _CELLS // (len(self.scaled) * columns.shape[1])))
        for start in range(0, len(columns), size):
            part = slice(start, start + size)
            cost[part], mse[part], coef[part] = self._chunk(columns[part], low[part], high[part])
            step(len(columns[part]))
        return cost, mse, coef

    def _chunk(self, columns: np.ndarray, low: np.ndarray, high: np.ndarray):
        scale = self.scale[columns]
        valid = self.valid[columns].all(axis=1)
        z, cost, mse = ridge(self._gram(columns), self.rhs[columns], 1.0,
                             low * scale, high * scale, self.settings.regularization, valid)
        if self.settings.loss != "squared":
            z, cost, mse = self._robust(columns, low * scale, high * scale, z, valid, cost, mse)
        bad = ~valid | ~np.isfinite(cost)
        cost[bad], mse[bad] = INVALID_COST, INVALID_COST
        return cost, mse, z / scale

    def _robust(self, columns, low, high, z, valid, cost, mse):
        """Iteratively reweighted least squares, as :func:`exprsearch.fit.fit` does per candidate;
        only the problems whose weights still move are worked on."""
        n = len(self.y)
        design = np.moveaxis(self.design[:, columns], 0, 1)  # (S, n, m), globally scaled
        weights = np.ones((len(columns), n))
        active = np.flatnonzero(valid)
        for iteration in range(self.settings.robust_iterations):
            part = design[active]
            new = robust_weights(np.einsum("snm,sm->sn", part, z[active]) - 1.0, self.settings.loss, axis=1)
            if iteration:
                moving = np.max(np.abs(new - weights[active]), axis=1) >= 1e-4
                active, part, new = active[moving], part[moving], new[moving]
            if not active.size:
                break
            weights[active] = new
            root = np.sqrt(new)
            part *= root[:, :, None]
            z[active], cost[active], mse[active] = ridge(
                np.einsum("snm,snk->smk", part, part) / n, np.einsum("snm,sn->sm", part, root) / n,
                np.mean(new, axis=1), low[active], high[active], self.settings.regularization)
        return z, cost, mse

    def undefined(self, candidate: Candidate, layout: _Layout) -> str:
        """Why a candidate has no valid fit: the first of its terms undefined on some rows."""
        for j, column in enumerate(layout.columns):
            if self.valid[column] and j != layout.varying:
                continue
            if j == layout.varying:
                if not np.isfinite(self.grids[column]).all():
                    return "a nonlinear constant has an infinite bound; give it finite min and max"
                if self.valid[column:column + self.settings.grid].any():
                    continue
                return f"term {candidate.basis[j]} is undefined (NaN or infinite) at every value of its constant"
            with np.errstate(all="ignore"):
                rows = np.flatnonzero(~np.isfinite(self.compiler.value(candidate.terms[j].key) / self.y))
            shown = ", ".join(str(r + 1) for r in rows[:5])
            return f"term {candidate.basis[j]} is undefined (NaN or infinite) at data rows {shown}"
        return "the law is undefined (NaN or infinite) on some rows"


def _parabola(costs: np.ndarray, best: int) -> float:
    """The minimum of the parabola through the grid minimum and its neighbours (the minimum
    itself at an end of the grid, or when the neighbours are not finite)."""
    low = costs[best]
    if best == 0 or best == len(costs) - 1:
        return float(low)
    left, right = costs[best - 1], costs[best + 1]
    curvature = left - 2 * low + right
    if not (np.isfinite(left) and np.isfinite(right) and left < INVALID_COST and right < INVALID_COST) or curvature <= 0:
        return float(low)
    return float(max(low - (right - left) ** 2 / (8 * curvature), 0.0))
