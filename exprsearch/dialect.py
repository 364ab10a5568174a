"""How a CSV or TSV file writes its table: comment lines above the header, the character between
columns, the decimal mark, and names in the header to be taken as written or refused.
Excel saves "CSV" with ';' between columns and decimal commas (10,5) where the comma is the
decimal mark (German, French, …), and users there cannot easily save it otherwise; such a file
is read as written, with a note, and a number that could be read two ways is refused."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .errors import DataError

if TYPE_CHECKING:
    import pandas as pd

# a plain decimal number, matched one way only: where digits could split between two parts
# (\d+\.?\d* reads 123 as 1|23 too), a whole table's regex backtracks through every split of every
# row before a bad line, for longer than anyone waits
NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_COMMA_DECIMAL = re.compile(r"[+-]?\d+,\d+(?:[eE][+-]?\d+)?")
_POINT_DECIMAL = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?")
_GROUPED = re.compile(r"\d{1,3}\.\d{3}")  # 1.000 or 12.500: a decimal, or a whole number in thousands?


@dataclass(frozen=True)
class Dialect:
    """The column separator and decimal mark of a text table, and the note saying how it was read
    where that differs from its extension's (None where it does not)."""

    separator: str
    decimal: str = "."
    note: str | None = None


def sniff(path: Path, lines: list[str], header: int, separator: str) -> Dialect:
    """The dialect of the table whose header is ``lines[header]``, its extension's ``separator``
    (',' or a tab) unless every line is separated by ';' instead (as Excel saves CSV where the comma
    is the decimal mark); decimal commas are read in a file not separated by commas."""
    rows = [line for line in lines[header:] if line.strip()]
    if separator == "," and rows and _fields(rows[0], ",") == 1 and _fields(rows[0], ";") > 1 and \
            len({_fields(row, ";") for row in rows}) == 1:
        separator = ";"
    if separator == ",":
        return Dialect(",")
    cells = _Cells(lines, header, separator)
    if cells.comma and cells.point:
        raise DataError(f"'{path}' line {cells.comma[0]} writes {cells.comma[1]} with a decimal comma and line "
                        f"{cells.point[0]} writes {cells.point[1]} with a point: write every number with the same mark")
    # a thousands separator is a point where the comma is the decimal mark (';' files), else a comma
    line, text = (cells.point if separator == ";" else cells.comma) or (0, "")
    grouped = cells.point_grouped if separator == ";" else cells.comma_grouped
    if text and grouped:
        mark = text[-4]
        raise DataError(f"'{path}' line {line} writes {text}: is the '{mark}' a decimal mark or a thousands "
                        f"separator? Write whole numbers without separators ({text.replace(mark, '')}), decimals "
                        f"as 1{mark}0")
    decimal = "," if cells.comma else "."
    return Dialect(separator, decimal, _said(path, separator, decimal))


def _said(path: Path, separator: str, decimal: str) -> str | None:
    if separator != ";":
        return None if decimal == "." else f"read the numbers of '{path}' with decimal commas (10,5 is 10.5)"
    return f"read '{path}' as separated by ';'" + (
        " with decimal commas (10,5 is 10.5), as Excel saves CSV where the comma is the decimal mark"
        if decimal == "," else "")


def _fields(line: str, separator: str) -> int:
    return len(next(csv.reader([line], delimiter=separator), []))


class _Cells:
    """The first cell below the header written as a number with a decimal comma and the first
    with a decimal point, each as (line, text), and whether every such cell could be a whole
    number with thousands separators instead (1,000 or 1.000)."""

    def __init__(self, lines: list[str], header: int, separator: str) -> None:
        self.comma: tuple[int, str] | None = None
        self.point: tuple[int, str] | None = None
        self.comma_grouped = self.point_grouped = True
        reader = csv.reader(lines[header + 1:], delimiter=separator)
        for record in reader:
            for cell in record:
                cell = cell.strip()
                if _COMMA_DECIMAL.fullmatch(cell):
                    self.comma = self.comma or (header + 1 + reader.line_num, cell)
                    self.comma_grouped &= _GROUPED.fullmatch(cell.replace(",", ".")) is not None
                elif _POINT_DECIMAL.fullmatch(cell):
                    self.point = self.point or (header + 1 + reader.line_num, cell)
                    self.point_grouped &= _GROUPED.fullmatch(cell) is not None
            if self.comma and self.point:
                return


_OTHERS = ((" ", "spaces"), ("\t", "tabs"), (";", "';'"), ("|", "'|'"), (",", "commas"))


def separator_name(separator: str) -> str:
    """A separator as messages name it: commas, tabs, ';'."""
    return dict(_OTHERS)[separator]


def unclosed_quote(lines: list[str], start: int) -> int | None:
    """The line (numbered from 1) whose double quote opens a value that no later line closes, from
    line ``start`` (from 0) on, or None: a reader then takes the rest of the file as that one value.
    A doubled quote inside a quoted value is the quote character itself."""
    opened = None  # the line the open quote is on
    for number in range(start, len(lines)):
        line, at = lines[number], 0
        while (at := line.find('"', at)) >= 0:
            if opened is not None and line.startswith('""', at):
                at += 2
                continue
            opened = number if opened is None else None
            at += 1
    return None if opened is None else opened + 1


