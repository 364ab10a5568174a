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

from . import segments
from .compile import to_function
from .data import Dataset
from .errors import ExprsearchError
from .executor import Executor, InProcess
from .export import rounded_text
from .grammar import Grammar
from .identify import LEFT_OUT
from .law import Law
from .roles import target_kind as kind_of
from .search import SearchSettings, search
from .segments import grammar_for
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
    rate: bool = False  # the target is a rate (higher is better): its growth is good news, not bad

    @property
    def slowdown(self) -> float | None:
        """How much a run's time grows to the target configuration: the growth of a time, the
        inverse growth of a rate; what the ranking orders by, so that times and rates rank alike."""
        if self.growth is None or not self.rate:
            return self.growth
        return 1 / self.growth if self.growth > 0 else float("inf")

    @property
    def blind(self) -> bool:
        """Whether the law leaves out a factor the data vary, for want of configurations to fit a law
        that holds it (its growth along that factor is not measured)."""
        return any(n.startswith(LEFT_OUT) for n in self.notes)

    @property
    def target_kind(self) -> str:
        return "" if self.error else "rate" if self.rate else "time"

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
    target_kind: str = ""  # "time" or "rate" as the user says; "" reads it from the target's name
    mapping: dict[str, str] = field(default_factory=dict)  # grammar factor -> column, as run's --map
    intrinsic: tuple[str, ...] = ()
    segments: str | None = None  # run's --segments: a series that changes regime is ranked by its last segment


def model_series(job: _Job) -> SeriesLaw:
    """Search one series' law (with ``job.segments``, that of the segment above its change of regime,
    where it has one); a series that cannot be modelled gets its reason, not an exception."""
    try:
        dataset, said = _last_segment(job) if job.segments else (job.dataset, ())
        # the law above a change of regime searched as run searches it; any other in the grammar as written
        result = search(dataset, grammar=grammar_for(job.grammar, dataset), mapping=job.mapping, intrinsic=job.intrinsic,
                        settings=replace(job.settings, jobs=1))
    except ExprsearchError as exc:
        return SeriesLaw(job.name, error=str(exc))
    return _summary(job, result, said)


def _last_segment(job: _Job) -> tuple[Dataset, tuple[str, ...]]:
    """The series' rows above its change of regime along ``job.segments`` where two laws explain
    them much better than one (:mod:`exprsearch.segments`), with a note of what was found."""

    searcher = segments.Remembering(segments.Searcher(job.grammar, job.mapping, job.intrinsic,
                                                      replace(job.settings, jobs=1)))
    try:
        split = segments.find(job.dataset, job.segments, searcher)
    except ExprsearchError as exc:  # too few values of the factor to split: one law, as run fits it
        return job.dataset, (f"{exc}; one law is fitted",)
    if not split.chosen:
        return job.dataset, (split.note(),)
    below, above = segments.parts(job.dataset, split)
    law = searcher(below)
    return above, (f"{split.note()}; the law below it ({segments.name('', below.segment)}) is "
                   f"{law.target} = {rounded_text(law)}, and the law here is that above it, which holds at the "
                   "largest measured configuration",)


def _summary(job: _Job, result, said: tuple[str, ...]) -> SeriesLaw:
    law = result.law
    law = replace(law, target_kind=kind_of(law.target, job.target_kind))
    largest = {f: float(job.dataset.column(f).max()) for f in job.dataset.factors}
    at = {f: job.at.get(f, job.scale * largest[f]) for f in law.factors}
    (value_largest, term_largest), (value_at, term_at) = _dominant(law, [largest, at])
    return SeriesLaw(
        job.name, f"{law.target} = {rounded_text(law)}", law.complexity, len(law.constants),
        law.metrics.get("mape_pct"), law.metrics.get("cv_mape_pct"), largest, value_largest, term_largest,
        at, value_at, term_at, value_at / value_largest if value_largest > 0 else None, said + result.notes,
        law_json=law.to_json(), rate=law.rate,
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
    progress: Callable[[SeriesLaw], None] | None = None, target_kind: str = "",
    mapping: Mapping[str, str] | None = None, intrinsic: tuple[str, ...] = (), segments: str | None = None,
) -> Iterator[SeriesLaw]:
    """Each series' :class:`SeriesLaw`, in the order they finish (``progress`` is told of each).
    Factors missing from ``at`` are taken at ``scale`` × their largest measured value; each target
    is a time or a rate as ``target_kind`` says, or as its name reads where it is "". ``mapping``
    and ``intrinsic`` bind the grammar's factors to every series' columns, as in :func:`search`;
    with ``segments`` (a factor), a series whose times change regime along it is modelled by the
    segment above the change (run's --segments)."""
    settings = settings or SearchSettings()
    jobs = [_Job(name, data, grammar, settings, dict(at or {}), scale, target_kind, dict(mapping or {}), intrinsic,
                 segments) for name, data in series.items()]
    executor = executor or InProcess()
    for _, result in executor.run(model_series, jobs):
        if progress is not None:
            progress(result)
        yield result


