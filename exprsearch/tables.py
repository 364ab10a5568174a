"""Table files → columns: CSV, TSV, Parquet, JSON and Excel workbooks read with an error that says
what is wrong, and plain numeric CSV/TSV read without pandas (a fifth of a second saved at every
start)."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .dialect import (
    NUMBER,
    Dialect,
    check_header,
    check_rows,
    check_units_row,
    comments,
    header_line,
    separator_name,
    sniff,
    trimmed,
    unclosed_quote,
)
from .errors import DataError, missing_file
from .workbooks import BY_SHEET_ROW as _BY_SHEET_ROW
from .workbooks import read_sheet

if TYPE_CHECKING:
    import pandas as pd

# pandas is imported by the readers that need it: a plain numeric CSV/TSV, the common case, is
# read without it, which saves a fifth of a second at every start (docs/benchmarks.md).
# CSV and TSV (_SEPARATORS) and workbooks (WORKBOOKS) are read by read_table itself: comment lines
# above a header to skip, a sheet to choose
_READERS = {
    ".parquet": lambda p: lazy_pandas().read_parquet(p),
    ".json": lambda p: _json(p),
    ".jsonl": lambda p: _json_lines(p),  # a log of one JSON object per run (an Extra-P one is known by "params")
    ".ndjson": lambda p: _json_lines(p),
}
_SEPARATORS = {".csv": ",", ".tsv": "\t"}
PLAIN_BYTES = 1 << 20  # files larger than this are read by pandas (plain_columns)
# text whose separator is sniffed, or a pipe table (pipes.py): JUBE's result.dat; a .md file's table only
_SNIFFED = (".txt", ".dat", ".md")
WORKBOOKS = (".xlsx", ".xlsm")  # a spreadsheet's one sheet of data, rows placed on the sheet's rows
_TEXT = (*_SEPARATORS, *_SNIFFED)  # a header line, then a line per row: read_table indexes rows by line
SUFFIXES = frozenset(_READERS) | set(_TEXT) | set(WORKBOOKS)  # the extensions read_table reads
_BY_LINE = "line - 2"  # the index name of rows read_table placed on their lines


def lazy_pandas():
    """pandas, imported on first use."""
    import pandas

    return pandas


def read_table(path: str | Path, sheet: str | None = None, option: str = "--sheet") -> pd.DataFrame:
    """Read a CSV/TSV/Parquet/JSON/JSON Lines/Excel file into a DataFrame, with a clear error when
    it cannot; ``sheet`` names a workbook's sheet where more than one holds data, given by the
    command's ``option``."""
    path = Path(path)
    if not path.is_file():
        raise DataError(missing_file("data", path))
    suffix = path.suffix.lower()
    if suffix in (".gz", ".bz2", ".xz", ".zst") and Path(path.stem).suffix:  # runs.csv.gz
        raise DataError(f"'{path}' is compressed; decompress it first (to '{path.with_suffix('')}') and give that file")
    if suffix in (".xls", ".ods", ".numbers"):  # spreadsheets of other programs, or of Excel before 2007
        raise DataError(f"'{path}' is a {suffix} spreadsheet, which exprsearch does not read; save it as .xlsx "
                        "(Excel workbook) or as CSV")
    if suffix not in SUFFIXES:
        raise DataError(
            f"'{path}' has an unknown extension '{path.suffix}'; "
            f"use one of {', '.join(sorted(SUFFIXES))} (an Extra-P file is known by its content, or by run's and "
            "profile's --format)"
        )
    if suffix == ".parquet" and not _importable("pyarrow", "fastparquet"):
        raise DataError(f"reading '{path}' needs pyarrow: pip install 'exprsearch[parquet]' (or save the table as CSV)")
    if suffix in WORKBOOKS and not _importable("openpyxl"):
        raise DataError(f"reading '{path}' needs openpyxl: pip install 'exprsearch[excel]' (or save the sheet as CSV)")
    if sheet is not None and suffix not in WORKBOOKS:
        raise DataError(f"{option} {sheet}: '{path}' is no Excel workbook; {option} names a workbook's sheet")
    lines: list[str] | None = None
    header = 0  # the header's line below any comment lines (# measured on …), as benchmark scripts write them
    dialect = Dialect(_SEPARATORS.get(suffix, ","))
    encoding = _encoding(path) if suffix in _TEXT else None
    try:
        if suffix in _SEPARATORS:
            lines = _nonempty(path, _unified(path.read_text(encoding=encoding)).split("\n"))
            skip = comments(lines, _SEPARATORS[suffix])
            header = header_line(lines, skip)
            dialect = sniff(path, lines, header, _SEPARATORS[suffix])
            # only an empty cell is missing: pandas would also read a label "NA" (North America) or "None" as one
            # and 'p, n, time', as people type it, names the columns p, n and time
            frame = lazy_pandas().read_csv(path, sep=dialect.separator, decimal=dialect.decimal, skiprows=skip,
                                           encoding=encoding,
                                           keep_default_na=False, na_values=[""], skipinitialspace=True)
            if len(frame.columns) > 1 and frame.iloc[:, -1].isna().any():  # short rows: another separator?
                check_rows(path, lines, header, dialect.separator)
            if dialect.note:
                frame.attrs["read_as"] = dialect.note
            frame = trimmed(path, frame)
        elif suffix in _SNIFFED:
            lines = _nonempty(path, _unified(path.read_text(encoding=encoding)).split("\n"))
            header = header_line(lines, 0)
            frame = _text(path, lines, encoding, pipes_only=suffix == ".md")
        else:
            frame = read_sheet(path, sheet, option) if suffix in WORKBOOKS else _READERS[suffix](path)
    except DataError:  # a reader's own sentence, naming the line
        raise
    except UnicodeDecodeError as exc:  # Excel on Windows saves "CSV" in its own code page
        excel = " (in Excel: CSV UTF-8)" if suffix in (".csv", ".tsv") else ""  # Excel writes those in its code page
        raise DataError(f"'{path}' is not UTF-8 text (byte {exc.object[exc.start]:#04x} at byte {exc.start + 1}); "
                        f"save it as UTF-8{excel}") from None
    except Exception as exc:  # pandas raises many types for unreadable files
        longer = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if longer:  # a row with more fields than its header
            width, line, saw = longer.groups()
            raise DataError(f"'{path}' line {line} has {saw} fields where its header has {width}: remove the extra "
                            f"ones (a value holding {separator_name(dialect.separator)} needs quotes)") from None
        opened = unclosed_quote(lines, header) if lines is not None and "inside string" in str(exc) else None
        if opened is not None:  # pandas counts "rows" from the header, not the file's lines
            raise DataError(f"'{path}' line {opened} opens a quoted value (\") that no line after it closes, so the "
                            "rest of the file would be that one value: remove the stray quote, or close it") from None
        raise DataError(f"could not read '{path}': {exc}".splitlines()[0]) from None
    if frame.shape[0] == 0:
        raise DataError(f"'{path}' holds no rows of measurements; a law needs several")
    frame = _in_seconds(frame)
    if suffix in _TEXT and frame.index.name != _BY_LINE:  # a pipe table's rows are placed already
        frame = _indexed_by_line(lines, frame, dialect.separator if suffix in _SEPARATORS else None, header)
        if suffix in _SEPARATORS:
            check_header(path, lines, frame, header, dialect.separator)
            check_units_row(path, frame, header)
    return frame