def check_rows(path: Path, lines: list[str], header: int, separator: str) -> None:
    """Refuse a row written with another separator than its header (``1 2 3`` under ``p,n,time``):
    read as the header says, it would be one text value with the other columns missing."""
    width = _fields(lines[header], separator)
    if width < 2:
        return
    reader = csv.reader(lines[header + 1:], delimiter=separator)
    for record in reader:
        if len(record) != 1 or not record[0].strip():
            continue
        for other, name in _OTHERS:
            if other != separator and len(record[0].split(None if other == " " else other)) == width:
                raise DataError(f"'{path}' line {header + 1 + reader.line_num} seems separated by {name}, where its "
                                f"header (line {header + 1}) is separated by {separator_name(separator)}: separate "
                                "every line alike")


def comments(lines: list[str], separator: str) -> int:
    """How many of the first lines are comments (starting with #) or blank, where any is a comment
    and the line after them is a header; where it holds numbers only, the last comment was the
    header (``#p,n,time``, as some scripts write it) and nothing is skipped."""
    count = next((i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")), 0)
    if not any(line.lstrip().startswith("#") for line in lines[:count]):
        return 0
    fields = next(csv.reader(lines[count:count + 1], delimiter=separator), [])
    return 0 if all(re.fullmatch(NUMBER, f.strip()) for f in fields) else count


def header_line(lines: list[str], skip: int) -> int:
    """The index of the header's line: the first line that is not blank below ``skip`` comment lines."""
    return next((i for i, line in enumerate(lines) if i >= skip and line.strip()), 0)


def trimmed(path: Path, frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with spaces around its column names removed ('time ' is time), unless two names
    would then be one."""
    names = [str(c).strip() if isinstance(c, str) else c for c in frame.columns]
    twice = next((n for n in names if names.count(n) > 1), None)  # pandas renamed exact twins p.1 already
    if twice is not None:
        raise DataError(f"'{path}' has two columns named '{twice}' but for spaces around one of them; rename one")
    return frame.set_axis(names, axis=1) if names != list(frame.columns) else frame


def check_header(path: Path, lines: list[str], frame: pd.DataFrame, at: int, separator: str) -> None:
    """Refuse what pandas would quietly reinterpret: repeated column names (renamed p.1) and a
    file separated by another character than the extension says (one column of 'p|n|time').
    ``at`` is the index of the header's line in ``lines``."""
    header = [name.strip() for name in next(csv.reader(lines[at:at + 1], delimiter=separator), [])]
    seen: dict[str, int] = {}
    for i, name in enumerate(header, start=1):
        if name in seen:
            raise DataError(f"'{path}' line {at + 1} has two columns named '{name}' (columns {seen[name]} and {i}); "
                            "rename one")
        seen[name] = i
    if header and len(frame.columns) == len(header):
        repeated = frame.index[_repeating(frame)]
        if len(repeated):
            lines = ", ".join(str(int(i) + 2) for i in repeated[:5])
            raise DataError(f"'{path}' line {lines} repeats the header (files joined together?); "
                            "delete the repeated header line(s)")
    if len(frame.columns) == 1:
        for other in (";", "\t", "|", ","):
            if other in str(frame.columns[0]):
                expected = separator_name(separator)
                raise DataError(f"'{path}' line {at + 1} seems separated by {other!r}, but a {path.suffix} file is "
                                f"separated by {expected}: save it with {expected} (a .tsv file with tabs)")


def _repeating(frame: pd.DataFrame) -> np.ndarray:
    """The rows of ``frame`` whose cells, read as text, repeat its column names. Columns of text go
    first, as they narrow the rows at once; a column of numbers is read as text only where its
    name could be one (a long log of numbers had been turned into text whole: 1.8 s of reading
    960,000 rows)."""
    rows = np.arange(len(frame))
    for j in sorted(range(frame.shape[1]), key=lambda j: frame.iloc[:, j].dtype.kind != "O"):
        name = str(frame.columns[j])
        if frame.iloc[:, j].dtype.kind in "iuf":
            try:
                float(name)  # a number written as text is one, so a name that is none matches no number
            except ValueError:
                return rows[:0]
        if not len(rows):
            break
        rows = rows[(frame.iloc[rows, j].astype(str) == name).to_numpy()]
    return rows


def check_units_row(path: Path, frame: pd.DataFrame, header: int) -> None:
    """Refuse a second header line, of units (``-, samples, s``) under the names: read as data it
    makes every column of numbers hold a word on its first row."""
    import pandas

    if len(frame) < 2:
        return
    numbers = [c for c in frame.columns if pandas.to_numeric(frame[c].iloc[1:], errors="coerce").notna().all()]
    first = frame.iloc[0]
    if len(numbers) >= 2 and all(isinstance(first[c], str) and first[c].strip() for c in numbers) and \
            pandas.to_numeric(first[numbers], errors="coerce").isna().all():
        units = ", ".join(str(first[c]).strip() for c in numbers)
        raise DataError(f"'{path}' line {header + 2} looks like a second header ({units}), of units perhaps: put "
                        f"each unit in its column's name ({numbers[-1]}_{str(first[numbers[-1]]).strip(' []()')}) "
                        "and delete that line")
