"""Readers of measurement files that hold many series (Extra-P's formats): each reader turns one
format into a :class:`Profile`, and :func:`load_series` turns a profile into one
:class:`~exprsearch.data.Dataset` per ``callpath:metric``. Tables of one series are read by
:mod:`exprsearch.data`."""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import rowfilter
from ..configs import setting
from ..data import Dataset, from_columns
from ..errors import DataError, missing_file
from ..tables import SUFFIXES, WORKBOOKS
from ..vocabulary import law_name
from .profile import Profile

if TYPE_CHECKING:
    from ..rowfilter import Condition


def _readers() -> dict[str, Callable[[Path], Profile]]:
    from . import cube, experiment, extrap3, extrap_json, extrap_text, jsonlines

    return {
        "cube": cube.read,
        "extrap-text": extrap_text.read,
        "extrap-json": extrap_json.read,
        "extrap-jsonl": jsonlines.read,
        "talpas": jsonlines.read_talpas,
        "extrap-experiment": experiment.read,
        "extrap3": extrap3.read,
    }


EXTRAP_KEYWORDS = frozenset({"PARAMETER", "POINTS", "REGION", "METRIC", "DATA"})  # an Extra-P text file's first word
FORMATS = ("table", "extrap-text", "extrap-json", "extrap-jsonl", "talpas", "extrap-experiment", "extrap3", "cube")


def detect_format(path: str | Path) -> str:
    """The format of ``path`` from its extension and first bytes: one of :data:`FORMATS`."""
    from .cube import is_cube_directory
    from .extrap3 import is_extrap3

    path = Path(path)
    if is_cube_directory(path):
        return "cube"
    one_run = path if path.is_dir() else path.parent  # a run's folder, or its profile given alone
    if (path.is_dir() or path.suffix.lower() == ".cubex") and any(one_run.glob("[!.]*.cubex")):
        experiment = one_run.parent
        raise DataError(f"'{path}' is one run of a CUBE experiment; exprsearch reads the experiment, a folder "
                        "with one folder per run (<run>/<name>.cubex), to see how the runs' parameters change the "
                        "times: give " + (f"'{experiment}'" if is_cube_directory(experiment) else "that folder"))
    if path.is_dir():
        try:  # a folder of sets of runs, as Extra-P's cubeset
            inside = sorted(f.name for _, f in zip(range(1000), path.iterdir()) if is_cube_directory(f))
        except OSError:
            inside = []
        shown = ", ".join(inside[:4]) + (", …" if len(inside) > 4 else "")
        raise DataError(f"data '{path}' is a folder without CUBE run folders (<run>/<name>.cubex); "
                        + (f"its folders {shown} have them: give one, such as {path / inside[0]}" if inside else
                           "give a data file, or a folder of CUBE runs"))
    if not path.is_file():
        raise DataError(missing_file("data", path))
    suffix = path.suffix.lower()
    with path.open("rb") as file:
        if is_extrap3(file.read(64)):
            return "extrap3"
    if suffix == ".extra-p" or suffix not in WORKBOOKS and zipfile.is_zipfile(path):  # a workbook is a zip
        return "extrap-experiment"
    head = path.read_text(errors="replace")[:4096].lstrip()
    if suffix == ".txt" and (head.upper().startswith(("PARAMETER", "#")) or _keyword_lines(head)):
        return "extrap-text"
    if suffix not in SUFFIXES and _keyword_lines(head):  # Extra-P text saved without .txt
        return "extrap-text"
    if suffix == ".txt" and head.startswith("{") and '"parameters"' in head and ";" in head.split("\n", 1)[0]:
        return "talpas"
    first = next((line for line in head.splitlines() if line.strip()), "")
    if suffix in (".jsonl", ".ndjson", ".json") and first.startswith("{") and '"params"' in first:
        return "extrap-jsonl"  # Extra-P's JSON Lines; other JSON Lines files are tables (a training log)
    if suffix == ".json" and ('"callpaths"' in head or '"parameters"' in head and '"measurements"' in head):
        return "extrap-json"
    return "table"


def _keyword_lines(head: str) -> bool:
    """Whether every whole line of ``head`` but comments starts with an Extra-P keyword (a table
    whose first column is named ``data`` does not: its rows start with numbers)."""
    lines = [line.split(maxsplit=1)[0].upper() for line in head.splitlines()[:-1]
             if line.strip() and not line.lstrip().startswith("#")]
    return bool(lines) and all(word in EXTRAP_KEYWORDS for word in lines)


