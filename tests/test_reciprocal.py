"""--target 1/COLUMN: a column's reciprocal fitted as the target, through every way a table is read."""

import re

import numpy as np
import pandas as pd
import pytest

from exprsearch.data import as_dataset, load_table
from exprsearch.errors import DataError
from exprsearch.grouped import load_grouped, load_targets
from exprsearch.law import load
from exprsearch.reciprocal import derived, inverse, reciprocal_of
from exprsearch.roles import reads_as_rate, reads_as_time
from tests.test_cli_decide import run


def throughput(tmp_path, name="tp.csv", **extra) -> "pd.DataFrame":
    """samples/s of a run whose time per 1,000 samples is 0.5 + 8/p, at p = 1..16, twice each."""
    rng = np.random.default_rng(4)
    rows = [{"p": p, **extra, "samples_per_s": 1000 / (0.5 + 8 / p) * (1 + 0.01 * rng.standard_normal())}
            for p in (1, 2, 3, 4, 6, 8, 12, 16) for _ in range(2)]
    frame = pd.DataFrame(rows)
    frame.to_csv(tmp_path / name, index=False)
    return frame


@pytest.mark.parametrize("name, column", [("1/samples_per_s", "samples_per_s"), (" 1 / tps ", "tps"),
                                          ("samples_per_s", None), ("10/x", None), ("1/", None)])
def test_a_reciprocal_is_named_one_over_a_column(name, column):
    assert reciprocal_of(name) == column


def test_the_reciprocal_of_a_rate_is_a_time_and_of_a_time_a_rate():
    assert reads_as_time("1/samples_per_s") and not reads_as_rate("1/samples_per_s")
    assert reads_as_rate("1/step_time_s") and not reads_as_time("1/step_time_s")
    assert inverse("samples_per_s") == "1/samples_per_s" and inverse("1/samples_per_s") == "samples_per_s"


def test_the_column_is_replaced_in_its_place_and_text_is_left_for_the_checks():
    frame = pd.DataFrame({"p": [1, 2], "tps": ["4", "n/a"], "note": ["a", "b"]})
    out = derived(frame, "1/tps", "'t.csv'")
    assert list(out.columns) == ["p", "1/tps", "note"]
    assert out["1/tps"].tolist() == [0.25, "n/a"]
    assert derived(frame, "tps", "'t.csv'") is frame  # no reciprocal asked for
    named = frame.rename(columns={"tps": "1/tps"})
    assert derived(named, "1/tps", "'t.csv'") is named  # a column so named is the target itself


def test_a_zero_has_no_reciprocal_and_is_refused_with_its_line(tmp_path):
    (tmp_path / "z.csv").write_text("p,tps\n1,4\n2,0\n4,9\n")
    with pytest.raises(DataError, match=r"'.*z.csv' column 'tps' is 0 at line 3, where 1/tps has no value"):
        load_table(tmp_path / "z.csv", "1/tps")
    with pytest.raises(DataError, match="target column 'tpx' is not in"):
        load_table(tmp_path / "z.csv", "1/tpx")


def test_a_table_is_fitted_on_the_reciprocal_read_every_way(tmp_path):
    frame = throughput(tmp_path)
    want = 1 / frame["samples_per_s"].to_numpy()
    for data in (load_table(tmp_path / "tp.csv", "1/samples_per_s"),  # all numbers: read without pandas
                 load_table(tmp_path / "tp.csv", "1/samples_per_s", where=[]),
                 as_dataset(frame, "1/samples_per_s"),
                 as_dataset({c: frame[c].to_numpy() for c in frame}, "1/samples_per_s")):
        assert data.target == "1/samples_per_s" and data.factors == ("p",)
        assert np.allclose(np.sort(data.y), np.sort(want))
    kept = as_dataset(frame, "1/samples_per_s", where=["samples_per_s>50"])  # a condition on the column read
    assert kept.n_rows == int((frame["samples_per_s"] > 50).sum())
    assert "samples_per_s>50 picks runs by their measured value" in kept.notes[0]  # as a condition on the target would


def test_non_numbers_are_named_as_the_target_s(tmp_path):
    (tmp_path / "t.csv").write_text("p,tps\n1,4\n2,abc\n4,9\n8,12\n")
    with pytest.raises(DataError, match=r"target '1/tps' is numbers except 'abc' at line 3"):
        load_table(tmp_path / "t.csv", "1/tps")


def test_groups_and_several_targets_read_the_reciprocal(tmp_path):
    one = throughput(tmp_path, "a.csv", fw="a")
    two = throughput(tmp_path, "b.csv", fw="b")
    pd.concat([one, two]).assign(step_s=lambda f: 1000 / f["samples_per_s"]).to_csv(tmp_path / "g.csv", index=False)
    groups, failed = load_grouped(tmp_path / "g.csv", "1/samples_per_s", "fw", factors=["p"])
    assert not failed and sorted(groups) == ["fw=a", "fw=b"]
    assert all(g.target == "1/samples_per_s" for g in groups.values())
    series, failed = load_targets(tmp_path / "g.csv", ["1/samples_per_s", "step_s"], [], factors=["p"])
    assert not failed and np.allclose(np.sort(series["1/samples_per_s"].y * 1000), np.sort(series["step_s"].y))


