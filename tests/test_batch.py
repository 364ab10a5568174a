"""Batched fits of separable candidates: the same costs as one-by-one fits, grid profiles that
differential evolution only improves, and pruning that leaves the chosen law unchanged."""

import itertools

import numpy as np
import pytest

from exprsearch import candidates, grammar, search
from exprsearch.batch import fit_separable
from exprsearch.compile import Compiler
from exprsearch.fit import FitSettings, fit, verify
from tests.conftest import WORKERS, form, grammar_head, measurements

N = (1000, 4000, 16000, 64000)
EXPONENTS = grammar_head(-3, 3)  # laws with exponents over p and n; the rules follow


def table(law, noise=0.02, seed=0, outliers=False):
    rng = np.random.default_rng(seed)
    X = np.array(list(itertools.product(WORKERS, N)), dtype=float)
    y = law(X[:, 0], X[:, 1]) * (1 + noise * rng.standard_normal(len(X)))
    if outliers:
        y[::7] *= 3
    return X, y


def default_candidates(name="default"):
    return candidates.generate(grammar.bind(grammar.load(name), ("p", "n"))).candidates


@pytest.mark.parametrize("loss", ["squared", pytest.param("huber", marks=pytest.mark.slow)])
def test_batched_fits_cost_what_one_by_one_fits_cost(loss):
    X, y = table(lambda p, n: 2 + 0.01 * n / p + 0.15 * p, outliers=loss != "squared")
    found = [c for c in default_candidates() if c.separable]
    picked = [found[i] for i in np.random.default_rng(1).choice(len(found), 150, replace=False)]
    assert any(c.nonlinear for c in picked) and any(not c.nonlinear for c in picked)
    compiler = Compiler(("p", "n"), X)
    settings = FitSettings(loss=loss)
    screened = fit_separable(picked, compiler, y, settings)
    for candidate, batched in zip(picked, screened.fits):
        single = verify(compiler.compile(candidate), y, batched, settings)
        assert batched.ok == single.ok or not single.ok  # only one-by-one fits check predictions
        if single.ok:
            assert batched.cost == pytest.approx(single.cost, rel=1e-6), str(candidate)
            for name, value in single.values.items():
                assert batched.values[name] == pytest.approx(value, rel=1e-4, abs=1e-9), str(candidate)


@pytest.mark.parametrize("loss", ["squared", "huber"])
def test_without_the_gram_matrix_of_many_columns_the_fits_are_the_same(monkeypatch, loss):
    """Above _GRAM_COLUMNS term columns (ten factors: 28,000, a 6.4 GB matrix) each problem's
    entries are summed from the design; the fits are those of the matrix."""
    import exprsearch.batch as batch

    X, y = table(lambda p, n: 2 + 0.01 * n / p + 0.15 * p, outliers=loss != "squared")
    found = [c for c in default_candidates() if c.separable][:200]
    settings = FitSettings(loss=loss)
    with_gram = fit_separable(found, Compiler(("p", "n"), X), y, settings)
    monkeypatch.setattr(batch, "_GRAM_COLUMNS", 0)
    monkeypatch.setattr(batch, "_CELLS", 5_000)  # and chunks of a few problems, as for a wide table
    summed = fit_separable(found, Compiler(("p", "n"), X), y, settings)
    for a, b in zip(with_gram.fits, summed.fits):
        assert a.ok == b.ok
        if a.ok:
            assert b.cost == pytest.approx(a.cost, rel=1e-9) and b.values == pytest.approx(a.values, rel=1e-7, abs=1e-12)


@pytest.mark.parametrize("loss", ["squared", "huber"])
def test_the_batches_tell_how_much_is_done_as_they_go(monkeypatch, loss):
    """A robust loss's batches take minutes on a per-step log: the share done is told after each
    one, rising to the whole, and the fits are those made without telling."""
    from exprsearch import batch

    monkeypatch.setattr(batch, "_CHUNK", 40)  # several chunks of the squared loss too
    X, y = table(lambda p, n: 2 + 0.01 * n / p + 0.15 * p)
    picked = [c for c in default_candidates() if c.separable][:120]
    compiler = Compiler(("p", "n"), X)
    shares = []
    told = fit_separable(picked, compiler, y, FitSettings(loss=loss), done=shares.append)
    assert len(shares) > 3 and shares == sorted(shares) and shares[-1] == 1.0 and shares[0] > 0
    untold = fit_separable(picked, compiler, y, FitSettings(loss=loss))
    assert [f.values for f in told.fits] == [f.values for f in untold.fits]


