"""``--target 1/COLUMN``: fit the reciprocal of a measured column, the time per unit of work of a
throughput (``1/tokens_per_s``) or the rate of a time, without adding a column to the table. The
grammars' terms are written for times, so a throughput's law is often simpler as its time; the
column becomes its reciprocal before any check, so the data's messages name ``1/COLUMN``."""

from __future__ import annotations

import re

import numpy as np

from .errors import DataError
from .tables import file_lines, lazy_pandas, rows_named

_RECIPROCAL = re.compile(r"^\s*1\s*/\s*(?P<column>\S.*?)\s*$")


def reciprocal_of(name: str) -> str | None:
    """The column whose reciprocal a target's name is (``1/tokens_per_s`` → ``tokens_per_s``), or None."""
    match = _RECIPROCAL.match(name)
    return match["column"] if match else None


def source(target: str, names: list[str]) -> str:
    """The column of a table (its ``names``) a target's values are read from: the target itself
    where the table has it or it names no reciprocal, else the column it inverts."""
    return target if target in names or reciprocal_of(target) is None else reciprocal_of(target)


def measured(targets: list[str]) -> list[str]:
    """The columns that hold the targets' measured values: each target, and the column it is the
    reciprocal of (a --where on either picks runs by their outcome)."""
    return [name for target in targets for name in (target, reciprocal_of(target)) if name is not None]


def inverse(name: str) -> str:
    """The target that is the reciprocal of ``name``: ``1/name``, or the column ``name`` inverts."""
    return reciprocal_of(name) or f"1/{name}"


def derived(table, target: str, where: str, header_lines: int = 0):
    """``table`` (a DataFrame, or a mapping of column arrays read from a file of ``header_lines``)
    with the column that ``target`` inverts replaced, in its place, by its reciprocal named
    ``target``; the table as it is where the target names a column of it or no reciprocal. Cells
    that are no number stay as they are, for the target's checks to name; a zero has no
    reciprocal and is refused with its line."""
    names = [str(c) for c in table.columns] if hasattr(table, "columns") else [str(c) for c in table]
    column = source(target, names)
    if column == target:
        return table
    from .columns import require_column  # columns reads names with roles, which reads them with this module

    require_column(column, names, where, "target")
    if not hasattr(table, "columns"):
        try:
            values = np.asarray(table[column], dtype=float)
        except (TypeError, ValueError):
            raise DataError(f"{where} column '{column}' holds values that are no numbers, so {target} has none "
                            "there; give numbers") from None
        _refuse_zeros(values == 0, column, target, where, header_lines)
        return {(target if str(k) == column else k): (1.0 / values if str(k) == column else v) for k, v in table.items()}
    pd = lazy_pandas()
    cells = table[table.columns[names.index(column)]]
    numbers = pd.to_numeric(cells, errors="coerce")
    lines = file_lines(table.index)
    _refuse_zeros((numbers == 0).to_numpy(), column, target, where, 0 if lines is None else lines)
    inverted = cells.where(numbers.isna(), 1.0 / numbers)  # no zero is left (refused above)
    out = table.set_axis(names, axis=1).drop(columns=[column])
    out.insert(names.index(column), target, inverted)
    out.attrs = dict(table.attrs)
    return out


def values(table, target: str) -> np.ndarray:
    """The target's values on every row of a DataFrame ``table`` as numbers, its reciprocal taken
    where it names one: NaN where a cell is no number (or 0, which has no reciprocal). For reading
    rows that the checks of the target never see (those --where leaves out)."""
    pd = lazy_pandas()
    names = [str(c) for c in table.columns]
    column = source(target, names)
    numbers = pd.to_numeric(table[table.columns[names.index(column)]], errors="coerce").to_numpy(dtype=float)
    if column == target:
        return numbers
    with np.errstate(divide="ignore"):
        return np.where(numbers == 0, np.nan, 1.0 / numbers)


def _refuse_zeros(zero: np.ndarray, column: str, target: str, where: str, numbering) -> None:
    if zero.any():
        raise DataError(f"{where} column '{column}' is 0 at {rows_named(np.flatnonzero(zero), numbering)}, where "
                        f"{target} has no value; remove those rows, or fit {column} itself")

