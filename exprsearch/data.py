"""Measurement tables → :class:`Dataset`: validated factor columns and a positive target."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import reciprocal, rowfilter
from .cells import check_dates, check_written, mostly_numbers, refuse_strays
from .columns import check_factor_columns, check_settings, columns_named, inferred, require_column
from .errors import DataError, SearchError, ShortData
from .repeats import mixed_setups, pooled_noise, stray_runs
from .roles import derived_notes, settings
from .rowsets import row_groups
from .runlogs import Runs, as_runs, clocks, job_steps, runs, unfinished
from .spread import attach as with_spread
from .spread import parse as parse_spread
from .spread import split_off
from .tables import file_lines, lazy_pandas, placed, plain_columns, read_bytes, read_table, rows_named
from .vocabulary import law_name

if TYPE_CHECKING:
    import pandas as pd

    from .rowfilter import Condition

def is_frame(data: object) -> bool:
    """Whether ``data`` is a pandas DataFrame, without importing pandas when it is not loaded."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.DataFrame)


@dataclass(frozen=True)
class Dataset:
    """Measurements: one row per run, factor columns ``X`` and the positive target ``y`` (a
    per-step log's runs each taken as one row)."""

    target: str
    factors: tuple[str, ...]
    X: np.ndarray
    y: np.ndarray
    name: str = "data"
    path: str | None = None
    sha256: str | None = None
    notes: tuple[str, ...] = field(default=())
    series: str | None = None  # the callpath:metric of a file of many series (Extra-P's formats)
    sheet: str | None = None  # the workbook's sheet it was read from, where one was named
    places: np.ndarray | None = field(default=None, repr=False)  # each row's line in the file (tables.placed)
    group: tuple[tuple[str, object], ...] = ()  # the --by columns and values whose rows these are
    drop_missing: bool = False  # read with rows of missing values dropped, as reading it again must
    drop_stray: bool = False  # and with runs far from their repeats dropped
    steps: str | None = None  # the column numbering the steps where the table's rows were steps of its runs
    clock: bool = False  # and the target a clock, each run taken at its last step (else its steps' median)
    held: tuple[tuple[str, float], ...] = ()  # factors left out for having one value, with it
    segment: tuple[str, float, float, str] | None = None  # --segments: the factor, its range here, the side
    measure: str | None = None  # --measure: the statistic of each configuration's runs fitted, where not all
    # --measure: the relative noise variance of each row (the statistic of its runs) and the
    # degrees of freedom of the runs that measured it, as no row repeats another
    noise: tuple[float, int] | None = None
    where: tuple[str, ...] = ()  # --where: the conditions the file's rows were kept by, as reading it again must
    spread: tuple[str, str] | None = None  # --spread: the columns of each row's runs' standard deviation and count
    # --spread: the runs a row stands for, the harmonic mean of their counts (what one more row costs)
    row_runs: int | None = None
    # --measure, --spread: each row's part of ``noise`` (:func:`pooled_noise`), so that a subset of
    # the rows, such as a side of --segments, measures its own noise as runs of every row would
    row_noise: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.X.setflags(write=False)
        self.y.setflags(write=False)

    @property
    def n_rows(self) -> int:
        return len(self.y)

    def column(self, name: str) -> np.ndarray:
        """The values of factor ``name``."""
        return self.X[:, self.factors.index(name)]

    def configurations(self) -> np.ndarray:
        """An integer per row naming its configuration; repetitions share one."""
        return row_groups(self.X)[1]

    def subset(self, rows: np.ndarray) -> Dataset:
        """The same dataset restricted to ``rows`` (an index or boolean mask)."""
        parts = None if self.row_noise is None else self.row_noise[rows]
        return replace(self, X=self.X[rows].copy(), y=self.y[rows].copy(),
                       places=None if self.places is None else self.places[rows], row_noise=parts,
                       noise=self.noise if parts is None else pooled_noise(parts))

    def measured(self) -> str:
        """What the rows measure, in words: where they come from, how many, each factor's values
        (a few listed, else their range) and those held at one value."""
        from .configs import listed, setting  # as a user writes a value (64862437376, not 6.48624e+10)

        def values(v: np.ndarray) -> str:
            shown = [setting(x) for x in np.unique(v)]
            return listed(shown) if len(shown) <= 4 else f"{shown[0]}..{shown[-1]} ({len(shown)} values)"
        where = f"'{self.path}'" + (f" sheet '{self.sheet}'" if self.sheet else "") if self.path else "the data"
        parts = [f"{self.n_rows} row{'s' if self.n_rows != 1 else ''}" + (f" kept by --where {' and '.join(self.where)}"
                                                                         if self.where else "")]
        parts += [f"{f} at {values(self.column(f))}" for f in self.factors]
        parts += [f"{f} held at {setting(v)}" for f, v in self.held]
        return f"{where} ({'; '.join(parts)})"

    def rows_named(self, rows: np.ndarray) -> str:
        """Rows (positions in ``X``) as the user finds them: the file's lines, a sheet's rows, or
        the rows of the table given."""
        return rows_named(np.asarray(rows), 0 if self.places is None else self.places)


