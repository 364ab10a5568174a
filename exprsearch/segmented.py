"""A series' segments' laws (``run --segments`` writes one per segment) read as one law of the
target, for ``predict``, ``optimize`` and ``plot``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .law import Law, load


@dataclass(frozen=True)
class Segmented:
    """A series' segments' laws (``run --segments``), ordered along their factor, as one law of
    the target: each configuration by the law of its segment, a value between two segments by
    the nearer (the edge is halfway). What ``predict`` and ``optimize`` ask of a law."""

    laws: tuple[Law, ...]

    @classmethod
    def of(cls, laws) -> Segmented:
        """The segments' ``laws`` in any order, put in order along their factor."""
        return cls(tuple(sorted(laws, key=lambda law: law.dataset["segment"]["from"])))

    @property
    def factor(self) -> str:
        return self.laws[0].dataset["segment"]["factor"]

    @property
    def edges(self) -> list[float]:
        spans = [law.dataset["segment"] for law in self.laws]
        return [(below["to"] + above["from"]) / 2 for below, above in zip(spans, spans[1:])]

    @property
    def names(self) -> list[str]:
        """Each segment as run's folders name it: ``p=1..6``."""
        from .segments import name  # segments searches: imported only where a folder of them is read

        spans = [law.dataset["segment"] for law in self.laws]
        return [name("", (s["factor"], s["from"], s["to"], s["side"])) for s in spans]

    def which(self, values: np.ndarray) -> np.ndarray:
        """The segment (its index in ``laws``) of each value of the factor."""
        return np.searchsorted(self.edges, np.asarray(values, dtype=float), side="right")

    def predict(self, data: Mapping[str, object]) -> np.ndarray:
        segment = self.which(np.asarray(data[self.factor], dtype=float))
        columns = {f: np.broadcast_to(np.asarray(data[f], dtype=float), segment.shape)
                   for f in self.factors if f in data}
        out = np.full(segment.shape, np.nan)
        for k, law in enumerate(self.laws):
            rows = segment == k
            if rows.any():
                out[rows] = law.predict({f: v[rows] for f, v in columns.items()})
        return out

    def uses(self, factor: str) -> bool:
        return factor == self.factor or any(law.uses(factor) for law in self.laws)

    def durations(self, predicted: np.ndarray, work: float | None = None) -> np.ndarray | None:
        return self.laws[0].durations(predicted, work)

    @property
    def target(self) -> str:
        return self.laws[0].target

    @property
    def factors(self) -> tuple[str, ...]:
        return self.laws[0].factors

    @property
    def rate(self) -> bool:
        return self.laws[0].rate

    @property
    def held(self) -> dict[str, float]:
        return self.laws[0].held

    @property
    def domain(self) -> dict[str, list[float]]:
        """Each factor's measured range over all segments."""
        spans = [law.domain for law in self.laws]
        return {f: [min(d[f][0] for d in spans), max(d[f][1] for d in spans)] for f in spans[0]
                if all(f in d for d in spans)}

    @property
    def dataset(self) -> dict:
        """The data's record, without the one segment's range."""
        return {k: v for k, v in self.laws[0].dataset.items() if k != "segment"}

    @property
    def search(self) -> dict:
        return {}


def segment_laws(path: str | Path) -> Segmented | None:
    """The laws of one series' segments, where ``path`` is the folder ``run --segments`` wrote them
    to (each in a folder of its own); None where it is anything else."""
    path = Path(path)
    if not path.is_dir() or (path / "law.json").is_file():
        return None
    laws = [load(f) for f in sorted(path.iterdir()) if (f / "law.json").is_file()]
    segments = [law.dataset.get("segment") for law in laws]
    if len(laws) < 2 or not all(segments) or len({s["factor"] for s in segments}) != 1:
        return None
    series = {(json.dumps(law.dataset.get("group"), sort_keys=True), law.dataset.get("series"), law.target)
              for law in laws}
    if len(series) != 1:
        return None
    return Segmented.of(laws)