# where each format's measurements are, for a file that holds none
_HOLDS = {"extrap-text": "a series is a REGION line, then one DATA line per point of POINTS",
          "extrap-json": "Extra-P's JSON gives them under \"measurements\"",
          "extrap-jsonl": "each line is an object with \"params\" and \"value\"",
          "talpas": "each line is an object with \"params\", \"callpath\", \"metric\" and \"value\""}


def read_profile(path: str | Path, fmt: str | None = None) -> Profile:
    """Every series of an Extra-P file, in the file's order."""
    path = Path(path)
    fmt = fmt or detect_format(path)
    readers = _readers()
    if fmt not in readers:
        raise DataError(f"'{path}': '{fmt}' is not a format of series; use one of table, {', '.join(readers)}")
    if not path.exists():
        raise DataError(f"data '{path}' does not exist")
    if fmt == "cube" and not path.is_dir():
        raise DataError(f"--format cube reads a directory of CUBE runs, and '{path}' is a file; pass the "
                        "directory, or another --format")
    if fmt != "cube" and not path.is_file():
        raise DataError(f"'{path}' is a directory; --format {fmt} reads a file (a directory of CUBE runs "
                        "is --format cube)")
    try:
        profile = readers[fmt](path)
    except UnicodeDecodeError as exc:
        raise DataError(f"'{path}' is not UTF-8 text (byte {exc.object[exc.start]:#04x} at byte {exc.start + 1}); "
                        f"is --format {fmt} right? Extra-P's text, JSON and Talpas files are UTF-8") from None
    if not profile.series:
        raise DataError(f"'{path}' holds no measurements: read as --format {fmt}, it gives no series any values "
                        f"({_HOLDS.get(fmt, 'check the format')})")
    return profile


def load_series(path: str | Path, fmt: str | None = None, target: str | None = None,
                drop_stray: bool = False, where: Sequence[Condition] = ()) -> dict[str, Dataset]:
    """One Dataset per ``callpath:metric`` of an Extra-P file (repetitions are rows), or only the
    one ``target`` names (``callpath:metric``, or a callpath that has one metric); ``drop_stray``
    drops repetitions far from the others of their point, ``where`` keeps the points that meet its
    conditions on the parameters (``--where``)."""
    path = Path(path)
    profile = read_profile(path, fmt)
    series = profile.series
    if target is not None:
        matches = [k for k in series if k == target or k.rsplit(":", 1)[0] == target]
        if len(matches) != 1:
            raise DataError(f"'{path}' has no single series '{target}'; its series are {', '.join(series)} "
                            "(pass --target CALLPATH:METRIC)")
        series = {matches[0]: series[matches[0]]}
    datasets, failures = _datasets(path, profile, series, drop_stray, where)
    if failures:
        name, message = next(iter(failures.items()))
        count = f"{len(failures)} of its {len(series)} series cannot be fitted; " if len(failures) > 1 else ""
        others = "" if target is not None or len(profile.series) == 1 else (
            f"; {count}pass --target CALLPATH:METRIC to fit another series, or model every series that can "
            f"be fitted with 'exprsearch profile {path}'")
        if message.startswith("values at") and (target is not None or len(profile.series) == 1):
            others = ("; it is the file's only series: remove those points from the file to fit the others"
                      if len(profile.series) == 1 else "; remove those points from the file to fit this series")
        raise DataError(_in_series(path, name, message) + others)
    return datasets


def _in_series(path: Path, name: str, message: str) -> str:
    """A series' error in one sentence naming the file once: "'f.txt' series reg:metr has 1 usable
    row(s)…", where the message names the file already, else "'f.txt', series reg:metr: …"."""
    own = f"'{path}' "
    if message.startswith(own):
        return f"{own}series {name} {message[len(own):]}"
    return f"'{path}', series {name}: {message}"