def load_table(
    path: str | Path,
    target: str,
    factors: list[str] | None = None,
    drop_missing: bool = False,
    sheet: str | None = None,
    drop_stray: bool = False,
    where: Sequence[Condition] = (),
    spread: tuple[str, str] | None = None,
) -> Dataset:
    """Read a CSV/TSV/Parquet/JSON/JSON Lines/Excel table (``sheet``: a workbook's sheet) and
    validate it into a :class:`Dataset`; ``drop_stray`` drops runs far from their repeats,
    ``where`` keeps the rows that meet its conditions (``--where``), and ``spread`` names the
    columns of the runs each row summarises (:mod:`exprsearch.spread`)."""
    path = Path(path)
    raw = read_bytes(path)
    plain = None if raw is None or sheet is not None or where else plain_columns(raw, path.suffix)
    if plain is not None:
        plain = reciprocal.derived(plain, target, f"'{path}'", header_lines=1)
        plain, values = split_off(plain, spread, target, f"'{path}'")
        data = from_columns(plain, target, factors, drop_missing=drop_missing, drop_stray=drop_stray,
                            name=path.stem, path=str(path), sha256=hashlib.sha256(raw).hexdigest(), header_lines=1)
        return with_spread(data, values, 1, spread, f"'{path}'")
    table = read_table(path, sheet)  # it says why it cannot be read
    frame, kept = rowfilter.keep(table, where, f"'{path}'", reciprocal.measured([target]))
    frame = reciprocal.derived(frame, target, f"'{path}'")
    frame, values = split_off(frame, spread, target, f"'{path}'")
    lines = file_lines(frame.index)
    with rowfilter.too_few_kept(where, len(frame), len(table)):
        data = from_frame(frame.reset_index(drop=True), target, factors, drop_missing=drop_missing,
                          drop_stray=drop_stray, name=path.stem, path=str(path),
                          sha256=hashlib.sha256(raw).hexdigest(), lines=lines, whole=table if where else None)
    data = with_spread(data, values, 0 if lines is None else lines, spread, f"'{path}'")
    return replace(data, sheet=sheet, **filtered(data, where, kept))


def filtered(data: Dataset, where: Sequence[Condition], kept: str | None) -> dict:
    """The fields of a Dataset read with ``--where`` conditions: the conditions, and the note of
    how many rows they kept first among its notes."""
    return {"where": rowfilter.recorded(where), "notes": (kept, *data.notes)} if where else {}


