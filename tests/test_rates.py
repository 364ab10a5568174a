"""A target that is a rate (a throughput, higher is better): optimize takes its largest, explain
reads speedup as its growth, suggest and prices take a run's time as work / rate."""

import json

import numpy as np
import pandas as pd
import pytest
import sympy

from exprsearch.compile import factor_symbol
from exprsearch.configs import ConfigError
from exprsearch.explain import explain
from exprsearch.law import Law, LawError
from exprsearch.optimize import Pricing, optimize
from exprsearch.roles import reads_as_rate
from exprsearch.search import SearchSettings, search
from exprsearch.suggest import advise
from tests.test_cli_decide import run

P = {"p": np.arange(1, 129, dtype=float)}


def rate_law(target="samples_per_s", kind="") -> Law:
    """samples/s = 100 p - 0.5 p², which peaks at p = 100 (communication eats the gain)."""
    c0, c1 = sympy.Symbol("c0", real=True), sympy.Symbol("c1", real=True)
    p = factor_symbol("p")
    return Law(target, ("p",), c0 * p - c1 * p**2, {"c0": 100.0, "c1": 0.5}, 7, domain={"p": [1.0, 64.0]},
               target_kind=kind)


@pytest.mark.parametrize(("name", "rate"), [
    ("images_per_sec", True), ("throughput_samples_per_s", True), ("samples/s", True), ("tokens_per_second", True),
    ("speedup", True), ("time", False), ("step_time_s", False), ("epoch_s", False), ("latency_ms", False),
    ("ttt_min_median", False),
])
def test_a_target_s_name_says_whether_it_is_a_rate(name, rate):
    assert reads_as_rate(name) is rate


def test_the_kind_said_overrides_the_name_and_round_trips():
    assert rate_law().rate and not rate_law(kind="time").rate and rate_law("time", "rate").rate
    for law in (rate_law(), rate_law(kind="time")):
        again = Law.from_json(law.to_json())
        assert again.rate == law.rate and again.target_kind == law.target_kind
    assert "target_kind" not in json.loads(rate_law().to_json())  # said only where given
    with pytest.raises(LawError, match="target_kind is 'fast'"):
        Law.from_dict({**json.loads(rate_law().to_json()), "target_kind": "fast"})


def test_optimize_takes_the_largest_rate():
    best = optimize(rate_law(), P, {}).best
    assert best.config["p"] == 100 and best.value == pytest.approx(5000) and best.time is None
    assert optimize(rate_law(kind="time"), P, {}).best.config["p"] == 1  # read as a time: the least


def test_a_rate_meets_a_budget_and_is_priced_through_the_work_of_a_run():
    with pytest.raises(ConfigError, match="samples_per_s is a rate: give --work"):
        optimize(rate_law(), P, {}, budget=10.0)
    # time = 36000 / (100 p - 0.5 p²) <= 10 s needs a rate of 3600: p >= 47.9; cost grows with p
    o = optimize(rate_law(), P, {}, pricing=Pricing(price=3600.0, devices="p"), budget=10.0, work=36000.0)
    assert o.best.config["p"] == 48 and o.best.time == pytest.approx(36000 / (4800 - 0.5 * 48**2))
    assert o.best.cost == pytest.approx(o.best.time * 48)
    with pytest.raises(ConfigError, match="--work -1: give the positive amount one run processes"):
        optimize(rate_law(), P, {}, work=-1.0)


def test_a_time_per_step_meets_a_budget_and_is_priced_as_work_steps():
    """A law of the time of one step, given the steps of a run as its work: a run takes work × time,
    which the budget bounds and the price is paid for."""
    law = rate_law(kind="time")  # 100 p - 0.5 p² read as seconds per step: 99.5 at p = 1, 198 at p = 2
    alone = optimize(law, P, {}, pricing=Pricing(price=3600.0, devices="p"), budget=200.0)
    o = optimize(law, P, {}, pricing=Pricing(price=3600.0, devices="p"), budget=20000.0, work=100.0)
    assert o.feasible == alone.feasible == 2 and o.best.config == alone.best.config == {"p": 1.0}
    assert o.best.value == pytest.approx(99.5) and o.best.time == pytest.approx(9950.0)
    assert o.best.cost == pytest.approx(100 * alone.best.cost)
    assert optimize(law, P, {}, budget=19000.0, work=100.0).feasible == 1  # 190 s a step: p = 2 is out


