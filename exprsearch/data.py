"""Measurement tables → :class:`Dataset`: validated factor columns and a positive target."""

from __future__ import annotations

import hashlib
import keyword
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import DataError
from .vocabulary import FUNCTIONS, suggest

_READERS = {
    ".csv": lambda p: pd.read_csv(p),
    ".tsv": lambda p: pd.read_csv(p, sep="\t"),
    ".txt": lambda p: pd.read_csv(p, sep=None, engine="python"),
    ".parquet": lambda p: pd.read_parquet(p),
    ".json": lambda p: pd.read_json(p),
}


@dataclass(frozen=True)
class Dataset:
    """Measurements: one row per run, factor columns ``X`` and the positive target ``y``."""

    target: str
    factors: tuple[str, ...]
    X: np.ndarray
    y: np.ndarray
    name: str = "data"
    path: str | None = None
    sha256: str | None = None
    notes: tuple[str, ...] = field(default=())

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
        _, ids = np.unique(self.X, axis=0, return_inverse=True)
        return ids.reshape(-1)

    def subset(self, rows: np.ndarray) -> Dataset:
        """The same dataset restricted to ``rows`` (an index or boolean mask)."""
        return Dataset(
            self.target, self.factors, self.X[rows].copy(), self.y[rows].copy(),
            self.name, self.path, self.sha256, self.notes,
        )


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV/TSV/Parquet/JSON file into a DataFrame, with a clear error when it cannot."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file '{path}' does not exist; check the path")
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        raise DataError(
            f"'{path}' has an unknown extension '{path.suffix}'; "
            f"use one of {', '.join(sorted(_READERS))}"
        )
    try:
        frame = reader(path)
    except Exception as exc:  # pandas raises many types for unreadable files
        raise DataError(f"could not read '{path}': {exc}".splitlines()[0]) from None
    if path.suffix.lower() in (".csv", ".tsv"):
        _check_header(path, frame)
    return frame


def _check_header(path: Path, frame: pd.DataFrame) -> None:
    """Refuse what pandas would quietly reinterpret: repeated column names (renamed p.1) and a
    file separated by another character than the extension says (one column of 'p;n;time')."""
    import csv

    with path.open(newline="") as stream:
        header = next(csv.reader(stream, delimiter="\t" if path.suffix.lower() == ".tsv" else ","), [])
    seen: dict[str, int] = {}
    for i, name in enumerate(header, start=1):
        if name in seen:
            raise DataError(f"'{path}' line 1 has two columns named '{name}' (columns {seen[name]} and {i}); "
                            "rename one")
        seen[name] = i
    if header and len(frame.columns) == len(header):
        repeated = frame.index[(frame.astype(str) == [str(c) for c in frame.columns]).all(axis=1)]
        if len(repeated):
            lines = ", ".join(str(int(i) + 2) for i in repeated[:5])
            raise DataError(f"'{path}' line {lines} repeats the header (files joined together?); "
                            "delete the repeated header line(s)")
    if len(frame.columns) == 1:
        for other in (";", "\t", "|", ","):
            if other in str(frame.columns[0]):
                expected = "tabs" if path.suffix.lower() == ".tsv" else "commas"
                raise DataError(f"'{path}' line 1 seems separated by {other!r}, but a {path.suffix} file is "
                                f"separated by {expected}: save it with {expected} (a .tsv file with tabs)")


def load_table(
    path: str | Path,
    target: str,
    factors: list[str] | None = None,
    drop_missing: bool = False,
) -> Dataset:
    """Read a CSV/TSV/Parquet/JSON table and validate it into a :class:`Dataset`."""
    path = Path(path)
    frame = read_table(path)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    header_lines = 1 if path.suffix.lower() in (".csv", ".tsv", ".txt") else 0
    return from_frame(
        frame, target, factors, drop_missing=drop_missing, name=path.stem,
        path=str(path), sha256=sha, header_lines=header_lines,
    )


def load_groups(
    path: str | Path, target: str, by: str, factors: list[str] | None = None, drop_missing: bool = False,
) -> dict[str, Dataset]:
    """One Dataset per value of column ``by`` (``"by=value"`` → Dataset), in sorted order."""
    path = Path(path)
    frame = read_table(path)
    columns = [str(c) for c in frame.columns]
    _require_column(by, columns, f"'{path}'", "--by")
    if by == target:
        raise DataError(f"--by {by}: that is the target; group by another column")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    rest = frame.drop(columns=[by])
    chosen = factors or [c for c in rest.columns if c != target and pd.api.types.is_numeric_dtype(rest[c])]
    groups = {}
    for value, group in frame.groupby(by, sort=True):
        try:
            groups[f"{by}={value}"] = from_frame(
                group.drop(columns=[by]).reset_index(drop=True), target, chosen, drop_missing=drop_missing,
                name=f"{path.stem}-{value}", path=str(path), sha256=sha,
            )
        except DataError as exc:
            raise DataError(f"group {by}={value}: {exc}") from None
    return groups


