import dataclasses
import json
import math
from dataclasses import replace
from statistics import NormalDist

import numpy as np
import pytest
import sympy

from exprsearch.compile import factor_symbol
from exprsearch.errors import LawError
from exprsearch.law import Law, load
from exprsearch.vocabulary import parse


def make_law() -> Law:
    symbols = {"p": factor_symbol("p"), "n": factor_symbol("n")}
    symbols.update({c: sympy.Symbol(c, real=True) for c in ("c0", "c1", "c2")})
    template = parse("c0 + c1*n/p + c2*log2(p)", symbols)
    return Law("time", ("n", "p"), template, {"c0": 3.1, "c1": 0.002, "c2": 0.5}, 11,
               metrics={"mape_pct": 1.0}, seed=4, version="test")


def test_predict_evaluates_the_law():
    law = make_law()
    out = law.predict({"p": np.array([1, 2, 8]), "n": np.array([1000, 1000, 8000])})
    np.testing.assert_allclose(out, [3.1 + 2, 3.1 + 1 + 0.5, 3.1 + 2 + 1.5])
    assert law.predict({"p": 4, "n": 1000}).shape == ()


def test_a_prediction_interval_widens_beyond_the_data_by_the_error_of_the_law_s_own_top_octave():
    """Per doubling beyond the measured range, the interval widens by the error the extrapolation
    check found (less the noise it holds already); each factor outside counts on its own."""
    law = replace(make_law(), domain={"p": [1.0, 16.0], "n": [1000.0, 8000.0]}, residual_sd=0.01,
                  metrics={"holdout_mape_pct": 4.0}, bootstrap=((3.1, 0.002, 0.5),) * 3)
    sigma = math.sqrt(0.04**2 * math.pi / 2 - 0.01**2)
    assert law.octave_error == pytest.approx(sigma)
    at = {"p": np.array([8.0, 64.0, 64.0, 0.5, 8.0]), "n": np.array([1000.0, 8000.0, 32000.0, 1000.0, 0.0])}
    np.testing.assert_allclose(law.octaves_outside(at), [0, 2, math.sqrt(8), 1, 0])
    # a factor the law leaves out, or none measured beyond: nothing, once per configuration
    np.testing.assert_array_equal(replace(law, domain={"q": [1.0, 2.0]}).octaves_outside(at), np.zeros(5))
    low, high = law.predict_interval(at)
    z = NormalDist().inv_cdf(0.975)
    spread = np.sqrt((z * 0.01) ** 2 + (z * sigma * law.octaves_outside(at)) ** 2)
    np.testing.assert_allclose(np.log(high / law.predict(at)), spread)
    np.testing.assert_allclose(np.log(law.predict(at) / low), spread)
    # no check (no factor at three values), or a check within the noise: the interval of the form alone
    for metrics in ({}, {"holdout_mape_pct": 0.5}):
        plain = replace(law, metrics=metrics)
        assert plain.octave_error == 0.0
        np.testing.assert_allclose(np.log(plain.predict_interval(at)[1] / plain.predict(at)), z * 0.01)



def test_the_runs_own_spread_counts_the_degrees_of_freedom_the_law_leaves():
    """Three constants on five rows leave two residuals' freedom: the spread of the fit's errors,
    √(5/2) times their root mean square, at Student's t quantile with 2 degrees of freedom (4.30,
    not the normal's 1.96). A law.json without its row count keeps the normal, uncorrected."""
    law = replace(make_law(), domain={"p": [1.0, 16.0], "n": [1000.0, 8000.0]}, residual_sd=0.01,
                  bootstrap=((3.1, 0.002, 0.5),) * 3)
    at = {"p": np.array([2.0, 8.0]), "n": np.array([1000.0, 4000.0])}
    for rows, quantile in ((5, 4.302653), (103, 1.983972)):
        counted = replace(law, metrics={"rows": rows})
        width = np.log(counted.predict_interval(at)[1] / counted.predict(at))
        np.testing.assert_allclose(width, quantile * 0.01 * math.sqrt(rows / (rows - 3)), rtol=1e-6)
    # as many rows as constants leave no residual to tell the noise by; no row count: the normal
    for metrics in ({"rows": 3}, {}):
        plain = replace(law, metrics=metrics)
        np.testing.assert_allclose(np.log(plain.predict_interval(at)[1] / plain.predict(at)),
                                   NormalDist().inv_cdf(0.975) * 0.01)

def test_json_round_trip_and_sympify():
    law = make_law()
    record = json.loads(law.to_json())
    assert record["expression"] == "0.002*n/p + 0.5*log2(p) + 3.1"
    from sympy.codegen.cfunctions import log2
    parsed = sympy.sympify(record["expression"], locals={"log2": log2})
    assert float(parsed.subs({"n": 1000, "p": 4})) == pytest.approx(3.1 + 0.5 + 1.0)
    again = Law.from_json(law.to_json())
    assert again == law
    assert again.to_json() == law.to_json()


