"""What every reader returns, and the checks they share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DataError

Point = tuple[float, ...]


@dataclass(frozen=True)
class Profile:
    """Series of measurements over the same parameters: ``"callpath:metric"`` (``"callpath"`` where
    the file names no metric) → (point, repetitions)."""

    parameters: tuple[str, ...]
    series: dict[str, list[tuple[Point, list[float]]]]
    notes: tuple[str, ...] = field(default=())
    metrics: dict[str, str] = field(default_factory=dict)  # series → the metric it measures ("" where unnamed)


class Collector:
    """Gathers repetitions per series and point in first-seen order, as Extra-P does for its
    line-per-value formats, refusing names given twice and points of the wrong length."""

    def __init__(self, path: Path, parameters: list[str]):
        if not parameters:
            raise DataError(f"'{path}' names no parameters")
        if len(set(parameters)) < len(parameters):
            raise DataError(f"'{path}' names a parameter twice ({', '.join(parameters)}); give each once")
        self.path, self.parameters = path, tuple(parameters)
        self.series: dict[str, dict[Point, list[float]]] = {}
        self.metrics: dict[str, str] = {}

    def add(self, callpath: str, metric: str, point: Point, values: list[float]) -> None:
        key = series_name(callpath, metric)
        self.metrics.setdefault(key, metric)
        self.series.setdefault(key, {}).setdefault(point, []).extend(values)

    def profile(self, notes: tuple[str, ...] = ()) -> Profile:
        return Profile(self.parameters, {k: list(v.items()) for k, v in self.series.items()}, notes, self.metrics)


def series_name(callpath: str, metric: str) -> str:
    """``callpath:metric``, or the callpath alone where the file names no metric (as Extra-P does)."""
    return f"{callpath}:{metric}" if metric else callpath


def number(value: object) -> float | None:
    """``value`` as a finite float, or None where it is not a number (JSON true/false are not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        result = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return result if math.isfinite(result) else None


def numbers(items: object) -> list[float] | None:
    """A list of finite numbers, or None."""
    if not isinstance(items, list):
        return None
    out = [number(v) for v in items]
    return None if any(v is None for v in out) else out
