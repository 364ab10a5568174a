"""A table read as groups, one :class:`~exprsearch.data.Dataset` per value of its ``--by``
column(s): frameworks, GPUs or models measured in one file, each with a law of its own."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import reciprocal, rowfilter
from .columns import across_note, check_not_target, inferred, rejoined, require_column
from .configs import setting
from .data import Dataset, filtered, from_frame
from .errors import DataError, Failure
from .spread import attach as with_spread
from .spread import split_off
from .tables import file_lines, lazy_pandas, read_table, rows_named

if TYPE_CHECKING:
    import pandas as pd

    from .rowfilter import Condition


def group_name(pairs) -> str:
    """A --by group as messages and law.json's readers name it: ``gpu=a100_40gb,precision=bf16``
    (``pairs``: the group's columns and values); a whole number as the file writes it, ``TBS=8192``
    (a column with an empty cell is read as floats, which wrote ``8192.0``)."""
    return ",".join(f"{k}={_written(v)}" for k, v in pairs)


def _written(value) -> str:
    whole = isinstance(value, (float, np.floating)) and float(value).is_integer()
    return setting(value) if whole else str(value)  # another value as it was read, every digit kept


def load_groups(
    path: str | Path, target: str, by: str | list[str], factors: list[str] | None = None, drop_missing: bool = False,
    drop_stray: bool = False,
) -> dict[str, Dataset]:
    """One Dataset per value of column(s) ``by`` (``"by=value"`` → Dataset), in sorted order."""
    groups, failures = load_grouped(path, target, by, factors, drop_missing, drop_stray=drop_stray)
    if failures:
        name, message = next(iter(failures.items()))
        raise DataError(f"group {name}: {message}")
    return groups


def load_grouped(
    path: str | Path, target: str, by: str | list[str], factors: list[str] | None = None, drop_missing: bool = False,
    tolerate: type[DataError] | tuple[type[DataError], ...] = DataError, sheet: str | None = None,
    drop_stray: bool = False, where: Sequence[Condition] = (), spread: tuple[str, str] | None = None,
) -> tuple[dict[str, Dataset], dict[str, Failure]]:
    """The groups of :func:`load_groups`, and the ones that cannot be fitted with the reason: those
    failing with a ``tolerate`` error (others stop, naming the group); ``sheet``: a workbook's sheet;
    ``where``: the --where conditions whose rows are grouped; ``spread``: the columns of the runs
    each row summarises (:mod:`exprsearch.spread`). A failure keeps its error's kind
    (:class:`~exprsearch.errors.Failure`: :class:`ShortData`, too few rows, where larger groups would help)."""
    path = Path(path)
    table = read_table(path, sheet)
    frame, kept = rowfilter.keep(table, where, f"'{path}'", reciprocal.measured([target]))
    frame = reciprocal.derived(frame, target, f"'{path}'")
    return _grouped(frame, path, target, by, factors, drop_missing, tolerate, sheet, drop_stray, (where, kept),
                    _digest(path), spread, table if where else None)


def load_targets(
    path: str | Path, targets: list[str], by: list[str], factors: list[str] | None = None, drop_missing: bool = False,
    sheet: str | None = None, drop_stray: bool = False, where: Sequence[Condition] = (),
) -> tuple[dict[str, Dataset], dict[str, str]]:
    """One series per column of ``targets`` (a table of phases: fwd_s, bwd_s, comm_s), per group of
    ``by`` where given (``model=a:fwd_s``), each without the other targets (no factor of it, nor a
    setting that differs between its repeats); and the ones that cannot be fitted, with the reason."""
    path = Path(path)
    table = read_table(path, sheet)
    columns = [str(c) for c in table.columns]
    targets = rejoined(targets, columns)
    frame, kept = rowfilter.keep(table, where, f"'{path}'", reciprocal.measured(targets))
    whole = table if where else None  # the file's rows, which say what its columns are
    # the column each target is read from: itself, or the one it is the reciprocal of (1/tokens_per_s)
    source = {t: reciprocal.source(t, columns) for t in targets}
    for target in targets:
        require_column(source[target], columns, f"'{path}'", "target")
    if len(set(targets)) < len(targets):
        raise DataError(f"--target names {', '.join(t for t in targets if targets.count(t) > 1)} twice; name each once")
    series, failures, sha = {}, {}, _digest(path)  # read once for every target, not once per target
    for target in targets:
        others = {source[t] for t in targets} - {source[target]}
        alone = reciprocal.derived(frame.drop(columns=sorted(others)), target, f"'{path}'")
        if by:
            groups, failed = _grouped(alone, path, target, by, factors, drop_missing, DataError, sheet, drop_stray,
                                      (where, kept), sha, whole=whole)
            series |= {f"{name}:{target}": data for name, data in groups.items()}
            failures |= {f"{name}:{target}": why for name, why in failed.items()}
            continue
        try:
            data = from_frame(alone.reset_index(drop=True), target, factors, drop_missing=drop_missing,
                              drop_stray=drop_stray, name=f"{path.stem}-{target}", path=str(path),
                              sha256=sha, lines=file_lines(frame.index), whole=whole)
            series[target] = replace(data, sheet=sheet, **filtered(data, where, kept))
        except DataError as exc:
            failures[target] = Failure(exc)
    return series, failures


def _grouped(frame, path: Path, target: str, by: str | list[str], factors: list[str] | None, drop_missing: bool,
             tolerate: type[DataError] | tuple[type[DataError], ...], sheet: str | None, drop_stray: bool,
             filtering: tuple[Sequence[Condition], str | None], sha: str, spread: tuple[str, str] | None = None,
             whole: pd.DataFrame | None = None) -> tuple[dict[str, Dataset], dict[str, Failure]]:
    columns = [str(c) for c in frame.columns]
    keys = [by] if isinstance(by, str) else rejoined(list(by), columns)
    factors = None if factors is None else rejoined(factors, columns)
    for key in keys:
        require_column(key, columns, f"'{path}'", "--by")
        if key == target:
            raise DataError(f"--by {key}: that is the target; group by another column")
    check_not_target(factors or [], target)
    for f in factors or ():  # the user's choice, so one answer for the file rather than one per group
        require_column(f, columns, f"'{path}'", "factor")
        if f in keys:
            raise DataError(f"--factors {f}: that column names the groups (--by); leave it out of one of them")
    require_column(target, columns, f"'{path}'", "target")
    if spread and set(spread) & set(keys):
        raise DataError(f"--spread {','.join(spread)}: a column of it names the groups (--by); give other columns")
    frame, values = split_off(frame, spread, target, f"'{path}'")
    spreads = None if values is None else lazy_pandas().DataFrame(values, index=frame.index)
    columns = [str(c) for c in frame.columns]
    # the roles of the columns are the file's, decided once: a small group says little about them
    rest = frame.drop(columns=keys).set_axis([c for c in columns if c not in keys], axis=1)
    chosen, _, notes, ignored = (factors, None, [], []) if factors else inferred(
        rest, target, drop_missing, f"'{path}'", file_lines(frame.index), across=False, whole=whole)
    unnamed = np.flatnonzero(frame[keys].isna().any(axis=1).to_numpy())  # groupby would drop them unsaid
    if unnamed.size:
        lines = file_lines(frame.index)
        where = rows_named(unnamed, 0 if lines is None else lines)
        empty = ", ".join(k for k in keys if frame[k].iloc[unnamed].isna().any())  # the columns left empty
        if not drop_missing:
            raise DataError(f"'{path}' leaves --by column(s) {empty} empty at {where}: fill them in, or "
                            "pass --drop-missing to drop those rows")
        notes = [*notes, f"dropped {unnamed.size} row(s) in no --by group ({empty} empty): {where}"]
        if unnamed.size == len(frame):
            raise DataError(f"'{path}' leaves --by column(s) {empty} empty on every row, so no row is in a group; "
                            "fill them in, or group by other columns")
    groups, failures = {}, {}
    for values, group in frame.groupby(keys, sort=True):  # a list of keys: each group's key is a tuple
        name = group_name(zip(keys, values))
        try:
            lines = file_lines(group.index)  # the group's rows where the file has them
            data = from_frame(
                group.drop(columns=keys).reset_index(drop=True), target, chosen, drop_missing=drop_missing,
                drop_stray=drop_stray,
                name=f"{path.stem}-{'-'.join(map(str, values))}", path=str(path), sha256=sha, lines=lines,
            )
            data = with_spread(data, None if spreads is None else spreads.loc[group.index].to_numpy(),
                               0 if lines is None else lines, spread, f"'{path}'")
            spanned = across_note(group, ignored, chosen)  # whether one law spans several values is the group's to say
            data = replace(data, notes=(*notes, *([spanned] if spanned else []), *data.notes))
            groups[name] = replace(data, sheet=sheet, **filtered(data, *filtering),
                                   group=tuple((k, v.item() if hasattr(v, "item") else v) for k, v in zip(keys, values)))
        except tolerate as exc:
            failures[name] = Failure(exc)
        except DataError as exc:
            raise DataError(f"group {name}: {exc}") from None
    return groups, failures


def _digest(path: Path) -> str:
    """The sha256 law.json records of the file the groups were read from."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
