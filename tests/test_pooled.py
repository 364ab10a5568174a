import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprsearch.batch import fit_separable
from exprsearch.compile import Compiler
from exprsearch.fit import FitSettings, _Problem, fit
from exprsearch.lockstep import polish_together
from exprsearch.pooled import pool
from tests.test_fit import candidate, table


def repeated(law, repeats=4, noise=0.05, seed=0):
    """Every configuration of tests.test_fit.table measured ``repeats`` times, rows shuffled."""
    X, _ = table(law)
    rng = np.random.default_rng(seed)
    X = np.repeat(X, repeats, axis=0)[rng.permutation(len(X) * repeats)]
    y = law(X[:, 0], X[:, 1]) * (1 + noise * rng.standard_normal(len(X)))
    return X, y


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(0.1, 10.0)), min_size=2, max_size=30),
       st.floats(0.05, 20.0))
def test_pooled_rows_give_the_cost_of_every_row_at_any_prediction(rows, prediction):
    x = np.array([float(k) for k, _ in rows])
    y = np.array([v for _, v in rows])
    pooled = pool([x], y)
    if pooled is None:
        assert len(set(x)) == len(x)
        return
    f = prediction * (1 + x)  # any law of x
    full = np.mean((1 - f / y) ** 2)
    by_configuration = np.mean(pooled.weights * (1 - f[pooled.rows] / pooled.y) ** 2) + pooled.constant
    assert by_configuration == pytest.approx(full, rel=1e-9, abs=1e-12)
    assert len(pooled.rows) == len(set(x)) and set(x[pooled.rows]) == set(x)


def test_a_table_without_repeats_is_not_pooled():
    X, y = table(lambda p, n: 1 + n / p)
    assert pool([X[:, 0], X[:, 1]], y) is None


@pytest.mark.parametrize("form", ["c + c*n/p + c*log2(p)", "c + c*n**k/p", "c + c*n**k/p**k"])
def test_a_fit_on_pooled_rows_is_the_fit_on_every_row(form):
    X, y = repeated(lambda p, n: 1 + 1e-4 * n**1.3 / p + 0.05 * np.log2(p))
    compiler = Compiler(("p", "n"), X)
    pooled = pool(compiler.columns, y)
    assert len(pooled.y) == len(X) // 4
    settings = FitSettings(seed=2)
    everything = fit(compiler.compile(candidate(form)), y, settings)
    part = fit(compiler.subset(pooled.rows).compile(candidate(form)), pooled.y, settings, pooled=pooled)
    assert part.ok and everything.ok
    assert part.cost == pytest.approx(everything.cost, rel=1e-7) and part.mse == pytest.approx(everything.mse, rel=1e-7)
    for name, value in everything.values.items():
        assert part.values[name] == pytest.approx(value, rel=1e-3, abs=1e-6), name


def test_polishing_pooled_rows_together_costs_each_law_as_every_row_does():
    X, y = repeated(lambda p, n: 1 + 1e-4 * n**1.4 / p + 0.05 * p)
    compiler = Compiler(("p", "n"), X)
    pooled = pool(compiler.columns, y)
    small = compiler.subset(pooled.rows)
    forms = ["c + c*n**k/p", "c + c*p + c*n**k/p", "c + c*n**k/p**k"]
    cands = [candidate(f) for f in forms]
    starts = list(fit_separable(cands[:2], compiler, y).fits) + [fit(compiler.compile(cands[2]), y)]
    whole = polish_together([compiler.compile(c) for c in cands], y, FitSettings(), starts)
    pooled_fits = polish_together([small.compile(c) for c in cands], pooled.y, FitSettings(), starts, None, pooled)
    for a, b in zip(whole, pooled_fits):
        assert b.ok and b.cost == pytest.approx(a.cost, rel=1e-6)
        # and the cost of each exponent the polish tried is the full table's
        theta = np.array([[b.values[s.name]] for s in b.candidate.nonlinear])
        full = _Problem(compiler.compile(b.candidate), y, 1e-6).energy(theta)
        assert _Problem(small.compile(b.candidate), pooled.y, 1e-6, weights=pooled).energy(theta) == \
            pytest.approx(full, rel=1e-9)


def test_a_pooled_fit_names_data_rows_where_it_fails():
    X, y = repeated(lambda p, n: 1 + 0 * p, noise=0.0)
    compiler = Compiler(("p", "n"), X)
    pooled = pool(compiler.columns, y)
    result = fit(compiler.subset(pooled.rows).compile(candidate("c*p - 100")), pooled.y, pooled=pooled)
    first = int(pooled.rows[0]) + 1
    assert not result.ok and f"predicts zero or negative values at data rows {first}," in result.reason


def test_pooled_rows_refuse_a_robust_loss():
    X, y = repeated(lambda p, n: 1 + n / p)
    compiler = Compiler(("p", "n"), X)
    pooled = pool(compiler.columns, y)
    with pytest.raises(ValueError, match="squared loss"):
        fit(compiler.subset(pooled.rows).compile(candidate("c + c*n/p")), pooled.y, FitSettings(loss="huber"),
            pooled=pooled)


def test_a_robust_loss_is_not_pooled():
    """Huber's weights are each row's own, so its rows stay as they are."""
    x = np.repeat([1.0, 2.0, 4.0], 3)
    y = 2 + 8 / x
    assert pool([x], y) is not None and pool([x], y, "huber") is None
