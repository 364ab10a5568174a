"""What a log of runs says beside its settings: how each run ended (a state column), whether a
time counts since the run began (a clock), whether a scheduler's export lists job steps beside
their jobs, and which run each row of a per-step log belongs to, so that its runs, not its steps,
are what the law is fitted to."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .errors import ShortData
from .roles import NAMESPACE, RUN, STEP, reads_as_time
from .rowsets import medians, row_groups


@dataclass(frozen=True)
class Runs:
    """The rows of a per-step log as runs: the column numbering the steps and its value on each
    row, the column numbering or naming a configuration's runs (None where none does) and a label
    per row from it, and whether the target is a clock (a run is then taken at its last step, the
    time it had run)."""

    step: str
    steps: np.ndarray
    run: str | None
    labels: np.ndarray
    clock: bool = False


def clocks(frame) -> list[str]:
    """The columns of a per-step log (a table, or a mapping of names to columns, with a step
    column) that count the time since its run began, as W&B's ``_runtime`` does: they grow with
    the step at nearly every row, where a step's own time goes up and down. Such a column is no
    run's time."""
    steps = [c for c in frame if STEP.match(str(c))]
    if not steps:
        return []
    step = _numbers(frame[steps[0]])
    onward = np.diff(step) > 0
    if onward.sum() < 5:
        return []
    return [str(c) for c in frame if reads_as_time(str(c)) and
            np.mean(np.diff(_numbers(frame[c]))[onward] > 0) >= 0.99]


def _numbers(column) -> np.ndarray:
    if isinstance(column, np.ndarray) and column.dtype.kind == "f":
        return column
    import pandas as pd

    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)


# a column that says how each run ended (W&B's State, Slurm's State, a status): runs that did not
# finish have times that end where they stopped
_STATE = re.compile(NAMESPACE + r"(?:run|job)?[_\-. ]?(?:state|status)$", re.IGNORECASE)
_FINISHED = {"finished", "completed", "complete", "success", "succeeded", "successful", "ok", "done", "passed"}
_UNFINISHED = {"crashed", "failed", "failure", "fail", "killed", "running", "error", "errored", "timeout",
               "cancelled", "canceled", "preempted", "aborted", "interrupted", "pending", "out_of_memory", "oom",
               "node_fail", "deadline"}


def unfinished(frame) -> tuple[str, dict[str, int], np.ndarray] | None:
    """The column of ``frame`` that says how each run ended, the states other than finished with
    their counts, and the rows in them; None where no column says so or every run finished. A
    column of other words (a free-text status) says nothing."""
    for column in frame.columns:
        if not _STATE.match(str(column)) or frame[column].dtype.kind not in "OSU":
            continue
        words = frame[column].astype(str).str.strip().str.split().str[0].str.lower()  # Slurm: 'CANCELLED by 42'
        if not words.isin(_FINISHED | _UNFINISHED).all():
            continue
        rows = np.flatnonzero(words.isin(_UNFINISHED).to_numpy())
        if rows.size:
            return str(column), words.iloc[rows].value_counts().to_dict(), rows
    return None


_JOB_ID = re.compile(r"^job[_\-. ]?id(?:[_\-. ]?raw)?$", re.IGNORECASE)
_STEP_OF = re.compile(r"^(\d+(?:[_+]\d+)?)\.[\w-]+$")  # 1001.batch, 1001.extern, 1001_3.0, 1001+1.0


def job_steps(frame) -> tuple[str, np.ndarray] | None:
    """The column of Slurm job ids and the rows that are steps of a job listed too (sacct without
    -X: 1001.batch beside 1001), or None."""
    for column in frame.columns:
        if not _JOB_ID.match(str(column)):
            continue
        ids = frame[column].astype(str).str.strip()
        base = ids.str.extract(_STEP_OF.pattern)[0]
        rows = np.flatnonzero((base.notna() & base.isin(set(ids))).to_numpy())
        if rows.size:
            return str(column), rows
    return None


def runs(table, names: list[str], factors: list[str], target: str, clock: bool = False) -> Runs | None:
    """The runs of a per-step log (``table``: a DataFrame or a mapping of names to columns) whose
    step column the factors leave out, or None where no column numbers steps; ``clock``: whether
    the target is one of the table's :func:`clocks`."""
    numbering = [n for n in names if n not in factors and STEP.match(n)]
    if not numbering:
        return None
    # the finest of them (Lightning logs epoch and step; an epoch holds many steps)
    numbers = {n: _numbers(table[n]) for n in numbering}
    step = max(numbering, key=lambda n: (len(np.unique(numbers[n])), -numbering.index(n)))
    run = next((n for n in names if n not in factors and n != target and RUN.match(n)), None)
    labels = np.zeros(len(table[target]), dtype=np.int64) if run is None else _labels(table[run])
    return Runs(step, numbers[step], run, labels, clock)


