"""Regime laws: max/min in grammars and laws, the overlap grammar, and explain placing the change."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import sympy
from scipy.optimize import brentq

from exprsearch import search
from exprsearch.compile import factor_symbol
from exprsearch.explain import explain
from exprsearch.export import latex, python_module
from exprsearch.law import Law
from exprsearch.vocabulary import ExpressionSyntaxError, parse, to_text

P, N = factor_symbol("p"), factor_symbol("n")


def measured(law, seed=0, ps=(1, 2, 4, 8, 16, 32, 64), ns=(1000, 4000, 16000)):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"p": p, "n": n, "time": law(p, n) * (1 + 0.02 * rng.standard_normal())}
                         for p in ps for n in ns for _ in range(3)])


def test_max_and_min_parse_print_and_round_trip():
    expr = parse("1 + 2*max(n/p, 3*log2(p)) + min(p, 4)", {"p": P, "n": N})
    assert expr.has(sympy.Max) and expr.has(sympy.Min)
    assert parse(to_text(expr), {"p": P, "n": N}) == expr  # printed in the case the parser reads
    assert "max(" in to_text(expr) and "Max" not in to_text(expr)
    with pytest.raises(ExpressionSyntaxError, match="max\\(\\) takes two or more arguments"):
        parse("max(p)", {"p": P})


@pytest.mark.parametrize("hidden, ratio", [("log2", 40.0), ("sqrt", 300.0), ("p", 3.0), ("1", 200.0)])
def test_overlap_grammar_recovers_the_regime_and_explain_places_the_change(hidden, ratio):
    comm = {"log2": np.log2, "sqrt": np.sqrt, "p": lambda p: p, "1": lambda p: 1.0}[hidden]
    truth = lambda p, n: 1 + 0.01 * max(n / p, ratio * comm(p))  # noqa: E731
    law = search(measured(truth), "time", "overlap", resamples=0).law
    text = to_text(law.template)
    assert "max(" in text and "n/p" in text
    e = explain(law, "p", np.geomspace(1, 512, 200), {"n": 4000})
    true_change = brentq(lambda p: 4000 / p - ratio * comm(p), 1.01, 5000)
    assert len(e.regimes) == 1 and e.regimes[0].value == pytest.approx(true_change, rel=0.10)
    assert e.regimes[0].below.endswith("/p") and any("The regime changes at p ≈" in s for s in e.sentences)


def test_explain_bounds_the_regime_change_by_the_bootstrap_refits():
    """The change's spread over the law's refits: around the change, narrow where both regimes are
    well measured, and absent (no interval, no claim) when the law has no refits."""
    truth = lambda p, n: 1 + 0.01 * max(n / p, 40 * np.log2(p))  # noqa: E731
    law = search(measured(truth), "time", "overlap", resamples=50).law
    (regime,) = explain(law, "p", np.geomspace(1, 512, 200), {"n": 4000}).regimes
    low, high = regime.interval
    assert low < regime.value < high and high / low < 1.2 and (regime.missing, regime.refits) == (0, 50)
    true_change = brentq(lambda p: 4000 / p - 40 * np.log2(p), 1.01, 5000)
    assert low < true_change < high
    bare = replace(law, bootstrap=())
    e = explain(bare, "p", np.geomspace(1, 512, 200), {"n": 4000})
    assert e.regimes[0].interval is None and e.regimes[0].value == regime.value
    assert "bootstrap" not in e.sentences[-1]


def test_a_regime_law_survives_law_json_and_prints_as_latex():
    law = search(measured(lambda p, n: 1 + 0.01 * max(n / p, 40 * np.log2(p))), "time", "overlap", resamples=0).law
    again = Law.from_dict(json.loads(law.to_json()))
    columns = {"p": np.array([3.0, 100.0]), "n": np.array([1000.0, 50000.0])}
    assert np.allclose(again.predict(columns), law.predict(columns), rtol=1e-12)
    assert "\\max" in latex(law)
    module = {}
    exec(python_module(law), module)  # law.py, which needs only numpy
    assert np.allclose(module["predict"](columns["p"], columns["n"]), law.predict(columns), rtol=1e-12)


def test_min_in_a_grammar_file(tmp_path):
    """A cap: time falls as n/p until a floor takes over (min of two rates, here as a time floor)."""
    path = tmp_path / "cap.toml"
    path.write_text('name = "cap"\n[factors]\np = { role = "extrinsic" }\nn = { role = "intrinsic" }\n'
                    '[constants]\nc = { min = 0, max = inf }\nr = { min = -30, max = 30 }\n'
                    '[rules]\nstart = ["c + c * n / p", "c + c * n / min(p, 2**r)"]\n')
    law = search(measured(lambda p, n: 0.5 + 0.001 * n / min(p, 12)), "time", path, resamples=0).law
    assert "min(" in to_text(law.template)
    e = explain(law, "p", np.geomspace(1, 512, 200), {"n": 4000})
    assert e.regimes and e.regimes[0].kind == "min" and e.regimes[0].value == pytest.approx(12, rel=0.10)
