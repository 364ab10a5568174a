"""One law form shared by several groups (frameworks, GPUs, models), with constants per group:
the comparison across TensorFlow, MXNet and PyTorch that the generic performance model makes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import sympy

from .candidates import Candidate
from .compile import Compiler
from .data import Dataset
from .fit import Fit, FitSettings, fit
from .vocabulary import to_readable, to_text


@dataclass(frozen=True)
class SharedForm:
    """The form with the lowest summed BIC over groups, and each group's fit of it; the forms
    that could not be fitted in every group, each with the reason (``skipped``), and the groups
    left out of the choice, each with the reason (``left_out``)."""

    candidate: Candidate
    fits: dict[str, Fit]
    bic: float
    considered: tuple[str, ...]
    skipped: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "template": to_text(self.candidate.template),
            "groups": {g: {"constants": f.values, "mse_relative": f.mse} for g, f in self.fits.items()},
            "summed_bic": self.bic,
            "forms_considered": list(self.considered),
            "forms_skipped": dict(self.skipped),
            "groups_left_out": dict(self.left_out),
        }


def shared_form(groups: dict[str, Dataset], forms: list[Candidate], settings: FitSettings = FitSettings(),
                left_out: dict[str, str] | None = None) -> SharedForm | None:
    """Fit every form in ``forms`` to every group; keep the one with the lowest summed
    n·ln(MSE) + (k+1)·ln(n). Forms that need a factor some group does not vary, or that some
    group cannot be fitted with, are skipped and said; ``left_out`` names groups the caller left
    out of the choice, with the reason, to be said with it."""
    unique = list({str(c.template): c for c in forms}.values())
    best, skipped = None, {}
    for candidate in unique:
        names = {s.name for s in candidate.template.free_symbols} - set(candidate.bounds)
        lacking = next(((g, sorted(names - set(d.factors))) for g, d in groups.items() if not names <= set(d.factors)), None)
        if lacking:
            skipped[str(candidate.template)] = f"{lacking[0]} does not vary {', '.join(lacking[1])}"
            continue
        fits = {g: fit(Compiler(d.factors, d.X).compile(candidate), d.y, settings) for g, d in groups.items()}
        failed = next((g for g, f in fits.items() if not f.ok), None)
        if failed is not None:
            skipped[str(candidate.template)] = f"it cannot be fitted to {failed} ({fits[failed].reason})"
            continue
        bic = sum(d.n_rows * math.log(max(fits[g].mse, 1e-20)) + (candidate.n_constants + 1) * math.log(d.n_rows)
                  for g, d in groups.items())
        if best is None or bic < best.bic:
            best = SharedForm(candidate, fits, bic, tuple(str(c.template) for c in unique))
    return None if best is None else replace(best, skipped=skipped, left_out=dict(left_out or {}))


def rounded(fitted: Fit, digits: int = 4) -> str:
    """A group's law under the shared form, constants rounded."""
    values = {sympy.Symbol(k, real=True): sympy.Float(v, digits) for k, v in fitted.values.items()}
    return to_readable(fitted.candidate.template.xreplace(values))
