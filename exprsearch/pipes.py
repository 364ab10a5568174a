"""Pipe tables: cells between ``|`` under a header and a rule line of dashes, as Markdown writes
them (``| p | time |`` over ``|---|---|``), as JUBE's ``jube result`` prints them (``p | time``
over ``--+-----``, written to result.dat) and as psql does (ending in ``(5 rows)``), or, in a
.txt or .dat file, lines that all hold pipes (Slurm's ``sacct -P``). Read by
:func:`exprsearch.tables.read_table`; each row keeps its line for messages."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import DataError

if TYPE_CHECKING:
    import pandas as pd

_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:[|+]\s*:?-{2,}:?\s*)*[|+]?\s*$")  # |---|:--:| or ----+-----
_FOOTER = re.compile(r"^\s*\(\d+ rows?\)\s*$")  # psql's count of the rows shown


def is_pipe_table(lines: list[str], header: int, rule: bool = True) -> bool:
    """Whether the line at ``header`` holds cells between pipes and the next non-blank line is a
    rule of dashes under them; without ``rule``, or every line after it holds pipes too (sacct -P
    and -p, a Markdown table whose rule was lost)."""
    following = [line for line in lines[header + 1:] if line.strip()]
    if "|" not in lines[header] or not following:
        return False
    if _RULE.match(following[0]) and "-" in following[0]:
        return True
    return not rule and all("|" in line or _FOOTER.match(line) for line in following)


def _cells(line: str) -> list[str]:
    text = line.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") else text
    return [cell.strip() for cell in text.split("|")]


def pipe_header(lines: list[str], prose: bool) -> int | None:
    """The index of the header line of the pipe table in ``lines``, or None: the first such line
    after blank and comment (#) lines, or, with ``prose`` (a Markdown file), after any text."""
    for i, line in enumerate(lines):
        if is_pipe_table(lines, i, rule=prose):
            return i
        if line.strip() and not line.lstrip().startswith("#") and not prose:
            return None
    return None


def read_pipe_table(path: Path, lines: list[str], header: int, index_name: str, prose: bool = False) -> pd.DataFrame:
    """The table of ``lines`` (header at index ``header``), its cells as numbers where a whole
    column is, empty cells missing; rows indexed by their line minus 2 under ``index_name``. A
    row whose cells do not match the header's is refused by its line, as is a line after the
    rows that is none (text; with ``prose``, a Markdown file's text after its table is its own,
    but a second table is refused: which one holds the measurements?)."""
    from .tables import lazy_pandas

    pd = lazy_pandas()
    names = _cells(lines[header])
    if len(set(names)) != len(names) or not all(names):
        raise DataError(f"'{path}' line {header + 1}: the header of its pipe table names a column twice or leaves "
                        "one unnamed; give every column its own name")
    rows, places = [], []
    ended = False  # a Markdown file's table has ended: its text follows
    for number, line in enumerate(lines[header + 1:], start=header + 2):
        if not line.strip() or _RULE.match(line) or _FOOTER.match(line):
            continue
        if "|" not in line or ended:
            if not prose:
                raise DataError(f"'{path}' line {number} is no row of its pipe table: remove it, or keep the table "
                                "alone in the file")
            if is_pipe_table(lines, number - 1):
                raise DataError(f"'{path}' holds a second table at line {number}: keep the table of measurements "
                                "alone in the file, as exprsearch reads one")
            ended = True
            continue
        cells = _cells(line)
        if len(cells) != len(names):
            raise DataError(f"'{path}' line {number} has {len(cells)} cells between pipes where its header has "
                            f"{len(names)}: a value holding '|' cannot be read; give each row one cell per column")
        rows.append(cells)
        places.append(number)
    frame = pd.DataFrame(rows, columns=names).replace("", None)
    for name in names:
        numbers = pd.to_numeric(frame[name], errors="coerce")
        if numbers.notna().sum() == frame[name].notna().sum():  # every cell given is a number
            frame[name] = numbers
    return frame.set_axis(pd.Index(places, name=index_name) - 2, axis=0)