def law_series(path: str | Path, fmt: str | None, series: str | None, drop_stray: bool = False,
               where: Sequence[Condition] = ()) -> Dataset:
    """The series a law was fitted on (law.json's ``dataset.series``), or the file's only one, read
    again for plot and predict, which name a law's series rather than take a --target."""
    path = Path(path)
    profile = read_profile(path, fmt)
    held = list(profile.series)
    if series is not None and series not in profile.series:
        shown = ", ".join(held[:5]) + (", …" if len(held) > 5 else "")
        raise DataError(f"'{path}' holds no series {series}, the one the law was fitted on (its series are "
                        f"{shown}); pass a file that holds it, or a table of configurations")
    if series is None and len(held) > 1:
        raise DataError(f"'{path}' holds {len(held)} series and the law names none of them; pass a file of its "
                        "series alone, or the table the law was fitted on")
    chosen = held[0] if series is None else series
    datasets, failures = _datasets(path, profile, {chosen: profile.series[chosen]}, drop_stray, where)
    if failures:
        raise DataError(_in_series(path, chosen, failures[chosen]))
    return datasets[chosen]


def load_profile(path: str | Path, fmt: str | None = None, drop_stray: bool = False,
                 where: Sequence[Condition] = ()) -> tuple[dict[str, Dataset], dict[str, str]]:
    """Every series of an Extra-P file as a Dataset, and the ones that cannot be fitted with the
    reason (a series of zeros, say), so that a whole profile is modelled around them."""
    path = Path(path)
    profile = read_profile(path, fmt)
    return _datasets(path, profile, profile.series, drop_stray, where)


def _datasets(path: Path, profile: Profile, series: dict, drop_stray: bool = False,
              where: Sequence[Condition] = ()) -> tuple[dict[str, Dataset], dict[str, str]]:
    sha = digest(path)
    every = {point for rows in profile.series.values() for point, _ in rows}
    kept = None
    if where:  # the points every series keeps, decided once for the file
        points = sorted(every)
        mask, kept = rowfilter.keep_points(np.array(points), list(profile.parameters), where, f"'{path}'")
        chosen = {p for p, keep in zip(points, mask) if keep}
        series = {name: [(p, v) for p, v in rows if p in chosen] for name, rows in series.items()}
        every = chosen
    datasets, failures = {}, {}
    for name, rows in series.items():
        if not rows:
            failures[name] = "none of its points meets --where"
            continue
        missing = [point for point, values in rows if not np.isfinite(values).all()]
        if missing:  # nan or inf in a DATA line: no measurement, where the rest of the point has some
            failures[name] = f"values at {len(missing)} point(s) ({_points(missing)}) are not numbers (nan or inf)"
            continue
        bad = [point for point, values in rows if any(v <= 0 for v in values)]
        if bad:
            failures[name] = (f"values at {len(bad)} point(s) ({_points(bad)}) are zero or negative, and errors are "
                              "relative to the value, so this series cannot be fitted")
            continue
        points = np.array([point for point, values in rows for _ in values], dtype=float).reshape(-1, len(profile.parameters))
        target = measured_name(profile.metrics.get(name, ""), profile.parameters)
        columns = dict(zip(profile.parameters, points.T)) | {target: [v for _, values in rows for v in values]}
        try:
            dataset = from_columns(columns, target, list(profile.parameters), name=f"{path.stem}-{name}",
                                   path=str(path), sha256=sha, drop_stray=drop_stray)
        except DataError as exc:
            failures[name] = str(exc)
            continue
        notes = profile.notes + ((kept,) if kept else ())
        if len(rows) < len(every):
            notes += (f"series {name} is measured at {len(rows)} of the file's {len(every)} points",)
        datasets[name] = replace(dataset, notes=notes + dataset.notes, series=name, where=rowfilter.recorded(where))
    return datasets, failures


def _points(points: list) -> str:
    """The first few points as a message names them: ``(4), (8)`` or ``(1 1000), (2 1000)``, and
    how many more there are."""
    named = ", ".join("(" + " ".join(setting(v) for v in p) + ")" for p in points[:4])
    return named + (f" and {len(points) - 4} more" if len(points) > 4 else "")


def measured_name(metric: str, parameters: Sequence[str]) -> str:
    """The name a series' law gives what it measures: its metric's (bytes, PAPI_FP_OPS), or time
    where the file names none; never a parameter's."""
    name = law_name(metric) if metric.strip() else "time"
    return name if name not in parameters else f"{name}_value"


def digest(path: str | Path) -> str:
    """sha256 of a file, or of a directory's files in name order (a CUBE experiment)."""
    path, total = Path(path), hashlib.sha256()
    for part in sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]:
        total.update(part.read_bytes())
    return total.hexdigest()


__all__ = ["FORMATS", "Profile", "detect_format", "digest", "load_profile", "load_series", "read_profile"]
