"""Shared helpers: synthetic measurements of known laws with multiplicative noise; child processes
that can be interrupted."""

from __future__ import annotations

import itertools
import re
import signal

import numpy as np
import pandas as pd
import pytest
import sympy

WORKERS = (1, 2, 4, 8, 16, 32)
# why a test that draws (or reads LaTeX with matplotlib) is skipped without it (pytest -ra says it beside the skip)
PLOT_EXTRA = "needs matplotlib, the plot extra: pip install '.[plot]'"


def grammar_head(k_min: float, k_max: float) -> str:
    """A grammar's head for laws over p and n with coefficients c >= 0 and exponents k in
    [k_min, k_max]; the test's rules follow it."""
    return (f'[factors]\np = "extrinsic"\nn = "extrinsic"\n[constants]\nc = {{ min = 0, max = inf }}\n'
            f"k = {{ min = {k_min:g}, max = {k_max:g} }}\n[rules]\n")


def interruptible() -> None:
    """For ``subprocess.Popen(preexec_fn=...)``: Ctrl-C at its default in the child. A shell starts
    background jobs (``pytest &``, ``nohup``) with SIGINT ignored, their children inherit that, and
    Python then never raises KeyboardInterrupt, so an interruption test would see the run finish."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def measurements(law, grid: dict[str, tuple], noise: float = 0.02, repeats: int = 3, seed: int = 0) -> pd.DataFrame:
    """Rows for every configuration of ``grid`` × ``repeats``, time = law · (1 + noise·N(0,1))."""
    rng = np.random.default_rng(seed)
    names = list(grid)
    rows = []
    for values in itertools.product(*grid.values()):
        point = dict(zip(names, values))
        truth = law(**{k: np.float64(v) for k, v in point.items()})
        for _ in range(repeats):
            rows.append({**point, "time": truth * (1 + noise * rng.standard_normal())})
    return pd.DataFrame(rows)


@pytest.fixture
def amdahl_frame() -> pd.DataFrame:
    return measurements(lambda p, n: 2 + 0.01 * n / p, {"p": WORKERS, "n": (1000, 4000, 16000, 64000)})


@pytest.fixture
def amdahl_csv(tmp_path, amdahl_frame):
    path = tmp_path / "amdahl.csv"
    amdahl_frame.to_csv(path, index=False)
    return path


def form(law) -> frozenset[str]:
    """A law's additive terms with constants written by kind (c0 → c), so two laws have the same
    form whatever the numbering of their constants."""
    text = re.sub(r"\b([a-z]+)\d+\b", r"\1", str(law))
    return frozenset(str(t) for t in sympy.Add.make_args(sympy.sympify(text)))
