"""End to end: known laws, 2 % multiplicative noise, 3 repetitions; the chosen law must have the
true form and predict the noise-free truth within 3 % at 4× the largest measured p."""

import itertools

import numpy as np
import pandas as pd
import pytest
import sympy

from exprsearch import search
from tests.conftest import WORKERS, measurements

N = (1000, 4000, 16000, 64000)
LAYERS = (2, 4, 8, 16)

CASES = {
    "amdahl": (lambda p, n: 2 + 0.01 * n / p, {"p": WORKERS, "n": N}, "c0 + c1*n/p"),
    "log-communication": (lambda p, n: 1 + 0.01 * n / p + 0.5 * np.log2(p), {"p": WORKERS, "n": N},
                          "c0 + c1*log2(p) + c2*n/p"),
    "linear-communication": (lambda p, n: 2 + 0.01 * n / p + 0.15 * p, {"p": WORKERS, "n": N},
                             "c0 + c1*p + c2*n/p"),
    "three-factors": (lambda p, n, L: 1 + 0.0005 * L * n / p + 0.3 * np.log2(p),
                      {"p": WORKERS, "n": N, "L": LAYERS}, "L*c2*n/p + c0 + c1*log2(p)"),
    "fitted-exponent": (lambda p, n: 1 + 1e-4 * n**1.5 / p, {"p": WORKERS, "n": N}, "c0 + c1*n**k0/p"),
    "intrinsic-times-extrinsic": (lambda p, n, L: 1 + 0.01 * n / p + 0.2 * L * np.log2(p),
                                  {"p": WORKERS, "n": N, "L": LAYERS}, "L*c1*log2(p) + c0 + c2*n/p"),
}


def check(result, law, grid, form):
    assert str(result.law.template) == form
    probe = {name: np.array(values, dtype=float) for name, values in grid.items() if name != "p"}
    mesh = np.meshgrid(*probe.values()) if probe else []
    points = {name: m.ravel() for name, m in zip(probe, mesh)}
    points["p"] = np.full(len(next(iter(points.values()))) if points else 1, 4.0 * max(grid["p"]))
    truth = law(**points)
    error = np.max(np.abs(result.law.predict(points) / truth - 1))
    assert error < 0.03, f"{100 * error:.2f} % off at p = {points['p'][0]:g}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_data_parallel_grammar_recovers_known_laws(name):
    law, grid, form = CASES[name]
    frame = measurements(law, grid, seed=1)
    result = search(frame, "time", "data-parallel", intrinsic=("L",) if "L" in grid else (), seed=0)
    check(result, law, grid, form)
    if name == "fitted-exponent":
        assert result.law.constants["k0"] == pytest.approx(1.5, abs=0.02)


def test_default_grammar_recovers_strong_scaling_with_communication():
    law, grid, form = CASES["linear-communication"]
    result = search(measurements(law, grid, seed=2), "time", "default")
    check(result, law, grid, form)
    assert result.candidates.size > 1_000_000  # laws in the space searched (by screening)


@pytest.mark.parametrize("seed", [pytest.param(0, marks=pytest.mark.slow), 1])
def test_default_grammar_recovers_three_single_factor_terms_side_by_side(seed):
    """s/p + log2(p) + 1/b: every pair of them fits worse than s/p beside a product such as
    log2(p)/b, so a greedy beam alone ended on products (18 % off at 4×); the sums of each
    factor's best shapes now grow beside the beam."""
    def law(p, s, b):
        return 2 + 0.01 * s / p + 0.3 * np.log2(p) + 50 / b

    grid = {"p": WORKERS, "s": (1e3, 4e3, 16e3, 64e3), "b": (16, 32, 64)}
    result = search(measurements(law, grid, seed=seed), "time", "default", resamples=0)
    check(result, law, grid, "c0 + c1*log2(p) + c3*s/p + c2/b")


