"""Fitting the candidates: the batched fits, then the refinement of those with nonlinear
constants, in this process or a pool of them (the search's executor).

Each refinement job is a candidate and the batched fit it starts from; each candidate's DE seed
depends only on it, and exponents polished together get the costs they would get alone, so the
outcome does not depend on how many processes ran the jobs.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from . import rank as _rank
from .batch import batchable, fit_separable
from .candidates import Candidate, Term
from .compile import Compiler
from .fit import Fit, FitSettings, fit
from .lockstep import polish, stacked
from .pooled import Pooled, pool

Progress = Callable[[int, int], None]
# Seconds of serial work (as estimated below) under which starting processes costs more than it
# saves. Measured here with forked workers: a pool adds about 0.2 s to a run with 0.1 s of
# refinement, breaks even near 0.5 s and saves 0.13 s of 0.75 s (a DE search takes about 10-20 ms,
# an L-BFGS-B polish from a grid start 1.5-2.5 ms; among others, a lone exponent's polish 0.5 ms,
# that of several 0.9 ms).
POOL_MINIMUM = 0.8
DE_SECONDS, LOCAL_SECONDS, TOGETHER_SECONDS, SEVERAL_SECONDS = 0.015, 0.002, 0.0005, 0.0009
CHUNK_SECONDS = 0.03

_WORKER: dict = {}  # what each process fits, set once per process


def _start_worker(compiler: Compiler, y: np.ndarray, settings: FitSettings, todo: list,
                  pooled: Pooled | None = None) -> None:
    _WORKER.update(compiler=compiler, y=y, settings=settings, todo=todo, pooled=pooled)


def _quiet_worker(*start: object) -> None:
    """A worker ignores Ctrl-C (the parent stops the pool), then takes its jobs if sent any."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threadpool_limits(1, user_api="blas")  # as search() does in the parent (a spawned worker starts afresh)
    if start:
        _start_worker(*start)


def _refine_chunk(bounds: tuple[int, int]) -> list[tuple]:
    """Fit jobs ``bounds[0]:bounds[1]``; plain tuples travel between processes cheaply
    (pickling sympy expressions costs more than fitting them)."""
    return _fit_jobs(_WORKER["compiler"], _WORKER["y"], _WORKER["settings"], _WORKER["todo"][bounds[0]:bounds[1]],
                     _WORKER["pooled"])


def _fit_task(task: tuple) -> list[tuple]:
    """A chunk of jobs sent whole to a cluster worker, which holds no state between tasks."""
    threadpool_limits(1, user_api="blas")
    return _fit_jobs(*task)


def _fit_jobs(compiler: Compiler, y: np.ndarray, settings: FitSettings, jobs: list,
              pooled: Pooled | None = None) -> list[tuple]:
    # Exponents with a start from a grid (the screening's, or the batched profile of a lone
    # exponent) are in the right basin already and are polished locally, all together; those
    # without a start are searched by DE.
    fits: list[Fit | None] = [None] * len(jobs)
    local = [k for k, (_, start) in enumerate(jobs) if start is not None]
    for k, f in zip(local, polish([compiler.compile(jobs[k][0]) for k in local], y, settings,
                                  [jobs[k][1] for k in local], pooled=pooled)):
        fits[k] = f
    fits = [f if f is not None else fit(compiler.compile(candidate), y, settings, pooled=pooled)
            for f, (candidate, _) in zip(fits, jobs)]
    return [(f.values, f.cost, f.mse, f.ok, f.reason) for f in fits]


def _seconds(job: tuple[Candidate, Fit | None], settings: FitSettings, rows: int) -> float:
    """A rough estimate of the time one job on ``rows`` rows takes in one process."""
    candidate, start = job
    if start is None:
        return DE_SECONDS
    if not stacked(settings, candidate, rows):
        return LOCAL_SECONDS
    return TOGETHER_SECONDS if len(candidate.nonlinear) == 1 else SEVERAL_SECONDS


def _chunks(todo: list[tuple[Candidate, Fit | None]], settings: FitSettings, rows: int) -> list[tuple[int, int]]:
    """Consecutive jobs of about CHUNK_SECONDS each: enough polishes for their rounds to be
    costed together, few enough DE searches for progress and the deadline to be seen often."""
    chunks, first, work = [], 0, 0.0
    for i, job in enumerate(todo):
        work += _seconds(job, settings, rows)
        if work >= CHUNK_SECONDS or i == len(todo) - 1:
            chunks.append((first, i + 1))
            first, work = i + 1, 0.0
    return chunks