def as_dataset(data: object, target: str | None, factors: list[str] | None = None,
               where: Sequence[str] = (), spread: str | Sequence[str] | None = None) -> Dataset:
    """What :func:`exprsearch.search` is given as a :class:`Dataset`: a table's path, a DataFrame,
    a dict of columns or a Dataset; ``where``: the conditions on a path's or a DataFrame's rows;
    ``spread``: the columns of the runs' standard deviation and count (:mod:`exprsearch.spread`)."""
    conditions = rowfilter.parse(where)
    pair = parse_spread(spread)
    if isinstance(data, Dataset):
        if conditions or pair:
            raise SearchError(f"{'where=' if conditions else 'spread='} reads a table's columns; a Dataset is read "
                              "already: pass the table or its path")
        return data
    if target is None:
        raise SearchError("pass target=, the column holding the measured time")
    if isinstance(data, Mapping) and conditions:
        data = lazy_pandas().DataFrame(dict(data))
    if is_frame(data):
        if not conditions:
            frame, values = split_off(reciprocal.derived(data, target, "the table"), pair, target, "the table")
            return with_spread(from_frame(frame, target, factors), values, 0, pair, "the table")
        frame, kept = rowfilter.keep(data.reset_index(drop=True), conditions, "the table", reciprocal.measured([target]))
        frame, values = split_off(reciprocal.derived(frame, target, "the table"), pair, target, "the table")
        # messages name a row by its place in the table given, not among the rows kept
        lines = placed(np.asarray(frame.index), 0)
        with rowfilter.too_few_kept(conditions, len(frame), len(data)):
            dataset = from_frame(frame.reset_index(drop=True), target, factors, lines=lines, whole=data)
        dataset = with_spread(dataset, values, lines, pair, "the table")
        return replace(dataset, **filtered(dataset, conditions, kept))
    if isinstance(data, Mapping):
        columns, values = split_off(reciprocal.derived(data, target, "the table"), pair, target, "the table")
        return with_spread(from_columns(columns, target, factors), values, 0, pair, "the table")
    if isinstance(data, (str, Path)):
        return load_table(data, target, factors, where=conditions, spread=pair)
    raise SearchError(f"data is a {type(data).__name__}; pass a pandas DataFrame, a dict of columns "
                      "(name → values), a Dataset or the path of a table")


def configurations(frame: pd.DataFrame, factors: tuple[str, ...], path: str | Path) -> dict[str, np.ndarray]:
    """The configurations of a table read from ``path`` to predict at: a column of finite numbers
    per factor (other columns are the caller's)."""
    columns = [str(c) for c in frame.columns]
    frame = frame.set_axis(columns, axis=1)
    lines = file_lines(frame.index)
    numbering = lines if lines is not None else 0
    found = {}
    for f, column in zip(factors, columns_named(list(factors), columns)):  # 'batch size' for batch_size
        require_column(column, columns, f"'{path}'", "factor")
        found[f] = lazy_pandas().to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(found[f]))
        if bad.size:
            raise DataError(f"'{path}' column '{column}' has missing or non-numeric values at "
                            f"{rows_named(bad, numbering)}; give every configuration a number")
    return found


