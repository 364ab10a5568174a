"""Extra-P experiment files (``.extra-p``: a zip holding ``experiment.json``). Where it keeps
each repetition's value they are the rows; where it keeps only summaries, each point's mean is
one row, as Extra-P models the mean by default, and a note says so."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from ..errors import DataError
from .profile import Collector, Profile, number, numbers


def read(path: Path) -> Profile:
    try:
        with zipfile.ZipFile(path) as archive:
            if "experiment.json" not in archive.namelist() and "xl/workbook.xml" in archive.namelist():
                raise DataError(f"'{path}' is an Excel workbook; name it .xlsx to read its sheet as a table")
            doc = json.loads(archive.read("experiment.json"))
    except (zipfile.BadZipFile, KeyError):
        raise DataError(f"'{path}' is not an Extra-P experiment (a zip file holding experiment.json)") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DataError(f"'{path}': its experiment.json is not valid JSON ({exc})") from None
    parameters = doc.get("parameters") if isinstance(doc, dict) else None
    measurements = doc.get("measurements") if isinstance(doc, dict) else None
    if not isinstance(parameters, list) or not all(isinstance(p, str) for p in parameters) \
            or not isinstance(measurements, dict):
        raise DataError(f"'{path}': experiment.json needs 'parameters' (names) and 'measurements'")
    out = Collector(path, parameters)
    summarised = 0
    for callpath, metrics in measurements.items():
        for metric, entries in (metrics.items() if isinstance(metrics, dict) else [(None, None)]):
            if not isinstance(entries, list):
                raise DataError(f"'{path}': callpath '{callpath}' needs a list of measurements per metric")
            for i, entry in enumerate(entries, start=1):
                where = f"'{path}': callpath '{callpath}' metric '{metric}', measurement {i}"
                point = numbers(entry.get("coordinate")) if isinstance(entry, dict) else None
                if point is None or len(point) != len(parameters):
                    raise DataError(f"{where} needs a 'coordinate' of {len(parameters)} number(s)")
                values = numbers(entry.get("values"))
                if not values:
                    mean = number(entry.get("mean"))
                    if mean is None:
                        raise DataError(f"{where} has neither 'values' nor a numeric 'mean'")
                    values, summarised = [mean], summarised + 1
                out.add(callpath, metric, tuple(point), values)
    notes = (f"'{path.name}' keeps only summaries at {summarised} point(s): each is fitted as its mean, "
             "one row per point, so the repetitions' noise is not known",) if summarised else ()
    return out.profile(notes)