def refine(
    todo: list[tuple[Candidate, Fit | None]], compiler: Compiler, y: np.ndarray, settings: FitSettings,
    progress: Progress | None, jobs: int, deadline: float | None, done: int, total: int,
    scheduler: str | None = None, pooled: Pooled | None = None,
) -> list[Fit | None]:
    """Fit each job, in ``jobs`` processes or on a Dask ``scheduler``; each candidate's DE seed
    depends only on it and polishes costed together do not depend on their neighbours, so the
    outcome does not depend on what runs it. Jobs not reached by ``deadline`` come back None.
    ``pooled``: ``compiler`` and ``y`` are one row per configuration (see :mod:`exprsearch.pooled`)."""
    if scheduler is not None and todo:
        return _on_cluster(todo, compiler, y, settings, progress, deadline, done, total, scheduler, pooled)
    chunks = _chunks(todo, settings, len(y))
    rows: list[tuple] = []
    _start_worker(compiler, y, settings, todo, pooled)
    if jobs > 1 and sum(_seconds(j, settings, len(y)) for j in todo) >= POOL_MINIMUM:
        # Forked workers inherit the jobs; elsewhere they are sent once per worker.
        forking = "fork" in multiprocessing.get_all_start_methods()
        options = ({"mp_context": multiprocessing.get_context("fork"), "initializer": _quiet_worker} if forking else
                   {"mp_context": multiprocessing.get_context("spawn"), "initializer": _quiet_worker,
                    "initargs": (compiler, y, settings, todo, pooled)})
        pool = ProcessPoolExecutor(max_workers=jobs, **options)
        try:
            for part in pool.map(_refine_chunk, chunks):
                rows.extend(part)
                if progress is not None:
                    progress(done + len(rows), total)
                if deadline is not None and time.monotonic() > deadline:
                    break
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    else:
        for chunk in chunks:
            if deadline is not None and time.monotonic() > deadline:
                break
            rows.extend(_refine_chunk(chunk))
            if progress is not None:
                progress(done + len(rows), total)
    _WORKER.clear()
    fitted: list[Fit | None] = [Fit(c, *row) for (c, _), row in zip(todo, rows)]
    return fitted + [None] * (len(todo) - len(rows))


def _on_cluster(todo, compiler: Compiler, y: np.ndarray, settings: FitSettings, progress: Progress | None,
                deadline: float | None, done: int, total: int, scheduler: str,
                pooled: Pooled | None = None) -> list[Fit | None]:
    """The jobs in chunks on a Dask cluster (a search too large for one machine): each chunk
    travels with the compiler (without its caches), the targets and the settings."""
    from .executor import DaskCluster

    size = 32
    starts = list(range(0, len(todo), size))
    parts: dict[int, list[tuple]] = {}
    cluster = DaskCluster(scheduler)
    try:
        tasks = [(compiler, y, settings, todo[a:a + size], pooled) for a in starts]
        for index, rows in cluster.run(_fit_task, tasks):
            parts[index] = rows
            if progress is not None:
                progress(done + sum(len(p) for p in parts.values()), total)
            if deadline is not None and time.monotonic() > deadline:
                break
    finally:
        cluster.close()
    fitted: list[Fit | None] = []
    for index, a in enumerate(starts):
        chunk = todo[a:a + size]
        rows = parts.get(index)
        fitted += [Fit(c, *row) for (c, _), row in zip(chunk, rows)] if rows else [None] * len(chunk)
    return fitted


def _extensions(usable: list[Candidate], fits: list[Fit | None], refined: set[int], tried: set[int],
                margin: float) -> dict[int, Fit]:
    """Starts, by index, for the candidates the pruning passed over that hold every term of a refined candidate
    and more, with all their nonlinear constants in those terms: each can fit at least as well
    as that candidate (its added coefficients at zero), which the parabola through its grid
    profile may not see where the cost has a kink (a max). Those that could then reach the front
    are polished from the refined candidate's exponents."""
    by_terms = {}
    for j in refined:
        key = frozenset(usable[j].terms)
        if fits[j] is not None and fits[j].ok and (key not in by_terms or fits[j].cost < fits[by_terms[key]].cost):
            by_terms[key] = j
    if not by_terms:
        return {}
    starts: dict[int, Fit] = {}
    potential = [f.cost if f is not None and f.ok else np.inf for f in fits]
    for i, candidate in enumerate(usable):
        if i in tried or not candidate.nonlinear or fits[i] is None:
            continue
        terms = set(candidate.terms)
        bounds = [j for key, j in by_terms.items() if key < terms and
                  all(t in key for t in candidate.terms if t.n_nonlinear)]
        if bounds:
            j = min(bounds, key=lambda k: (fits[k].cost, k))
            potential[i] = min(potential[i], fits[j].cost)
            starts[i] = _started(candidate, fits[i], usable[j], fits[j])
    if not starts:
        return {}
    ok = [f if f is not None else Fit(usable[i]) for i, f in enumerate(fits)]
    keep = set(_rank.contenders(ok, potential, margin))
    return {i: starts[i] for i in sorted(starts) if i in keep}