def test_explain_reads_speedup_as_the_rate_s_growth_and_finds_its_peak():
    e = explain(rate_law(), "p", P["p"], {})
    assert e.speedup[9] == pytest.approx((1000 - 50) / 99.5)  # p = 10 against p = 1
    assert e.limit.kind == "maximum" and e.limit.exact and e.limit.value == pytest.approx(100, rel=1e-9)
    assert "of the rate" in e.sentences[0] and "The rate is highest at p ≈ 100" in e.sentences[-1]


def test_suggest_costs_a_run_as_work_over_its_rate():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame([{"p": p, "samples_per_s": 100 * p / (1 + 0.02 * p) * (1 + 0.02 * rng.standard_normal())}
                          for p in (1, 2, 3, 4) for _ in range(2)])
    result = search(frame, "samples_per_s", settings=SearchSettings(resamples=50))
    space = {"p": np.array([1, 2, 4, 8, 16, 32, 64], float)}
    advice = advise(result, space, {"p": 512}, count=1, devices="p", work=1e4)
    first = advice.suggestions[0]
    predicted = result.law.predict({"p": np.array([first.config["p"]])})[0]
    assert first.cost == pytest.approx(first.config["p"] * 1e4 / predicted)
    assert "p × 10000 / predicted samples_per_s" in first.sentence



