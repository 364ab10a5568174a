"""Where independent jobs run: in this process, in a pool of local processes, or on a Dask
distributed cluster. One small interface, :class:`Executor`; the results never depend on
which one ran them, because every job is a pure function of its inputs."""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import re
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Protocol

from .errors import ExprsearchError, SettingsError


class ExecutorError(ExprsearchError, RuntimeError):
    """A scheduler cannot be reached or is missing."""


class Executor(Protocol):
    """Runs ``function(item)`` for each item, yielding ``(index, result)`` as jobs finish."""

    description: str

    def run(self, function: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[tuple[int, Any]]: ...

    def close(self) -> None: ...


class InProcess:
    """Jobs one after another in this process."""

    description = "1 process"

    def run(self, function, items):
        for i, item in enumerate(items):
            yield i, function(item)

    def close(self) -> None:
        pass


def _quiet() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops the pool


class LocalPool:
    """Jobs in ``jobs`` local processes, at most two queued per process so that stopping early
    leaves little work behind."""

    def __init__(self, jobs: int) -> None:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self.pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method), initializer=_quiet)
        self.jobs = jobs
        self.description = f"{jobs} local processes"

    def run(self, function, items):
        pending, position = {}, 0
        while position < len(items) or pending:
            while position < len(items) and len(pending) < 2 * self.jobs:
                pending[self.pool.submit(function, items[position])] = position
                position += 1
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=pending.get):
                yield pending.pop(future), future.result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskCluster:
    """Jobs on a Dask distributed scheduler (``dask.distributed``, the ``dask`` extra): a running
    one at ``address``, or ``local:N`` for a local cluster of N single-threaded workers."""

    def __init__(self, address: str) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ExecutorError("--scheduler needs dask.distributed: pip install 'exprsearch[dask]'") from None
        self.cluster = None
        try:
            if address.startswith("local:"):
                workers = int(address.split(":", 1)[1])
                self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                            dashboard_address=":0")  # any free port: 8787 may be taken
                self.client = Client(self.cluster)
            else:
                self.client = Client(address, timeout=10)
        except ValueError:
            raise ExecutorError(f"--scheduler {address}: write ADDRESS (tcp://host:8786) or local:N") from None
        except OSError as exc:
            raise ExecutorError(f"--scheduler {address}: cannot reach the scheduler ({exc})") from None
        self.description = f"Dask scheduler {self.client.scheduler.address}"

    def run(self, function, items):
        from dask.distributed import as_completed

        futures = self.client.map(function, list(items), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        for future in as_completed(futures):
            yield index[future.key], future.result()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def check_scheduler(address: object) -> None:
    """Refuse, before any work, a scheduler that cannot be one, or one without dask.distributed."""
    if not isinstance(address, str) or not re.fullmatch(r"local:[1-9]\d*|[a-z]+://\S+|[\w.-]+:\d+", address):
        raise SettingsError(f"scheduler {address!r}: write a Dask address (tcp://host:8786) or local:N")
    if importlib.util.find_spec("distributed") is None:
        raise SettingsError("a scheduler needs dask.distributed: pip install 'exprsearch[dask]'")


def executor(jobs: int = 0, scheduler: str | None = None, size: int = 0) -> Executor:
    """The executor for ``size`` jobs: a Dask cluster when ``scheduler`` is given, else ``jobs``
    local processes (0: one per core), or this process when one would do."""
    if scheduler is not None:
        check_scheduler(scheduler)
        return DaskCluster(scheduler)
    jobs = jobs or os.cpu_count() or 1
    return LocalPool(min(jobs, size)) if jobs > 1 and size > 1 else InProcess()
