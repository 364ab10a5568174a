"""``--where``: the rows of a table (or the points of an Extra-P file) a law is fitted on, such as
``framework=PyTorch`` or ``gpus<=8``, so that one series of a shared table, or its smaller
configurations, can be fitted without editing the file. Every row left out is counted in a note."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .columns import columns_named, require_column
from .errors import DataError, SettingsError, ShortData, did_you_mean, in_other_case

if TYPE_CHECKING:
    import pandas as pd

_FORM = re.compile(r"^\s*(?P<column>.+?)\s*(?P<op><=|>=|!=|==|=|<|>)\s*(?P<value>.*?)\s*$")
_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}
_SHOWN = 12  # values a message lists before "…"


@dataclass(frozen=True)
class Condition:
    """One ``--where``: a column, an operator (=, !=, <, <=, >, >=) and the values it compares
    with (one for an order; any of several, comma-separated, for = and !=)."""

    column: str
    op: str
    values: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.column}{self.op}{','.join(self.values)}"


def parse(texts: Sequence[str]) -> tuple[Condition, ...]:
    """The conditions of the ``--where`` options given (each ``COLUMN=VALUE[,VALUE…]``,
    ``COLUMN!=VALUE`` or ``COLUMN<=NUMBER`` with <, >=, >); a malformed one is a SettingsError."""
    found = []
    for text in texts:
        match = _FORM.match(text)
        if match is None or not match["column"] or not match["value"]:
            raise SettingsError(f"--where '{text}': write COLUMN=VALUE (several values: COLUMN=A,B), COLUMN!=VALUE, "
                                "or COLUMN<=NUMBER (also <, >=, >), such as framework=PyTorch or gpus<=8")
        op = "=" if match["op"] == "==" else match["op"]
        values = tuple(v.strip() for v in match["value"].split(",")) if op in ("=", "!=") else (match["value"],)
        if any(not v for v in values):
            raise SettingsError(f"--where '{text}' has an empty value; name each value, separated by commas")
        if op in _COMPARE and _number(values[0]) is None:
            raise SettingsError(f"--where '{text}': {op} compares numbers, and '{values[0]}' is not one; "
                                f"give a number, or use = to pick rows by a name")
        found.append(Condition(match["column"], op, values))
    return tuple(found)


def keep(frame: pd.DataFrame, conditions: Sequence[Condition], where: str,
         targets: Sequence[str] = ()) -> tuple[pd.DataFrame, str | None]:
    """The rows of ``frame`` that meet every condition (their index, and so their lines of the file,
    kept), and a note of how many were kept (and where a condition is on one of ``targets``, the
    measured value itself, what that does to the law); an unknown column, a value the column never
    holds, or no row left is a DataError naming the condition. ``where`` names the file."""
    if not conditions:
        return frame, None
    columns = [str(c) for c in frame.columns]
    hits, empty, measured = [], {}, []
    for condition in conditions:
        column = columns_named([condition.column], columns)[0]
        require_column(column, columns, where, "--where")
        measured += [str(condition)] if column in targets else []
        cells = frame[frame.columns[columns.index(column)]]
        hits.append(_meets(condition, cells, where, columns))
        if condition.op != "!=" and cells.isna().any():  # an empty cell meets no value: said, not dropped unsaid
            empty[column] = int(cells.isna().sum())
    mask = _checked(hits, conditions, where, "row")
    said = "".join(f"; {n} row(s) leave {c} empty, which meets no condition on it" for c, n in empty.items())
    if measured:
        said += (f"; {', '.join(measured)} picks runs by their measured value, so the law describes the runs that "
                 "came out so, not the configurations (--drop-stray leaves out runs far from their repeats instead)")
    return frame[mask], note(int(mask.sum()), len(frame), conditions, "row") + said


def keep_points(points: np.ndarray, parameters: Sequence[str], conditions: Sequence[Condition],
                where: str) -> tuple[np.ndarray, str | None]:
    """Which ``points`` (rows over ``parameters``: an Extra-P file's measured points) meet every
    condition, and the note; conditions can name only the file's parameters."""
    if not conditions:
        return np.ones(len(points), dtype=bool), None
    import pandas as pd

    frame = pd.DataFrame(np.asarray(points, dtype=float).reshape(-1, len(parameters)), columns=list(parameters))
    hits = []
    for condition in conditions:
        if condition.column not in parameters:
            raise DataError(f"--where {condition}: {where} has no parameter '{condition.column}'; its parameters are "
                            f"{', '.join(parameters)}")
        hits.append(_meets(condition, frame[condition.column], where, list(parameters)))
    mask = _checked(hits, conditions, where, "point")
    return mask, note(int(mask.sum()), len(frame), conditions, "point")


def note(kept: int, total: int, conditions: Sequence[Condition], what: str = "row") -> str:
    """The note that says how many rows (or points) ``--where`` kept."""
    said = " and ".join(map(str, conditions))
    if kept == total:
        return f"--where {said} keeps every one of the {total} {what}s"
    return f"--where {said}: fitted on {kept} of the {total} {what}s, the others left out"


@contextmanager
def too_few_kept(conditions: Sequence[Condition], kept: int, total: int) -> Iterator[None]:
    """Rows too few for a law (:class:`ShortData`) once ``--where`` has left some out: the error
    says so, as the file itself holds more."""
    try:
        yield
    except ShortData as exc:
        if not conditions or kept == total:
            raise
        said = " and ".join(map(str, conditions))
        raise ShortData(f"{exc}: --where {said} keeps {kept} of its {total} rows") from None


def _checked(hits: list[np.ndarray], conditions: Sequence[Condition], where: str, what: str) -> np.ndarray:
    """The rows every condition keeps; none is an error that says what each keeps alone."""
    mask = np.logical_and.reduce(hits)
    if not mask.any():
        each = "" if len(conditions) < 2 else " (alone they keep " + ", ".join(
            f"{int(h.sum())} ({c})" for h, c in zip(hits, conditions)) + ")"
        raise DataError(f"--where {' and '.join(map(str, conditions))} keeps no {what} of {where}{each}; "
                        "loosen a condition")
    return mask


def _meets(condition: Condition, column: pd.Series, where: str, columns: Sequence[str] = ()) -> np.ndarray:
    """Which cells of ``column`` meet ``condition``: numbers compared as numbers (8 matches 8.0),
    names as written, after trimming spaces; empty cells meet no condition but !=."""
    import pandas as pd

    numbers = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    present = column.notna().to_numpy()
    numeric = bool(present.any()) and bool(np.isfinite(numbers[present]).all())
    if condition.op in _COMPARE:
        if not numeric:
            text = next((str(v) for v, n in zip(column, numbers) if v == v and not np.isfinite(n)), "")
            raise DataError(f"--where {condition}: column '{condition.column}' of {where} holds names such as "
                            f"'{text}', not numbers; pick rows by name with {condition.column}=VALUE")
        with np.errstate(invalid="ignore"):
            hit = _COMPARE[condition.op](numbers, float(condition.values[0])) & present
        if not hit.any():
            low, high = _plain(float(np.nanmin(numbers))), _plain(float(np.nanmax(numbers)))
            held = f"is {low} in every row" if low == high else f"runs from {low} to {high}"
            raise DataError(f"--where {condition} keeps no row of {where}: column '{condition.column}' {held}")
        return hit
    wanted = [_number(v) for v in condition.values]
    if numeric and all(w is not None for w in wanted):
        hits = [np.isclose(numbers, w, rtol=1e-12, atol=0.0) & present for w in wanted]
        shown = sorted({float(v) for v in numbers[present]})
        label = [_plain(v) for v in shown]
    else:
        cells = column.astype(str).str.strip().to_numpy()
        hits = [(cells == v) & present for v in condition.values]
        label = sorted({str(c) for c in cells[present]})
    absent = [v for v, hit in zip(condition.values, hits) if not hit.any()]
    if absent:
        _one_per_option(condition, absent, columns)
        raise DataError(f"--where {condition}: column '{condition.column}' of {where} never holds "
                        f"{', '.join(absent)}{_hint(absent, label)}; its values are {_listed(label)}")
    any_of = np.logical_or.reduce(hits)
    if condition.op == "!=" and any_of.all():  # every row holds a value it leaves out
        raise DataError(f"--where {condition} keeps no row of {where}: column '{condition.column}' holds only "
                        f"{_listed(label)}")
    return ~any_of if condition.op == "!=" else any_of


def _one_per_option(condition: Condition, absent: list[str], columns: Sequence[str]) -> None:
    """A second condition written after a comma, as ``--at`` takes its values (``gpu=a,precision=b``):
    a value the column never holds (``absent``) that is a condition on another of ``columns``."""
    for value in absent:
        match = _FORM.match(value)
        if match and match["column"] in columns and match["value"]:
            own = tuple(v for v in condition.values if not _FORM.match(v))
            written = [f"--where {Condition(condition.column, condition.op, own)}"] * bool(own)
            written += [f"--where {v}" for v in condition.values if _FORM.match(v)]
            raise SettingsError(f"--where {condition}: '{value}' is a condition on column '{match['column']}', not a "
                                f"value of {condition.column}; give each condition its own --where: {' '.join(written)}")


def _hint(absent: list[str], label: list[str]) -> str:
    """A value the user likely meant: the same name in other letter case, or a close one (for
    several values, those in other letter case), as :func:`~exprsearch.errors.did_you_mean` says it."""
    if len(absent) == 1:  # in a column of numbers, digits say nothing of a near value: 18 is no misspelt 1
        numbers = all(_number(v) is not None for v in label)
        return "" if numbers else did_you_mean(absent[0], label)
    lowered = {v.casefold(): v for v in label}
    near = [lowered[a.casefold()] for a in absent if a.casefold() in lowered]
    return in_other_case(near, ", ") if near else ""


def _listed(values: list[str]) -> str:
    return ", ".join(values[:_SHOWN]) + (f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else "")


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _plain(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


def recorded(conditions: Sequence[Condition]) -> tuple[str, ...]:
    """The conditions as law.json records them, to read the data again as they were fitted."""
    return tuple(str(c) for c in conditions)


def from_record(dataset: Mapping[str, object]) -> tuple[Condition, ...]:
    """The conditions a law's ``dataset`` record says its data were read with (none where absent)."""
    return parse(list(dataset.get("where") or ()))
