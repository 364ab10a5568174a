"""The hybrid-parallel grammar: factors the data do not vary taken as their 'absent' value, the
pipeline-and-all-reduce law recovered, and optimize choosing the split of the devices."""

import itertools

import numpy as np
import pandas as pd
import pytest

from exprsearch import grammar, search
from exprsearch.errors import GrammarError
from exprsearch.optimize import optimize


def truth(d, s, m, L):
    return 0.5 + 0.002 * (m + s - 1) * L * 32 / s + 0.01 * L / s * np.log2(d)


@pytest.fixture(scope="module")
def law():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame([{"d": d, "s": s, "m": m, "L": L, "time": truth(d, s, m, L) * (1 + 0.02 * rng.standard_normal())}
                          for d, s, m, L in itertools.product((1, 2, 4, 8), (1, 2, 4), (4, 8, 16), (8, 16, 32))])
    return search(frame, "time", "hybrid-parallel", resamples=0)


def test_the_pipeline_and_all_reduce_law_is_recovered_with_b_taken_as_one(law):
    assert str(law.law.template) == "L*c1*log2(d)/s + L*c2*(m + s - 1)/s + c0"
    assert law.law.constants["c2"] == pytest.approx(0.064, rel=0.05)
    assert "grammar factor 'b' is not in the data: taken as 1 throughout" in law.notes


def test_optimize_picks_the_split_of_64_devices(law):
    best = optimize(law.law, {"d": np.array([1, 2, 4, 8, 16, 32, 64.0]), "s": np.array([1, 2, 4, 8, 16, 32, 64.0])},
                    {"m": 16, "L": 32}, where=["d*s == 64"])
    splits = [(d, 64 / d) for d in (1, 2, 4, 8, 16, 32, 64)]
    fastest = min(splits, key=lambda ds: truth(ds[0], ds[1], 16, 32))
    assert (best.best.config["d"], best.best.config["s"]) == fastest
    assert best.best.config["d"] * best.best.config["s"] == 64


def test_absent_must_be_a_positive_number():
    with pytest.raises(GrammarError, match="absent must be a positive number"):
        grammar.parse_text('[factors]\np = { absent = 0 }\n[constants]\nc = { min = 0, max = inf }\n'
                           '[rules]\nstart = "c + c*p"\n')


def test_stages_measured_at_two_values_are_enough_for_the_pipeline_term():
    """With s in {1, 2} the part (m + s - 1)/s mixes s with m: it is told apart across m's values,
    so the rule 'two values, one shape' does not apply to it (it used to raise a TypeError)."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame([{"s": s, "m": m, "L": L, "time": (0.001 + 0.0006 * L * (m + s - 1) / s)
                           * (1 + 0.02 * rng.standard_normal())}
                          for s, m, L in itertools.product((1, 2), (1, 2, 4, 8), (4, 8, 16)) for _ in range(2)])
    law = search(frame, "time", "hybrid-parallel", resamples=0).law
    assert str(law.template) == "L*c1*(m + s - 1)/s + c0"


def test_a_pipeline_bubble_law_from_a_small_grid_predicts_four_times_the_stages():
    """Fitted on s = 1, 2, 4 stages, the law predicts s = 16 (4x) within 3 %, and optimize picks
    the analytically best split of 64 devices."""
    rng = np.random.default_rng(5)
    bubble = lambda d, s, m, L: 0.2 + 0.003 * (m + s - 1) * L / s + 0.004 * L / s * (d - 1) / d  # noqa: E731
    frame = pd.DataFrame([{"d": d, "s": s, "m": m, "L": L, "time": bubble(d, s, m, L) * (1 + 0.02 * rng.standard_normal())}
                          for d, s, m, L in itertools.product((1, 2, 4), (1, 2, 4), (4, 8, 16), (16, 32, 64))
                          for _ in range(2)])
    law = search(frame, "time", "hybrid-parallel", resamples=0).law
    assert str(law.template) == "L*c1*(m + s - 1)/s + L*c2*(d - 1)/(d*s) + c0"
    at = {"d": [2], "s": [16], "m": [16], "L": [64]}
    assert law.predict(at)[0] == pytest.approx(bubble(2, 16, 16, 64), rel=0.03)
    grid = {"d": np.array([1, 2, 4, 8, 16, 32, 64.0]), "s": np.array([1, 2, 4, 8, 16, 32, 64.0])}
    best = optimize(law, grid, {"m": 32, "L": 64}, where=["d*s == 64"]).best
    analytic = min(((d, 64 / d) for d in (1, 2, 4, 8, 16, 32, 64)), key=lambda ds: bubble(ds[0], ds[1], 32, 64))
    assert (best.config["d"], best.config["s"]) == analytic
