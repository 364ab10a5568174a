"""Bootstrap intervals: calibrated on synthetic laws, stored in law.json, shown by predict; the
least-squares spread of a law linear in its constants."""

import numpy as np
import pandas as pd
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from exprsearch import candidates, grammar, search
from exprsearch.compile import Compiler, factor_symbol
from exprsearch.data import from_frame
from exprsearch.fit import FitSettings, fit
from exprsearch.law import Law
from exprsearch.uncertainty import bootstrap, linear_spread
from exprsearch.vocabulary import parse
from tests.conftest import WORKERS, measurements

TRUE = {"c0": 2.0, "c1": 0.15, "c2": 0.01}  # c0 + c1*p + c2*n/p, as the candidate numbers them


def law_candidate():
    g = grammar.parse_text('[factors]\np = "extrinsic"\nn = "extrinsic"\n[constants]\nc = { min = 0, max = inf }\n'
                           '[rules]\nstart = "c + c*p + c*n/p"\n', "t.toml")
    (only,) = candidates.generate(grammar.bind(g, ("p", "n"))).candidates
    return only


def test_intervals_cover_the_true_constants_in_at_least_90_percent_of_trials():
    candidate = law_candidate()
    covered = []
    for trial in range(50):
        frame = measurements(lambda p, n: 2 + 0.15 * p + 0.01 * n / p, {"p": WORKERS, "n": (1000, 4000, 16000, 64000)},
                             seed=1000 + trial)
        data = from_frame(frame, "time")
        compiled = Compiler(data.factors, data.X).compile(candidate)
        fitted = fit(compiled, data.y)
        intervals = bootstrap(compiled, data.y, data.configurations(), fitted, 200, FitSettings(seed=trial)).intervals()
        covered.append([intervals[k][0] <= v <= intervals[k][1] for k, v in TRUE.items()])
    rate = np.mean(covered, axis=0)
    assert (rate >= 0.90).all(), rate


def test_law_json_carries_intervals_and_predict_gives_an_interval(amdahl_frame):
    law = search(amdahl_frame, "time", "data-parallel", resamples=100).law
    assert set(law.intervals) == set(law.constants)
    for name, (low, high) in law.intervals.items():
        assert low <= law.constants[name] <= high
    low, high = law.predict_interval({"p": [64.0], "n": [16000.0]})
    center = law.predict({"p": [64.0], "n": [16000.0]})
    assert low[0] < center[0] < high[0] and (high[0] - low[0]) / center[0] < 0.2
    assert search(amdahl_frame, "time", "data-parallel", resamples=0).law.intervals == {}


def test_bootstrap_is_deterministic(amdahl_frame):
    first = search(amdahl_frame, "time", "data-parallel", resamples=50, seed=3).law
    assert first.to_json() == search(amdahl_frame, "time", "data-parallel", resamples=50, seed=3).law.to_json()
    assert len(first.bootstrap) == 50 and first.residual_sd == pytest.approx(0.02, rel=0.35)


def test_batched_refits_of_a_linear_law_equal_one_by_one_refits(monkeypatch):
    from exprsearch import uncertainty

    frame = measurements(lambda p, n: 2 + 0.15 * p + 0.01 * n / p, {"p": WORKERS, "n": (1000, 4000, 16000)}, seed=5)
    data = from_frame(frame, "time")
    compiled = Compiler(data.factors, data.X).compile(law_candidate())
    fitted = fit(compiled, data.y)
    batched = bootstrap(compiled, data.y, data.configurations(), fitted, 100, FitSettings(seed=1))
    monkeypatch.setattr(uncertainty, "_linear", lambda compiled: False)
    single = bootstrap(compiled, data.y, data.configurations(), fitted, 100, FitSettings(seed=1))
    assert batched.samples.shape == single.samples.shape == (100, 3)
    np.testing.assert_allclose(batched.samples, single.samples, rtol=1e-9)


def test_refits_on_pooled_configurations_equal_refits_on_every_row(monkeypatch):
    """Where configurations repeat, a law with exponents is refitted on one row per
    configuration drawn, weighted by how often: the same refits, to rounding, as on every row."""
    from exprsearch import uncertainty

    monkeypatch.setattr(uncertainty, "POOLED_ROWS", 50)  # pooled here, at 115 rows
    g = grammar.parse_text('[factors]\np = "extrinsic"\nn = "extrinsic"\n[constants]\nc = { min = 0, max = inf }\n'
                           'k = { min = -3, max = 3 }\n[rules]\nstart = "c + c*p**k + c*n/p"\n', "t.toml")
    (candidate,) = candidates.generate(grammar.bind(g, ("p", "n"))).candidates
    frame = measurements(lambda p, n: 1 + 0.05 * p**1.4 + 0.01 * n / p, {"p": WORKERS, "n": (1000, 4000, 16000)},
                         repeats=5, seed=2)
    frame = frame[~((frame.p == 4) & (frame.index % 5 == 0))]  # configurations measured 4 or 5 times
    data = from_frame(frame, "time")
    compiler = Compiler(data.factors, data.X)
    compiled = compiler.compile(candidate)
    fitted = fit(compiled, data.y)
    pooled = bootstrap(compiled, data.y, data.configurations(), fitted, 60, FitSettings(seed=4), compiler)
    every_row = bootstrap(compiled, data.y, data.configurations(), fitted, 60, FitSettings(seed=4))
    assert pooled.samples.shape == every_row.samples.shape == (60, 4)
    np.testing.assert_allclose(pooled.samples, every_row.samples, rtol=1e-6)


