"""Extra-P's text format (PARAMETER, POINTS, REGION, METRIC, DATA lines)."""

from __future__ import annotations

import re
from pathlib import Path

from ..cells import is_number
from ..errors import DataError
from .profile import Profile, series_name


def read(path: Path) -> Profile:
    parameters, _, series, metrics = _parse(path.read_text(), path)
    return Profile(tuple(parameters), series, metrics=metrics)


def _parse(text: str, path: Path):
    """Extra-P's text format, read by its conventions: whole lines starting with ``#`` are
    comments; several names may share a PARAMETER line; a METRIC carries over to the REGIONs
    after it; REGION and METRIC each restart the DATA lines at the first point. A series given
    twice, or with fewer DATA lines than POINTS, is an error rather than a merge or a gap."""
    parameters: list[str] = []
    points: list[tuple[float, ...]] = []
    series: dict[str, list] = {}
    metrics: dict[str, str] = {}
    started: dict[str, int] = {}
    region, metric, index = None, "", 0

    def check_complete() -> None:
        key = series_name(region, metric)
        if key in series and len(series[key]) < len(points):
            raise DataError(f"'{path}', line {started[key]}: series '{key}' has {len(series[key])} DATA line(s) "
                            f"for {len(points)} POINTS; give one DATA line per point")

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
                if not parameters:
                    raise ValueError("POINTS before any PARAMETER; name the parameters first (PARAMETER p)")
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
                key = series_name(region, metric)
                if index == 0 and key in series:
                    raise ValueError(f"series '{key}' was already given at line {started[key]}; a series can "
                                     "be given once")
                started.setdefault(key, number)
                metrics.setdefault(key, metric)
                values = _floats(rest.split(), "DATA")
                if not values:
                    raise ValueError("DATA without values")
                series.setdefault(key, []).append((points[index], values))
                index += 1
            else:
                raise ValueError(f"unknown keyword '{keyword}'; expected PARAMETER, POINTS, REGION, METRIC or DATA")
        except DataError:
            raise
        except ValueError as exc:
            raise DataError(f"'{path}', line {number}: {exc}") from None
    check_complete()
    if not parameters:
        raise DataError(f"'{path}' declares no PARAMETER; is it an Extra-P text file?")
    if len(set(parameters)) < len(parameters):
        raise DataError(f"'{path}' declares a PARAMETER twice ({', '.join(parameters)}); give each once")
    return parameters, points, series, metrics


def _points(rest: str, dimensions: int) -> list[tuple[float, ...]]:
    groups = re.findall(r"\(([^)]*)\)", rest)
    if groups:
        points = [tuple(_floats(g.replace(",", " ").split(), "POINTS")) for g in groups]
    else:
        points = [(value,) for value in _floats(rest.split(), "POINTS")]
    for point in points:
        if len(point) != dimensions:
            raise ValueError(f"a point has {len(point)} coordinate(s) but there are {dimensions} PARAMETER(s)")
    return points


def _floats(words: list[str], keyword: str) -> list[float]:
    """The numbers of a line, or a sentence naming the first word that is none."""
    try:
        return [float(w) for w in words]
    except ValueError:
        bad = next(w for w in words if not is_number(w))
        # repr: a character no one can see (a byte-order mark, a zero-width space) is written out
        raise ValueError(f"{keyword} holds {bad[:40]!r}, which is not a number; fix or remove it") from None
