"""Which rows of ``predict --data`` are predicted: a table's rows of the law's --by group and
--where selection (predict's own --where taking the place of the law's on a column), or the
points of the law's series in an Extra-P file, each repetition a row beside its measured value."""

from pathlib import Path

import numpy as np

from ..vocabulary import law_name
from .common import _note


def rows_to_predict(data: Path, sheet: str | None, law, where: list[str]):
    """The rows of ``data`` to predict, with the law's target column where the file measured it."""
    from ..readers import detect_format
    from ..rowfilter import parse
    from ..tables import WORKBOOKS, read_table

    picked = parse(where)
    fmt = detect_format(data)
    if fmt != "table":
        return _of_profile(data, fmt, sheet, law, picked)
    if sheet is None and Path(data).suffix.lower() in WORKBOOKS:
        from ..workbooks import law_sheet

        sheet = law_sheet(Path(data), law.dataset.get("sheet"))
        if sheet is not None:
            _note(f"reading sheet {sheet} of '{data}', the one the law was fitted on (--sheet reads another)")
    frame = _of_picked(read_table(data, sheet), picked, data)  # first: a condition that cannot hold stops at once
    return _of_selection(_of_group(frame, law, data, picked), law, data, picked)


def _of_profile(data: Path, fmt: str, sheet: str | None, law, picked):
    """The points of the law's series (law.json's ``dataset.series``, or the file's only one) in a
    file of Extra-P's formats, one row per repetition; predict's --where picks among the points,
    and the law's own --where (on its factors) is not applied, as for a table."""
    import pandas as pd

    from ..configs import ConfigError
    from ..readers import law_series

    if sheet is not None:
        raise ConfigError(f"--sheet names a sheet of a workbook; '{data}' is a file of Extra-P's {fmt} format")
    dataset = law_series(data, fmt, law.dataset.get("series"), where=picked)
    if picked:
        _note(f"predicting the {len(np.unique(dataset.configurations()))} point(s) of '{data}' where "
              f"{' and '.join(map(str, picked))} (--where)")
    return pd.DataFrame({**{f: dataset.column(f) for f in dataset.factors}, law.target: dataset.y})


def _of_group(frame, law, data: Path, picked=()):
    """The rows of a --data table that belong to the --by group the law was fitted on, where the
    table names groups (the table it was fitted on): another group's rows are no configurations
    of this law, and are left out with a note; a table without those columns is predicted whole.
    A column predict's own --where (``picked``) names is left to it."""
    from ..errors import DataError
    from ..grouped import group_name

    group = {k: v for k, v in (law.dataset.get("group") or {}).items() if law_name(k) not in _named(picked)}
    if not group or not all(k in frame.columns for k in group):
        return frame
    import pandas as pd

    mine = np.ones(len(frame), dtype=bool)
    for k, v in group.items():
        numeric = isinstance(v, (int, float)) and not isinstance(v, bool)  # 32 and 32.0 alike
        same = pd.to_numeric(frame[k], errors="coerce") == v if numeric else frame[k].astype(str) == str(v)
        mine &= same.to_numpy()
    name = group_name(group.items())
    if not mine.any():
        raise DataError(f"'{data}' holds no row of {name}, the group the law was fitted on; give a table of its "
                        f"configurations, or one without the column(s) {', '.join(group)}")
    _said_kept(frame, frame[mine], f"of {name}, the group the law was fitted on", "row(s) of other groups")
    return frame[mine]


def _of_selection(frame, law, data: Path, picked=()):
    """The rows of a --data table that the law's --where picked by a column that is no factor of the
    law (framework=PyTorch, or seq=1024 that left seq at one value), where the table has that column:
    the law says nothing of the others. Conditions on the law's own factors (gpus<=8) are not
    applied: predicting beyond the measured range is what --data is for; nor are those on a column
    predict's own --where (``picked``) names."""
    from ..errors import DataError
    from ..rowfilter import from_record, keep

    columns = {str(c) for c in frame.columns}
    chosen = [c for c in from_record(law.dataset) if c.column in columns and law_name(c.column) not in law.factors
              and law_name(c.column) not in _named(picked)]
    if not chosen:
        return frame
    said = " and ".join(map(str, chosen))
    try:
        kept, _ = keep(frame, chosen, f"'{data}'")
    except DataError:
        raise DataError(f"'{data}' holds no row where {said}, the rows the law was fitted on (its --where); give a "
                        f"table of such configurations, or one without the column(s) "
                        f"{', '.join(c.column for c in chosen)}") from None
    _said_kept(frame, kept, f"where {said}, as the law was fitted (its --where)", "other row(s)")
    return kept


def _of_picked(frame, picked, data: Path):
    """The rows of a --data table that predict's own --where picks; none is an error naming the
    condition, as run's --where does."""
    from ..rowfilter import keep

    kept, _ = keep(frame, picked, f"'{data}'")
    _said_kept(frame, kept, f"where {' and '.join(map(str, picked))} (--where)", "other row(s)")
    return kept


def _said_kept(frame, kept, which: str, others: str) -> None:
    """The note that says which rows of a --data table are predicted, and the lines of those left out."""
    from ..tables import file_lines, rows_named

    if len(kept) < len(frame):
        lines = file_lines(frame.index)
        left = np.flatnonzero(~frame.index.isin(kept.index))
        _note(f"predicting the {len(kept)} row(s) {which}; left out {len(left)} {others} "
              f"({rows_named(left, 0 if lines is None else lines)})")


def _named(picked) -> set[str]:
    """The columns predict's own --where conditions name, as law.json names them."""
    return {law_name(c.column) for c in picked}