def from_frame(
    frame: pd.DataFrame,
    target: str,
    factors: list[str] | None = None,
    *,
    drop_missing: bool = False,
    name: str = "data",
    path: str | None = None,
    sha256: str | None = None,
    header_lines: int = 0,
) -> Dataset:
    """Validate a DataFrame into a :class:`Dataset` (factors default to other numeric columns)."""
    where = f"'{path}'" if path else "the table"
    columns = [str(c) for c in frame.columns]
    frame = frame.set_axis(columns, axis=1)
    _require_column(target, columns, where, "target")
    notes: list[str] = []
    if factors is None:
        factors = [c for c in columns if c != target and pd.api.types.is_numeric_dtype(frame[c])]
        for c in columns:
            if c != target and c not in factors and _mostly_numbers(frame[c].astype(str).str.replace(
                    r"(?<=\d)[,_' ](?=\d{3})", "", regex=True).where(frame[c].notna())) and not _mostly_numbers(frame[c]):
                first = int(np.flatnonzero(frame[c].notna().to_numpy())[0])
                raise DataError(f"{where} column '{c}' holds numbers written with thousands separators "
                                f"({frame[c].iloc[first]!r} at {_rows(np.array([first]), header_lines)}): write them "
                                "without separators, or leave the column out with --factors")
            if c != target and c not in factors and _mostly_numbers(frame[c]):
                if not drop_missing:
                    raise DataError(_stray_values(frame[c], c, where, header_lines))
                factors.append(c)  # its stray rows are dropped below, and said so
        factors = [c for c in columns if c in factors]
        ignored = [c for c in columns if c != target and c not in factors]
        if ignored:
            notes.append(f"ignored non-numeric column(s) {', '.join(ignored)}")
    else:
        for f in factors:
            _require_column(f, columns, where, "factor")
        if target in factors:
            raise DataError(f"'{target}' is the target; it cannot also be a factor")
    if not factors:
        raise DataError(f"{where} has no numeric factor column besides '{target}'; add one")
    for f in factors:
        if not f.isidentifier() or keyword.iskeyword(f) or f in FUNCTIONS:
            raise DataError(
                f"{where} factor column '{f}' cannot name a factor in a law: use letters, digits "
                "and _ (not starting with a digit, not a function name); rename the column"
            )
    numeric = frame[[*factors, target]].apply(pd.to_numeric, errors="coerce")
    positions = np.arange(len(numeric))
    bad = ~np.isfinite(numeric.to_numpy(dtype=float))
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        if not drop_missing:
            col = [*factors, target][int(np.flatnonzero(bad[rows[0]])[0])]
            raise DataError(
                f"{where} column '{col}' has missing or non-numeric values at "
                f"{_rows(rows, header_lines)}; fill or remove them, or pass --drop-missing"
            )
        notes.append(f"dropped {len(rows)} row(s) with missing values: {_rows(rows, header_lines)}")
        numeric = numeric.drop(index=numeric.index[rows])
        positions = np.delete(positions, rows)
    y = numeric[target].to_numpy(dtype=float)
    nonpositive = np.flatnonzero(y <= 0)
    if nonpositive.size:
        raise DataError(
            f"{where} target '{target}' must be positive (errors are relative to it) but is "
            f"zero or negative at {_rows(positions[nonpositive], header_lines)}; remove those rows"
        )
    if len(y) < 2:
        raise DataError(f"{where} has {len(y)} usable row(s); a law needs several measurements")
    constant = [f for f in factors if numeric[f].nunique() == 1]
    if constant and len(constant) < len(factors):
        notes.append(f"left out factor(s) with a single value: {', '.join(constant)}")
        factors = [f for f in factors if f not in constant]
    X = numeric[factors].to_numpy(dtype=float)
    return Dataset(target, tuple(factors), X, y, name, path, sha256, tuple(notes))


def _require_column(name: str, columns: list[str], where: str, what: str) -> None:
    if name not in columns:
        raise DataError(
            f"{what} column '{name}' is not in {where}{suggest(name, columns)}; "
            f"its columns are {', '.join(columns)}"
        )