def from_frame(
    frame: pd.DataFrame,
    target: str,
    factors: list[str] | None = None,
    *,
    drop_missing: bool = False,
    drop_stray: bool = False,
    name: str = "data",
    path: str | None = None,
    sha256: str | None = None,
    header_lines: int = 0,
    lines: np.ndarray | None = None,
    whole: pd.DataFrame | None = None,
) -> Dataset:
    """Validate a DataFrame into a :class:`Dataset` (factors default to other numeric columns);
    messages name each row's line of the file: ``lines`` where given (a group of a file's rows),
    else counted after ``header_lines``. ``whole``: every row of the file where ``frame`` holds
    those --where kept, from which the roles of the columns are read (:func:`~exprsearch.columns.inferred`)."""
    numbering = header_lines if lines is None else np.asanyarray(lines)  # a sheet's rows stay Rows
    pd = lazy_pandas()
    where = f"'{path}'" if path else "the table"
    columns = [str(c) for c in frame.columns]
    frame = frame.set_axis(columns, axis=1)
    require_column(target, columns, where, "target")
    steps = job_steps(frame)
    if steps:
        column, rows = steps
        more = "…" if len(rows) > 3 else ""
        raise DataError(f"{where} lists {len(rows)} Slurm job step(s) beside their jobs ({column} "
                        f"{frame[column].iloc[rows[0]]} at {rows_named(rows[:3], numbering)}{more}): a step repeats "
                        "its job's time with the step's own resources; export one row per job (sacct -X), or remove "
                        "the step rows")
    check_dates(frame, [target], where, "the target: give the time each run took")
    factors = columns_named(factors, columns)
    check_written(frame, [target, *(factors or [])], where, numbering)
    for c in [target, *(factors or [])] if not drop_missing else []:  # a typo among numbers, named
        if c in frame.columns and not pd.api.types.is_numeric_dtype(frame[c]) and mostly_numbers(frame[c]):
            refuse_strays(frame[c], c, where, numbering, target=c == target)
    if factors is None:
        factors, numeric, notes, _ = inferred(frame, target, drop_missing, where, numbering, whole=whole)
    else:
        notes = []
        check_factor_columns(factors, target, columns, where)
        check_dates(frame, factors, where, "a factor: leave it out of --factors")
        numeric = frame[[*factors, target]].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    clock = target in clocks(frame)
    notes += _clock(target) if clock else []
    stopped = unfinished(frame)
    if stopped:
        column, states, rows = stopped
        said = ", ".join(f"{state} {count}" for state, count in states.items())
        notes.append(f"column {column} marks {len(rows)} run(s) as not finished ({said}) at "
                     f"{rows_named(rows, numbering)}: their times end where they stopped, and the law takes them "
                     f"as measured; remove those rows, or pass --by {column} to fit the finished runs apart")
    mixed = mixed_setups(frame[[c for c in columns if c not in factors and c != target]], numeric[:, :-1], numeric[:, -1])
    notes += [mixed] if mixed else []
    spans = [c for c in frame.attrs.get("seconds", ()) if c == target or c in factors]
    if spans:
        notes.append(f"column(s) {', '.join(spans)} hold durations, read in seconds")
    notes += [frame.attrs["read_as"]] if frame.attrs.get("read_as") else []  # a file's own dialect (dialect.py)
    return _dataset(numeric, target, factors, (drop_missing, drop_stray), notes, numbering, where, name, path,
                    sha256, runs(frame, columns, factors, target, clock))


def from_columns(
    columns: Mapping[str, np.ndarray],
    target: str,
    factors: list[str] | None = None,
    *,
    drop_missing: bool = False,
    drop_stray: bool = False,
    name: str = "data",
    path: str | None = None,
    sha256: str | None = None,
    header_lines: int = 0,
) -> Dataset:
    """Validate numeric columns (``name`` → values) into a :class:`Dataset`, as :func:`from_frame`
    does a table whose columns are all numbers (factors default to every column but the target)."""
    where = f"'{path}'" if path else "the table"
    names = [str(c) for c in columns]
    require_column(target, names, where, "target")
    inferred = factors is None
    factors = [c for c in names if c != target] if factors is None else columns_named(factors, names)
    check_factor_columns(factors, target, names, where)
    try:
        arrays = [np.asarray(columns[c], dtype=float) for c in [*factors, target]]
        if any(a.ndim != 1 for a in arrays) or len({len(a) for a in arrays}) > 1:
            raise ValueError("each column must be one list of values, all of the same length")
        numeric = np.column_stack(arrays)
    except (TypeError, ValueError) as exc:  # a column of text, or columns of different lengths
        raise DataError(f"{where} cannot be read as numeric columns of one length ({exc}); pass numbers") from None
    clock = target in clocks(columns)
    notes = _clock(target) if clock else []
    if inferred:
        factors, numeric, note = settings(target, factors, numeric)
        check_settings(factors, where)
        notes += [note] if note else []
    mixed = mixed_setups({c: columns[c] for c in names if c not in factors and c != target}, numeric[:, :-1],
                         numeric[:, -1])
    notes += [mixed] if mixed else []
    return _dataset(numeric, target, factors, (drop_missing, drop_stray), notes, header_lines, where, name, path,
                    sha256, runs(columns, names, factors, target, clock))


def _clock(target: str) -> list[str]:
    """The note for a target of a per-step log that counts the time since each run began (runlogs.clocks)."""
    return [f"{target} grows with the step at nearly every row: it counts the time since each run began, not a "
            "step's or a run's time, and a law of it describes how long the runs had run"]


