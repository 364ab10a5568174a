"""Polishing the exponents of many candidates together.

Each candidate's polish (:func:`exprsearch.polish.stencil` for a lone exponent,
:func:`exprsearch.polish.quasi_newton` for several) asks for the costs of a small population of
exponent values per round. One candidate at a time, every round is a dozen tiny numpy
calls whose overhead is most of the refinement's time; here the rounds of all candidates run in
lockstep and the costs of a round are computed in one stacked least-squares problem per number
of terms. Each candidate's costs are computed on its own slice of the stack, so they do not
depend on which other candidates ran beside it (nor on how many processes ran the search).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .candidates import Candidate
from .compile import CompiledCandidate
from .fit import INVALID_COST, Fit, FitSettings, _Problem, fit
from .linear import ridge
from .polish import lockstep, quasi_newton, stencil
from .pooled import Pooled

STACK_ROWS = 2000  # past this many rows each candidate is polished alone (see stacked)
STACK_VALUES = 4_000_000  # design values one stack holds at most (32 MB); 100k rows took 2.3 GiB


def stacked(settings: FitSettings, candidate: Candidate, rows: int) -> bool:
    """Whether :func:`polish_together` fits ``candidate`` (started from a grid) on ``rows`` rows:
    any with fitted exponents under the squared loss, on at most :data:`STACK_ROWS` rows. With a
    robust loss each fit is reweighted in its own loop (by L-BFGS-B where it has several
    exponents). Stacking pays where numpy's per-call overhead is the cost; on 100,000 rows the
    stacked quasi-Newton rounds took 43 s and 2.3 GiB where one fit at a time takes 8 s."""
    return settings.loss == "squared" and len(candidate.nonlinear) >= 1 and rows <= STACK_ROWS


def polish(compiled: list[CompiledCandidate], y: np.ndarray, settings: FitSettings, starts: list[Fit],
           rows: list[np.ndarray] | None = None, pooled: Pooled | None = None) -> list[Fit]:
    """Polish each candidate's nonlinear constants locally from its ``start`` (on ``rows[i]``
    only, where given; on rows ``pooled`` where given): those :func:`stacked` says together
    (:func:`polish_together`), the rest one by one by :func:`exprsearch.fit.fit`, in the order given."""
    rows = rows or [None] * len(compiled)
    return _polish([(c, y, r, pooled) for c, r in zip(compiled, rows)], settings, starts)


def polish_pooled(compiled: list[CompiledCandidate], pooled: list[Pooled], settings: FitSettings,
                  starts: list[Fit]) -> list[Fit]:
    """Polish each candidate on its own pooled rows, as :func:`polish` does: ``compiled[i]`` is
    compiled on the configurations of ``pooled[i]`` (a bootstrap resample's, each weighted by
    how often it was drawn), one row each however many times they were measured."""
    return _polish([(c, p.y, None, p) for c, p in zip(compiled, pooled)], settings, starts)


def _polish(jobs: list[tuple[CompiledCandidate, np.ndarray, np.ndarray | None, Pooled | None]],
            settings: FitSettings, starts: list[Fit]) -> list[Fit]:
    """Each job (candidate, targets, rows, pooled) polished from its start: stacked where
    :func:`stacked` says, else one by one, in the order given."""
    together = [k for k, (c, y, r, _) in enumerate(jobs) if stacked(settings, c.candidate, len(y if r is None else r))]
    out: list[Fit | None] = [None] * len(jobs)
    problems = [_Problem(c, y, settings.regularization, r, p) for c, y, r, p in (jobs[k] for k in together)]
    for k, f in zip(together, _polish_problems(problems, settings, [starts[k] for k in together])):
        out[k] = f
    for k, f in enumerate(out):
        if f is None:
            c, y, r, p = jobs[k]
            out[k] = fit(c, y, settings, r, start=starts[k], local=True, pooled=p)
    return out  # type: ignore[return-value]


def polish_together(compiled: list[CompiledCandidate], y: np.ndarray, settings: FitSettings,
                    starts: list[Fit], rows: list[np.ndarray | None] | None = None,
                    pooled: Pooled | None = None) -> list[Fit]:
    """Fit each candidate's nonlinear constants from its ``start`` (the best of its batched grid
    profile, the screening's refined grid, or a bootstrap's full-data fit) — a lone one by the
    stencil polish as ``fit(..., start=start, local=True)`` does, several by the quasi-Newton
    polish — the rounds of all candidates costed together; ``rows[i]`` fits the i-th on those
    rows only (a bootstrap resample); ``pooled``: ``y`` is one row per configuration (see
    :func:`exprsearch.fit.fit`)."""
    problems = [_Problem(c, y, settings.regularization, None if rows is None else r, pooled)
                for c, r in zip(compiled, rows or [None] * len(compiled))]
    return _polish_problems(problems, settings, starts)


def _polish_problems(problems: list[_Problem], settings: FitSettings, starts: list[Fit]) -> list[Fit]:
    searches = []
    for problem, start in zip(problems, starts):
        names = [s.name for s in problem.candidate.nonlinear]
        low, high = (np.array(v, dtype=float) for v in zip(*(problem.candidate.bounds[n] for n in names)))
        at = np.array([start.values[n] for n in names], dtype=float)
        searches.append(stencil(at, low, high, (high - low) / (settings.grid - 1)) if len(names) == 1 else
                        quasi_newton(at, low, high, (high - low) / 64))
    thetas = lockstep(searches, lambda running, populations: _costs(
        [problems[i] for i in running], populations, settings.regularization))
    return [problem.result(theta, None)[0] for problem, theta in zip(problems, thetas)]


def _costs(problems: list[_Problem], thetas: list[np.ndarray], lam: float) -> list[np.ndarray]:
    """The cost of each column of each ``thetas[i]`` ``(q, S)`` for ``problems[i]``, as
    :meth:`_Problem.energy` gives it, from stacks of problems with the same number of terms and
    rows (robust losses, whose weights are each fit's own, are fitted one by one)."""
    out: list[np.ndarray | None] = [None] * len(problems)
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, problem in enumerate(problems):
        blocks = problem._blocks
        if blocks is None or not blocks.valid or problem.reweighted:
            out[i] = problem.energy(thetas[i])
        else:
            groups[len(problem.compiled.basis), len(problem.y)].append(i)
    for (m, n), group in groups.items():
        for members in _chunks(group, [thetas[i].shape[1] * n * m for i in group]):
            costs = _stack_costs([problems[i] for i in members], [thetas[i] for i in members], lam, m, n)
            for i, cost in zip(members, costs):
                out[i] = cost
    return out  # type: ignore[return-value]


def _chunks(members: list[int], values: list[int]) -> list[list[int]]:
    """``members`` in order, cut so that each piece's stacked design holds at most
    :data:`STACK_VALUES` values (one member alone whatever its size)."""
    pieces, piece, held = [], [], 0
    for i, size in zip(members, values):
        if piece and held + size > STACK_VALUES:
            pieces.append(piece)
            piece, held = [], 0
        piece.append(i)
        held += size
    return pieces + ([piece] if piece else [])


def _stack_costs(problems: list[_Problem], thetas: list[np.ndarray], lam: float, m: int,
                 n: int) -> list[np.ndarray]:
    """The costs of each problem's ``thetas``, for one stack of problems with ``m`` terms on ``n``
    rows."""
    sizes = [theta.shape[1] for theta in thetas]
    total = sum(sizes)
    design, target = np.empty((total, n, m)), np.empty((total, n))
    norm, low, high = np.empty(total), np.empty((total, m)), np.empty((total, m))
    start = 0
    for problem, size, moving in zip(problems, sizes, _moving(problems, thetas)):
        end, blocks = start + size, problem._blocks
        design[start:end, :, blocks.fixed] = blocks.design
        design[start:end, :, blocks.moving] = moving
        target[start:end], norm[start:end] = blocks.target, blocks.norm
        low[start:end], high[start:end] = problem.low, problem.high
        start = end
    valid = np.isfinite(design).all(axis=(1, 2))
    design[~valid] = 0.0
    across = np.swapaxes(design, 1, 2)
    gram = across @ design / n
    rhs = (across @ target[:, :, None])[:, :, 0] / n
    cost = ridge(gram, rhs, norm, low, high, lam, valid)[1]
    cost[~valid | ~np.isfinite(cost)] = INVALID_COST
    return np.split(cost, np.cumsum(sizes)[:-1])


def _moving(problems: list[_Problem], thetas: list[np.ndarray]) -> list[np.ndarray]:
    """Each problem's columns that move with its ``thetas`` (as :meth:`_Blocks.columns` gives
    them); problems of one compiled candidate on other rows (a bootstrap's resamples, the folds
    of a holdout) evaluate its terms in one call for all their exponents, not one call each."""
    out: list[np.ndarray | None] = [None] * len(problems)
    shared: dict[int, list[int]] = defaultdict(list)
    for i, problem in enumerate(problems):
        if not problem.reweighted:
            shared[id(problem.compiled)].append(i)
        else:
            out[i] = problem._blocks.columns(thetas[i], problem)
    for members in shared.values():
        first = problems[members[0]]
        compiled, moving = first.compiled, first._blocks.moving
        if len(members) == 1:
            out[members[0]] = first._blocks.columns(thetas[members[0]], first)
            continue
        together = np.concatenate([thetas[i] for i in members], axis=1)
        values = [v[:, None] for v in together]
        with np.errstate(all="ignore"):
            raw = [np.broadcast_to(compiled.basis[j](values), (together.shape[1], compiled.n_rows)) for j in moving]
            at = 0
            for i in members:
                size, problem = thetas[i].shape[1], problems[i]
                rows = slice(None) if problem.rows is None else problem.rows
                part = np.stack([r[at:at + size][:, rows] for r in raw], axis=2)
                out[i] = part / problem.y[None, :, None]
                if problem.root_weights is not None:
                    out[i] *= problem.root_weights[None, :, None]
                at += size
    return out  # type: ignore[return-value]
