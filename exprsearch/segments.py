"""Segments: one law below and one above a change of regime along a factor, where two laws explain
the times much better than one (as Extra-P's segmented modeler does for one parameter).

A time that follows ``p²`` up to a cache or node boundary and ``p + 30`` beyond it has no single
law in a grammar of sums; searched one law at a time on each side of every split between two
measured values of the factor, it has two. The split is kept where the two laws' Bayesian
information criterion, with the split counted as one more constant, is lower than the one law's
by :data:`EVIDENCE`; otherwise the one law stands and the run says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from .configs import setting
from .data import Dataset
from .errors import SearchError
from .executor import Executor, InProcess
from .grammar import Grammar, free_constant, load
from .law import Law
from .search import SearchSettings, search

MIN_VALUES = 3  # distinct values of the factor a segment needs: a shape to test beside a constant
EVIDENCE = 10.0  # BIC two laws must gain over one: "very strong" evidence on Kass and Raftery's scale
FLOOR = 1e-12  # mean squared relative error below which fits count as exact (noise-free data)

Fit = Callable[[Dataset], Law]  # the search of one law, without bootstrap


@dataclass(frozen=True)
class Split:
    """The best split of a dataset along ``factor``: the first segment ends at ``last``, the second
    starts at ``first``; BIC of the one law and of the two (``bic_two`` is None where no split
    left each side enough values to fit)."""

    factor: str
    last: float
    first: float
    bic_one: float
    bic_two: float | None
    tried: int
    limited: int = 0  # searches the time limit stopped before the end, whose best law so far was compared

    @property
    def chosen(self) -> bool:
        return self.bic_two is not None and self.bic_two < self.bic_one - EVIDENCE

    def note(self) -> str:
        """What the split search found, in a sentence."""
        stopped = (f"; {self.limited} of its {2 * self.tried + 1} searches stopped at the time limit, and their best "
                   "laws so far were compared" if self.limited else "")
        return self._found() + stopped

    def _found(self) -> str:
        if self.bic_two is None:
            return f"--segments {self.factor}: no split left both sides enough values of {self.factor} to fit"
        where = f"between {self.factor} = {setting(self.last)} and {setting(self.first)}"
        figures = f"BIC {self.bic_two:.1f} against {self.bic_one:.1f}, of {self.tried} split(s) tried"
        if self.chosen:
            return f"the times change regime {where}: a law for each side explains them better than one law ({figures})"
        return (f"no change of regime along {self.factor}: the best split, {where}, does not explain the times "
                f"better than one law by {EVIDENCE:g} ({figures}), so one law is fitted")


def find(dataset: Dataset, factor: str, fit: Fit, progress: Callable[[int, int], None] | None = None,
         executor: Executor | None = None) -> Split:
    """Fit one law to ``dataset``, and two to each split between consecutive values of ``factor``
    that leaves each side :data:`MIN_VALUES` values (the sides' searches on ``executor``, where
    given: ``fit`` must then pickle, as a :class:`Searcher` does); the split with the lowest BIC."""
    if factor not in dataset.factors:
        raise SearchError(f"--segments {factor}: the data have no factor {factor} (their factors: "
                          f"{', '.join(dataset.factors)})")
    column = dataset.column(factor)
    values = np.unique(column)
    if len(values) < 2 * MIN_VALUES:
        raise SearchError(f"--segments {factor}: {factor} was measured at {len(values)} value(s); two segments "
                          f"need {MIN_VALUES} each, so measure at {2 * MIN_VALUES - len(values)} more")
    n = dataset.n_rows
    one = fit(dataset)  # in this process first: its grammar's expansions are then there for every side
    bic_one = _bic(_squares(one, dataset), len(one.constants), n)
    limited = _stopped(one)
    cuts = range(MIN_VALUES, len(values) - MIN_VALUES + 1)
    jobs = []  # each split's side below, then above (which grammar_for frees)
    for cut in cuts:
        below = column < values[cut]
        above = replace(dataset.subset(~below), segment=(factor, float(values[cut]), float(values[-1]), "above"))
        jobs += [(fit, dataset.subset(below)), (fit, above)]
    scores: list[tuple[float, int] | None] = [None] * len(jobs)
    for done, (i, score) in enumerate((executor or InProcess()).run(_score, jobs), start=1):
        scores[i] = None if score is None else score[:2]
        limited += score is not None and score[2]
        if progress is not None:
            progress(done, len(jobs))
    best: tuple[float, int] | None = None
    for k, cut in enumerate(cuts):
        sides = scores[2 * k:2 * k + 2]
        if None in sides:  # a side the search cannot fit (every candidate rejected there)
            continue
        score = _bic(sum(s[0] for s in sides), sum(s[1] for s in sides) + 1, n)
        if best is None or score < best[0]:
            best = (score, cut)
    cut = best[1] if best else len(values) // 2
    return Split(factor, float(values[cut - 1]), float(values[cut]), bic_one, None if best is None else best[0],
                 len(cuts), limited)


@dataclass(frozen=True)
class Searcher:
    """The search of one law, without bootstrap, as a callable that pickles: a split's sides are
    searched in other processes."""

    grammar: Grammar | str = "default"
    mapping: dict[str, str] | None = None
    intrinsic: tuple[str, ...] = ()
    settings: SearchSettings = field(default_factory=SearchSettings)

    def __call__(self, dataset: Dataset) -> Law:
        return search(dataset, grammar=grammar_for(self.grammar, dataset), mapping=self.mapping, intrinsic=self.intrinsic,
                      settings=replace(self.settings, resamples=0)).law


class Remembering:
    """A searcher that keeps the law of each set of rows of one series it searched, so that a side
    of the chosen split (searched while choosing it) is not searched again for its law. In one
    process only: what it keeps does not travel back from other processes."""

    def __init__(self, fit: Fit) -> None:
        self.fit, self.laws = fit, {}

    def __call__(self, dataset: Dataset) -> Law:
        # the rows decide the law; the side a part records (Dataset.segment) changes only its label,
        # except above a split, where grammar_for frees the constant
        key = (dataset.X.tobytes(), dataset.y.tobytes(), bool(dataset.segment and dataset.segment[3] == "above"))
        if key not in self.laws:
            self.laws[key] = self.fit(dataset)
        return self.laws[key]


def grammar_for(grammar: Grammar | str, dataset: Dataset) -> Grammar | str:
    """The grammar ``dataset``'s law is searched in: ``grammar``, or, for the segment above a change
    of regime, ``grammar`` with the constant every law adds free to be negative
    (:func:`exprsearch.grammar.free_constant`). A regime that starts at a change (a knee: ``2·p − 2``
    above p = 6) has a negative constant, and its law need hold only from there on, where it is
    checked positive; with the constant non-negative the default grammar bent such a line into
    ``0.035·p² + 1.3·log2(p)²``, 51 % off at four times the segment's largest p. A law that starts
    at the smallest measured value (the one law, the segment below) keeps the grammar as written:
    freed there, four points below a parameter server's limit got ``−13 + 46/p² + 84/√p``."""
    if dataset.segment is None or dataset.segment[3] != "above":
        return grammar
    return free_constant(load(grammar) if isinstance(grammar, str) else grammar)