def _rows(rows: np.ndarray, header_lines: int) -> str:
    shown = ", ".join(str(int(r) + 1 + header_lines) for r in rows[:8])
    more = f" and {len(rows) - 8} more" if len(rows) > 8 else ""
    kind = "line" if header_lines else "row"
    return f"{kind}{'s' if len(rows) > 1 else ''} {shown}{more}"


EXTRAP_FORMATS = ("extrap-text", "extrap-json")


def _mostly_numbers(column: pd.Series) -> bool:
    """Whether most of a column's non-empty values are numbers (so the rest are likely typos)."""
    present = column.dropna()
    parsed = pd.to_numeric(present, errors="coerce")
    return len(present) > 0 and parsed.notna().sum() > len(present) / 2


def _stray_values(column: pd.Series, name: str, where: str, header_lines: int) -> str:
    present = column.dropna()
    stray = present[pd.to_numeric(present, errors="coerce").isna()]
    rows = np.flatnonzero(column.index.isin(stray.index))
    shown = ", ".join(repr(str(v)) for v in stray.iloc[:3]) + (", …" if len(stray) > 3 else "")
    return (f"{where} column '{name}' is numbers except {shown} at {_rows(rows, header_lines)}: fix those "
            f"values, pass --drop-missing to drop those rows, or leave the column out with --factors")