def test_law_json_is_strict_json_when_a_check_failed():
    from dataclasses import replace

    law = replace(make_law(), metrics={"mape_pct": 1.0, "holdout_mape_pct": float("inf")})

    def refuse(constant):
        raise ValueError(constant)

    record = json.loads(law.to_json(), parse_constant=refuse)
    assert record["metrics"] == {"mape_pct": 1.0, "holdout_mape_pct": None}


def test_bad_law_files(tmp_path):
    with pytest.raises(LawError, match="does not exist"):
        load(tmp_path / "none.json")
    with pytest.raises(LawError, match="is a folder with no law.json in it"):
        load(tmp_path)
    path = tmp_path / "law.json"
    path.write_text("{not json")
    with pytest.raises(LawError, match="not valid JSON"):
        load(path)
    table = tmp_path / "runs.csv"  # measurements given where a law is asked for
    table.write_text("p,time\n1,2\n")
    with pytest.raises(LawError, match=r"'.*runs.csv' is not a law.json \(it does not read as JSON\); a law is what "
                                       r"exprsearch run writes: find one with exprsearch run .*runs.csv --target COLUMN"):
        load(table)
    record = json.loads(make_law().to_json())
    record["template"] = "c0 + q"
    path.write_text(json.dumps(record))
    with pytest.raises(LawError, match="unknown name 'q'"):
        load(path)
    with pytest.raises(LawError, match="needs factor 'n'"):
        make_law().predict({"p": [1]})


def test_a_factor_the_law_leaves_out_needs_no_value(tmp_path):
    """A law of a wide table uses a few of its factors; the others change nothing, so predict,
    the bootstrap curves, the CLI's predict and optimize ask only for those it uses."""
    from dataclasses import replace

    from typer.testing import CliRunner

    from exprsearch.cli import app

    law = replace(make_law(), factors=("n", "p", "b"), domain={"n": [1000, 8000], "p": [1, 8], "b": [16, 64]},
                  bootstrap=((3.0, 0.002, 0.5), (3.2, 0.0021, 0.48)))
    assert law.predict({"p": 2, "n": 1000}) == pytest.approx(3.1 + 1 + 0.5)
    assert law.bootstrap_curves({"p": np.array([2.0, 4.0]), "n": np.array([1000.0, 1000.0])}).shape == (2, 2)
    with pytest.raises(LawError, match="the law needs factor 'n'; it uses n, p$"):
        law.predict({"p": 2, "b": 32})
    path = tmp_path / "law.json"
    path.write_text(law.to_json())
    shown = CliRunner().invoke(app, ["predict", str(path), "--at", "p=2,n=1000"])
    assert shown.exit_code == 0 and "4.6" in shown.output and "│ b" not in shown.output
    best = CliRunner().invoke(app, ["optimize", str(path), "--fix", "n=8000", "--json"])
    assert best.exit_code == 0, best.output
    assert set(json.loads(best.stdout)["best"]["config"]) == {"n", "p"}


def test_loose_constants_name_the_factors_of_their_terms():
    law = dataclasses.replace(make_law(), intervals={"c0": [0.0, 7.0], "c1": [0.0019, 0.0021], "c2": [0.1, 1.2]})
    assert law.loose() == {"c0": (), "c2": ("p",)}


@pytest.mark.parametrize("held", [[4], {"p": "four"}, {"p": True}])
def test_a_malformed_held_factor_is_refused(held):
    record = json.loads(make_law().to_json())
    record["dataset"] = {"held": held}
    with pytest.raises(LawError, match="'held'"):
        Law.from_json(json.dumps(record))


@pytest.mark.parametrize("entry, value, said", [
    ("domain", {"p": [1.0]}, "its domain's 'p' is [1.0]; it gives the smallest and largest value measured"),
    ("domain", {"p": ["a", "b"]}, "its domain's 'p' is ['a', 'b']"),
    ("metrics", {"holdout_mape_pct": "12"}, "its metrics' 'holdout_mape_pct' is '12'; it is the error in %"),
    ("search", {"plausible": ["c0 +"]}, "its search's 'plausible' holds 'c0 +', which does not read as a law"),
])
def test_a_hand_edited_entry_predict_reads_is_named_not_taken_for_the_template(entry, value, said):
    """The interval beyond the data reads the domain and the held-out error; a law.json edited by
    hand is refused naming the entry (these had reached predict and raised, or were blamed on the
    template)."""
    record = json.loads(make_law().to_json())
    record[entry] = value
    with pytest.raises(LawError) as caught:
        Law.from_json(json.dumps(record))
    assert str(caught.value).startswith(said) and "template" not in str(caught.value)
