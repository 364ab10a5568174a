import itertools

import numpy as np
import pytest
import sympy

from exprsearch import candidates, grammar
from exprsearch.assess import cross_validate
from exprsearch.compile import Compiler
from exprsearch.fit import Fit, FitSettings, fit
from tests.conftest import grammar_head

RULES = "\n" + grammar_head(0.25, 3) + 'start = ["%s"]\n'


def candidate(text: str):
    g = grammar.bind(grammar.parse_text(RULES % text, "t.toml"), ("p", "n"))
    (only,) = candidates.generate(g).candidates
    return only


def table(law, seed=0, noise=0.0):
    rng = np.random.default_rng(seed)
    grid = np.array(list(itertools.product([1, 2, 4, 8, 16, 32], [1e3, 4e3, 1.6e4])), dtype=float)
    y = law(grid[:, 0], grid[:, 1]) * (1 + noise * rng.standard_normal(len(grid)))
    return grid, y


def test_linear_coefficients_are_exact_on_exact_data():
    X, y = table(lambda p, n: 3.1 + 0.002 * n / p + 0.5 * np.log2(p))
    c = candidate("c + c*n/p + c*log2(p)")
    result = fit(Compiler(("p", "n"), X).compile(c), y)
    assert result.ok and result.mse < 1e-10  # the ridge penalty (1e-6) shifts it only slightly
    assert sorted(result.values.values()) == pytest.approx([0.002, 0.5, 3.1], rel=1e-5)


def test_exponent_is_found_by_differential_evolution():
    X, y = table(lambda p, n: 1 + 0.0001 * n**1.5 / p)
    c = candidate("c + c*n**k/p")
    result = fit(Compiler(("p", "n"), X).compile(c), y, FitSettings(seed=3))
    assert result.ok
    assert result.values["k0"] == pytest.approx(1.5, abs=1e-4)


def test_separable_fit_equals_or_beats_plain_de_on_the_same_cost():
    X, y = table(lambda p, n: 2 + 0.01 * n / p + 0.3 * p**0.8, noise=0.02)
    for text in ["c + c*n/p + c*p**k", "c + c*n**k/p", "c + c*p + c*n/p"]:
        compiled = Compiler(("p", "n"), X).compile(candidate(text))
        separable = fit(compiled, y, FitSettings(seed=1))
        plain = fit(compiled, y, FitSettings(seed=1, plain_de=True))
        assert separable.cost <= plain.cost * (1 + 1e-9), text


def test_undefined_and_negative_candidates_are_rejected_with_a_reason():
    X, y = table(lambda p, n: 1 + n / p)
    X = X.copy()
    X[0, 0] = 0.0
    result = fit(Compiler(("p", "n"), X).compile(candidate("c + c*log2(p)")), y)
    assert not result.ok and "log2(p)" in result.reason and "rows 1" in result.reason

    # times near 1, a law c*p - 100: no coefficient keeps every prediction positive on p = 1…32
    X2, y2 = table(lambda p, n: 1 + 0 * p)
    result = fit(Compiler(("p", "n"), X2).compile(candidate("c*p - 100")), y2)
    assert not result.ok and "predicts zero or negative values at data rows 1" in result.reason


def test_cross_validation_reports_held_out_error():
    X, y = table(lambda p, n: 2 + 0.01 * n / p, noise=0.02)
    compiled = Compiler(("p", "n"), X).compile(candidate("c + c*n/p"))
    fitted = fit(compiled, y)
    folds = np.arange(len(y)) % 5
    held_out = cross_validate(compiled, y, fitted, folds)
    assert 0.005 < held_out < 0.05  # about the 2 % noise, a little above the fit error
    wrong = Compiler(("p", "n"), X).compile(candidate("c + c*p"))
    assert cross_validate(wrong, y, fit(wrong, y), folds) > 5 * held_out


def test_fit_is_deterministic():
    X, y = table(lambda p, n: 1 + 0.0001 * n**1.3 / p, noise=0.02)
    compiled = Compiler(("p", "n"), X).compile(candidate("c + c*n**k/p"))
    assert fit(compiled, y, FitSettings(seed=7)).values == fit(compiled, y, FitSettings(seed=7)).values


def test_infinite_bounds_on_an_exponent_are_refused():
    g = grammar.bind(grammar.parse_text((RULES % "c*p**k").replace("min = 0.25, max = 3", "min = 0, max = inf"), "t.toml"), ("p", "n"))
    (c,) = candidates.generate(g).candidates
    X, y = table(lambda p, n: p)
    assert "infinite bound" in fit(Compiler(("p", "n"), X).compile(c), y).reason
    assert sympy.Symbol("k0", real=True) in c.nonlinear


def test_population_energy_from_gram_blocks_equals_the_direct_cost():
    from exprsearch.fit import _Problem

    X, y = table(lambda p, n: 1 + 1e-4 * n**1.5 / p + 0.1 * p, noise=0.02)
    compiled = Compiler(("p", "n"), X).compile(candidate("c + c*p + c*n**k/p"))
    theta = np.linspace(0.3, 2.9, 12)[None, :]
    rows = np.arange(0, len(y), 2)
    for problem in (_Problem(compiled, y, 1e-6), _Problem(compiled, y, 1e-6, rows, np.linspace(0.5, 1, len(rows)))):
        np.testing.assert_allclose(problem.energy(theta), problem.solve(theta)[1], rtol=1e-9)


def test_t_values_separate_a_real_term_from_one_the_data_cannot_pin_down():
    from exprsearch.assess import t_values

    X, y = table(lambda p, n: 2 + 0.01 * n / p, seed=1, noise=0.02)
    c = candidate("c + c*n/p + c*p**0.25")  # the last term is not in the law
    compiled = Compiler(("p", "n"), X).compile(c)
    result = fit(compiled, y)
    t = dict(zip(map(str, c.basis), t_values(compiled, y, result)))
    assert t["n/p"] > 20  # pinned down
    assert t["p**0.25"] < 2  # within two standard errors of zero (or at its bound, 0)


def test_a_fitted_exponent_that_repeats_another_term_is_rejected():
    # on p**2 data the ridge penalty makes c*p**2 + c*p**k cheapest at k = 2 with the coefficient
    # split in halves (0.5*p**2 + 0.5*p**2.0, from the grid's start k = 2): the simpler law twice
    X, y = table(lambda p, n: 1 + 0.1 * p**2)
    compiled = Compiler(("p", "n"), X).compile(candidate("c + c*p**2 + c*p**k"))
    for k, ok in ((2.0, False), (2.000001, False), (1.5, True)):
        result = fit(compiled, y, start=Fit(compiled.candidate, {"k0": k}), refine=False)
        assert result.ok == ok and ("written twice" in result.reason) != ok, k
    # two exponents landing on one shape: n*p**k and p*n**k at k = 1 are both n*p
    X, y = table(lambda p, n: 1 + 0.001 * n * p)
    compiled = Compiler(("p", "n"), X).compile(candidate("c + c*n*p**k + c*p*n**k"))
    assert not fit(compiled, y, start=Fit(compiled.candidate, {"k0": 1.0, "k1": 1.0}), refine=False).ok
