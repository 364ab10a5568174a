"""Extra-P's line-per-value formats: JSON Lines (``{"params": {...}, "callpath": ..., "metric":
..., "value": ...}``) and Talpas (the same with ``"parameters"`` and ``;`` between fields). As in
Extra-P, a missing callpath is ``<root>`` and a missing metric ``<default>`` in JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DataError
from .profile import Collector, Profile, number, numbers


def read(path: Path) -> Profile:
    return _read(path, "params", talpas=False)


def read_talpas(path: Path) -> Profile:
    return _read(path, "parameters", talpas=True)


def _read(path: Path, key: str, talpas: bool) -> Profile:
    out: Collector | None = None
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        where = f"'{path}', line {n}"
        try:
            record = json.loads(line.replace(";", ",") if talpas else line)
        except (json.JSONDecodeError, RecursionError) as exc:
            at = f", column {exc.colno}" if hasattr(exc, "colno") else ""
            raise DataError(f"{where}{at} is not JSON ({exc.msg if hasattr(exc, 'msg') else exc}); each line holds "
                            f"one object, {{\"{key}\": {{…}}, \"value\": …}}") from None
        if not isinstance(record, dict) or not isinstance(record.get(key), dict):
            raise DataError(f"{where} needs \"{key}\": {{name: value, ...}}")
        point = record[key]
        if out is None:
            out = Collector(path, [str(p) for p in point])
        if sorted(point) != sorted(out.parameters):
            raise DataError(f"{where} gives parameters {', '.join(point)}; the first line gave "
                            f"{', '.join(out.parameters)}")
        coordinates = tuple(number(point[p]) for p in out.parameters)
        raw = record.get("value")
        values = numbers(raw) if isinstance(raw, list) else [number(raw)]
        if None in coordinates or not values or None in values:
            raise DataError(f"{where} needs numeric parameter values and a \"value\" that is a number or a list "
                            "of numbers")
        callpath = record.get("callpath", None if talpas else "<root>")
        metric = record.get("metric", None if talpas else "<default>")
        if not isinstance(callpath, str) or not isinstance(metric, str):
            raise DataError(f"{where} needs \"callpath\" and \"metric\" as text")
        out.add(callpath, metric, coordinates, values)
    if out is None:
        raise DataError(f"'{path}' holds no measurements")
    return out.profile()
