"""Extra-P's JSON layouts: ``{"parameters": [names], "measurements": {callpath: {metric:
[{"point": [...], "values": [...]}]}}}``, and the older one of id-numbered ``parameters``,
``callpaths``, ``metrics``, ``coordinates`` and one ``measurements`` entry per value."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DataError
from .profile import Collector, Profile, number, numbers


def read(path: Path) -> Profile:
    try:
        doc = json.loads(path.read_text())
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DataError(f"'{path}' is not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise _fail(path, "the file", "must hold an object with 'parameters' and 'measurements'")
    return _legacy(doc, path) if "callpaths" in doc else _current(doc, path)


def _fail(path: Path, where: str, what: str) -> DataError:
    return DataError(f"'{path}' is not an Extra-P JSON measurement file: {where} {what}")


def _current(doc: dict, path: Path) -> Profile:
    parameters = doc.get("parameters")
    if not isinstance(parameters, list) or not parameters or not all(isinstance(p, str) for p in parameters):
        raise _fail(path, "'parameters'", "must be a list of parameter names")
    measurements = doc.get("measurements")
    if not isinstance(measurements, dict):
        raise _fail(path, "'measurements'", "must map each callpath to its metrics")
    out = Collector(path, parameters)
    for callpath, metrics in measurements.items():
        if not isinstance(metrics, dict):
            raise _fail(path, f"callpath '{callpath}'", "must map each metric to a list of measurements")
        for metric, entries in metrics.items():
            where = f"callpath '{callpath}' metric '{metric}'"
            if not isinstance(entries, list):
                raise _fail(path, where, 'must be a list of {"point": [...], "values": [...]}')
            for i, entry in enumerate(entries, start=1):
                point = numbers(entry.get("point")) if isinstance(entry, dict) else None
                values = numbers(entry.get("values")) if isinstance(entry, dict) else None
                if point is None or len(point) != len(parameters):
                    raise _fail(path, f"{where}, measurement {i}:",
                                f"'point' must be {len(parameters)} number(s), one per parameter")
                if not values:
                    raise _fail(path, f"{where}, measurement {i}:", "'values' must be a non-empty list of numbers")
                out.add(callpath, metric, tuple(point), values)
    return out.profile()


def _legacy(doc: dict, path: Path) -> Profile:
    def table(key: str) -> dict[int, dict]:
        entries = doc.get(key)
        if not isinstance(entries, list) or not all(isinstance(e, dict) and number(e.get("id")) is not None
                                                    for e in entries):
            raise _fail(path, f"'{key}'", "must be a list of objects with an 'id'")
        return {int(e["id"]): e for e in entries}

    def name(entry: dict, key: str) -> str:
        if not isinstance(entry.get("name"), str):
            raise _fail(path, f"'{key}' id {entry['id']}", "has no 'name'")
        return entry["name"]

    parameters = {i: name(e, "parameters") for i, e in sorted(table("parameters").items())}
    callpaths = {i: name(e, "callpaths") for i, e in table("callpaths").items()}
    metrics = {i: name(e, "metrics") for i, e in table("metrics").items()}
    order = list(parameters)
    coordinates = {}
    for i, entry in table("coordinates").items():
        pairs = entry.get("parameter_value_pairs")
        values = {}
        for pair in pairs if isinstance(pairs, list) else [None]:
            key = number(pair.get("parameter_id")) if isinstance(pair, dict) else None
            value = number(pair.get("parameter_value")) if isinstance(pair, dict) else None
            if key is None or value is None or int(key) not in parameters:
                raise _fail(path, f"coordinate id {i}", "needs a 'parameter_value_pairs' list of known parameter ids "
                            "and numeric values")
            values[int(key)] = value
        if sorted(values) != sorted(order):
            raise _fail(path, f"coordinate id {i}", f"must give a value for each of the {len(order)} parameters")
        coordinates[i] = tuple(values[k] for k in order)
    out = Collector(path, list(parameters.values()))
    entries = doc.get("measurements")
    if not isinstance(entries, list):
        raise _fail(path, "'measurements'", "must be a list of measured values")
    for n, entry in enumerate(entries, start=1):
        ids = [number(entry.get(k)) if isinstance(entry, dict) else None
               for k in ("coordinate_id", "callpath_id", "metric_id")]
        value = number(entry.get("value")) if isinstance(entry, dict) else None
        if value is None or None in ids or int(ids[0]) not in coordinates or int(ids[1]) not in callpaths \
                or int(ids[2]) not in metrics:
            raise _fail(path, f"measurement {n}", "needs a numeric 'value' and the ids of a known coordinate, "
                        "callpath and metric")
        out.add(callpaths[int(ids[1])], metrics[int(ids[2])], coordinates[int(ids[0])], [value])
    return out.profile()