def detect_format(path: str | Path) -> str:
    """``table``, ``extrap-text`` or ``extrap-json``, from the extension and the first bytes."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file '{path}' does not exist; check the path")
    head = path.read_text(errors="replace")[:4096].lstrip()
    if path.suffix.lower() == ".txt" and head.upper().startswith(("PARAMETER", "#")):
        return "extrap-text"
    if path.suffix.lower() == ".json" and '"parameters"' in head and '"measurements"' in head:
        return "extrap-json"
    return "table"


def load_extrap(path: str | Path, fmt: str | None = None, target: str | None = None) -> dict[str, Dataset]:
    """Every REGION:METRIC of an Extra-P text or JSON file as a Dataset (repetitions are rows),
    or only the one ``target`` names (``REGION:METRIC``, or a REGION that has one metric)."""
    path = Path(path)
    fmt = fmt or detect_format(path)
    text = path.read_text()
    if fmt == "extrap-text":
        parameters, points, series = _extrap_text(text, path)
    elif fmt == "extrap-json":
        parameters, points, series = _extrap_json(text, path)
    else:
        raise DataError(f"'{path}': unknown format '{fmt}'; use table, extrap-text or extrap-json")
    if not series:
        raise DataError(f"'{path}' holds no measurements (no REGION with DATA lines)")
    if target is not None:
        matches = [k for k in series if k == target or k.split(":")[0] == target]
        if len(matches) != 1:
            raise DataError(f"'{path}' has no single series '{target}'; its series are {', '.join(series)} "
                            "(pass --target REGION:METRIC)")
        series = {matches[0]: series[matches[0]]}
    sha = hashlib.sha256(text.encode()).hexdigest()
    datasets = {}
    for name, rows in series.items():
        bad = [point for point, values in rows if any(v <= 0 for v in values)]
        if bad:
            shown = ", ".join("(" + " ".join(f"{v:g}" for v in p) + ")" for p in bad[:4])
            others = "" if target is not None else "; pass --target REGION:METRIC to fit another series"
            raise DataError(f"'{path}', series {name}: values at {len(bad)} point(s) ({shown}) are zero or "
                            f"negative, and errors are relative to the value, so this series cannot be fitted{others}")
        frame = pd.DataFrame(
            [dict(zip(parameters, point)) | {"time": v} for point, values in rows for v in values]
        )
        datasets[name] = from_frame(frame, "time", list(parameters), name=f"{path.stem}-{name}",
                                    path=str(path), sha256=sha)
    return datasets


def _extrap_text(text: str, path: Path):
    """Extra-P's text format, read by its conventions: whole lines starting with ``#`` are
    comments; several names may share a PARAMETER line; a METRIC carries over to the REGIONs
    after it; REGION and METRIC each restart the DATA lines at the first point. A series given
    twice, or with fewer DATA lines than POINTS, is an error rather than a merge or a gap."""
    parameters: list[str] = []
    points: list[tuple[float, ...]] = []
    series: dict[str, list] = {}
    started: dict[str, int] = {}
    region, metric, index = None, "time", 0

    def check_complete() -> None:
        key = f"{region}:{metric}"
        if key in series and len(series[key]) < len(points):
            raise DataError(f"'{path}', line {started[key]}: region '{region}' metric '{metric}' has "
                            f"{len(series[key])} DATA line(s) for {len(points)} POINTS; give one DATA line per point")

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ") if " " in line else line.partition("\t")
        keyword, rest = keyword.upper(), rest.strip()
        try:
            if keyword == "PARAMETER":
                names = rest.split()
                if not names:
                    raise ValueError("PARAMETER without a name")
                parameters.extend(names)
            elif keyword == "POINTS":
                points.extend(_points(rest, len(parameters)))
            elif keyword in ("REGION", "METRIC"):
                if not rest:
                    raise ValueError(f"{keyword} without a name")
                check_complete()
                region, metric = (rest, metric) if keyword == "REGION" else (region, rest)
                index = 0
            elif keyword == "DATA":
                if region is None:
                    raise ValueError("DATA before any REGION")
                if index >= len(points):
                    raise ValueError(f"more DATA lines than the {len(points)} POINTS")
                key = f"{region}:{metric}"
                if index == 0 and key in series:
                    raise ValueError(f"region '{region}' metric '{metric}' was already given at line "
                                     f"{started[key]}; a series can be given once")
                started.setdefault(key, number)
                values = [float(v) for v in rest.split()]
                if not values:
                    raise ValueError("DATA without values")
                series.setdefault(key, []).append((points[index], values))
                index += 1
            else:
                raise ValueError(f"unknown keyword '{keyword}'; expected PARAMETER, POINTS, REGION, METRIC or DATA")
        except ValueError as exc:
            raise DataError(f"'{path}', line {number}: {exc}") from None
    check_complete()
    if not parameters:
        raise DataError(f"'{path}' declares no PARAMETER; is it an Extra-P text file?")
    if len(set(parameters)) < len(parameters):
        raise DataError(f"'{path}' declares a PARAMETER twice ({', '.join(parameters)}); give each once")
    return parameters, points, series


def _points(rest: str, dimensions: int) -> list[tuple[float, ...]]:
    groups = re.findall(r"\(([^)]*)\)", rest)
    if groups:
        points = [tuple(float(v) for v in g.replace(",", " ").split()) for g in groups]
    else:
        points = [(float(v),) for v in rest.split()]
    for point in points:
        if len(point) != dimensions:
            raise ValueError(f"a point has {len(point)} coordinate(s) but there are {dimensions} PARAMETER(s)")
    return points


def _extrap_json(text: str, path: Path):
    """Extra-P's JSON layout: ``{"parameters": [...], "measurements": {region: {metric:
    [{"point": [...], "values": [...]}, ...]}}}``, each part checked with the place it is wrong."""
    import json

    def fail(where: str, what: str) -> DataError:
        return DataError(f"'{path}' is not an Extra-P JSON measurement file: {where} {what}")

    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DataError(f"'{path}' is not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise fail("the file", "must hold an object with 'parameters' and 'measurements'")
    parameters = doc.get("parameters")
    if not isinstance(parameters, list) or not parameters or not all(isinstance(p, str) for p in parameters):
        raise fail("'parameters'", "must be a list of parameter names")
    if len(set(parameters)) < len(parameters):
        raise fail("'parameters'", f"names a parameter twice ({', '.join(parameters)})")
    measurements = doc.get("measurements")
    if not isinstance(measurements, dict):
        raise fail("'measurements'", "must map each region to its metrics")
    series = {}
    for region, metrics in measurements.items():
        if not isinstance(metrics, dict):
            raise fail(f"region '{region}'", "must map each metric to a list of measurements")
        for metric, entries in metrics.items():
            where = f"region '{region}' metric '{metric}'"
            if not isinstance(entries, list):
                raise fail(where, "must be a list of {\"point\": [...], \"values\": [...]}")
            rows = []
            for i, entry in enumerate(entries, start=1):
                point = entry.get("point") if isinstance(entry, dict) else None
                values = entry.get("values") if isinstance(entry, dict) else None
                if not _numbers(point) or len(point) != len(parameters):
                    raise fail(f"{where}, measurement {i}:", f"'point' must be {len(parameters)} number(s), one per parameter")
                if not _numbers(values) or not values:
                    raise fail(f"{where}, measurement {i}:", "'values' must be a non-empty list of numbers")
                rows.append((tuple(float(v) for v in point), [float(v) for v in values]))
            series[f"{region}:{metric}"] = rows
    return parameters, None, series


def _numbers(items: object) -> bool:
    """A list of finite numbers (JSON true/false are not numbers here)."""
    return isinstance(items, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and _finite(v) for v in items)


def _finite(value: float) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer too large for a float
        return False
