"""The measurements as the screening sees them (:mod:`exprsearch.screen`): one row per
configuration, its mean time and the square root of its repetitions as its weight, the squared
residual the noise alone leaves, the relative weighted column of any term there, and a term's
exponents refined on that grid where it has several."""

from __future__ import annotations

import itertools

import numpy as np

from .candidates import Term
from .compile import Compiler
from .rank import f_survival
from .rowsets import relative_variances, row_groups
from .subsets import orthonormal

GRID = {1: 13, 2: 9, 3: 5}  # values per nonlinear constant, by the number of them in a term
MAX_CONFIGURATIONS = 2000  # configurations the screening looks at, at most (an even spread of them)
# a sum misses by more than the noise where the F-test of its residual against what the repetitions
# alone leave gives p below this (see TermColumns.misses)
MISFIT_P = 0.05


class TermColumns:
    """Terms as columns over the configurations: a term's value over the configuration's mean
    time, times the square root of its repetitions (relative errors, each configuration weighted
    by how often it was measured)."""

    def __init__(self, compiler: Compiler, y: np.ndarray, kinds: dict[str, tuple[float, float]],
                 noise: tuple[float, int] | None = None) -> None:
        self.kinds = kinds
        raw = np.column_stack(compiler.columns) if compiler.columns else np.zeros((len(y), 0))
        first, inverse = row_groups(raw)
        configs, counts = raw[first], np.bincount(inverse)
        mean = np.bincount(inverse, weights=y) / counts
        # Screening only chooses what to fit (the fits use every row): with very many
        # configurations an evenly spread subset of them, in their sorted order, is enough.
        keep = np.unique(np.linspace(0, len(configs) - 1, min(len(configs), MAX_CONFIGURATIONS)).astype(int))
        self.configs, self.mean = configs[keep], mean[keep]
        self.weight = np.sqrt(counts[keep].astype(float))
        self.compiler = compiler.subset(first[keep])  # one row per configuration looked at
        # The squared residual here of a law that misses only by the noise: each configuration's
        # relative variance between its repetitions, where measured more than once (None if none is)
        spread = relative_variances(inverse, y)[keep]
        self.floor = float(np.nanmean(spread) * len(keep)) if np.isfinite(spread).sum() >= 2 else None
        # the relative variance of one measurement pooled over the repetitions, and its degrees of freedom
        extra = counts[keep] - 1
        dof = int(extra.sum())
        self.noise = (float(np.nansum(spread * extra) / dof), dof) if dof >= 2 else None
        if noise is not None:  # rows that each summarise their runs (--measure): one row's noise, given
            self.floor = noise[0] * len(keep) if noise[1] >= 2 else None
            self.noise = noise if noise[1] >= 2 else None

    def misses(self, sse: float, terms: int) -> bool:
        """Whether a sum of ``terms`` terms whose squared residual here is ``sse`` misses by more
        than the noise, by the F-test of its residual against the repetitions' spread (p below
        :data:`MISFIT_P`); the screening scans for terms that fit only together only then. Without
        repetitions nothing tells, so the beam's fit stands; on noise-free ones any residual misses,
        and where no sum could be a law (``sse`` infinite) it misses too."""
        if self.floor is None or self.noise is None:
            return False
        if self.floor <= 0 or not np.isfinite(sse):
            return sse > 0
        free = len(self.configs) - terms - 1  # the constant is fitted too
        if free < 1:
            return False
        return f_survival(free, self.noise[1], (sse / free) / (self.floor / len(self.configs))) < MISFIT_P

    def _stacked(self, terms: list[Term]) -> tuple[np.ndarray, np.ndarray, list[tuple[float, ...]]]:
        """The relative weighted columns of ``terms`` without their coefficients, side by side
        ``(configs, C)``; the term (its index in ``terms``) of each column; and the values of its
        nonlinear constants (a term with some has one column per value of a grid across their
        bounds). Columns not finite on the data are left out. Terms without exponents (most of a
        product space, one column each) are weighted in one step rather than one by one."""
        plain = np.flatnonzero([t.n_nonlinear == 0 for t in terms])
        relative, finite = np.zeros((len(self.configs), 0)), np.zeros(0, dtype=bool)
        if len(plain):
            raw = np.column_stack([self.compiler.value(terms[j].key) for j in plain])
            with np.errstate(all="ignore"):
                relative = raw / self.mean[:, None] * self.weight[:, None]
            finite = np.isfinite(relative).all(axis=0)
        if len(plain) == len(terms):
            return relative[:, finite], plain[finite], [()] * int(finite.sum())
        blocks, owner, thetas = [], [], []
        at = dict(zip(plain.tolist(), range(len(plain))))
        for j, term in enumerate(terms):
            if j in at:
                if finite[at[j]]:
                    blocks.append(relative[:, at[j]:at[j] + 1])
                    owner.append(j)
                    thetas.append(())
                continue
            columns, values = self._grid_columns(term)
            blocks.append(columns)
            owner += [j] * columns.shape[1]
            thetas += list(map(tuple, values))
        return np.hstack(blocks), np.array(owner, dtype=np.intp), thetas

    def _grid_columns(self, term: Term) -> tuple[np.ndarray, np.ndarray]:
        """The columns of a term with nonlinear constants, one per value of the grid, and the values."""
        q = term.n_nonlinear
        kinds = [k for i, k in enumerate(term.kinds) if i != term.coefficient]
        axes = [np.linspace(*self.kinds[k], GRID.get(q, 4)) for k in kinds]
        if not all(np.isfinite(a).all() for a in axes):
            return np.zeros((len(self.configs), 0)), np.zeros((0, q))
        thetas = np.array(list(itertools.product(*axes)))
        key = (term.key, q, tuple(self.kinds[k] for k in kinds))
        if key not in self.compiler.grids:  # the same on every series measured on this grid
            function = self.compiler.function(term.key, q)
            with np.errstate(all="ignore"):
                raw = function(self.compiler.columns, [thetas[:, i, None] for i in range(q)])
            self.compiler.grids[key] = np.broadcast_to(raw, (len(thetas), self.compiler.n_rows)).T
        with np.errstate(all="ignore"):
            relative = self.compiler.grids[key] / self.mean[:, None] * self.weight[:, None]
        keep = np.isfinite(relative).all(axis=0)
        return relative[:, keep], thetas[keep]

    def _refined(self, term: Term, start: tuple[float, ...], fixed: np.ndarray, others: np.ndarray,
                 residual: np.ndarray, rounds: int = 4) -> tuple[float, ...]:
        """Exponents of a term with several, refined from the coarse grid's best by grids of
        5 values a side that shrink around the best each round, in the model the term did best in
        (the other columns ``others``, beside the orthonormal columns ``fixed``): a start close
        enough for a local polish to finish."""
        kinds = [k for i, k in enumerate(term.kinds) if i != term.coefficient]
        bounds = np.array([self.kinds[k] for k in kinds], dtype=float)
        step = (bounds[:, 1] - bounds[:, 0]) / (GRID.get(len(kinds), 4) - 1)
        best = np.array(start, dtype=float)
        basis = orthonormal(np.hstack([fixed, others]))
        residual = residual - basis @ (basis.T @ residual)
        function = self.compiler.function(term.key, len(kinds))
        for _ in range(rounds):
            step = step / 2
            axes = [np.clip(b + s * np.arange(-2, 3), lo, hi) for b, s, (lo, hi) in zip(best, step, bounds)]
            grid = np.array(list(itertools.product(*axes)))
            with np.errstate(all="ignore"):
                raw = function(self.compiler.columns, [grid[:, i, None] for i in range(len(kinds))])
                columns = np.broadcast_to(raw, (len(grid), self.compiler.n_rows)).T
                columns = columns / self.mean[:, None] * self.weight[:, None]
                columns = columns - basis @ (basis.T @ columns)
                gain = (columns.T @ residual) ** 2 / np.einsum("nc,nc->c", columns, columns)
            gain[~np.isfinite(gain)] = -1.0
            best = grid[int(np.argmax(gain))]
        return tuple(float(v) for v in best)