def _in_seconds(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its columns of durations (a workbook's [h]:mm:ss cells, Parquet's timedeltas,
    text written as [d-]hh:mm:ss or with a unit of time) in seconds, named in ``frame.attrs["seconds"]`` for the note that says so; as numbers they
    would be microseconds or nanoseconds."""
    from .cells import clock_seconds, unit_seconds  # here: cells reads its helpers from this module

    spans = {c: frame[c].dt.total_seconds() for c in frame.columns
             if lazy_pandas().api.types.is_timedelta64_dtype(frame[c])}
    # and text written as [d-]hh:mm:ss (Slurm's Elapsed), or as numbers with a unit of time
    # (MLflow's Duration, 1.2min), which no other reading of it fits
    for read in (clock_seconds, unit_seconds):
        spans |= {c: seconds for c in frame.columns if c not in spans and (seconds := read(frame[c])) is not None}
    if spans:
        attrs = dict(frame.attrs)
        frame = frame.assign(**{str(c): values for c, values in spans.items()})
        frame.attrs.update(attrs, seconds=[str(c) for c in spans])
    return frame


class Rows(np.ndarray):
    """Places of a table's rows that messages call rows, not lines: a workbook's rows, as the
    spreadsheet numbers them, or the rows of a table that has no lines (Parquet, a DataFrame)."""


def placed(positions: np.ndarray, numbering: int | np.ndarray) -> np.ndarray:
    """Where each of the rows at ``positions`` stands, for :func:`rows_named` to say: its line
    (``numbering`` header lines above the first, or each row's line as :func:`file_lines` gives
    it), its sheet's row, or its row number (``numbering`` 0, a table without lines)."""
    if isinstance(numbering, np.ndarray):
        return numbering[positions]
    return np.asarray(positions) + 1 + numbering if numbering else (np.asarray(positions) + 1).view(Rows)


def file_lines(index) -> np.ndarray | None:
    """The file's line of each row :func:`read_table` read (``index``: those rows' index; a
    :class:`Rows` for a workbook), or None for a format without lines (Parquet, JSON) or a
    text file whose rows could not be placed: only rows placed carry the index name that says so."""
    name = getattr(index, "name", None)
    if name == _BY_SHEET_ROW:
        return (np.asarray(index) + 2).view(Rows)
    return np.asarray(index) + 2 if name == _BY_LINE else None


def rows_named(rows: np.ndarray, numbering: int | np.ndarray) -> str:
    """Rows as the user finds them: lines of the file (after ``numbering`` header lines, or at the
    line numbers ``numbering`` gives each row, as :func:`file_lines` finds them), or rows of a
    table that has no lines (``numbering`` 0)."""
    lines = placed(rows, numbering)
    shown = ", ".join(str(int(r)) for r in lines[:8])
    more = f" and {len(rows) - 8} more" if len(rows) > 8 else ""
    kind = "row" if isinstance(lines, Rows) else "line"
    return f"{kind}{'s' if len(rows) > 1 else ''} {shown}{more}"


def _json(path: Path) -> pd.DataFrame:
    """A JSON table: a list of objects (a log; nested objects flatten to dotted columns, as in
    :func:`_json_lines`), such a list under one key of an object (an export's ``{"runs": […]}``,
    said in a note), or any layout pandas reads (columns of values, split, index)."""
    import io
    import json

    text = path.read_text(encoding=_encoding(path))
    document = json.loads(text)
    if isinstance(document, dict) and {"expression", "template", "constants"} <= set(document):
        fitted = document.get("dataset", {}).get("path") if isinstance(document.get("dataset"), dict) else None
        raise DataError(f"'{path}' is a law that exprsearch run wrote, not measurements; give the table of "
                        + (f"measurements it was fitted on ({fitted})" if isinstance(fitted, str) else "measurements"))
    if isinstance(document, list) and document and all(isinstance(r, dict) for r in document):
        return _scalars(lazy_pandas().json_normalize(document))
    listed = [k for k, v in document.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)] \
        if isinstance(document, dict) else []
    if len(listed) > 1:
        raise DataError(f"'{path}' holds lists of rows under {len(listed)} keys ({', '.join(listed)}); save the one "
                        "to fit as a file of its own, a list of objects")
    if listed:  # an export that wraps its rows: {"runs": [{…}, …], "meta": {…}}
        frame = _scalars(lazy_pandas().json_normalize(document[listed[0]]))
        others = [k for k in document if k != listed[0]]
        frame.attrs["read_as"] = (f"read the {len(frame)} rows listed under '{listed[0]}'" +
                                  (f"; the file's other keys ({', '.join(others)}) hold no rows" if others else ""))
        return frame
    return _scalars(lazy_pandas().read_json(io.StringIO(text)))  # the text read once, not the file again