def _dataset(numeric: np.ndarray, target: str, factors: list[str], drops: tuple[bool, bool], notes: list[str],
             numbering: int | np.ndarray, where: str, name: str, path: str | None, sha256: str | None,
             steps: Runs | None = None) -> Dataset:
    """The Dataset of a float matrix (factor columns, then the target): missing values, a target
    that is not positive and factors with a single value checked, a per-step log's ``steps`` taken
    as runs, and stray runs checked, in that order; ``drops``: whether rows of missing values, and
    stray runs, are dropped."""
    drop_missing, drop_stray = drops
    positions = np.arange(len(numeric))
    bad = ~np.isfinite(numeric)
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        if not drop_missing:
            col = [*factors, target][int(np.flatnonzero(bad[rows[0]])[0])]
            rows = np.flatnonzero(bad[:, [*factors, target].index(col)])
            # a factor missing from many rows may be a column the law does not need (a cost, a zone)
            aside = "" if col == target else ", or leave the column out of the factors with --factors"
            raise DataError(
                f"{where} column '{col}' has missing or non-numeric values at "
                f"{rows_named(rows, numbering)}; fill or remove them, pass --drop-missing to drop those rows{aside}"
            )
        notes.append(f"dropped {len(rows)} row(s) with missing values: {rows_named(rows, numbering)}")
        if len(numeric) - len(rows) < 2:
            names = [*factors, target]
            worst = [names[j] for j in np.argsort(-bad.sum(axis=0), kind="stable")[:2] if bad[:, j].any()]
            raise ShortData(f"{where} has {len(numeric) - len(rows)} row(s) left after dropping those with missing "
                            f"values; most are missing in column(s) {', '.join(worst)}: leave a factor out with "
                            "--factors, or fill the values")
        numeric = np.delete(numeric, rows, axis=0)
        positions = np.delete(positions, rows)
    y = numeric[:, -1].copy()
    nonpositive = np.flatnonzero(y <= 0)
    if nonpositive.size:
        raise DataError(
            f"{where} target '{target}' must be positive (errors are relative to it) but is "
            f"zero or negative at {rows_named(positions[nonpositive], numbering)}; remove those rows"
        )
    if len(y) < 2:
        raise ShortData(f"{where} has {len(y)} usable row(s); a law needs several measurements")
    single = [j for j in range(len(factors)) if len(np.unique(numeric[:, j])) == 1]
    if single and len(single) < len(factors):
        notes.append(f"left out factor(s) with a single value: {', '.join(factors[j] for j in single)}")
    kept = [j for j in range(len(factors)) if j not in single or len(single) == len(factors)]
    rows_read = len(y)
    X, y, positions, per_run = as_runs(numeric[:, kept].copy(), y, positions, steps, target, where)
    collapsed = len(y) < rows_read  # rows were steps of runs, each now one row
    notes += [per_run] if per_run else []
    stray, rows = stray_runs(X, y, positions, numbering, drop_stray)
    if stray:
        notes.append(stray)
    if drop_stray and rows.size:
        X, y, positions = np.delete(X, rows, axis=0), np.delete(y, rows), np.delete(positions, rows)
    names = [law_name(factors[j]) for j in kept]
    notes.extend(derived_notes(names, X))
    renamed = [f for f in (factors[j] for j in kept) if law_name(f) != f]
    if renamed:
        notes.append("in the law, " + ", ".join(f"column '{f}' is the factor {law_name(f)}" for f in renamed))
    return Dataset(target, tuple(names), X, y, name, path, sha256, tuple(notes), places=placed(positions, numbering),
                   drop_missing=drop_missing, drop_stray=drop_stray, steps=steps.step if collapsed else None,
                   clock=collapsed and steps.clock,
                   held=tuple((law_name(factors[j]), float(numeric[0, j])) for j in single if j not in kept))


def __getattr__(name: str):
    """load_groups, load_grouped and group_name live in grouped.py; imports from here still work."""
    if name in ("load_groups", "load_grouped", "group_name"):
        from . import grouped

        return getattr(grouped, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
