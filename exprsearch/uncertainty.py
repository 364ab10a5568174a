"""How sure a law is: bootstrap intervals on its constants and on predictions.

Configurations are resampled with replacement (all repetitions of a drawn configuration come
along), the chosen law is refitted on each resample with the same cost and fitting method, and
percentiles of the refitted constants give confidence intervals. A prediction interval at a
point combines the spread of the refitted laws there with the law's relative residual spread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .compile import CompiledCandidate
from .fit import Fit, FitSettings, fit


@dataclass(frozen=True)
class Bootstrap:
    """Refitted constants, one row per resample, in the order of ``names``."""

    names: tuple[str, ...]
    samples: np.ndarray
    residual_sd: float

    def intervals(self, level: float = 0.95) -> dict[str, list[float]]:
        tail = 100 * (1 - level) / 2
        low, high = np.percentile(self.samples, [tail, 100 - tail], axis=0)
        return {n: [float(a), float(b)] for n, a, b in zip(self.names, low, high)}


def bootstrap(
    compiled: CompiledCandidate, y: np.ndarray, configurations: np.ndarray, fitted: Fit,
    resamples: int = 200, settings: FitSettings = FitSettings(),
) -> Bootstrap:
    """Refit ``fitted``'s candidate on ``resamples`` resamples of the configurations."""
    names = tuple(s.name for s in compiled.candidate.constants)
    rng = np.random.default_rng(settings.seed)
    _, group = np.unique(configurations, return_inverse=True)
    order = np.argsort(group, kind="stable")
    groups = np.split(order, np.cumsum(np.bincount(group))[:-1])
    samples = []
    for _ in range(resamples):
        drawn = rng.integers(0, len(groups), len(groups))
        rows = np.concatenate([groups[g] for g in drawn])
        refit = fit(compiled, y, settings, rows)
        if refit.ok:
            samples.append([refit.values[n] for n in names])
    residual = np.sqrt(fitted.mse) if np.isfinite(fitted.mse) else 0.0
    return Bootstrap(names, np.array(samples).reshape(-1, len(names)), float(residual))