COLUMNS = ("series", "law", "complexity", "constants", "mape_pct", "cv_mape_pct", "predicted_largest",
           "dominant_largest", "predicted_at", "dominant_at", "growth", "target_kind", "error", "notes")


def check_binding(series: Mapping[str, Dataset], grammar: str | Grammar, mapping: Mapping[str, str] | None = None,
                  intrinsic: tuple[str, ...] = ()) -> None:
    """Raise the grammar's own error where it cannot be read, or cannot be bound to any series'
    factors with ``mapping`` and ``intrinsic``: one answer for the options before a profile is
    modelled, rather than the same failure for every series. A grammar that binds to some series
    only is left to fail on the others, each with its reason."""
    from . import grammar as _grammar

    loaded = grammar if isinstance(grammar, Grammar) else _grammar.load(grammar)
    first = None
    for factors in dict.fromkeys(d.factors for d in series.values()):
        try:
            _grammar.bind(loaded, factors, dict(mapping or {}), intrinsic)
            return
        except ExprsearchError as exc:
            first = first or exc
    if first is not None:
        raise first


def ranked(rows: list[SeriesLaw]) -> list[SeriesLaw]:
    """Modelled series by how much a run's time grows from the largest measured to the target
    configuration (a rate's growth inverted), the series that scale worst first; then those whose
    law leaves out a factor for want of configurations; then the ones that could not be modelled,
    by name."""
    good = sorted((r for r in rows if not r.error), key=lambda r: (r.blind, -(r.slowdown or 0), r.series))
    return good + sorted((r for r in rows if r.error), key=lambda r: r.series)


def growth_along(rows: list[SeriesLaw], factor: str | None = None, end: float | None = None,
                 relative: bool = True) -> tuple[str, np.ndarray, list[tuple[str, np.ndarray]]] | None:
    """Each series' growth along one factor, relative to its law at its largest measured values
    (the other factors held there), from the factor's smallest measured value to ``end`` (default:
    its target value in the ranking): what the ranking's growth is, drawn (``relative`` False: the
    laws' own values, as a table of phases stacks them). ``factor`` defaults to the one most
    series' laws use, of the widest measured range; series whose law leaves it out grow by 1×.
    None where no series' law uses a factor."""
    laws = [(r, Law.from_json(r.law_json)) for r in rows if r.law_json and not r.error]
    used = [f for _, law in laws for f in law.factors if law.uses(f)]
    if not used:
        return None
    if factor is None:
        factor = max(sorted(set(used)), key=lambda f: (used.count(f), max(
            law.domain[f][1] / max(law.domain[f][0], 1e-300) for _, law in laws if f in law.domain)))
    low = min(law.domain[factor][0] for _, law in laws if factor in law.domain)
    end = end if end is not None else max(r.at.get(factor, 0.0) for r, _ in laws) or \
        max(law.domain[factor][1] for _, law in laws if factor in law.domain)
    x = np.geomspace(low, end, 80) if low > 0 else np.linspace(low, end, 80)
    curves = []
    for row, law in laws:
        base = {f: row.largest.get(f, law.domain.get(f, [1.0, 1.0])[1]) for f in law.factors}
        at_base = float(law.predict({f: np.array([v]) for f, v in base.items()})[0])
        with np.errstate(all="ignore"):
            y = law.predict({f: (x if f == factor else np.full_like(x, v)) for f, v in base.items()}) / \
                (at_base if relative else 1.0)
        curves.append((row.series, np.broadcast_to(np.asarray(y, dtype=float), x.shape).copy()))
    return factor, x, curves


def ranked_by(rows: list[SeriesLaw]) -> str:
    """What :func:`ranked` orders by, in words fitting the kinds of target among ``rows``."""
    kinds = {r.rate for r in rows if not r.error}
    if kinds == {True}:
        return "how little their rate grows (the series that scale worst first)"
    if kinds == {False, True}:
        return "how much a run's time grows (for a rate, how little it grows)"
    return "predicted growth"


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