def test_resamples_too_small_to_determine_the_law_are_drawn_again():
    """Three configurations: a resample that drew one of them three times cannot determine
    c0 + c1/p, and its arbitrary refit (c0 = c1 = 21) used to set the interval's edge."""
    import pandas as pd

    from exprsearch.search import SearchSettings, search

    frame = pd.DataFrame({"p": [1, 2, 4, 4, 4], "time": [42.4, 21.8, 12.2, 11.8, 12.1]})
    law = search(frame, "time", settings=SearchSettings(resamples=50)).law
    assert str(law.template) == "c0 + c1/p"
    assert law.intervals["c0"][1] < 5 and law.intervals["c1"][0] > 30


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_a_resample_holds_the_rows_of_the_configurations_drawn_in_the_order_drawn(configuration, seed):
    """The resample's rows as the loop over its configurations gives them: each drawn
    configuration's rows, in the order drawn, repeats included."""
    from exprsearch.uncertainty import _rows_of

    _, group = np.unique(configuration, return_inverse=True)
    rows = np.bincount(group)
    order = np.argsort(group, kind="stable")
    drawn = np.random.default_rng(seed).integers(0, len(rows), len(rows))
    groups = np.split(order, np.cumsum(rows)[:-1])
    np.testing.assert_array_equal(_rows_of(drawn, order, rows), np.concatenate([groups[g] for g in drawn]))


def amdahl_law(template: str = "c0 + c1/p") -> Law:
    symbols = {"p": factor_symbol("p"), **{c: sympy.Symbol(c, real=True) for c in ("c0", "c1", "c2")}}
    expr = parse(template, symbols)
    constants = {c: v for c, v in (("c0", 1.5), ("c1", 49.0), ("c2", 1.0)) if symbols[c] in expr.free_symbols}
    return Law("time", ("p",), expr, constants, 3)


def test_linear_spread_is_the_least_squares_covariance_of_the_log_predictions():
    """sigma^2 g(x)' (G'G)^-1 g(y), with g(p) = (1, 1/p) / f(p): written out by hand here."""
    law = amdahl_law()
    data = from_frame(pd.DataFrame({"p": [1.0, 2.0, 4.0, 4.0], "time": [50.0, 26.0, 13.0, 14.0]}), "time")
    columns = {"p": np.array([1.0, 8.0, 64.0, 512.0])}
    features = linear_spread(law, data, columns, 0.02)

    def g(p):
        return np.array([np.ones_like(p), 1 / p]) / (1.5 + 49.0 / p)
    G = g(np.array([1.0, 2.0, 4.0, 4.0]))
    expected = 0.02**2 * g(columns["p"]).T @ np.linalg.solve(G @ G.T, g(columns["p"]))
    np.testing.assert_allclose(features.T @ features, expected, rtol=1e-9)


def test_linear_spread_leaves_exponents_and_undetermined_constants_to_the_bootstrap():
    data = from_frame(pd.DataFrame({"p": [1.0, 2.0, 4.0], "time": [50.0, 26.0, 13.0]}), "time")
    columns = {"p": np.array([8.0, 512.0])}
    assert linear_spread(amdahl_law("c0 + c1/p**c2"), data, columns, 0.02) is None
    one_value = from_frame(pd.DataFrame({"p": [2.0, 2.0], "time": [26.0, 27.0]}), "time")
    assert linear_spread(amdahl_law(), one_value, columns, 0.02) is None


@settings(max_examples=40, deadline=None)
@given(ps=st.lists(st.sampled_from([1.0, 2.0, 3.0, 4.0, 8.0, 16.0]), min_size=3, max_size=8),
       new=st.sampled_from([1.0, 5.0, 32.0, 64.0]), sd=st.floats(0.005, 0.1))
def test_conditioning_the_spread_on_a_run_is_the_spread_with_that_run_measured(ps, new, sd):
    """What suggest's plan does with the features (precision I + f fᵀ/σ² for a run at x) gives
    the covariance that linear_spread computes once x is among the measurements: the plan expects
    of a run what the refit will learn."""
    law = amdahl_law("c0 + c1/p + c2*p")
    frame = pd.DataFrame({"p": ps, "time": [1.0] * len(ps)})
    columns = {"p": np.array([new, 100.0, 512.0])}  # the run, then two other points
    features = linear_spread(law, from_frame(frame, "time"), columns, sd)
    if features is None:  # fewer than three distinct values: the constants are not determined
        assert len(set(ps)) < 3
        return
    run = features[:, 0]
    conditioned = features.T @ np.linalg.solve(np.eye(len(run)) + np.outer(run, run) / sd**2, features)
    grown = from_frame(pd.concat([frame, pd.DataFrame({"p": [new], "time": [1.0]})]), "time")
    after = linear_spread(law, grown, columns, sd)
    np.testing.assert_allclose(conditioned, after.T @ after, rtol=1e-6, atol=1e-14)


def test_a_wide_prediction_interval_stays_above_zero():
    """The relative spreads were added to and taken from 1, so a law whose runs scatter by 60 %
    predicted a time between a negative number and 2.2 times the law."""
    rng = np.random.default_rng(4)
    frame = measurements(lambda p, n: 2 + 0.01 * n / p, {"p": WORKERS, "n": (1000, 4000, 16000)}, seed=4)
    frame["time"] *= np.exp(0.6 * rng.standard_normal(len(frame)))
    law = search(frame, "time", "data-parallel", resamples=50).law
    assert law.residual_sd > 0.5
    low, high = law.predict_interval({"p": [64.0, 2.0], "n": [16000.0, 1000.0]})
    center = law.predict({"p": [64.0, 2.0], "n": [16000.0, 1000.0]})
    assert (0 < low).all() and (low < center).all() and (center < high).all()