def _score(job: tuple[Fit, Dataset]) -> tuple[float, int, bool] | None:
    """A side's law's sum of squared relative errors, count of constants and whether the time limit
    stopped its search (None where the search cannot fit it): numbers travel between processes
    cheaply, sympy expressions do not."""
    fit, part = job
    try:
        law = fit(part)
    except SearchError:
        return None
    return _squares(law, part), len(law.constants), _stopped(law)


def _stopped(law: Law) -> bool:
    """Whether the time limit stopped the search that found ``law`` (law.json says what it left)."""
    return any("time limit" in reason for reason in law.search.get("not_searched", {}))


def parts(dataset: Dataset, split: Split) -> tuple[Dataset, Dataset]:
    """The two segments of ``dataset`` at ``split``, each recording the factor's range it covers
    and its side of the split (``below`` or ``above``)."""
    column = dataset.column(split.factor)
    below = column <= split.last
    said = {"below": (), "above": ("its law is searched with the constant free to be negative (a0 where the "
                                   "grammar's constant is non-negative), as a regime that starts at a change may need",)}
    return tuple(replace(dataset.subset(rows), segment=(split.factor, float(column[rows].min()),
                                                        float(column[rows].max()), side),
                         notes=dataset.notes + said[side])
                 for rows, side in ((below, "below"), (~below, "above")))  # type: ignore[return-value]


def name(base: str, segment: tuple[str, float, float, str]) -> str:
    """A segment as messages and folders name it: ``p=1..6``, after its group or series."""
    factor, low, high, _ = segment
    own = f"{factor}={setting(low)}..{setting(high)}"
    return f"{base},{own}" if base else own


def base(name_given: str, segment: tuple[str, float, float, str]) -> str:
    """The group or series name a segment's :func:`name` was made from ("" for a series alone)."""
    return name_given.removesuffix(name("", segment)).removesuffix(",")


def within(column: np.ndarray, segment: dict) -> np.ndarray:
    """The rows of ``column`` in a segment as law.json records it (``{"factor", "from", "to", "side"}``)."""
    return (column >= segment["from"]) & (column <= segment["to"])


def _squares(law: Law, dataset: Dataset) -> float:
    """The sum of squared relative errors of ``law`` on ``dataset``: the cost the search fits."""
    predicted = law.predict(dict(zip(dataset.factors, dataset.X.T)))
    return float(np.sum((predicted / dataset.y - 1) ** 2))


def _bic(squares: float, constants: int, n: int) -> float:
    return n * math.log(max(squares / n, FLOOR)) + constants * math.log(n)


def split_all(datasets: dict[str, Dataset], factor: str, fit: Fit,
              progress: Callable[[str, int, int], None] | None = None, executor: Executor | None = None,
              ) -> tuple[dict[str, Dataset], list[str]]:
    """Each dataset (a table, a --by group, a series) split where :func:`find` chooses a split,
    else kept whole, with what the search found for each; one that cannot be split (too few values
    of ``factor``) is kept whole and said, and where none can be, the first reason is the error."""
    kept: dict[str, Dataset] = {}
    notes, unsplit = [], []
    for base, dataset in datasets.items():
        try:
            split = find(dataset, factor, fit, None if progress is None else
                         lambda done, total, base=base: progress(base, done, total), executor)
        except SearchError as exc:
            unsplit.append(exc)
            notes.append(f"{base}: {exc}; one law is fitted")
            kept[base] = dataset
            continue
        notes.append(f"{base}: {split.note()}" if base else split.note())
        if split.chosen:
            kept.update((name(base, part.segment), part) for part in parts(dataset, split))
        else:
            kept[base] = dataset
    if len(unsplit) == len(datasets):
        raise unsplit[0]
    return kept, notes
