"""Excel workbooks → a DataFrame: the one sheet that holds data, below any title, each row indexed
by its row on the sheet so that messages can name it (openpyxl, the ``excel`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .errors import DataError, did_you_mean

if TYPE_CHECKING:
    import pandas as pd

BY_SHEET_ROW = "sheet row - 2"  # the index name of rows placed on a workbook sheet's rows


def read_sheet(path: Path, chosen: str | None = None, option: str = "--sheet") -> pd.DataFrame:
    """The table on a workbook's one sheet that holds data: its header the first row of names
    (below any title), each row indexed by its row on the sheet (as lines of a text file are),
    empty rows and columns skipped; formulas give the values the spreadsheet last computed.
    Several sheets with data are refused rather than one of them chosen unsaid, unless ``chosen``
    names one."""
    import pandas

    sheets = _rows(path)
    filled = [name for name, rows in sheets.items() if rows]
    if chosen is not None and chosen not in sheets:
        raise DataError(f"{option} {chosen}: '{path}' has no such sheet{did_you_mean(chosen, list(sheets))}; its sheets are "
                        f"{', '.join(sheets)}")
    if chosen is None and len(filled) > 1:
        largest = max(filled, key=lambda name: len(sheets[name]))  # the likelier table, as the example
        raise DataError(f"'{path}' has data on {len(filled)} sheets ({', '.join(filled)}); name the one to read "
                        f"with {option} ({largest}), or save it as CSV")
    rows = sheets[chosen] if chosen is not None else sheets[filled[0]] if filled else []
    if not rows:
        raise DataError(f"'{path}' holds no rows of measurements; a law needs several")
    # the header: the first row of two or more names (a title or a note may stand above it)
    start = next((i for i, (_, row) in enumerate(rows)
                  if sum(map(_filled, row)) >= 2 and all(isinstance(v, str) for v in row if _filled(v))), 0)
    rows = rows[start:]
    (_, header), body = rows[0], rows[1:]
    width = max(len(row) for _, row in rows)
    used = [j for j in range(width) if any(j < len(row) and _filled(row[j]) for _, row in rows)]
    names = [str(header[j]).strip() if j < len(header) and _filled(header[j]) else f"Unnamed: {j}" for j in used]
    for i, name in enumerate(names):
        if name in names[:i]:
            from openpyxl.utils import get_column_letter

            first = used[names.index(name)]
            raise DataError(f"'{path}' row {rows[0][0]} has two columns named '{name}' (columns "
                            f"{get_column_letter(first + 1)} and {get_column_letter(used[i] + 1)}); rename one")
    frame = pandas.DataFrame([[row[j] if j < len(row) else None for j in used] for _, row in body], columns=names)
    return frame.set_axis(pandas.Index([number for number, _ in body], name=BY_SHEET_ROW) - 2, axis=0)


def _filled(value: object) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def data_sheets(path: Path) -> list[str]:
    """The names of a workbook's sheets that hold data, in the workbook's order."""
    return [name for name, rows in _rows(path).items() if rows]


def law_sheet(path: Path, fitted: str | None) -> str | None:
    """The sheet of workbook ``path`` to read a law's rows from: the one it was fitted on
    (``fitted``), where the workbook has data on several sheets and that one among them; else None,
    the workbook's one sheet of data, whatever its name (several, none the law's, are refused when
    read, asking which)."""
    if not fitted:
        return None
    sheets = data_sheets(path)
    return fitted if len(sheets) > 1 and fitted in sheets else None


def _rows(path: Path) -> dict[str, list[tuple[int, tuple]]]:
    """Each sheet's rows that hold a value, with their numbers on the sheet."""
    import zipfile

    import openpyxl

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, OSError, ValueError, KeyError) as exc:
        raise DataError(f"'{path}' is not an Excel workbook that can be read ({exc}); save it again as .xlsx, "
                        "or the sheet as CSV") from None
    try:
        return {sheet.title: [(number, row) for number, row in enumerate(sheet.iter_rows(values_only=True), 1)
                              if any(_filled(v) for v in row)] for sheet in book.worksheets}
    finally:
        book.close()
