"""Refining candidates one by one, in this process or a pool of them: the search's executor.

Each job is a candidate and the batched fit it starts from; each candidate's DE seed depends
only on it, so the outcome does not depend on how many processes ran the jobs.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from threadpoolctl import threadpool_limits

from .candidates import Candidate
from .compile import Compiler
from .fit import Fit, FitSettings, fit

Progress = Callable[[int, int], None]
# Seconds of serial work (as estimated below) under which starting processes costs more than it
# saves. Measured here with forked workers: a pool adds about 0.2 s to a run with 0.1 s of
# refinement, breaks even near 0.5 s and saves 0.13 s of 0.75 s (a DE search takes about 10-20 ms,
# a local polish from a grid start 1.5-2.5 ms).
POOL_MINIMUM = 0.8
DE_SECONDS, LOCAL_SECONDS = 0.015, 0.002

_WORKER: dict = {}  # what each process fits, set once per process


def _start_worker(compiler: Compiler, y: np.ndarray, settings: FitSettings, todo: list) -> None:
    _WORKER.update(compiler=compiler, y=y, settings=settings, todo=todo)


def _quiet_worker(*start: object) -> None:
    """A worker ignores Ctrl-C (the parent stops the pool), then takes its jobs if sent any."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threadpool_limits(1, user_api="blas")  # as search() does in the parent (a spawned worker starts afresh)
    if start:
        _start_worker(*start)


def _refine_chunk(bounds: tuple[int, int]) -> list[tuple]:
    """Fit jobs ``bounds[0]:bounds[1]``; plain tuples travel between processes cheaply
    (pickling sympy expressions costs more than fitting them)."""
    return _fit_jobs(_WORKER["compiler"], _WORKER["y"], _WORKER["settings"], _WORKER["todo"][bounds[0]:bounds[1]])


def _fit_task(task: tuple) -> list[tuple]:
    """A chunk of jobs sent whole to a cluster worker, which holds no state between tasks."""
    threadpool_limits(1, user_api="blas")
    return _fit_jobs(*task)


def _fit_jobs(compiler: Compiler, y: np.ndarray, settings: FitSettings, jobs: list) -> list[tuple]:
    out = []
    for candidate, start in jobs:
        # exponents with a start from a grid (the screening's, or the batched profile of a lone
        # exponent) are in the right basin already and are polished locally; those without a
        # start are searched by DE
        local = start is not None
        f = fit(compiler.compile(candidate), y, settings, start=start, local=local)
        out.append((f.values, f.cost, f.mse, f.ok, f.reason))
    return out


def _serial_seconds(todo: list[tuple[Candidate, Fit | None]]) -> float:
    """A rough estimate of the time the jobs take in one process."""
    searched = sum(1 for _, start in todo if start is None)
    return searched * DE_SECONDS + (len(todo) - searched) * LOCAL_SECONDS


def refine(
    todo: list[tuple[Candidate, Fit | None]], compiler: Compiler, y: np.ndarray, settings: FitSettings,
    progress: Progress | None, jobs: int, deadline: float | None, done: int, total: int,
    scheduler: str | None = None,
) -> list[Fit | None]:
    """Fit each job, in ``jobs`` processes or on a Dask ``scheduler``; each candidate's DE seed
    depends only on it, so the outcome does not depend on what runs it. Jobs not reached by
    ``deadline`` come back None."""
    if scheduler is not None and todo:
        return _on_cluster(todo, compiler, y, settings, progress, deadline, done, total, scheduler)
    size = 8 if jobs > 1 else 4
    chunks = [(i, min(i + size, len(todo))) for i in range(0, len(todo), size)]
    rows: list[tuple] = []
    _start_worker(compiler, y, settings, todo)
    if jobs > 1 and _serial_seconds(todo) >= POOL_MINIMUM:
        # Forked workers inherit the jobs; elsewhere they are sent once per worker.
        forking = "fork" in multiprocessing.get_all_start_methods()
        options = ({"mp_context": multiprocessing.get_context("fork"), "initializer": _quiet_worker} if forking else
                   {"mp_context": multiprocessing.get_context("spawn"), "initializer": _quiet_worker,
                    "initargs": (compiler, y, settings, todo)})
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
                deadline: float | None, done: int, total: int, scheduler: str) -> list[Fit | None]:
    """The jobs in chunks on a Dask cluster (a search too large for one machine): each chunk
    travels with the compiler (without its caches), the targets and the settings."""
    from .executor import DaskCluster

    size = 32
    starts = list(range(0, len(todo), size))
    parts: dict[int, list[tuple]] = {}
    cluster = DaskCluster(scheduler)
    try:
        tasks = [(compiler, y, settings, todo[a:a + size]) for a in starts]
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
