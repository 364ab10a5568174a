"""Fitted exponents whose screening guess lands on a fixed shape of the grammar, offered as that
shape (exprsearch/snap.py)."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from exprsearch import grammar
from exprsearch.expand import Expander
from exprsearch.search import search
from exprsearch.snap import Snapper

RULES = """[constants]
c = { min = 0, max = inf }
k = { min = -3, max = 3 }
[rules]
start = "c + <term>{1,2}"
term = "c * <t>*{1,2}"
t = ["<factor>", "1/<factor>", "<factor>**k"]
"""


def expander() -> Expander:
    return Expander(grammar.bind(grammar.parse_text(RULES), ("p", "b")))


def test_an_exponent_guessed_at_a_fixed_shape_of_the_factor_is_written_as_that_shape():
    ex = expander()
    c, k = ex.kinds["c"], ex.kinds["k"]
    p, b = ex.symbols["p"], ex.symbols["b"]
    snapper = Snapper(ex)
    snapper.know(b, [(ex.term(1 / b),), (ex.term(b**k),)])
    snapper.know(p, [(ex.term(p),), (ex.term(1 / p),), (ex.term(p**k),)])
    power = ex.term(c * p * b**k)
    term, rest = snapper.term(power, (-1.0,), set())
    assert term.generic == c * p / b and rest == ()
    assert snapper.term(power, (-0.7,), set()) is None  # no fixed shape there
    assert snapper.term(power, (2.0,), set()) is None  # b**2 is not one of b's transforms
    assert snapper.term(power, (2.0,), {c * p * b**2})[0].generic == c * p * b**2  # unless the sums hold it
    # of two exponents, the one on a fixed shape is snapped and the other keeps its guess
    two = ex.term(c * p**k * b**k)
    term, rest = snapper.term(two, (0.37, -1.0), set())
    assert term.n_nonlinear == 1 and rest == (0.37,) and term.generic in (c * p**k / b, c * b**k / p)


def test_a_shape_the_products_step_left_out_is_found_through_the_fitted_power():
    """b at three values: 1/b alone fits b's lines worse than the transforms kept for products,
    so log2(p)/b was in the screened sums only as log2(p)·b**k, which beside b·n² uses more
    shapes of b than three values tell apart (random law 0 of benchmarks/random_laws.py, seed 1).
    The default budget now keeps every product of two factors; with 1,000 products, which two
    factors' products alone pass half of, they are cut as they were."""
    rng = np.random.default_rng(0)
    p, n, b = (a.ravel() for a in np.meshgrid([1.0, 2, 4, 8, 16], [1e3, 4e3, 16e3], [16.0, 32, 64]))
    p, n, b = (np.repeat(a, 3) for a in (p, n, b))
    truth = lambda p, n, b: 1 + 3.55e-9 * b * n**2 + 33.6 * np.log2(p) / b  # noqa: E731
    data = pd.DataFrame({"p": p, "n": n, "b": b, "time": truth(p, n, b) * (1 + 0.02 * rng.standard_normal(p.size))})
    default = grammar.load("default")
    tight = dataclasses.replace(default, limits=dataclasses.replace(default.limits, max_products=1000))
    result = search(data, "time", tight, resamples=0)
    assert any("in products of several factors, the 9 expansions of each factor" in s
               for s in result.candidates.screened), result.candidates.screened
    assert str(result.law.template) == "b*c1*n**2 + c0 + c2*log2(p)/b"
    far = {"p": np.array([64.0]), "n": np.array([64e3]), "b": np.array([64.0])}
    assert result.law.predict(far)[0] == pytest.approx(truth(64.0, 64e3, 64.0), rel=0.03)