@pytest.mark.slow  # byte-identical law.json per seed is tested in the fast step
def test_same_seed_same_law_and_other_seed_same_form():
    law, grid, _ = CASES["fitted-exponent"]
    frame = measurements(law, grid, seed=3)
    first = search(frame, "time", "data-parallel", seed=5).law.to_json()
    assert first == search(frame, "time", "data-parallel", seed=5).law.to_json()
    other = search(frame, "time", "data-parallel", seed=6).law
    assert str(other.template) == "c0 + c1*n**k0/p"


def test_predictions_agree_between_result_expression_and_template():
    law, grid, _ = CASES["log-communication"]
    result = search(measurements(law, grid, seed=4), "time", "data-parallel")
    points = {"p": np.array([1.0, 7.0, 200.0]), "n": np.array([10.0, 5e3, 1e6])}
    from sympy.codegen.cfunctions import log2
    expr = sympy.sympify(result.law.to_dict()["expression"], locals={"log2": log2})
    direct = [float(expr.subs(dict(zip(("p", "n"), values)))) for values in zip(*points.values())]
    np.testing.assert_allclose(result.law.predict(points), direct, rtol=1e-9)


@pytest.mark.parametrize("loss, seed", [("absolute", 0), ("absolute", 1), ("huber", 0)])
@pytest.mark.slow
def test_robust_loss_ignores_warm_up_rows(loss, seed):
    law, grid, form = CASES["linear-communication"]
    frame = measurements(law, grid, seed=5 + seed)
    slow = np.random.default_rng(seed).choice(len(frame), 7, replace=False)
    frame.loc[slow, "time"] *= 3  # seven warm-up runs, three times slower
    dragged = search(frame, "time", "data-parallel", resamples=0).law
    robust = search(frame, "time", "data-parallel", resamples=0, loss=loss)
    check(robust, law, grid, form)
    # the squared loss is pulled by them: to another law, or (since the step-up takes laws of other
    # shapes that fit better, 2026-11-27) to the same form with constants that extrapolate worse
    points = {"p": np.full(len(grid["n"]), 8.0 * max(grid["p"])), "n": np.array(grid["n"], dtype=float)}
    truth = law(**points)
    assert np.max(np.abs(dragged.predict(points) / truth - 1)) > np.max(np.abs(robust.law.predict(points) / truth - 1))
    assert "robust loss" in robust.law.selection


def test_held_out_largest_scale_is_reported():
    law, grid, _ = CASES["log-communication"]
    result = search(measurements(law, grid, seed=4), "time", "data-parallel", resamples=0)
    assert all(s.holdout_mape is not None for s in result.ranking.front)
    assert result.law.metrics["holdout_mape_pct"] < 5


@pytest.mark.parametrize("name, grammar_name, seed", [("amdahl", "data-parallel", 1), pytest.param("linear-communication", "default", 1, marks=pytest.mark.slow)])
def test_rule_beats_naive_lowest_error_at_8x_scale(name, grammar_name, seed):
    """Data sets where the lowest-error law on the front is over-fitted and extrapolates badly."""
    law, grid, form = CASES[name]
    result = search(measurements(law, grid, seed=seed), "time", grammar_name, resamples=0)
    points = {"p": np.full(len(grid["n"]), 8.0 * max(grid["p"])), "n": np.array(grid["n"], dtype=float)}

    def error(scored):
        from exprsearch.law import Law

        fitted = Law("time", ("p", "n"), scored.fit.candidate.template, scored.fit.values, 0)
        return np.max(np.abs(fitted.predict(points) / law(**points) - 1))

    naive = min(result.ranking.front, key=lambda s: s.mape)
    assert str(naive.fit.candidate.template) != form and error(naive) > 0.10
    assert str(result.law.template) == form and error(result.ranking.law) < 0.03


