"""``search()``: the whole pipeline, one stage call after another."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__
from . import candidates as _candidates
from . import data as _data
from . import grammar as _grammar
from . import rank as _rank
from .candidates import Candidate, CandidateSet
from .compile import Compiler
from .errors import SearchError
from .fit import Fit, FitSettings, cross_validate, fit
from .law import Law

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Result:
    """What a search found: the chosen law, the front it was chosen from, and what was tried."""

    law: Law
    ranking: _rank.Ranking
    dataset: _data.Dataset
    grammar: _grammar.Grammar
    candidates: CandidateSet
    fitted: int
    rejected: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def search(
    data: str | Path | pd.DataFrame | _data.Dataset,
    target: str | None = None,
    grammar: str | Path | _grammar.Grammar = "default",
    *,
    factors: list[str] | None = None,
    mapping: dict[str, str] | None = None,
    intrinsic: tuple[str, ...] = (),
    seed: int = 0,
    settings: FitSettings | None = None,
    progress: Progress | None = None,
) -> Result:
    """Find the law of ``target`` in ``data`` among the candidates ``grammar`` derives."""
    settings = settings or FitSettings(seed=seed)
    dataset = _as_dataset(data, target, factors)
    bound = _grammar.bind(_as_grammar(grammar), dataset.factors, mapping, tuple(intrinsic))
    found = _candidates.generate(bound)
    usable, skipped = _identifiable(found, dataset)
    compiler = Compiler(dataset.factors, dataset.X)
    fits = _fit_all(usable, compiler, dataset.y, settings, progress)
    ranking = _rank_front(fits, found, compiler, dataset, settings)
    law = _law(ranking, dataset, bound, settings.seed)
    rejected = Counter(skipped)
    rejected.update(_reason_kind(f.reason) for f in fits if not f.ok)
    notes = dataset.notes + _domain_notes(dataset)
    return Result(law, ranking, dataset, bound, found, len(fits), dict(rejected), notes)


def _as_dataset(data, target: str | None, factors: list[str] | None) -> _data.Dataset:
    if isinstance(data, _data.Dataset):
        return data
    if target is None:
        raise SearchError("pass target=, the column holding the measured time")
    if isinstance(data, pd.DataFrame):
        return _data.from_frame(data, target, factors)
    return _data.load_table(data, target, factors)


def _as_grammar(grammar: str | Path | _grammar.Grammar) -> _grammar.Grammar:
    return grammar if isinstance(grammar, _grammar.Grammar) else _grammar.load(grammar)


def _identifiable(found: CandidateSet, dataset: _data.Dataset) -> tuple[list[Candidate], list[str]]:
    """Candidates with fewer constants than distinct configurations, so a misfit can show."""
    configurations = len(np.unique(dataset.configurations()))
    usable = [c for c in found.candidates if c.n_constants < configurations]
    if not usable:
        fewest = min(c.n_constants for c in found.candidates)
        raise SearchError(
            f"the data have {configurations} distinct configuration(s) but the simplest candidate "
            f"needs {fewest} constants; measure more "
            "configurations (at least one more than the law's constants) or use a grammar with fewer terms"
        )
    skipped = len(found) - len(usable)
    return usable, ["with as many constants as distinct configurations"] * skipped


def _fit_all(
    usable: list[Candidate], compiler: Compiler, y: np.ndarray, settings: FitSettings,
    progress: Progress | None,
) -> list[Fit]:
    fits = []
    for i, candidate in enumerate(usable):
        fits.append(fit(compiler.compile(candidate), y, settings))
        if progress is not None:
            progress(i + 1, len(usable))
    if not any(f.ok for f in fits):
        reasons = Counter(_reason_kind(f.reason) for f in fits).most_common(2)
        raise SearchError(
            "every candidate was rejected (" + "; ".join(f"{n}× {r}" for r, n in reasons)
            + "); check the factors' values or choose another grammar"
        )
    return fits


def _rank_front(
    fits: list[Fit], found: CandidateSet, compiler: Compiler, dataset: _data.Dataset,
    settings: FitSettings,
) -> _rank.Ranking:
    pure = _rank.noise(dataset.y, dataset.configurations())
    space = _rank.space_sizes([c.n_constants for c in found.candidates])
    folds = _folds(dataset, settings.seed)
    scored = []
    for f in _rank.pareto_front(fits):
        compiled = compiler.compile(f.candidate)
        predicted = _predictions(f, dataset)
        cv = cross_validate(compiled, dataset.y, f, folds, settings)
        scored.append(_rank.score(f, dataset.y, predicted, cv, space, pure))
    return _rank.select(scored, pure)


def _predictions(f: Fit, dataset: _data.Dataset) -> np.ndarray:
    law = Law(dataset.target, dataset.factors, f.candidate.template, f.values, 0)
    return law.predict({name: dataset.column(name) for name in dataset.factors})


def _folds(dataset: _data.Dataset, seed: int, k: int = 5) -> np.ndarray:
    """Fold of each row; repetitions of a configuration always share a fold."""
    configurations = dataset.configurations()
    count = int(configurations.max()) + 1
    order = np.random.default_rng(seed).permutation(count)
    return (order % min(k, count))[configurations]


def _law(ranking: _rank.Ranking, dataset: _data.Dataset, grammar: _grammar.Grammar, seed: int) -> Law:
    chosen = ranking.law
    candidate = chosen.fit.candidate
    metrics = {
        "mape_pct": chosen.mape, "cv_mape_pct": chosen.cv_mape, "rmse": chosen.rmse,
        "r2": chosen.r2, "extended_bic": chosen.ebic, "lack_of_fit_p": chosen.lack_of_fit_p,
        "noise_sd_pct": None if ranking.noise.relative_sd is None else 100 * ranking.noise.relative_sd,
        "rows": dataset.n_rows,
    }
    return Law(
        target=dataset.target,
        factors=dataset.factors,
        template=candidate.template,
        constants=dict(chosen.fit.values),
        complexity=candidate.complexity,
        metrics={k: (round(v, 12) if isinstance(v, float) else v) for k, v in metrics.items()},
        domain={f: [float(dataset.column(f).min()), float(dataset.column(f).max())] for f in dataset.factors},
        grammar={"name": grammar.name, "sha256": grammar.sha256},
        dataset={"path": dataset.path, "sha256": dataset.sha256},
        selection=ranking.rule,
        seed=seed,
        version=__version__,
        labels=_candidates.term_labels(grammar, candidate.template),
    )


def _reason_kind(reason: str) -> str:
    return reason.split(" at data rows")[0].split(" is undefined")[0].replace("term ", "undefined term ")


def _domain_notes(dataset: _data.Dataset) -> tuple[str, ...]:
    notes = []
    for name in dataset.factors:
        rows = np.flatnonzero(dataset.column(name) <= 0)
        if rows.size:
            shown = ", ".join(str(r + 1) for r in rows[:5])
            notes.append(
                f"factor '{name}' is zero or negative at data rows {shown}: candidates that take "
                "its log, square root or a negative power were skipped there"
            )
    return tuple(notes)
