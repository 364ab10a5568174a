"""``search()``: the whole pipeline, one stage call after another."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from threadpoolctl import threadpool_limits

from . import __version__
from . import candidates as _candidates
from . import data as _data
from . import front as _front
from . import grammar as _grammar
from . import plausible as _plausible
from . import rank as _rank
from .assess import cross_validate, holdouts, predictions, t_values
from .candidates import CandidateSet
from .compile import Compiler
from .errors import FewConfigurations, SearchError, SettingsError, number, whole
from .executor import check_scheduler
from .fit import Fit, FitSettings, verify
from .identify import (
    ShapeRule,
    barely_tested_notes,
    identifiable,
    limit_notes,
    limits,
    unpinned_notes,
    unpinned_record,
)
from .intercept import free_where_growing
from .law import Law
from .refine import Fitted, Progress, fit_all
from .screen import DataScreen, ScreenSettings
from .uncertainty import Bootstrap, bootstrap

if TYPE_CHECKING:
    import pandas as pd

VALIDATIONS = ("largest", "kfold")
STRATEGIES = ("auto", "exhaustive")
MAX_RESAMPLES = 10_000  # bootstrap refits: 95 % percentile intervals settle within a few thousand


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
    refined: int = 0  # candidates whose nonlinear constants were refined: polished from a grid start, or searched
    alternatives: tuple[Fit, ...] = ()  # the accepted fits of lowest BIC, for what the data leave open
    searched: int = 0  # of the refined, those differential evolution searched (no grid start to polish)


@dataclass(frozen=True)
class SearchSettings:
    """How a search runs; the defaults are those of ``exprsearch run``.

    ``jobs`` processes refine candidates (0: one per core), or ``scheduler`` (a Dask address or
    ``local:N``) sends them to a cluster; the law depends on neither.
    ``resamples`` bootstrap refits give the law's intervals (0: none). ``validation`` "largest"
    prefers laws that predict the held-out largest configurations; "kfold" uses 5-fold
    cross-validation over configurations instead. ``time_limit`` (seconds) stops the refinement
    when it runs out and keeps the best fits found so far. ``fit`` says how constants are fitted
    (seed, loss, pruning; see :class:`exprsearch.fit.FitSettings`). ``near_front``: where the data
    choose what to fit, fit only the sums that could reach the front the law is chosen from (False:
    every sum the screening formed, so that ``Result.alternatives`` holds the laws off the front
    that fit nearly as well; ``suggest`` needs them).
    """

    fit: FitSettings = field(default_factory=FitSettings)
    validation: str = "largest"
    resamples: int = 200
    jobs: int = 0
    time_limit: float | None = None
    strategy: str = "auto"
    scheduler: str | None = None  # a Dask scheduler for the refinements of a very large search
    near_front: bool = True

    def __post_init__(self) -> None:
        if self.validation not in VALIDATIONS:
            raise SettingsError(f"validation (--validation) must be one of {', '.join(VALIDATIONS)}, "
                                f"got {self.validation!r}")
        if self.strategy not in STRATEGIES:
            raise SettingsError(f"strategy (--strategy) must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}")
        if self.scheduler is not None:
            check_scheduler(self.scheduler)
        # beyond MAX_RESAMPLES the intervals do not change in their digits, and the draws alone
        # would fill memory (10**8 took 11 GB before it was stopped)
        whole("resamples (--bootstrap)", self.resamples, 0, MAX_RESAMPLES)
        whole("jobs (--jobs)", self.jobs, 0)
        if self.time_limit is not None:
            number("time_limit (--time-limit)", self.time_limit, 0.0)

    def updated(self, **options: object) -> SearchSettings:
        """A copy with ``options`` changed; each names a field of this class or of FitSettings."""
        own = {f.name for f in fields(self)} - {"fit"}
        of_fit = {f.name for f in fields(FitSettings)}
        unknown = sorted(set(options) - own - of_fit)
        if unknown:
            raise SearchError(f"unknown search option(s) {', '.join(unknown)}; the options are "
                              f"{', '.join(sorted(own | of_fit))}")
        fit_options = {k: v for k, v in options.items() if k in of_fit}
        return replace(self, fit=replace(self.fit, **fit_options),
                       **{k: v for k, v in options.items() if k in own})


def search(
    data: str | Path | pd.DataFrame | Mapping[str, object] | _data.Dataset,
    target: str | None = None,
    grammar: str | Path | _grammar.Grammar = "default",
    *,
    factors: list[str] | None = None,
    mapping: dict[str, str] | None = None,
    intrinsic: tuple[str, ...] = (),
    settings: SearchSettings | None = None,
    progress: Progress | None = None,
    where: Sequence[str] = (),
    spread: str | Sequence[str] | None = None,
    **options: object,
) -> Result:
    """Find the law of ``target`` in ``data`` (a table's path, a DataFrame, a dict of columns or a
    Dataset) among the candidates ``grammar`` derives; ``where`` keeps a table's rows that meet its
    conditions (``["framework=PyTorch", "gpus<=8"]``, as the CLI's ``--where``); ``spread`` names
    the columns of the runs' standard deviation and count where each row summarises runs
    (``("ttt_std", "n_runs")``, as ``--spread``): the noise the selection's rule tests against.

    ``options`` change single settings: ``search(frame, "time", seed=3, resamples=0,
    loss="huber")``; see :class:`SearchSettings` and :class:`exprsearch.fit.FitSettings`.
    """
    settings = (settings or SearchSettings()).updated(**options)  # validated on construction
    # One BLAS thread: the matrices are small, so threads only contend (with each other and with
    # the process pool), and the sums come out in the same order on every machine.
    with threadpool_limits(1, user_api="blas"):
        return _search(_data.as_dataset(data, target, factors, where, spread), grammar, mapping, intrinsic, settings,
                       progress)


def _search(dataset: _data.Dataset, grammar, mapping, intrinsic, settings: SearchSettings,
             progress: Progress | None) -> Result:
    deadline = None if settings.time_limit is None else time.monotonic() + settings.time_limit
    bound = _grammar.bind(_as_grammar(grammar), dataset.factors, mapping, tuple(intrinsic))
    compiler = Compiler(dataset.factors, dataset.X)
    shapes = ShapeRule(compiler)
    found = _candidates.generate(bound, _strategy(settings, bound, compiler, dataset, shapes))
    configurations = dataset.configurations()
    try:
        usable, skipped = identifiable(found.candidates, configurations, shapes)
    except FewConfigurations as exc:  # which data, measured where: what to measure more of
        raise FewConfigurations(f"{dataset.measured()}: {exc}") from None
    fitted = fit_all(usable, compiler, dataset.y, settings.fit, progress, _jobs(settings.jobs), deadline,
                      found.guesses, settings.scheduler)
    fits = _some_accepted(_verify_front(fitted.fits, compiler, dataset.y, settings.fit, shapes.order))
    fits = free_where_growing(fits, compiler, dataset.y, settings.fit,
                              {c.name for c in bound.constants if c.negative_if_growing})
    ranking = _rank_front(fits, found, compiler, dataset, settings.fit, settings.validation, shapes.order)
    spread = _bootstrap(ranking.law.fit, compiler, dataset, settings.resamples, settings.fit)
    unpinned = unpinned_record(ranking.law.fit.candidate.terms, shapes)
    alternatives = _rank.alternatives(fits, dataset.n_rows)
    bounds = limits(found.candidates, usable, dataset.factors)
    searched = {**_searched(found, fitted, skipped, ranking.law.fit), **({"unpinned": unpinned} if unpinned else {}),
                **bounds,
                **_plausible.record(ranking, alternatives, dataset.n_rows)}
    law = _law(ranking, dataset, bound, settings.fit.seed, spread, found, searched)
    rejected = Counter(skipped) + Counter(found.rejected)
    rejected.update(_reason_kind(f.reason) for f in fits if not f.ok)
    absent = tuple(f"grammar factor '{name}' is not in the data: taken as {value:g} throughout"
                   for name, value in bound.fixed.items())
    notes = (dataset.notes + absent + _domain_notes(dataset) + _space_notes(found)
             + _time_notes(fitted, settings.time_limit) + unpinned_notes(unpinned, law.domain)
             + limit_notes(bounds, configurations, bound.name)
             + barely_tested_notes(len(law.constants), len(np.unique(configurations)), len(fitted.fits), law.target))
    return Result(law, ranking, dataset, bound, found, len(fits), dict(rejected), notes, fitted.refined,
                  alternatives, fitted.searched)


def _strategy(settings: SearchSettings, bound: _grammar.Grammar, compiler: Compiler, dataset: _data.Dataset,
              shapes: ShapeRule) -> DataScreen | None:
    if settings.strategy == "exhaustive":
        return None
    screen = ScreenSettings() if settings.near_front else ScreenSettings(margin=None)
    return DataScreen(compiler, dataset.y, {c.name: (c.min, c.max) for c in bound.constants}, screen, shapes,
                      dataset.noise)


def _space_notes(found: CandidateSet) -> tuple[str, ...]:
    """What the search did not fit one by one: screened parts, and anything a limit cut."""
    notes = [f"the space holds {found.size:,} laws; the data chose what to fit: " + "; ".join(found.screened)
             ] if found.screened else []
    for reason, count in found.dropped.items():
        what = "candidate" if count == 1 else "candidates"
        notes.append(f"not searched: {count:,} {what}: {reason}; raise the grammar's [limits] to search them")
    return tuple(notes)


def _jobs(jobs: int) -> int:
    return jobs or os.cpu_count() or 1


def _as_grammar(grammar: str | Path | _grammar.Grammar) -> _grammar.Grammar:
    return grammar if isinstance(grammar, _grammar.Grammar) else _grammar.load(grammar)


def _some_accepted(fits: list[Fit]) -> list[Fit]:
    if not any(f.ok for f in fits):
        reasons = Counter(_reason_kind(f.reason) for f in fits).most_common(2)
        raise SearchError(
            "every candidate was rejected (" + "; ".join(f"{n}× {r}" for r, n in reasons)
            + "); check the factors' values or choose another grammar"
        )
    return fits


def _verify_front(fits: list[Fit], compiler: Compiler, y: np.ndarray, settings: FitSettings,
                  order: Callable[[Fit], tuple[float, ...]]) -> list[Fit]:
    """Refit the front's laws one by one, checking their predictions, until the front is made of
    checked laws only (a batched fit may predict a negative time somewhere)."""
    fits = list(fits)
    where = {id(f): i for i, f in enumerate(fits)}
    checked: set[int] = set()
    while True:
        pending = [f for f in _front.pareto_front(fits, order, len(y)) if id(f) not in checked]
        if not pending:
            return fits
        for f in pending:
            again = verify(compiler.compile(f.candidate), y, f, settings)
            i = where.pop(id(f))
            fits[i] = again
            where[id(again)] = i
            checked.add(id(again))


def _time_notes(fitted: Fitted, time_limit: float | None) -> tuple[str, ...]:
    if not (fitted.unfinished or fitted.unfitted):
        return ()
    return (f"stopped at the time limit of {time_limit:g} s: {fitted.unfinished} candidate(s) kept their "
            f"grid fit without refinement and {fitted.unfitted} were not fitted; the law is the best "
            "found so far (raise --time-limit for the full search)",)


def _largest_values(dataset: _data.Dataset) -> list[np.ndarray]:
    """For each factor measured at three or more values, the rows to hold out for an extrapolation
    check: its top octave (values above half its largest), so that the check extrapolates by up
    to 2x, as predictions beyond the data do; its largest value alone where the octave would
    leave fewer than three values (or rows) to fit on, or the factor is not positive. A largest
    value just above the next (p = 58 after 50) checked little more than interpolation, and
    over-fitted laws passed it."""
    masks = []
    for name in dataset.factors:
        column = dataset.column(name)
        top = column == column.max()
        octave = column > column.max() / 2 if column.min() > 0 else top
        if len(np.unique(column[~octave])) >= 3 and (~octave).sum() >= 3:
            top = octave
        if len(np.unique(column)) >= 3 and (~top).sum() >= 3:
            masks.append(top)
    return masks


def _rank_front(
    fits: list[Fit], found: CandidateSet, compiler: Compiler, dataset: _data.Dataset,
    settings: FitSettings, validation: str, order: Callable[[Fit], tuple[float, ...]],
) -> _rank.Ranking:
    configurations = dataset.configurations()
    pure = _rank.noise(dataset.y, configurations, dataset.noise)
    space = _rank.space_sizes(found.space)
    folds = _folds(dataset, settings.seed)
    tops = _largest_values(dataset)
    front = _front.pareto_front(fits, order, dataset.n_rows)
    compiled = [compiler.compile(f.candidate) for f in front]
    held = holdouts(compiled, dataset.y, front, tops, settings, compiler, configurations)
    scored = []
    for f, c, h in zip(front, compiled, held):
        cv = cross_validate(c, dataset.y, f, folds, settings)
        missed = _rank.lack_of_fit_p(f.mse, dataset.n_rows, f.candidate.n_constants, pure)
        weakest = _weakest(c, dataset.y, f, settings,
                           configurations if missed is not None and missed < _rank.ALPHA else None)
        scored.append(_rank.score(f, dataset.y, predictions(c, f), cv, space, pure, h, weakest))
    return _rank.select(scored, pure, robust=settings.loss != "squared", validation=validation,
                        n_rows=len(dataset.y))


def _weakest(compiled, y: np.ndarray, f: Fit, settings: FitSettings,
             configurations: np.ndarray | None) -> float | None:
    """The smallest |t| of the coefficients of the terms that vary with the factors (against the
    law's misfit of the ``configurations``, where given: it misses them by more than their noise)."""
    varying = [i for i, t in enumerate(t for t in f.candidate.terms if t.coefficient is not None) if t.varies]
    if not varying:
        return None
    return float(np.min(t_values(compiled, y, f, settings, configurations)[varying]))


def _folds(dataset: _data.Dataset, seed: int, k: int = 5) -> np.ndarray:
    """Fold of each row; repetitions of a configuration always share a fold."""
    configurations = dataset.configurations()
    count = int(configurations.max()) + 1
    order = np.random.default_rng(seed).permutation(count)
    return (order % min(k, count))[configurations]


def _bootstrap(chosen: Fit, compiler: Compiler, dataset: _data.Dataset, resamples: int,
               settings: FitSettings) -> Bootstrap | None:
    if resamples <= 0:
        return None
    return bootstrap(compiler.compile(chosen.candidate), dataset.y, dataset.configurations(), chosen,
                     resamples, settings, compiler)


def _searched(found: CandidateSet, fitted: Fitted, skipped: list[str], chosen: Fit) -> dict:
    """What law.json records of the search: the space, what was fitted, how the data chose what
    to fit, everything a limit or the time limit left unsearched, and the chosen law's exponents
    that stopped at an end of their range."""
    not_searched = dict(found.dropped)
    limits = chosen.candidate.at_limits(chosen.values)
    if fitted.unfitted:
        not_searched["candidates not fitted before the time limit"] = fitted.unfitted
    if fitted.unfinished:
        not_searched["candidates not refined before the time limit (grid fit kept)"] = fitted.unfinished
    return {"space": found.size, "candidates": len(found), "fitted": len(fitted.fits),
            "refined": fitted.refined, "searched_by_de": fitted.searched, "screened": list(found.screened),
            "rejected": dict(sorted(Counter(skipped).items())), "not_searched": not_searched,
            **({"at_limit": {k: list(r) for k, r in limits.items()}} if limits else {})}


def _law(ranking: _rank.Ranking, dataset: _data.Dataset, grammar: _grammar.Grammar, seed: int,
         spread: Bootstrap | None, found: CandidateSet, searched: dict) -> Law:
    chosen = ranking.law
    candidate = chosen.fit.candidate
    metrics = {
        "mape_pct": chosen.mape, "cv_mape_pct": chosen.cv_mape, "holdout_mape_pct": chosen.holdout_mape,
        "rmse": chosen.rmse,
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
        # what reading the data left out or noticed (a dropped row, a stalled run), where anything
        dataset={"path": dataset.path, "sha256": dataset.sha256, **({"series": dataset.series} if dataset.series else {}),
                 **({"sheet": dataset.sheet} if dataset.sheet else {}),
                 **({"group": dict(dataset.group)} if dataset.group else {}),
                 **({"where": list(dataset.where)} if dataset.where else {}),
                 **({"drop_missing": True} if dataset.drop_missing else {}),
                 **({"drop_stray": True} if dataset.drop_stray else {}),
                 **({"steps": dataset.steps} if dataset.steps else {}),
                 **({"clock": True} if dataset.clock else {}),
                 **({"held": dict(dataset.held)} if dataset.held else {}),
                 **({"segment": dict(zip(("factor", "from", "to", "side"), dataset.segment))} if dataset.segment else {}),
                 **({"measure": dataset.measure} if dataset.measure else {}),
                 **({"spread": list(dataset.spread)} if dataset.spread else {}),
                 **({"notes": list(dataset.notes)} if dataset.notes else {})},
        selection=ranking.rule,
        seed=seed,
        version=__version__,
        labels=_candidates.term_labels(grammar, candidate.template, found.producers),
        intervals={} if spread is None else spread.intervals(),
        bootstrap=() if spread is None else tuple(
            tuple(row[spread.names.index(name)] for name in chosen.fit.values) for row in spread.samples.tolist()),
        residual_sd=0.0 if spread is None else spread.residual_sd,
        search=searched,
    )


def _reason_kind(reason: str) -> str:
    return reason.split(" at data rows")[0].split(" is undefined")[0].replace("term ", "undefined term ")


def _domain_notes(dataset: _data.Dataset) -> tuple[str, ...]:
    notes = []
    for name in dataset.factors:
        rows = np.flatnonzero(dataset.column(name) <= 0)
        if rows.size:
            notes.append(
                f"factor '{name}' is zero or negative at {dataset.rows_named(rows)}: candidates that take "
                "its log, square root or a negative power were skipped there"
            )
    return tuple(notes)