def test_search_options_are_checked_and_reach_the_settings(amdahl_frame):
    from exprsearch import SearchSettings
    from exprsearch.errors import SearchError

    with pytest.raises(SearchError, match="unknown search option.*resample"):
        search(amdahl_frame, "time", "data-parallel", resample=0)
    settings = SearchSettings().updated(seed=4, resamples=0, prune_margin=None)
    assert (settings.fit.seed, settings.resamples, settings.fit.prune_margin) == (4, 0, None)
    by_settings = search(amdahl_frame, "time", "data-parallel", settings=settings).law.to_json()
    assert by_settings == search(amdahl_frame, "time", "data-parallel", seed=4, resamples=0, prune_margin=None).law.to_json()


@pytest.mark.parametrize("values, held", [
    ([1, 2, 4, 15, 50, 58], [50, 58]),  # the top octave: a check that extrapolates
    ([1, 2, 4, 8, 16, 32, 64], [64]),  # on a doubling grid the octave is the largest value
    ([1, 2, 3, 4], [4]),  # the octave would leave two values to fit on: the largest alone
    ([1, 2, 3, 4, 5, 6], [4, 5, 6]),
])
def test_the_extrapolation_check_holds_out_the_top_octave(values, held):
    from exprsearch.data import from_frame
    from exprsearch.search import _largest_values

    frame = pd.DataFrame({"p": np.repeat(values, 2), "time": np.linspace(1, 2, 2 * len(values))})
    dataset = from_frame(frame, "time")
    (mask,) = _largest_values(dataset)
    assert sorted(set(dataset.column("p")[mask].tolist())) == held


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_series_that_does_not_depend_on_p_gets_the_constant_alone(seed):
    # before the default grammar offered the constant alone, each of these got a term in p
    # (1/sqrt(p), 1/sqrt(p), p**k) for a dependence that is only noise
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame([{"p": p, "time": 4 * (1 + 0.02 * rng.standard_normal())}
                          for p in (1, 2, 4, 8, 16) for _ in range(3)])
    result = search(frame, "time", "default", resamples=0)
    assert str(result.law.template) == "c0"
    assert result.law.predict({"p": np.array([32.0])})[0] == pytest.approx(4, rel=0.02)


def test_the_constant_alone_is_not_taken_where_the_data_show_a_trend():
    # time falls as 1/p; each configuration ran under two settings the table does not show, so
    # the repetitions disagree by up to 40 % and the lack-of-fit test passes the constant alone
    frame = pd.DataFrame({"p": [1, 1, 4, 4, 8, 8], "time": [100.0, 104.0, 30.0, 40.0, 23.0, 38.0]})
    result = search(frame, "time", "default", resamples=0)
    assert "p" in str(result.law.template) and "constant alone left out" in result.law.selection


@pytest.mark.parametrize("shape", [lambda x, y: x**1.25 * np.log2(x) ** 2 * y**3 * np.log2(y),
                                   lambda x, y: x ** (7 / 3) * np.log2(x) * y * np.log2(y) ** 2])
def test_pmnf_recovers_a_noise_free_product_of_extrap_shapes(shape):
    """Extra-P's multi-parameter form, noise-free on a 5 × 5 grid: these two products had come out
    as a neighbouring product 17-47 % off at twice the grid, as the rounding of the shapes' line
    scores ranked them (see test_lines); which product won hung on the last bits of the times."""
    grid = np.array(list(itertools.product([4.0, 8, 16, 32, 64], repeat=2)))
    frame = pd.DataFrame({"x": grid[:, 0], "y": grid[:, 1], "time": 1 + 0.5 * shape(grid[:, 0], grid[:, 1])})
    law = search(frame, "time", "pmnf", resamples=0).law
    far = {"x": np.array([128.0, 4.0, 128.0]), "y": np.array([4.0, 128.0, 128.0])}
    assert law.predict(far) == pytest.approx(1 + 0.5 * shape(far["x"], far["y"]), rel=1e-3)  # the form; constants fitted