def _started(candidate: Candidate, own: Fit, nested: Candidate, fitted: Fit) -> Fit:
    """``own`` with the nonlinear constants of ``candidate`` set to those ``fitted`` found for the
    same terms of ``nested``."""
    values = dict(own.values)
    for term, names in zip(candidate.terms, candidate.names):
        if term.n_nonlinear:
            theirs = nested.names[nested.terms.index(term)]
            values.update((names[k], fitted.values[theirs[k]]) for k in range(len(names)) if k != term.coefficient)
    return Fit(candidate, values, own.cost, own.mse, own.ok, own.reason)


@dataclass(frozen=True)
class Fitted:
    """Every usable candidate's fit (in candidate order), and how far the refinement got."""

    fits: list[Fit]
    refined: int
    unfinished: int
    unfitted: int
    searched: int = 0  # of the refined, those differential evolution searched (no grid start)


def fit_all(
    usable: list[Candidate], compiler: Compiler, y: np.ndarray, settings: FitSettings,
    progress: Progress | None, jobs: int = 1, deadline: float | None = None,
    guesses: Mapping[Term, tuple[float, ...]] | None = None, scheduler: str | None = None,
) -> Fitted:
    """Fit separable candidates (and those with guessed exponents) in batches, then refine those
    with nonlinear constants that may reach the front, and fit the rest one by one."""
    guesses = guesses or {}
    separable = [i for i, c in enumerate(usable) if batchable(c, guesses)]
    told = None if progress is None else lambda share: progress(int(share * len(separable)), len(usable))
    screened = fit_separable([usable[i] for i in separable], compiler, y, settings, guesses, told)
    fits: list[Fit | None] = [None] * len(usable)
    for i, f in zip(separable, screened.fits):
        fits[i] = f
    nonlinear = [k for k, i in enumerate(separable) if usable[i].nonlinear]
    if settings.prune_margin is not None:
        keep = set(_rank.contenders(screened.fits, screened.potential, settings.prune_margin))
        nonlinear = [k for k in nonlinear if k in keep]
    todo = [separable[k] for k in nonlinear] + [i for i in range(len(usable)) if fits[i] is None]
    if progress is not None:
        progress(len(usable) - len(todo), len(usable))
    work = [(usable[i], fits[i]) for i in todo]
    # refined on one row per configuration, pooled exactly: a per-step log's repeats cost no refits
    pooled = pool(compiler.columns, y, settings.loss)
    if pooled is not None:
        compiler, y = compiler.subset(pooled.rows), pooled.y
    done = refine(work, compiler, y, settings, progress, jobs, deadline, len(usable) - len(todo), len(usable),
                  scheduler, pooled)
    for i, f in zip(todo, done):
        if f is not None:
            fits[i] = f
    if settings.prune_margin is not None and (deadline is None or time.monotonic() < deadline):
        starts = _extensions(usable, fits, {i for i, f in zip(todo, done) if f is not None and usable[i].nonlinear},
                             set(todo), settings.prune_margin)
        warm = [(usable[i], start) for i, start in starts.items()]
        again = refine(warm, compiler, y, settings, None, jobs, deadline, 0, len(warm), scheduler, pooled)
        for i, f in zip(starts, again):
            if f is not None and f.ok and f.cost < fits[i].cost:
                fits[i] = f
        work, done, todo = work + warm, done + again, todo + list(starts)
    # as _fit_jobs decides: a job without a start is searched by DE, the others are polished
    searched = sum(1 for (candidate, start), f in zip(work, done)
                   if start is None and f is not None and candidate.nonlinear)
    stopped = [i for i, f in zip(todo, done) if f is None]
    finished = [f for f in fits if f is not None]
    unfitted = sum(1 for i in stopped if fits[i] is None)
    return Fitted(finished, len(todo) - len(stopped), len(stopped) - unfitted, unfitted, searched)
