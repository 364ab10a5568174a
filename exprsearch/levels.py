"""Whether an intrinsic factor's values order the times as the law says: the law with its
coefficients fitted per level of the factor, set against the law itself.

An intrinsic factor often stands for a model (its FLOPs, its parameters), and a model's time
need not follow its FLOPs: two networks of equal FLOPs can differ by their memory traffic. The
law over the factor's values then misplaces whole levels, and the same law with its coefficients
per level (its exponents and the rest of its form kept) explains the measurements better; it
cannot predict a level not measured. The two are compared by BIC over the same rows, every
level's coefficients counted, and the per-level law is preferred only by more than ``EBIC_TIE``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import sympy

from .compile import Compiler, factor_symbol
from .configs import setting
from .errors import LawError
from .fit import FitSettings, fit
from .law import Law
from .rank import EBIC_TIE, bic, bic_of
from .search import Result
from .vocabulary import to_text

MAX_LEVELS = 12  # a factor with more values is a scale, not a set of models
MIN_CONFIGURATIONS = 3  # each level needs this many configurations of the other factors


@dataclass(frozen=True)
class Levels:
    """The law of ``factor``'s levels: the chosen law's constants fitted per level
    (``constants``), and the BIC of both explanations; ``preferred`` when the per-level law is
    the better."""

    factor: str
    law: Law
    constants: dict[float, dict[str, float]]
    bic_levels: float
    bic_law: float

    @property
    def preferred(self) -> bool:
        return self.bic_levels + EBIC_TIE < self.bic_law

    @property
    def laws(self) -> dict[float, Law]:
        """Each level's law: the chosen law with that level's constants (its measured domain kept;
        its figures, intervals and bootstrap, which are the whole law's, left out)."""
        return {value: replace(self.law, constants=c, metrics={}, intervals={}, bootstrap=(), residual_sd=0.0)
                for value, c in self.constants.items()}

    def at_level(self, value: float, digits: int = 4) -> sympy.Expr:
        """The law of one level as an expression of the other factors, constants rounded."""
        constants = {sympy.Symbol(k, real=True): v for k, v in self.constants[value].items()}
        expr = self.law.template.xreplace(constants).xreplace({factor_symbol(self.factor): value})
        return expr.xreplace({n: sympy.Float(n, digits) for n in expr.atoms(sympy.Float)})

    def law_at(self, value: float) -> Law:
        """The law of one measured value of the factor (a value not measured has none)."""
        self._check_measured([value])
        return self.laws[value]

    def _check_measured(self, values) -> None:
        unknown = sorted(set(values) - set(self.constants))
        if unknown:
            raise LawError(f"{self.factor}={setting(unknown[0])} was not measured, so it has no per-level law; "
                           f"the measured values are {', '.join(setting(v) for v in sorted(self.constants))}")

    def predict(self, data: Mapping[str, object]) -> np.ndarray:
        """Each row predicted by the law of its level; a level not measured has no law."""
        level = np.asarray(data[self.factor], dtype=float)
        self._check_measured(level.tolist())
        predicted = np.empty(len(level))
        for value, law in self.laws.items():
            rows = level == value
            if rows.any():
                predicted[rows] = law.predict({f: np.asarray(data[f], dtype=float)[rows] for f in law.factors})
        return predicted

    def sentence(self) -> str:
        if self.preferred:
            return (f"the values of '{self.factor}' do not order the times as the law says: its coefficients "
                    f"fitted per value of '{self.factor}' explain them better (BIC {self.bic_levels:.1f} against "
                    f"{self.bic_law:.1f}), though they predict only at the measured values")
        return (f"the law's dependence on '{self.factor}' explains the times as well as coefficients per value "
                f"(BIC {self.bic_law:.1f} against {self.bic_levels:.1f})")

    def to_dict(self) -> dict:
        return {"factor": self.factor, "preferred": self.preferred, "bic_levels": self.bic_levels,
                "bic_law": self.bic_law, "template": to_text(self.law.template),
                "levels": {repr(value): c for value, c in self.constants.items()}}

    @classmethod
    def from_dict(cls, law: Law, record: Mapping) -> Levels:
        """Levels read back from one entry of levels.json, with the law.json it was written beside."""
        if record.get("template") != to_text(law.template):
            raise LawError(f"the levels of '{record.get('factor')}' were fitted for the law "
                           f"{record.get('template')}, not for this law.json's; use the two files one run wrote")
        try:
            constants = {float(value): {k: float(v) for k, v in c.items()} for value, c in record["levels"].items()}
            return cls(str(record["factor"]), law, constants, float(record["bic_levels"]), float(record["bic_law"]))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise LawError(f"the levels of '{record.get('factor')}' lack their constants or BICs; "
                           "run again to write levels.json afresh") from None


def untestable(result: Result, factor: str) -> str:
    """Why ``factor`` cannot be tested as levels ("" when it can): it needs 2 to ``MAX_LEVELS``
    values, another factor, and ``MIN_CONFIGURATIONS`` configurations of the others at every value
    (more than a constant to fit per value)."""
    dataset = result.dataset
    if factor not in dataset.factors:
        return "it does not vary in the data"
    if len(dataset.factors) < 2:
        return "no other factor varies"
    column = dataset.column(factor)
    values = np.unique(column)
    if len(values) > MAX_LEVELS:
        return f"it has {len(values)} values, more than the {MAX_LEVELS} that can be models rather than a scale"
    others = [i for i, f in enumerate(dataset.factors) if f != factor]
    for v in values:
        count = len(np.unique(dataset.X[column == v][:, others], axis=0))
        if count < MIN_CONFIGURATIONS:
            return (f"{factor}={v:g} was measured at {count} configuration(s) of the other factors; each value "
                    f"needs {MIN_CONFIGURATIONS}")
    return ""


def check_levels(result: Result, factor: str, settings: FitSettings = FitSettings()) -> Levels | None:
    """Refit the linear coefficients of ``result``'s law on each level of ``factor`` (its nonlinear
    constants kept) and compare by BIC; None where the factor is :func:`untestable` or a level
    cannot be fitted."""
    if untestable(result, factor):
        return None
    dataset, chosen = result.dataset, result.ranking.law.fit
    column = dataset.column(factor)
    fits = {}
    for value in np.unique(column):
        rows = column == value
        fitted = fit(Compiler(dataset.factors, dataset.X[rows]).compile(chosen.candidate), dataset.y[rows], settings,
                     start=chosen, refine=False)
        if not fitted.ok:
            return None
        fits[float(value)] = fitted
    n = dataset.n_rows
    pooled = sum(int(np.sum(column == v)) * f.mse for v, f in fits.items()) / n
    constants = len(fits) * len(chosen.candidate.linear) + chosen.candidate.n_nonlinear
    return Levels(factor, result.law, {v: f.values for v, f in fits.items()}, bic_of(pooled, n, constants),
                  bic(chosen, n))
