"""--spread: rows that each summarise runs, whose standard deviation and count give the noise the
selection's rule tests laws against; from the columns' reading to law.json and the CLI."""

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from exprsearch import search
from exprsearch.cli import app
from exprsearch.data import as_dataset, load_table
from exprsearch.errors import DataError, RepeatedSummaries, SearchError
from exprsearch.grouped import load_grouped
from exprsearch.spread import parse

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def said(result) -> str:
    return " ".join(result.output.split())


def summaries(seed: int = 1, noise: float = 0.03, runs: int = 5) -> pd.DataFrame:
    """Means of ``runs`` runs of 2 + 0.01·n/p + 0.15·p with ``noise`` relative noise, one row per
    configuration, with the runs' standard deviation and count beside them."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in (1, 2, 4, 8, 16, 32):
        for n in (1000, 4000, 16000):
            times = (2 + 0.01 * n / p + 0.15 * p) * (1 + noise * rng.standard_normal(runs))
            rows.append((p, n, times.mean(), times.std(ddof=1), runs))
    return pd.DataFrame(rows, columns=["p", "n", "time", "time_std", "runs"])


def expected_noise(frame: pd.DataFrame, factor: float = 1.0) -> tuple[float, int]:
    """The relative variance of one row's value, written out: the runs' relative variances pooled
    by their degrees of freedom, times the factor of the statistic, over the rows' counts."""
    dof = frame.runs - 1
    pooled = float((dof * (frame.time_std / frame.time) ** 2).sum() / dof.sum())
    return pooled * factor * float((1 / frame.runs).mean()), int(dof.sum())


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "means.csv"
    summaries().to_csv(path, index=False)
    return path


def test_the_noise_is_the_runs_pooled_spread_over_how_many_each_row_averages(table):
    frame = summaries()
    data = load_table(table, "time", spread=("time_std", "runs"))
    assert data.factors == ("p", "n")  # the two columns are no factors
    variance, dof = expected_noise(frame)
    assert data.noise[1] == dof == 72
    assert data.noise[0] == pytest.approx(variance, rel=1e-12)
    assert 0.01 < math.sqrt(data.noise[0]) < 0.02  # 3 % runs, means of 5: about 1.3 %
    assert data.spread == ("time_std", "runs")
    assert any("the mean of its runs" in note and "72 degrees of freedom" in note for note in data.notes)


def test_rows_of_different_counts_weigh_by_them(tmp_path):
    frame = summaries()
    frame["runs"] = np.resize([2, 3, 10], len(frame))
    data = as_dataset(frame, "time", spread="time_std,runs")
    variance, dof = expected_noise(frame)
    assert (data.noise[0], data.noise[1]) == (pytest.approx(variance, rel=1e-12), dof)


def test_a_median_varies_more_than_a_mean_of_as_many_runs():
    frame = summaries().rename(columns={"time": "time_median"})
    data = as_dataset(frame, "time_median", spread=("time_std", "runs"))
    variance, _ = expected_noise(frame.rename(columns={"time_median": "time"}), math.pi / 2)
    assert data.noise[0] == pytest.approx(variance, rel=1e-12)
    assert any("the median of its runs" in note for note in data.notes)


def test_the_rows_are_matched_to_their_spread_after_where_and_drop_missing(tmp_path):
    frame = summaries()
    variance, _ = expected_noise(frame)
    # rows the filter and --drop-missing leave out carry spreads that would change the noise if read
    extra = pd.DataFrame([(64, 1000, 20.0, 15.0, 5), (2, 500, float("nan"), 9.0, 5)], columns=frame.columns)
    mixed = pd.concat([extra.iloc[:1], frame.iloc[:7], extra.iloc[1:], frame.iloc[7:]], ignore_index=True)
    path = tmp_path / "mixed.csv"
    mixed.to_csv(path, index=False)
    from exprsearch.rowfilter import parse as conditions

    data = load_table(path, "time", drop_missing=True, where=conditions(["p<=32"]), spread=("time_std", "runs"))
    assert data.n_rows == len(frame)
    assert data.noise[0] == pytest.approx(variance, rel=1e-12)
    also = as_dataset(mixed.dropna(), "time", where=["p<=32"], spread=("time_std", "runs"))
    assert also.noise[0] == pytest.approx(variance, rel=1e-12)