def stepped(rows: int, runs: int) -> bool:
    """Whether ``rows`` that make ``runs`` runs are a log of steps: three steps a run at least, on
    average. Runs of a step or two are rows of a table of runs (W&B's summary, whose _step is each
    run's last, a run that stopped early beside one that finished)."""
    return rows >= 3 * runs


def as_runs(X: np.ndarray, y: np.ndarray, positions: np.ndarray, steps: Runs | None, target: str,
            where: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, str | None]:
    """A per-step log's rows as its runs (:func:`by_run`), with the note saying so; the rows as
    they are where each run is one row. Runs, not steps, are the measurements: steps of one run
    share its node, its placement and its neighbours' load, so their spread understates how runs
    differ, and fitting every step takes that spread for the noise (benchmarks/per_step.py)."""
    if steps is None:
        return X, y, positions, None
    X_run, y_run, first = by_run(X, y, positions, steps)
    if not stepped(len(y), len(y_run)):
        if len(y_run) == len(y):
            return X, y, positions, None
        return X, y, positions, (f"{steps.step} numbers steps, but the runs it marks out would hold one or two rows "
                                 "each: every row is taken as a run (a table of runs, or a log whose rows are out of "
                                 "order; put each run's steps in order, or number its runs in a column such as run)")
    if len(y_run) < 2:
        raise ShortData(f"{where} holds the {len(y)} steps of a single run ({steps.step} numbers them); a law needs "
                        "several runs")
    taken = ("at its last step, the time it had run" if steps.clock else
             f"as the median {target} of its steps")
    single = len(y_run) == len(row_groups(X_run)[0])
    numbered = (f"{steps.run} numbers a configuration's runs, {steps.step} their steps" if steps.run else
                f"one per configuration; {steps.step} numbers the steps" if single else
                f"{steps.step} numbers the steps, and a run begins where it starts again")
    note = (f"the {len(y)} rows are the steps of {len(y_run)} runs ({numbered}): each run is taken {taken}, and the "
            "law is fitted to the runs, which are what differ between measurements (a run is named by its first "
            "step's line)")
    if single:
        note += "; with one run per configuration how runs differ is not measured: run some configurations again"
    return X_run, y_run, first, note


def _labels(column) -> np.ndarray:
    """An integer per row naming its value of ``column`` (numbers or text; a missing value is a label too)."""
    values = np.asarray(column)
    if values.dtype.kind not in "fiub":
        values = values.astype(str)
    return np.unique(values, return_inverse=True)[1].reshape(-1)


def run_of(X: np.ndarray, positions: np.ndarray, runs: Runs) -> np.ndarray:
    """Each row's run, numbered from 0 (``positions``: each row's index in the table, which
    ``runs`` follows). A run is a configuration of ``X`` with one run label, split where, in the
    file's order, the step falls back (runs logged one after another without a run column). Where
    a configuration's steps never rise, its rows are runs of their own: a table of runs whose
    ``_step`` is each run's last step (W&B's summary), the same for runs alike. Steps of several
    runs interleaved (0, 0, 1, 1, …) cannot be told apart, and stay one run."""
    _, group = row_groups(np.column_stack([X, runs.labels[positions]]))
    order = np.lexsort((positions, group))  # each configuration and label together, in file order
    step, group = runs.steps[positions][order], group[order]
    same = group[1:] == group[:-1]
    rises = np.bincount(group[1:][same & (step[1:] > step[:-1])], minlength=group.max() + 1 if len(group) else 0) > 0
    begins = np.ones(len(positions), dtype=bool)
    begins[1:] = ~same | (step[1:] < step[:-1]) | ~rises[group[1:]]
    run = np.empty(len(positions), dtype=np.int64)
    run[order] = np.cumsum(begins) - 1
    return run


def by_run(X: np.ndarray, y: np.ndarray, positions: np.ndarray, runs: Runs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One row per run (:func:`run_of`), in the order the runs begin: its settings, the median of
    its steps' ``y`` (a clock's last value) and its first step's position."""
    run = run_of(X, positions, runs)
    first = np.full(run.max() + 1, len(y))
    np.minimum.at(first, run, np.arange(len(y)))
    if runs.clock:
        value = np.full(len(first), -np.inf)
        np.maximum.at(value, run, y)
    else:
        value = medians(run, y)
    begun = np.argsort(first, kind="stable")
    return X[first[begun]], value[begun], positions[first[begun]]