def _scalars(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with lists and objects in cells (a run's tags) written as their JSON text:
    labels, as text is, where a list in a cell would stop every step that compares values."""
    import json

    for column in frame.columns:
        if frame[column].dtype.kind == "O" and frame[column].map(lambda v: isinstance(v, (list, dict))).any():
            frame[column] = frame[column].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v)
    return frame


def _json_lines(path: Path) -> pd.DataFrame:
    """A table of one JSON object per line (a training log), each row indexed by its line so that
    messages can name it; a line that is no JSON object is named."""
    import json

    records, lines = [], []
    for number, line in enumerate(_unified(path.read_text(encoding=_encoding(path))).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        if not isinstance(record, dict):
            raise DataError(f"'{path}' line {number} is not a JSON object ({line.strip()[:40]!r}); a JSON Lines "
                            "table has one {\"column\": value, …} per line")
        records.append(record)
        lines.append(number)
    pd = lazy_pandas()
    # nested objects flatten to dotted columns ({"config": {"gpus": 8}} is config.gpus), as logs nest them
    return _scalars(pd.json_normalize(records)).set_axis(pd.Index(lines, name=_BY_LINE) - 2, axis=0)


def _encoding(path: Path) -> str:
    """UTF-16 where the file starts with its byte-order mark (Excel's "Unicode Text"), else UTF-8
    (a byte-order mark skipped)."""
    with open(path, "rb") as stream:
        return "utf-16" if stream.read(2) in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"


def _unified(text: str) -> str:
    """``text`` with every line ending (\\r\\n, \\r) as \\n: the line breaks pandas knows."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _nonempty(path: Path, lines: list[str]) -> list[str]:
    """``lines``, or the sentence for a file holding none but blank ones."""
    if not any(line.strip() for line in lines):
        raise DataError(f"'{path}' is empty; a table needs a header line and a line per run")
    return lines


def _text(path: Path, lines: list[str], encoding: str, pipes_only: bool = False) -> pd.DataFrame:
    """The text table of ``path`` (its ``lines``) whose separator is sniffed, or a pipe table
    (Markdown's, JUBE's, psql's)."""
    from .pipes import pipe_header, read_pipe_table

    header = pipe_header(lines, prose=pipes_only)
    if header is not None:
        return read_pipe_table(path, lines, header, _BY_LINE, prose=pipes_only)
    if pipes_only:
        raise DataError(f"'{path}' holds no pipe table (a header of cells between '|', then a line of dashes); "
                        "exprsearch reads a Markdown file's table only")
    return lazy_pandas().read_csv(path, sep=None, engine="python", keep_default_na=False, na_values=[""],
                                  encoding=encoding)


def _importable(*modules: str) -> bool:
    """Whether any of ``modules`` can be imported (without importing it)."""
    from importlib.util import find_spec

    return any(find_spec(m) is not None for m in modules)


def _indexed_by_line(lines: list[str], frame: pd.DataFrame, delimiter: str | None, header: int) -> pd.DataFrame:
    """The frame with each row's index its line in the file minus 2 (as without blank lines, which
    pandas skips), so that messages can name the line; as read, and not taken for lines, where the
    rows cannot be placed. ``header`` is the index of the header's line in ``lines``."""
    rows = [i + 1 for i, line in enumerate(lines) if i > header and line.strip()]
    if len(rows) != len(frame) and delimiter is not None:  # a quoted field holds a line break
        rows = [header + start for start in _record_starts(lines[header:], delimiter)[1:]]
    if len(rows) != len(frame):
        return frame
    return frame.set_axis(lazy_pandas().Index(rows, name=_BY_LINE) - 2, axis=0)


def _record_starts(lines: list[str], delimiter: str) -> list[int]:
    """The line each non-blank record of a CSV/TSV file starts on (1-based), a quoted field's line
    breaks included."""
    reader, starts, before = csv.reader(lines, delimiter=delimiter), [], 0
    try:
        for record in reader:
            if any(field.strip() for field in record):
                starts.append(before + 1)
            before = reader.line_num
    except csv.Error:  # pandas read it, so this is rare; the rows are then not placed
        return []
    return starts


def plain_numbers(path: str | Path) -> dict[str, np.ndarray] | None:
    """The columns of a CSV/TSV file whose header names distinct columns and whose every other
    line is plain decimal numbers, one per column; None for anything else, which
    :func:`read_table` (pandas) reads and checks. Where this answers, both give the same values."""
    path = Path(path)
    raw = read_bytes(path)
    return None if raw is None else plain_columns(raw, path.suffix)


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None where it cannot be read (the readers then say why)."""
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def plain_columns(raw: bytes, suffix: str) -> dict[str, np.ndarray] | None:
    """:func:`plain_numbers` of a file's bytes, read once for both its values and its sha256.
    A file over :data:`PLAIN_BYTES` is left to pandas, whose parser reads it faster than
    importing pandas costs, in a fraction of the memory (a 30 MB log: 0.3 s and 0.2 GB, where
    the regex and a string per cell took 2.9 s and 2.4 GB)."""
    separator = _SEPARATORS.get(suffix.lower())
    if separator is None or len(raw) > PLAIN_BYTES:
        return None
    try:
        text = raw.decode("utf-8-sig")  # pandas skips a byte-order mark too
    except UnicodeDecodeError:
        return None
    text = _unified(text)
    head, _, body = text.partition("\n")
    header = next(csv.reader([head], delimiter=separator), [])
    if (len(header) < 2 or len(set(header)) < len(header) or head.startswith("#")
            or any(not name or name.strip() != name for name in header)):
        return None
    row = separator.join([NUMBER] * len(header))
    if re.fullmatch(rf"(?:{row}\n)*{row}\n?", body, flags=re.ASCII) is None:  # \d: 0-9, not other scripts' digits
        return None
    fields = re.split(rf"[\n{separator}]", body.rstrip("\n"))
    matrix = np.array(fields, dtype=float).reshape(-1, len(header))
    return {name: matrix[:, j] for j, name in enumerate(header)}