def test_each_group_has_the_noise_of_its_own_rows(tmp_path):
    quiet, loud = summaries(noise=0.01), summaries(seed=2, noise=0.08)
    both = pd.concat([quiet.assign(framework="a"), loud.assign(framework="b")]).sample(frac=1, random_state=0)
    path = tmp_path / "two.csv"
    both.to_csv(path, index=False)
    groups, failed = load_grouped(path, "time", ["framework"], spread=("time_std", "runs"))
    assert not failed
    assert groups["framework=a"].noise[0] == pytest.approx(expected_noise(quiet)[0], rel=1e-12)
    assert groups["framework=b"].noise[0] == pytest.approx(expected_noise(loud)[0], rel=1e-12)
    with pytest.raises(DataError, match="names the groups"):
        load_grouped(path, "time", ["runs"], spread=("time_std", "runs"))


@pytest.mark.parametrize("bad, where", [("0", "count"), ("2.5", "count"), ("", "count"), ("-1", "standard deviation")])
def test_a_bad_count_or_deviation_is_named_by_its_line(tmp_path, bad, where):
    frame = summaries().astype({"runs": object, "time_std": object})
    frame.loc[4, "runs" if where == "count" else "time_std"] = bad
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match=rf"'(runs|time_std)' \(--spread\) must .*{where}.* at line 6;"):
        load_table(path, "time", spread=("time_std", "runs"))


def test_a_single_run_needs_no_deviation_and_too_few_runs_give_no_noise():
    frame = summaries()
    frame["runs"] = 1
    frame["time_std"] = np.nan
    frame.loc[0, ["runs", "time_std"]] = (2, 0.1)
    data = as_dataset(frame, "time", spread=("time_std", "runs"))
    assert data.noise is None
    assert any("too few runs" in note for note in data.notes)


def test_what_spread_cannot_read_is_refused_with_the_reason(tmp_path):
    frame = summaries()
    with pytest.raises(DataError, match="two columns"):
        parse("time_std")
    with pytest.raises(DataError, match="two columns"):
        parse("runs,runs")
    with pytest.raises(DataError, match="did you mean 'time_std'"):
        as_dataset(frame, "time", spread="time_sd,runs")
    with pytest.raises(DataError, match="that is the target"):
        as_dataset(frame, "time", spread="time,runs")
    with pytest.raises(DataError, match=r"holds p=1, n=1000 at rows 1, 19 \(and 17 more configurations on several "
                       r"rows\), but --spread takes one row per configuration: keep one with --where"):
        as_dataset(pd.concat([frame, frame]), "time", spread="time_std,runs")
    with pytest.raises(DataError, match="statistic|fit their mean or median"):
        as_dataset(frame.rename(columns={"time": "time_max"}), "time_max", spread="time_std,runs")
    with pytest.raises(SearchError, match="a Dataset is read already"):
        as_dataset(as_dataset(frame, "time"), "time", spread="time_std,runs")


def test_the_search_tests_laws_against_the_noise_and_law_json_records_the_columns():
    result = search(summaries(), "time", spread=("time_std", "runs"), resamples=0)
    assert "within the measured noise" in result.ranking.rule
    assert result.law.dataset["spread"] == ["time_std", "runs"]
    without = search(summaries(), "time", resamples=0)
    assert "within the measured noise" not in without.ranking.rule
    assert "spread" not in without.law.dataset