@pytest.mark.parametrize("given", [{"budget": 1e6}, {"overhead": 30.0}, {"price": 2.5}, {"time_unit": "s"}])
def test_suggest_refuses_a_budget_overhead_or_price_of_a_rate_without_work(given):
    """A rate's law gives the time of one unit of work, while a budget, a price or a run's overhead
    is of whole runs: without --work they were mixed silently (a budget of 100 met costs of 0.0008
    a run, a 30 s overhead outweighed a run's time 40,000 times). optimize refused it already."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame([{"p": p, "samples_per_s": 100 * p / (1 + 0.02 * p) * (1 + 0.02 * rng.standard_normal())}
                          for p in (1, 2, 3, 4) for _ in range(2)])
    result = search(frame, "samples_per_s", settings=SearchSettings(resamples=50))
    space = {"p": np.array([1, 2, 4, 8, 16, 32, 64], float)}
    with pytest.raises(ConfigError, match="samples_per_s is a rate: give --work, .* can meet a budget, carry a "
                                          "run's overhead or be priced"):
        advise(result, space, {"p": 512}, count=1, devices="p", **given)
    assert advise(result, space, {"p": 512}, count=1, devices="p", work=1e4, **given).suggestions


def test_suggest_says_a_rate_s_costs_are_of_one_unit_and_refuses_a_budget_before_the_search(tmp_path):
    data = tmp_path / "rates.csv"
    pd.DataFrame({"gpus": [1, 2, 3, 4, 6, 8] * 2, "images_per_sec": [100, 190, 270, 350, 490, 600,
                                                                     102, 188, 272, 352, 488, 598]}).to_csv(data, index=False)
    ask = ("suggest", data, "-t", "images_per_sec", "--vary", "gpus=1..16", "--at", "gpus=64", "--devices", "gpus",
           "--bootstrap", "20", "--count", "1")
    per_unit = run(*ask)
    said = " ".join(per_unit.output.split())
    assert per_unit.exit_code == 0 and "costs here are those of one unit; pass --work" in said
    whole = run(*ask, "--work", "1e5")
    assert whole.exit_code == 0 and "those of one unit" not in whole.output
    for option in (("--cost-budget", "100"), ("--run-overhead", "30"), ("--price", "2.5")):
        refused = run(*ask, *option)
        said = " ".join(refused.output.split())
        assert refused.exit_code == 2 and "images_per_sec is a rate: give --work" in said
        assert "law:" not in said  # said before the search, which would take seconds


def test_run_says_a_rate_is_read_as_one_and_law_json_records_it(tmp_path):
    data = tmp_path / "rates.csv"
    pd.DataFrame({"gpus": [1, 2, 4, 8, 1, 2, 4, 8], "images_per_sec": [100, 190, 350, 600, 102, 188, 352, 598]}
                 ).to_csv(data, index=False)
    result = run("run", data, "-t", "images_per_sec", "--bootstrap", "0", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "target images_per_sec reads as a rate (higher is better)" in " ".join(result.output.split())
    assert json.loads((tmp_path / "o" / "law.json").read_text())["target_kind"] == "rate"
    chosen = run("optimize", tmp_path / "o", "--vary", "gpus=1..8")
    assert chosen.exit_code == 0 and "gpus = 8 → images_per_sec" in " ".join(chosen.output.split())
    explained = run("explain", tmp_path / "o", "--vary", "gpus=1..8", "--json")
    assert explained.exit_code == 0 and json.loads(explained.stdout)["target_kind"] == "rate"
    assert "Where the rate comes from" in run("explain", tmp_path / "o").output
    as_time = run("run", data, "-t", "images_per_sec", "--target-kind", "time", "--bootstrap", "0", "--out",
                  tmp_path / "t")
    assert "reads as a rate" not in as_time.output
    assert json.loads((tmp_path / "t" / "law.json").read_text())["target_kind"] == "time"
    bad = run("run", data, "-t", "images_per_sec", "--target-kind", "fast", "--out", tmp_path / "b")
    assert bad.exit_code == 2 and "--target-kind fast: give time or rate" in bad.output
    unread = run("suggest", tmp_path / "absent.csv", "-t", "images_per_sec", "--vary", "gpus=1..8", "--at", "gpus=64",
                 "--target-kind", "fast")  # the option is checked before the data are read
    assert unread.exit_code == 2 and "--target-kind fast: give time or rate" in unread.output


def test_a_rate_that_falls_beyond_its_law_is_pointed_to_its_time(tmp_path):
    """100 p - 0.5 p² peaks at p = 100: no sum of rising terms follows it, and run says the time may."""
    rng = np.random.default_rng(2)
    data = tmp_path / "peak.csv"
    pd.DataFrame([{"gpus": p, "samples_per_s": (100 * p - 0.5 * p * p) * (1 + 0.02 * rng.standard_normal())}
                  for p in (1, 2, 4, 8, 16, 32, 48, 64, 96, 128) for _ in range(2)]).to_csv(data, index=False)
    result = run("run", data, "-t", "samples_per_s", "--bootstrap", "0", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    # run fits the time too, to compare, and says by how much it is the closer, in the same note
    assert ("as a rate does where scaling saturates; fitted as its time, 1/samples_per_s (the same rows and "
            "grammar), the law misses them by ") in said
    assert "run again with --target 1/samples_per_s to write that law" in said
    assert said.count("misses the measurements") == 1  # the time's law is the remedy: no regime or grammar advice
    assert "--segments" not in said and "may have a law that fits" not in said
    assert not (tmp_path / "o" / "1_samples_per_s").exists()  # said, not written
    # and it does: 1/rate = 1/(100 p - 0.5 p²) is no sum of the grammar's terms either, but its
    # misfit is within the noise over the measured range, where the rate's is not
    timed = run("run", data, "-t", "1/samples_per_s", "--bootstrap", "0", "--out", tmp_path / "t")
    assert timed.exit_code == 0, timed.output
    law = json.loads((tmp_path / "t" / "law.json").read_text())
    assert law["target"] == "1/samples_per_s" and "target_kind" not in law
    assert law["metrics"]["lack_of_fit_p"] >= 0.01 and "is a rate and its law misses" not in timed.output


def test_a_rate_law_that_gives_none_at_a_configuration_says_rate(tmp_path):
    """100 p - 0.5 p² is negative at p = 300: predict names the rate it does not give, not a time."""
    path = tmp_path / "law.json"
    path.write_text(rate_law().to_json())
    result = run("predict", path, "--at", "p=300")
    assert result.exit_code == 2
    assert "the law gives -15000, not a rate" in " ".join(result.output.split())


def test_a_rate_whose_law_fits_is_not_fitted_again_as_its_time(tmp_path):
    """2 p with 2 % noise is a sum of rising terms: its law fits, and no second search is made."""
    rng = np.random.default_rng(3)
    data = tmp_path / "linear.csv"
    pd.DataFrame([{"gpus": p, "samples_per_s": 2 * p * (1 + 0.02 * rng.standard_normal())}
                  for p in (1, 2, 4, 8, 16, 32) for _ in range(3)]).to_csv(data, index=False)
    result = run("run", data, "-t", "samples_per_s", "--bootstrap", "0", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "fitted as its time" not in result.output
