"""The laws the data cannot tell from the chosen one: kept in law.json, compared by predict."""

import json
from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

from exprsearch import search
from exprsearch.cli import app
from exprsearch.errors import LawError
from exprsearch.law import Law
from tests.conftest import measurements
from tests.test_law import make_law


@pytest.fixture(scope="module")
def power_law():
    """p at six values cannot tell p^1.5 from the true p^1.4: the law takes the fixed shape, 25 %
    above the truth at p = 256, where the true form, among the plausible laws, predicts 16 % lower."""
    frame = measurements(lambda p, n: 1 + 0.01 * n / p + 0.05 * p**1.4,
                         {"p": (1, 2, 4, 8, 16, 32), "n": (1000, 4000, 16000)}, seed=0)
    return search(frame, "time", resamples=50).law


def form_alone(law: Law) -> Law:
    """``law`` without its extrapolation check, so that its prediction interval is that of its form
    alone beyond the data too."""
    return replace(law, metrics={**law.metrics, "holdout_mape_pct": None})


def test_law_json_keeps_the_laws_the_data_cannot_tell_apart(power_law):
    texts = power_law.search["plausible"]
    assert 1 <= len(texts) <= 5 and str(power_law.template) not in texts
    assert any("p**1.4" in t for t in texts)  # the true form among them
    again = Law.from_json(power_law.to_json())
    assert [o.predict({"p": 8.0, "n": 4000.0}) for o in again.plausible()] == \
        [o.predict({"p": 8.0, "n": 4000.0}) for o in power_law.plausible()]
    inside = np.array([o.predict({"p": 8.0, "n": 4000.0}) for o in again.plausible()]) / again.predict(
        {"p": 8.0, "n": 4000.0})
    assert np.all(np.abs(inside - 1) < 0.05)  # within the measurements they agree


def test_predict_warns_where_they_part_beyond_the_interval(power_law, tmp_path):
    """With the interval of the form alone (no extrapolation check to widen it beyond the data:
    it spans 5 % either way at p = 256), the true form lies outside it, and predict says so."""
    path = tmp_path / "law.json"
    path.write_text(form_alone(power_law).to_json())
    far = CliRunner().invoke(app, ["predict", str(path), "--at", "p=256,n=16000", "--json"])
    record = json.loads(far.stdout)
    row = record["predictions"][0]
    assert row["plausible_low"] < row["low_95"] and any(
        "laws that fit the measurements about as well as this one" in w and "% lower" in w for w in record["warnings"])
    near = json.loads(CliRunner().invoke(app, ["predict", str(path), "--at", "p=8,n=4000", "--json"]).stdout)
    assert not any("about as well" in w for w in near["warnings"])
    for one in (row, near["predictions"][0]):  # the chosen law is one of the plausible: its prediction is in the range
        assert one["plausible_low"] <= one[power_law.target] <= one["plausible_high"]


@pytest.mark.parametrize("value", ["c0 +", [1], "os.system('x')", "q*3"])
def test_a_malformed_plausible_law_is_refused(value):
    record = json.loads(make_law().to_json())
    record["search"] = {"plausible": value if isinstance(value, list) else [value]}
    with pytest.raises(LawError):
        Law.from_json(json.dumps(record))


def test_explain_says_where_the_plausible_laws_part(power_law):
    from exprsearch.explain import explain

    far = explain(power_law, "p", np.array([1.0, 2, 4, 8, 16, 32, 64, 128, 256]), {"n": 16000.0})
    said = " ".join(far.sentences)
    assert "From p ≈ 128 the 5 law(s) that fit the measurements about as well" in said
    assert "at p = 256: -16 % to" in said
    near = explain(power_law, "p", np.array([1.0, 2, 4, 8, 16, 32]), {"n": 16000.0})
    assert "stay within 5 % of this one from p = 1 to 32" in " ".join(near.sentences)


def test_the_table_shows_their_range_only_where_they_part(power_law, tmp_path):
    path = tmp_path / "law.json"
    path.write_text(form_alone(power_law).to_json())
    assert "plausible_low" in CliRunner().invoke(app, ["predict", str(path), "--at", "p=256,n=16000"]).output
    assert "plausible_low" not in CliRunner().invoke(app, ["predict", str(path), "--at", "p=8,n=4000"]).output


def test_a_wide_interval_beyond_the_data_says_why_it_widened(power_law, tmp_path):
    """Far beyond p = 32 the interval is wider than half the prediction because the law's form missed
    its own top octave when refitted without it; the warning says so and by how much per doubling."""
    path = tmp_path / "law.json"
    path.write_text(power_law.to_json())
    far = json.loads(CliRunner().invoke(app, ["predict", str(path), "--at", "p=4096,n=16000", "--json"]).stdout)
    wide = [w for w in far["warnings"] if "wider than half the prediction" in w]
    assert wide and f"widens by {100 * power_law.octave_error:.3g} % (one standard deviation) per doubling" in wide[0]
    assert power_law.octave_error > 0
    alone = tmp_path / "alone.json"
    alone.write_text(form_alone(power_law).to_json())
    said = json.loads(CliRunner().invoke(app, ["predict", str(alone), "--at", "p=4096,n=16000", "--json"]).stdout)
    assert not any("per doubling" in w for w in said["warnings"])