def test_run_with_spread_end_to_end(table, tmp_path):
    out = tmp_path / "out"
    result = run("run", table, "--target", "time", "--spread", "time_std,runs", "--out", out, "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    text = said(result)
    assert "each row is taken as the mean of its runs" in text
    assert "measured noise" in text and "within the measured noise" in text
    assert "the law misses the noise read from --spread" not in text
    law = json.loads((out / "law.json").read_text())
    assert law["dataset"]["spread"] == ["time_std", "runs"]
    assert set(law["factors"]) == {"p", "n"}


def test_without_spread_the_left_out_deviation_points_to_it(table, tmp_path):
    result = run("run", table, "--target", "time", "--out", tmp_path / "o", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    assert "--spread time_std,COUNT" in said(result)


@pytest.mark.parametrize("extra, words", [
    (["--measure", "mean"], "--measure mean summarises a configuration's repeated rows"),
    (["--spread", "time_std"], "give two columns"),
    (["--spread", "time_std,count"], "--spread count column 'count' is not in"),
])
def test_run_refuses_what_spread_cannot_go_with_in_a_sentence(table, tmp_path, extra, words):
    args = ["--spread", "time_std,runs", *extra] if extra[0] == "--measure" else extra
    result = run("run", table, "--target", "time", "--out", tmp_path / "o", *args)
    assert result.exit_code == 2, result.output
    assert words in said(result)
    assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


def test_an_extrap_file_takes_no_spread(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("PARAMETER p\n\nPOINTS 1 2 4 8 16\n\nREGION r\nMETRIC time\n"
                    + "".join(f"DATA {2 + 10 / p} {2.1 + 10 / p}\n" for p in (1, 2, 4, 8, 16)))
    result = run("run", path, "--target", "r:time", "--spread", "sd,n", "--out", tmp_path / "o")
    assert result.exit_code == 2, result.output
    assert "is an Extra-P file, whose repetitions give the noise already" in said(result)


def test_a_spread_narrower_than_the_runs_differ_is_pointed_at(tmp_path):
    """A deviation over one run's steps (here a hundredth of how the rows scatter) rejects every
    law; the run says where the noise it tested against came from."""
    frame = summaries(noise=0.05)
    frame["time_std"] = frame.time * 1e-4
    frame["runs"] = 50
    path = tmp_path / "steps.csv"
    frame.to_csv(path, index=False)
    result = run("run", path, "--target", "time", "--spread", "time_std,runs", "--out", tmp_path / "o",
                 "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    text = said(result)
    assert "no law fits within the measured noise" in text
    assert re.search(r"the law misses the noise read from --spread time_std,runs \(MAPE [\d.]+ % against 0\.00[\d]+ %\): "
                     r"the rows differ by more than their runs do, through a setting the factors leave out .* or, if "
                     r"that is a standard deviation over the steps of a run", text), text


@pytest.mark.slow  # an integration test of several commands: CI's slow step
def test_profile_reads_each_series_noise_from_its_own_rows(tmp_path):
    quiet, loud = summaries(noise=0.01), summaries(seed=2, noise=0.08)
    path = tmp_path / "kernels.csv"
    pd.concat([quiet.assign(kernel="gemm"), loud.assign(kernel="allreduce")]).to_csv(path, index=False)
    out = tmp_path / "profile"
    result = run("profile", path, "--target", "time", "--spread", "time_std,runs", "--out", out, "--jobs", "1")
    assert result.exit_code == 0, result.output
    record = json.loads((out / "laws.json").read_text())
    assert record["context"]["spread"] == "time_std,runs"
    noise = {row["series"]: row for row in record["series"]}
    for name, frame in (("kernel=gemm", quiet), ("kernel=allreduce", loud)):
        percent = 100 * math.sqrt(expected_noise(frame)[0])
        assert f"such a mean's noise, {percent:.3g} %, from 72 degrees of freedom" in " ".join(noise[name]["notes"])
    phases = tmp_path / "phases.csv"
    summaries().assign(comm=1.0).to_csv(phases, index=False)
    several = run("profile", phases, "--target", "time,comm", "--spread", "time_std,runs", "--out", out, "--force")
    assert several.exit_code == 2 and "with several --target columns (time, comm) profile each alone" in said(several)


@pytest.mark.slow  # 2-4.5 s in a slow hour: an integration test, run in CI's second step
def test_suggest_plans_rows_of_as_many_runs_as_a_row_summarises(tmp_path):
    frame = summaries()
    frame["runs"] = np.resize([2, 3, 10], len(frame))
    each = round(1 / float(np.mean(1 / frame.runs)))  # 3.46 → 3: the runs that make a row's noise the measured one
    assert as_dataset(frame, "time", spread="time_std,runs").row_runs == each == 3
    path = tmp_path / "report.csv"
    frame.to_csv(path, index=False)
    plan = ("--target", "time", "--spread", "time_std,runs", "--at", "p=128,n=16000", "--vary", "p=1..128:x2",
            "--devices", "p", "--bootstrap", "20")
    answer = run("suggest", path, *plan, "--json")
    assert answer.exit_code == 0, answer.output
    suggestions = json.loads(answer.stdout)["suggestions"]
    assert suggestions and all(s["runs"] == 3 for s in suggestions)
    plain = tmp_path / "plain.csv"
    frame[["p", "n", "time"]].to_csv(plain, index=False)
    single = run("suggest", plain, *plan[:2], *plan[4:], "--json")  # the same plan for runs of one
    assert json.loads(single.stdout)["suggestions"][0]["runs"] == 1
    text = said(run("suggest", path, *plan))
    assert "each suggestion is 3 runs, as many as a row summarises (the harmonic mean of runs" in text
    assert "a repeat (of a row or of another suggestion) adds its runs to that one row" in text
    assert "(3 runs × p × predicted time)" in text


@pytest.mark.slow  # an integration test of several commands: CI's slow step
def test_a_count_the_same_for_every_row_may_be_given_as_a_number(tmp_path):
    """A report that says 'mean ± sd over 5 runs' has no column of counts: --spread time_std,5."""
    frame = summaries()
    given = as_dataset(frame.drop(columns="runs"), "time", spread="time_std,5")
    assert given.noise == as_dataset(frame, "time", spread="time_std,runs").noise
    assert given.factors == ("p", "n") and given.row_runs == 5
    assert any("(5 runs each, their standard deviation in time_std" in note for note in given.notes)
    named = frame.rename(columns={"runs": "5"}).assign(**{"5": 2})  # a column so named is the count
    assert as_dataset(named, "time", spread="time_std,5").noise[1] == len(frame)
    with pytest.raises(DataError, match="a row summarises at least one run"):
        parse("time_std,0")
    path = tmp_path / "report.csv"
    frame.drop(columns="runs").to_csv(path, index=False)
    result = run("run", path, "--target", "time", "--spread", "time_std,5", "--out", tmp_path / "o", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    assert "within the measured noise" in said(result)
    plan = run("suggest", path, "--target", "time", "--spread", "time_std,5", "--at", "p=128,n=16000", "--vary",
               "p=1..128:x2", "--bootstrap", "20")
    assert plan.exit_code == 0, plan.output
    assert "each suggestion is 5 runs, as many as a row summarises, to be written as one row" in said(plan)


@pytest.mark.slow  # an integration test of several commands: CI's slow step
def test_a_group_holding_a_summarised_configuration_twice_is_named_and_the_others_fitted(tmp_path):
    """MLPerf HPC's summary by benchmark, accelerator and submitter: one submitter's 512-GPU result
    in two rounds stopped the whole run, the other groups' laws with it."""
    frame = summaries()
    both = pd.concat([frame.assign(site="a"), pd.concat([frame, frame.head(2)]).assign(site="b")])
    path = tmp_path / "two.csv"
    both.to_csv(path, index=False)
    result = run("run", path, "--target", "time", "--by", "site", "--spread", "time_std,runs", "--bootstrap", 0,
                 "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "site_a" / "law.json").exists() and not (tmp_path / "out" / "site_b").exists()
    assert "no law for group site=b: --spread time_std,runs:" in said(result)
    assert "holds p=1, n=1000 at lines 20, 38 (and 1 more configuration on several rows)" in said(result)
    groups, failed = load_grouped(path, "time", ["site"], spread=("time_std", "runs"))
    assert list(groups) == ["site=a"] and list(failed) == ["site=b"] and failed["site=b"].kind is RepeatedSummaries
    assert failed["site=b"].startswith("--spread time_std,runs:")  # the reason, as its error said it
    three = tmp_path / "three.csv"  # groups that each repeat one: one note, not one per group
    pd.concat([both, both[both.site == "b"].assign(site="d")]).to_csv(three, index=False)
    result = run("run", three, "--target", "time", "--by", "site", "--spread", "time_std,runs", "--bootstrap", 0,
                 "--out", tmp_path / "three")
    assert result.exit_code == 0, result.output
    assert "no law for 2 groups (site=b; site=d): each holds a configuration on several rows, and --spread takes " \
           "one row per configuration; the first, site=b: --spread time_std,runs:" in said(result)
    assert "no law for group site=d" not in said(result) and said(result).count("no law for") == 1
    only = tmp_path / "only.csv"
    both[both.site == "b"].assign(site=lambda f: np.where(f.n > 1000, "c", "b")).to_csv(only, index=False)
    result = run("run", only, "--target", "time", "--by", "site", "--spread", "time_std,runs", "--out",
                 tmp_path / "none")
    assert result.exit_code == 2 and "none of the 2 groups of --by site can be fitted" in said(result)
    assert "fewer columns" not in said(result) and not (tmp_path / "none").exists()