def test_the_grid_profile_bounds_refinement_and_estimates_it():
    X, y = table(lambda p, n: 1 + 1e-4 * n**1.37 / p)
    found = [c for c in default_candidates("data-parallel") if c.separable and c.nonlinear]
    compiler = Compiler(("p", "n"), X)
    screened = fit_separable(found, compiler, y)
    for candidate, grid, potential in zip(found, screened.fits, screened.potential):
        refined = fit(compiler.compile(candidate), y, start=grid)
        assert refined.cost <= grid.cost * (1 + 1e-12)  # DE keeps the grid's best if it finds nothing better
        assert potential <= grid.cost
    exact = next(i for i, c in enumerate(found) if form(c) == form("c0 + c1*n**k0/p"))
    refined = fit(compiler.compile(found[exact]), y, start=screened.fits[exact])
    # the parabola through the grid's best values estimates the refined cost (9 % low here)
    assert screened.potential[exact] == pytest.approx(refined.cost, rel=0.15)
    assert refined.values["k0"] == pytest.approx(1.37, abs=0.02)


@pytest.mark.slow
def test_undefined_terms_are_rejected_with_the_rows():
    X, y = table(lambda p, n: 2 + 0.01 * n / p)
    X[3, 0] = 0.0  # p = 0 on row 4: log2(p) and 1/p are undefined there
    found = [c for c in default_candidates() if "log2(p)" in str(c)][:5]
    screened = fit_separable(found, Compiler(("p", "n"), X), y)
    for f in screened.fits:
        assert not f.ok and "log2(p)" in f.reason and "is undefined (NaN or infinite) at data rows 4" in f.reason


LAWS = {
    "linear-communication": (lambda p, n: 2 + 0.01 * n / p + 0.15 * p, "default"),
    "power-communication": (lambda p, n: 1 + 0.01 * n / p + 0.05 * p**1.4, "default"),
    "fitted-exponent": (lambda p, n: 1 + 1e-4 * n**1.5 / p, "data-parallel"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LAWS))
def test_pruning_keeps_the_front_and_the_law_of_the_full_search(name):
    law, name = LAWS[name]
    frame = measurements(law, {"p": WORKERS, "n": N})
    full = search(frame, "time", name, resamples=0, jobs=1, prune_margin=None)
    pruned = search(frame, "time", name, resamples=0, jobs=1)
    assert 0 < pruned.refined < full.refined
    assert str(pruned.law.template) == str(full.law.template)
    assert [str(s.fit.candidate) for s in pruned.ranking.front] == [str(s.fit.candidate) for s in full.ranking.front]
    for a, b in zip(pruned.ranking.front, full.ranking.front):
        assert a.fit.cost == pytest.approx(b.fit.cost, rel=1e-3)


def test_a_time_limit_keeps_the_best_law_so_far_and_says_so():
    frame = measurements(LAWS["fitted-exponent"][0], {"p": WORKERS, "n": N})
    result = search(frame, "time", "data-parallel", resamples=0, jobs=1, time_limit=0.0)
    assert result.refined == 0
    assert any("time limit" in note for note in result.notes)
    assert result.law.predict({"p": np.array([64.0]), "n": np.array([1000.0])})[0] > 0


def test_candidates_with_several_exponents_are_fitted_at_their_guesses():
    X, y = table(lambda p, n: 1 + 1e-3 * n**1.2 / p**0.9)
    text = EXPONENTS + 'start = ["c + c*n**k*p**k", "c + c*n**k/p", "c + c*n*log2(n)*p**k + c*p**k", "c*n**k*p**k*log2(p)"]\n'
    several = candidates.generate(grammar.bind(grammar.parse_text(text), ("p", "n"))).candidates
    assert len(several) == 4 and sum(c.n_nonlinear == 2 for c in several) == 3
    guesses = {t: (1.1, -0.8)[: t.n_nonlinear] for c in several for t in c.terms if t.n_nonlinear}
    compiler = Compiler(("p", "n"), X)
    screened = fit_separable(several, compiler, y, FitSettings(), guesses)
    for candidate, batched, potential in zip(several, screened.fits, screened.potential):
        single = verify(compiler.compile(candidate), y, batched)
        if single.ok:
            assert batched.cost == pytest.approx(single.cost, rel=1e-6), str(candidate)
            if candidate.n_nonlinear > 1:
                assert potential == pytest.approx(0.5 * batched.cost)
                assert [batched.values[n.name] for n in candidate.nonlinear] == \
                    [v for t in candidate.terms for v in guesses.get(t, ())]
    with pytest.raises(ValueError, match="no guessed values"):
        fit_separable(several, compiler, y)