def test_the_spread_of_the_column_read_is_the_reciprocal_s_relative_spread(tmp_path):
    """--spread gives x's standard deviation; 1/x's, relative to it, is x's relative to x (to first
    order), so the noise the rule tests against is the same either way, and the note says why."""
    (tmp_path / "s.csv").write_text("p,tps_mean,sd,count\n1,4,0.1,3\n2,7,0.3,4\n4,12,0.2,3\n8,20,0.6,5\n16,30,1,3\n")
    rate = load_table(tmp_path / "s.csv", "tps_mean", spread=("sd", "count"))
    time = load_table(tmp_path / "s.csv", "1/tps_mean", spread=("sd", "count"))
    assert time.noise is not None and time.noise == pytest.approx(rate.noise)
    assert "reciprocal of the mean of its runs" in time.notes[-1] and "of tps_mean, whose relative spread" in time.notes[-1]


def test_run_fits_the_time_of_a_throughput_and_predict_measures_it_by_the_column(tmp_path):
    throughput(tmp_path)
    result = run("run", tmp_path / "tp.csv", "-t", "1/samples_per_s", "--bootstrap", "0", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    law = load(tmp_path / "o" / "law.json")
    p = np.array([1.0, 16.0, 64.0])
    assert law.target == "1/samples_per_s" and not law.rate
    assert np.allclose(law.predict({"p": p}), (0.5 + 8 / p) / 1000, rtol=0.03)  # the time per sample, 4x beyond
    predicted = run("predict", tmp_path / "o", "--data", tmp_path / "tp.csv")
    assert predicted.exit_code == 0, predicted.output
    assert "against the measured 1/samples_per_s: mean absolute error" in " ".join(predicted.output.split())


def test_optimize_says_a_time_per_unit_of_work_costs_one_unit(tmp_path):
    throughput(tmp_path)
    assert run("run", tmp_path / "tp.csv", "-t", "1/samples_per_s", "--bootstrap", "0", "--out", tmp_path / "o").exit_code == 0
    per_unit = run("optimize", tmp_path / "o", "--vary", "p=1..16", "--price", "1", "--devices", "p")
    said = " ".join(per_unit.output.split())
    assert per_unit.exit_code == 0 and "1/samples_per_s is the time of one unit of the work samples_per_s counts" in said
    whole = run("optimize", tmp_path / "o", "--vary", "p=1..16", "--price", "1", "--devices", "p", "--work", "1e6")
    assert whole.exit_code == 0 and "time of one unit" not in whole.output
    assert re.search(r", time [0-9.e+]+ s, cost", " ".join(whole.output.split()))  # seconds, as per_s says


def test_law_tex_writes_the_reciprocal_as_a_fraction(tmp_path):
    throughput(tmp_path)
    assert run("run", tmp_path / "tp.csv", "-t", "1/samples_per_s", "--bootstrap", "0", "--out", tmp_path / "o").exit_code == 0
    assert "\\frac{1}{\\mathit{samples\\_per\\_s}} = " in (tmp_path / "o" / "law.tex").read_text()


def test_the_column_read_cannot_also_be_a_factor(tmp_path):
    throughput(tmp_path)
    result = run("run", tmp_path / "tp.csv", "-t", "1/samples_per_s", "--factors", "p,samples_per_s", "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert "'samples_per_s' is the target (--target 1/samples_per_s reads it); it cannot also be a factor" in \
        " ".join(result.output.split())
    pd.concat([pd.read_csv(tmp_path / "tp.csv").assign(fw=fw) for fw in "ab"]).to_csv(tmp_path / "g.csv", index=False)
    grouped = run("run", tmp_path / "g.csv", "-t", "1/samples_per_s", "--by", "fw", "--factors", "p,samples_per_s",
                  "--out", tmp_path / "g")
    assert grouped.exit_code == 2 and "(--target 1/samples_per_s reads it)" in " ".join(grouped.output.split())


def test_suggest_refuses_a_run_s_overhead_where_a_cost_is_of_one_unit_or_step(tmp_path):
    """--run-overhead is per run; without --work a cost here is that of one sample (or one step of a
    per-step log), and 30 s added to each made the overhead all the plan weighed."""
    from exprsearch.advice import costed_per

    throughput(tmp_path)
    ask = ("suggest", tmp_path / "tp.csv", "-t", "1/samples_per_s", "--vary", "p=1..16", "--at", "p=64",
           "--devices", "p", "--bootstrap", "20", "--count", "1", "--run-overhead", "30")
    refused = run(*ask)
    said = " ".join(refused.output.split())
    assert refused.exit_code == 2 and "--run-overhead 30 is a time per run, but a cost here is that of one unit of " \
        "work: give --work, the units one run processes" in said
    assert run(*ask, "--work", "1e6").exit_code == 0
    assert costed_per("step_s", "step", False) == "step" and costed_per("step_s", "step", True) is None
    assert costed_per("epoch_s", None, False) is None
