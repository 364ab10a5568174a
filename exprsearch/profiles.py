"""A law for every series of a profile (every callpath × metric, or every group of a table),
each found by :func:`exprsearch.search` on its own and summarised for people: the law, its errors,
and which term dominates at the largest measured configuration and at a target one, so call
paths can be ranked by how much they grow (which kernel stops scaling first)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import sympy

from .compile import to_function
from .data import Dataset
from .errors import ExprsearchError
from .executor import Executor, InProcess
from .export import rounded_text
from .grammar import Grammar
from .law import Law
from .search import SearchSettings, search
from .vocabulary import to_readable


@dataclass(frozen=True)
class SeriesLaw:
    """One series' law and what it says at the largest measured and at the target configuration."""

    series: str
    law: str = ""
    complexity: int = 0
    constants: int = 0
    mape_pct: float | None = None
    cv_mape_pct: float | None = None
    largest: dict[str, float] = field(default_factory=dict)
    predicted_largest: float | None = None
    dominant_largest: str = ""
    at: dict[str, float] = field(default_factory=dict)
    predicted_at: float | None = None
    dominant_at: str = ""
    growth: float | None = None
    notes: tuple[str, ...] = ()
    error: str = ""
    law_json: str = ""

    @property
    def data_notes(self) -> list[str]:
        """What reading the series' data noticed (a stalled run, rows dropped), as its law.json keeps it."""
        return json.loads(self.law_json)["dataset"].get("notes", []) if self.law_json else []


@dataclass(frozen=True)
class _Job:
    name: str
    dataset: Dataset
    grammar: str | Grammar
    settings: SearchSettings
    at: dict[str, float]
    scale: float


def model_series(job: _Job) -> SeriesLaw:
    """Search one series' law; a series that cannot be modelled gets its reason, not an exception."""
    try:
        result = search(job.dataset, grammar=job.grammar, settings=replace(job.settings, jobs=1))
    except ExprsearchError as exc:
        return SeriesLaw(job.name, error=str(exc))
    law = result.law
    largest = {f: float(job.dataset.column(f).max()) for f in job.dataset.factors}
    at = {f: job.at.get(f, job.scale * largest[f]) for f in law.factors}
    (value_largest, term_largest), (value_at, term_at) = _dominant(law, [largest, at])
    return SeriesLaw(
        job.name, f"{law.target} = {rounded_text(law)}", law.complexity, len(law.constants),
        law.metrics.get("mape_pct"), law.metrics.get("cv_mape_pct"), largest, value_largest, term_largest,
        at, value_at, term_at, value_at / value_largest if value_largest > 0 else None, result.notes,
        law_json=law.to_json(),
    )


def _dominant(law: Law, configs: list[Mapping[str, float]]) -> list[tuple[float, str]]:
    """At each configuration, the law's value and its largest term there, as text. Each term is
    compiled with its constants as parameters: the series of a profile share their laws' forms,
    so one compiled form serves them all."""
    columns = [np.array([c[f] for c in configs], dtype=float) for f in law.factors]
    templates = sympy.Add.make_args(law.template)
    values = np.empty((len(templates), len(configs)))
    for i, template in enumerate(templates):
        params = sorted((s for s in template.free_symbols if s.name in law.constants), key=lambda s: s.name)
        function = to_function(template, law.factors, params)
        values[i] = np.broadcast_to(function(columns, [np.array([law.constants[s.name]]) for s in params]),
                                    (len(configs),))
    terms = [term for _, term in law.terms()]
    out = []
    for j in range(len(configs)):
        largest = int(np.argmax(values[:, j]))
        total = float(values[:, j].sum())
        out.append((total, f"{to_readable(terms[largest], 4)} ({100 * values[largest, j] / total:.0f} %)"))
    return out


def model_profile(
    series: Mapping[str, Dataset], grammar: str | Grammar = "default", settings: SearchSettings | None = None,
    at: Mapping[str, float] | None = None, scale: float = 2.0, executor: Executor | None = None,
    progress: Callable[[SeriesLaw], None] | None = None,
) -> Iterator[SeriesLaw]:
    """Each series' :class:`SeriesLaw`, in the order they finish (``progress`` is told of each).
    Factors missing from ``at`` are taken at ``scale`` × their largest measured value."""
    settings = settings or SearchSettings()
    jobs = [_Job(name, data, grammar, settings, dict(at or {}), scale) for name, data in series.items()]
    executor = executor or InProcess()
    for _, result in executor.run(model_series, jobs):
        if progress is not None:
            progress(result)
        yield result


COLUMNS = ("series", "law", "complexity", "constants", "mape_pct", "cv_mape_pct", "predicted_largest",
           "dominant_largest", "predicted_at", "dominant_at", "growth", "error", "notes")


def ranked(rows: list[SeriesLaw]) -> list[SeriesLaw]:
    """Modelled series by predicted growth from the largest measured to the target configuration,
    fastest-growing first; then the ones that could not be modelled, by name."""
    good = sorted((r for r in rows if not r.error), key=lambda r: (-(r.growth or 0), r.series))
    return good + sorted((r for r in rows if r.error), key=lambda r: r.series)


def summary_csv(rows: list[SeriesLaw]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in ranked(rows):
        writer.writerow(["" if getattr(r, c) is None else
                         f"{getattr(r, c):.6g}" if isinstance(getattr(r, c), float) else
                         "; ".join(getattr(r, c)) if isinstance(getattr(r, c), tuple) else getattr(r, c)
                         for c in COLUMNS])
    return out.getvalue()


def summary_json(rows: list[SeriesLaw], context: Mapping[str, object]) -> str:
    """``{"context": …, "series": [...]}`` ranked as :func:`ranked`; each law's own law.json
    content under ``law``."""
    records = []
    for r in ranked(rows):
        record = {k: v for k, v in asdict(r).items() if k != "law_json"}
        record["notes"] = list(r.notes)
        record["law_json"] = json.loads(r.law_json) if r.law_json else None
        records.append(record)
    return json.dumps({"context": dict(context), "series": records}, indent=2) + "\n"


def from_summary(text: str) -> tuple[dict, list[SeriesLaw]]:
    """The context and rows of a laws.json written by :func:`summary_json` (to resume a stopped run)."""
    try:
        doc = json.loads(text)
        context, records = dict(doc["context"]), list(doc["series"])
    except (ValueError, KeyError, TypeError):
        raise ExprsearchError("laws.json is not a summary written by exprsearch profile; use another --out") from None
    rows = []
    for record in records:
        law = record.pop("law_json")
        record["notes"] = tuple(record.get("notes", ()))
        rows.append(SeriesLaw(**record, law_json=json.dumps(law, indent=2) + "\n" if law else ""))
    return context, rows
