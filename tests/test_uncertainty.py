"""Bootstrap intervals: calibrated on synthetic laws, stored in law.json, shown by predict."""

import numpy as np
import pytest

from exprsearch import candidates, grammar, search
from exprsearch.compile import Compiler
from exprsearch.data import from_frame
from exprsearch.fit import FitSettings, fit
from exprsearch.uncertainty import bootstrap
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


def test_resamples_too_small_to_determine_the_law_are_drawn_again():
    """Three configurations: a resample that drew one of them three times cannot determine
    c0 + c1/p, and its arbitrary refit (c0 = c1 = 21) used to set the interval's edge."""
    import pandas as pd

    from exprsearch.search import SearchSettings, search

    frame = pd.DataFrame({"p": [1, 2, 4, 4, 4], "time": [42.4, 21.8, 12.2, 11.8, 12.1]})
    law = search(frame, "time", settings=SearchSettings(resamples=50)).law
    assert str(law.template) == "c0 + c1/p"
    assert law.intervals["c0"][1] < 5 and law.intervals["c1"][0] > 30
