import numpy as np
import pandas as pd
import pytest
import sympy

from exprsearch import search
from exprsearch.candidates import analyse
from exprsearch.compile import Compiler
from exprsearch.grammar import parse_text
from exprsearch.intercept import _grows

GROWING = """
[factors]
p = { role = "extrinsic" }

[constants]
c = { min = 0, max = inf%s }

[rules]
start = "c + <term>{0,2}"
term = "c * <shape>"
shape = ["log2(p)", "p**2", "1/p", "sqrt(p)"]
"""


def table(law, ps=(1000, 1500, 2000, 3000, 4000, 6000, 8000), noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    rows = [(p, law(p) * (1 + noise * rng.standard_normal())) for p in ps for _ in range(3 if noise else 1)]
    return pd.DataFrame(rows, columns=["p", "time"])


def test_a_law_that_grows_from_below_zero_is_found_with_its_negative_constant():
    law = lambda p: 1e-6 * p**2 + np.log2(p / 1000) + 1  # Extra-P's one_parameter_6 met3  # noqa: E731
    found = search(table(law), "time", resamples=0).law
    assert str(found.template) == "a0 + c0*log2(p) + c1*p**2", found.template
    assert found.constants["a0"] == pytest.approx(1 - np.log2(1000), rel=0.01)  # the fit's ridge penalty
    assert found.predict({"p": np.array([16000.0])})[0] == pytest.approx(law(16000), rel=0.002)


def test_only_a_grammar_that_asks_for_it_frees_the_constant():
    law = lambda p: 1e-6 * p**2 + np.log2(p / 1000) + 1  # noqa: E731
    data = table(law)
    freed = search(data, "time", parse_text(GROWING % ", negative_if_growing = true", "growing"), resamples=0).law
    kept = search(data, "time", parse_text(GROWING % "", "as written"), resamples=0).law
    assert str(freed.template) == "a0 + c0*log2(p) + c1*p**2"
    assert all(v >= 0 for v in kept.constants.values()) and "a0" not in kept.constants


def test_a_law_with_a_falling_term_keeps_its_constant_non_negative():
    """Beside 1/p or a falling power a negative constant would bend the law down past the data."""
    data = table(lambda p: 30 / np.sqrt(p) - 0.2, ps=(1, 2, 3, 4, 6, 8, 12, 16), noise=0.01)
    found = search(data, "time", parse_text(GROWING % ", negative_if_growing = true", "growing"), resamples=0).law
    assert "a0" not in found.constants and all(v >= 0 for v in found.constants.values())


@pytest.mark.parametrize("shape, exponents, grows", [
    ("log2(p)", [], True), ("p**2*log2(n)", [], True), ("1/p", [], False), ("n/p", [], False),
    ("p**_theta0", [0.5], True), ("p**_theta0", [-0.5], False), ("log2(p)/p", [], False),
])
def test_a_term_grows_only_if_no_factor_s_doubling_lowers_it(shape, exponents, grows):
    p, n = sympy.Symbol("p", positive=True), sympy.Symbol("n", positive=True)
    c, k = sympy.Symbol("c", real=True), sympy.Symbol("_theta0", real=True)
    kinds = {c: "c"}
    term = analyse(c * sympy.sympify(shape, locals={"p": p, "n": n, "_theta0": k,
                                                    "log2": lambda x: sympy.log(x) / sympy.log(2)}), kinds)
    columns = np.array([[1.0, 10.0], [2.0, 10.0], [4.0, 20.0]])
    assert _grows(term, exponents, Compiler(("p", "n"), columns), columns) is grows


def test_the_freed_constant_is_named_apart_from_the_factors():
    law = lambda p: 1e-6 * p**2 + np.log2(p / 1000) + 1  # noqa: E731
    data = table(law).rename(columns={"p": "a0"})
    found = search(data, "time", resamples=0).law
    assert found.constants["aa0"] < 0 and "a0" not in found.constants, found.template  # a0 is the factor
    assert found.predict({"a0": np.array([16000.0])})[0] == pytest.approx(law(16000), rel=0.002)
