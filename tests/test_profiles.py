"""A law per series of a profile: the library's summary and ranking, the executors (one process,
local processes, a Dask LocalCluster) giving the same laws, and the profile command end to end."""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from exprsearch.executor import InProcess, LocalPool
from exprsearch.profiles import SeriesLaw, from_summary, model_profile, ranked, ranked_by, summary_csv
from exprsearch.readers import load_profile
from exprsearch.search import SearchSettings
from tests.conftest import interruptible
from tests.test_cli_decide import run

LAWS = {"solve": lambda p, n: 2 + 0.01 * n / p, "halo": lambda p, n: 1 + 0.5 * np.log2(p),
        "reduce": lambda p, n: 1 + 0.02 * p * p, "idle": lambda p, n: 0 * p}


def write_profile(path: Path, regions: int = 0, seed: int = 0) -> Path:
    """Extra-P text: the LAWS above (idle is all zeros) and ``regions`` more Amdahl-like ones."""
    rng = np.random.default_rng(seed)
    points = [(p, n) for p in (1, 2, 4, 8, 16) for n in (1000, 4000, 16000)]
    laws = dict(LAWS) | {f"k{i}": (lambda a: lambda p, n: a + 0.001 * n / p)(1 + i) for i in range(regions)}
    lines = ["PARAMETER p n", "POINTS " + " ".join(f"( {p} {n} )" for p, n in points), "METRIC time"]
    for region, law in laws.items():
        lines.append(f"REGION {region}")
        for p, n in points:
            lines.append("DATA " + " ".join(f"{v:.6g}" for v in law(p, n) * (1 + 0.01 * rng.standard_normal(3))))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_each_series_gets_a_law_and_the_fastest_growing_comes_first(tmp_path):
    series, failures = load_profile(write_profile(tmp_path / "p.txt"))
    assert list(failures) == ["idle:time"] and "zero or negative" in failures["idle:time"]
    rows = list(model_profile(series, "data-parallel", SearchSettings(resamples=0), at={"p": 64}))
    order = [r.series for r in ranked(rows)]
    assert order[0] == "reduce:time" and order[-1] == "solve:time"  # p² grows; n/p falls at p = 64
    solve = next(r for r in rows if r.series == "solve:time")
    assert solve.at == {"p": 64, "n": 32000} and solve.growth < 1 and "n/p" in solve.dominant_largest
    assert json.loads(solve.law_json)["template"] == "c0 + c1*n/p"


def test_the_growth_drawn_along_a_factor_ends_at_each_series_growth(tmp_path):
    """growth_along is the ranking's growth drawn: 1× at the largest measured p, each series'
    growth at the --at value (with n held at its largest, as --scale 1 ranks it)."""
    from exprsearch.profiles import growth_along

    series, _ = load_profile(write_profile(tmp_path / "p.txt"))
    rows = list(model_profile(series, "data-parallel", SearchSettings(resamples=0), at={"p": 64}, scale=1.0))
    factor, x, curves = growth_along(rows)  # p: every law follows it, n only solve's
    assert factor == "p" and x[0] == 1 and x[-1] == pytest.approx(64)
    growth = {r.series: r.growth for r in rows}
    for name, y in curves:
        assert y[-1] == pytest.approx(growth[name], rel=1e-9)
        assert np.interp(16, x, y) == pytest.approx(1, rel=0.02)  # the largest measured p
    _, _, values = growth_along(rows, relative=False)  # the laws' own values, as phases are stacked
    for (name, y), row in zip(values, rows):
        assert name == row.series and y[-1] == pytest.approx(row.predicted_at, rel=1e-9)


def test_profile_plot_needs_matplotlib_before_any_series_is_modelled(tmp_path, monkeypatch):
    import exprsearch.plot
    from exprsearch.plot import PlotError

    def missing():
        raise PlotError("plots need matplotlib: pip install 'exprsearch[plot]' (or pip install matplotlib)")

    monkeypatch.setattr(exprsearch.plot, "require_matplotlib", missing)
    result = run("profile", write_profile(tmp_path / "p.txt"), "--plot", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "plots need matplotlib" in result.output and "modelling" not in result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.slow  # 1.4 s on local processes, more on Dask: an integration test, run in CI's second step
@pytest.mark.parametrize("kind", ["local", "dask"])
def test_the_laws_do_not_depend_on_what_runs_them(tmp_path, kind):
    series, _ = load_profile(write_profile(tmp_path / "p.txt", regions=2))
    settings = SearchSettings(resamples=0)
    alone = summary_csv(list(model_profile(series, "data-parallel", settings, executor=InProcess())))
    if kind == "local":
        pool = LocalPool(2)
    else:
        pytest.importorskip("dask.distributed")
        from exprsearch.executor import DaskCluster

        pool = DaskCluster("local:2")
    try:
        assert summary_csv(list(model_profile(series, "data-parallel", settings, executor=pool))) == alone
    finally:
        pool.close()


@pytest.mark.slow  # 1.2-1.4 s: an integration test, run in CI's second step
def test_profile_command_writes_the_summary_and_resumes(tmp_path):
    data = write_profile(tmp_path / "p.txt")
    out = tmp_path / "o"
    first = run("profile", data, "-g", "data-parallel", "--at", "p=64", "--out", out, "--laws", "--report")
    assert first.exit_code == 0, first.output
    text = " ".join(first.output.split())
    assert "3 of 4 series modelled" in text and "1 series could not be modelled" in text
    assert "configuration to p=64 (other factors × 2)" in text  # n, which --at leaves, is doubled
    rows = (out / "laws.csv").read_text().splitlines()
    assert rows[0].startswith("series,law,") and rows[1].startswith("reduce:time,") and rows[-1].startswith("idle:time,")
    assert json.loads((out / "series" / "solve_time" / "law.json").read_text())["template"] == "c0 + c1*n/p"
    page = (out / "report.html").read_text()
    assert page.index("reduce:time") < page.index("halo:time") < page.index("solve:time")  # ranked by growth
    assert "p = 64" in page and "Series not modelled" in page and "idle:time" in page
    assert "shown" not in text  # all three in the table
    short = run("profile", data, "-g", "data-parallel", "--at", "p=64", "--out", tmp_path / "o2", "--top", "2")
    assert "the first 2 of 3 shown (--top sets how many)" in " ".join(short.output.split())
    again = run("profile", data, "-g", "data-parallel", "--at", "p=64", "--out", out)
    assert again.exit_code == 2 and "already holds laws.csv" in again.output
    resumed = run("profile", data, "-g", "data-parallel", "--at", "p=64", "--out", out, "--resume")
    assert resumed.exit_code == 0 and "modelling 0 series" in resumed.output and "(4 kept" in resumed.output
    other = run("profile", data, "-g", "default", "--at", "p=64", "--out", out, "--resume")
    assert other.exit_code == 2 and "made with other inputs (grammar)" in " ".join(other.output.split())


@pytest.mark.slow  # 1.2-1.4 s: an integration test, run in CI's second step
def test_a_long_profile_says_how_far_it_is_where_no_bar_shows(tmp_path, monkeypatch):
    """Piped to a log, profile's bar does not show: a line every LOG_EVERY seconds says how many
    series are done and about how long the rest will take; a profile shorter than that says none."""
    from exprsearch.cli import common

    data = write_profile(tmp_path / "p.txt")
    short = run("profile", data, "-g", "data-parallel", "--at", "p=64", "--out", tmp_path / "a", "--jobs", "1")
    assert short.exit_code == 0 and "series done in" not in short.output
    monkeypatch.setattr(common, "LOG_EVERY", 0.0)
    logged = run("profile", data, "-g", "data-parallel", "--at", "p=64", "--out", tmp_path / "b", "--jobs", "1")
    lines = [line for line in logged.output.splitlines() if line.startswith("modelling: ")]
    assert logged.exit_code == 0 and [line.split(" series")[0] for line in lines] == \
        [f"modelling: {k} of {len(lines)}" for k in range(1, len(lines) + 1)] and len(lines) >= 3
    assert all(" s, about " in line and line.endswith(" left") for line in lines)


def test_profile_of_a_long_table(tmp_path):
    lines = ["p,n,kernel,metric,value"] + [f"{p},{n},{k},time,{f(p, n) * (1 + 0.01 * r):.6g}"
                                           for k, f in (("solve", LAWS["solve"]), ("halo", LAWS["halo"]))
                                           for p in (1, 2, 4, 8, 16) for n in (1000, 4000) for r in (-1, 1)]
    (tmp_path / "long.csv").write_text("\n".join(lines) + "\n")
    result = run("profile", tmp_path / "long.csv", "-g", "data-parallel", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    import csv

    with (tmp_path / "o" / "laws.csv").open() as stream:
        names = sorted(row["series"] for row in csv.DictReader(stream))
    assert names == ["kernel=halo,metric=time", "kernel=solve,metric=time"]


@pytest.mark.slow  # run --by --segments is tested in the fast step
def test_profile_segments_ranks_a_series_that_changes_regime_by_the_segment_above(tmp_path):
    lines = ["kernel,p,value"] + [f"{k},{p},{f(p)}" for k, f in (("cache", lambda p: p**2 if p <= 6 else p + 30),
                                                                 ("plain", lambda p: 2 + 40 / p))
                                  for p in range(1, 11) for _ in range(2)]
    (tmp_path / "long.csv").write_text("\n".join(lines) + "\n")
    result = run("profile", tmp_path / "long.csv", "--segments", "p", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "1 of 2 series change regime along p (kernel=cache)" in " ".join(result.output.split())
    rows = {r["series"]: r for r in json.loads((tmp_path / "o" / "laws.json").read_text())["series"]}
    cache = rows["kernel=cache"]
    assert cache["law"].replace(" ", "") in ("value=1.0*p+30.0", "value=p+30") and "the law below it" in cache["notes"][0]
    assert rows["kernel=plain"]["notes"][0].startswith("no change of regime along p")
    missing = run("profile", tmp_path / "long.csv", "--segments", "n", "--out", tmp_path / "o2")
    assert missing.exit_code == 2 and "--segments n: no series has a factor n" in missing.output


@pytest.mark.slow  # 1.5-4.7 s: an integration test, run in CI's second step
def test_profile_of_a_table_with_summary_columns_takes_the_factors_named(tmp_path):
    """Benchmark summaries carry statistics beside the factors (N samples, sd, min…); statistics
    named alone are left out as measurements, the other numeric columns are factors, so --factors
    says which ones are (run had it, profile not)."""
    lines = ["lib,op,ranks,samples,median,sd,min"] + [
        f"{lib},{op},{p},{1000 + 7 * p},{f(p):.6g},{0.1 * f(p):.4g},{0.9 * f(p):.6g}"
        for lib, op, f in (("a", "bcast", lambda p: 2 + 3 * np.log2(p)), ("a", "gather", lambda p: 1 + 0.5 * p),
                           ("b", "bcast", lambda p: 4 + 2 * np.log2(p)))
        for p in (2, 4, 8, 16, 32, 64)]
    table = tmp_path / "mpi.csv"
    table.write_text("\n".join(lines) + "\n")
    plain = run("profile", table, "--target", "median", "--by", "lib,op", "--out", tmp_path / "o1")
    # the statistics are no settings; the count of samples, named as no sample size, stays a factor
    assert plain.exit_code == 0 and "sd (another statistic of the measured value); min (another statistic of the " \
        "measured value)" in " ".join(plain.output.split())
    result = run("profile", table, "--target", "median", "--by", "lib,op", "--factors", "ranks", "--at", "ranks=128",
                 "--out", tmp_path / "o2")
    assert result.exit_code == 0, result.output
    assert "configuration to ranks=128; their laws" in " ".join(result.output.split())  # no other factor to scale
    laws = json.loads((tmp_path / "o2" / "laws.json").read_text())
    assert laws["context"]["factors"] == "ranks"
    found = {r["series"]: r["law"] for r in laws["series"]}
    assert found == {"lib=a,op=bcast": "median = 3.0*log2(ranks) + 2.0", "lib=a,op=gather": "median = 0.5*ranks + 1.0",
                     "lib=b,op=bcast": "median = 2.0*log2(ranks) + 4.0"}
    # a stray comma in --by is skipped, as run skips it
    stray = run("profile", table, "--target", "median", "--by", "lib,,op", "--factors", "ranks", "--out", tmp_path / "o5")
    assert stray.exit_code == 0, stray.output
    assert {r["series"]: r["law"] for r in json.loads((tmp_path / "o5" / "laws.json").read_text())["series"]} == found
    unknown = run("profile", table, "--target", "median", "--by", "lib,op", "--factors", "ranks,nodes",
                  "--out", tmp_path / "o3")
    assert unknown.exit_code == 2 and "factor column 'nodes' is not in" in unknown.output
    assert not (tmp_path / "o3").exists()  # one answer for the option, not one failure per series
    both = run("profile", table, "--target", "median", "--by", "lib,op", "--factors", "ranks,op", "--out", tmp_path / "o4")
    assert both.exit_code == 2 and "--factors op: that column names the groups" in both.output


def test_laws_csv_carries_each_series_notes(tmp_path):
    """A note about a series' data (here a stalled run) is in laws.csv, not only in laws.json, and
    names the run's line in the file (not its row within the series)."""
    import csv

    lines = ["kernel,p,n,value"] + [f"{k},{p},1000,{(2 + 40 / p) * (5 if (k, p, r) == ('b', 8, 1) else 1 + 0.01 * r):.6g}"
                                  for k in "ab" for p in (1, 2, 4, 8, 16, 32) for r in range(3)]
    (tmp_path / "k.csv").write_text("\n".join(lines) + "\n")
    result = run("profile", tmp_path / "k.csv", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    with (tmp_path / "o" / "laws.csv").open() as stream:
        notes = {row["series"]: row["notes"] for row in csv.DictReader(stream)}
    # series a fills lines 2-19; series b's second run at p = 8 is its 11th row, line 30
    assert "1 run(s) lie far above the other runs of their configuration: line 30 (" in notes["kernel=b"]
    assert "lie far" not in notes["kernel=a"]
    said = " ".join(result.output.split())  # at the end, as the series that could not be modelled are
    assert "note: on the data of kernel=b: 1 run(s) lie far" in said
    assert "note: on the data of 2 series: left out factor(s) with a single value: n" in said  # once, not twice


def test_profile_drops_stray_runs_when_asked(tmp_path):
    import csv

    lines = ["kernel,p,n,value"] + [f"{k},{p},1000,{(2 + 40 / p) * (5 if (k, p, r) == ('b', 8, 1) else 1 + 0.01 * r):.6g}"
                                  for k in "ab" for p in (1, 2, 4, 8, 16, 32) for r in range(3)]
    (tmp_path / "k.csv").write_text("\n".join(lines) + "\n")
    result = run("profile", tmp_path / "k.csv", "--out", tmp_path / "o", "--drop-stray")
    assert result.exit_code == 0, result.output
    with (tmp_path / "o" / "laws.csv").open() as stream:
        notes = {row["series"]: row["notes"] for row in csv.DictReader(stream)}
    assert "dropped 1 run(s) far from the other runs of their configuration: line 30 (4.9× the median of its 3 runs)" in notes["kernel=b"]
    assert json.loads((tmp_path / "o" / "laws.json").read_text())["context"]["drop_stray"] is True


def test_profile_searches_each_series_with_run_s_search_options(tmp_path):
    """--loss, --validation and --time-limit as run takes them: each series' law is the one search
    finds with the same settings (huber discounts kernel b's stalled run), and a time limit that
    stopped a series' search is in its notes."""
    from exprsearch.fit import FitSettings
    from exprsearch.search import search
    from exprsearch.vocabulary import to_text

    lines = ["kernel,p,n,value"] + [f"{k},{p},1000,{(2 + 40 / p) * (5 if (k, p, r) == ('b', 8, 1) else 1 + 0.01 * r):.6g}"
                                  for k in "ab" for p in (1, 2, 4, 8, 16, 32) for r in range(3)]
    (tmp_path / "k.csv").write_text("\n".join(lines) + "\n")
    laws = {}
    for name, options in (("squared", []), ("huber", ["--loss", "huber", "--validation", "kfold"]),
                          ("limited", ["--time-limit", "0.0001"])):
        result = run("profile", tmp_path / "k.csv", "-g", "data-parallel", "--out", tmp_path / name, "--jobs", "1",
                     *options)
        assert result.exit_code == 0, result.output
        laws[name] = {r["series"]: (r["law_json"]["expression"], r["notes"])
                      for r in json.loads((tmp_path / name / "laws.json").read_text())["series"]}
    frame = pd.read_csv(tmp_path / "k.csv")
    alone = search(frame[frame.kernel == "b"].drop(columns="kernel"), "value", "data-parallel",
                   settings=SearchSettings(FitSettings(loss="huber"), "kfold", 0)).law
    assert laws["huber"]["kernel=b"][0] == to_text(alone.expression) != laws["squared"]["kernel=b"][0]
    assert json.loads((tmp_path / "huber" / "laws.json").read_text())["context"]["loss"] == "huber"
    assert any(n.startswith("stopped at the time limit of 0.0001 s") for n in laws["limited"]["kernel=a"][1])


def test_profile_keeps_a_report_already_in_its_directory(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "report.html").write_text("the user's own")
    result = run("profile", write_profile(tmp_path / "p.txt"), "--report", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "already holds report.html" in " ".join(result.output.split())
    assert (tmp_path / "o" / "report.html").read_text() == "the user's own"


def test_times_and_rates_rank_by_how_much_a_run_s_time_grows():
    rows = [SeriesLaw("halves", growth=0.5), SeriesLaw("doubles", growth=2.0), SeriesLaw("stalled", growth=0.0, rate=True),
            SeriesLaw("rate up 10 %", growth=1.1, rate=True), SeriesLaw("failed", error="no data")]
    assert [r.series for r in ranked(rows)] == ["stalled", "doubles", "rate up 10 %", "halves", "failed"]
    assert ranked_by(rows).startswith("how much a run's time grows")
    assert ranked_by(rows[:2]) == "predicted growth" and ranked_by(rows[2:4]).startswith("how little their rate grows")


def test_a_series_whose_law_leaves_out_a_factor_for_want_of_configurations_ranks_after_the_measured(tmp_path):
    """A series measured at two worker counts gets the constant (no law in p is affordable): its
    growth of 1× is not a measurement, so it ranks after the series whose growth is, shown as —."""
    lines = ["model,p,time"] + [f"a,{p},{100 / p + 1:.6g}" for p in (1, 2, 4, 8)] + ["b,1,50", "b,8,7"]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    result = run("profile", tmp_path / "t.csv", "--target", "time", "--by", "model", "--report", "--out", tmp_path / "o")
    said = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    rows = from_summary((tmp_path / "o" / "laws.json").read_text())[1]
    assert [(r.series, r.blind) for r in ranked(rows)] == [("model=a", False), ("model=b", True)]
    assert rows[0].growth < 1 == rows[1].growth  # b's 1× would rank first by growth alone
    cells = [[c.strip() for c in line.split("│")[1:4]] for line in result.output.splitlines() if line.startswith("│")]
    assert cells[1] == ["2", "model=b", "—"] and "—: the law leaves out a factor the data vary" in said
    assert "1 series leaves out a factor its data vary, with too few configurations" in said
    assert "its growth along it is not measured, so it ranks after the others" in said
    page = (tmp_path / "o" / "report.html").read_text()
    assert "model=b</td><td>—</td>" in page and "<p>—: the law leaves out a factor the data vary" in page


@pytest.mark.slow  # 2-4.5 s in a slow hour: an integration test, run in CI's second step
def test_a_table_of_phases_is_a_series_per_target_column(tmp_path):
    """Where time goes: --target fwd_s,bwd_s,comm_s models each phase as a series (per --by group
    too), none taking another phase's time as a factor; the phase that grows ranks first."""
    import csv

    rng = np.random.default_rng(6)
    lines = ["model,p,n,fwd_s,bwd_s,comm_s"] + [
        f"{m},{p},{n},{k * n / p * (1 + 0.01 * rng.standard_normal()):.6g},"
        f"{2 * k * n / p * (1 + 0.01 * rng.standard_normal()):.6g},"
        f"{(0.5 * np.log2(p) + 0.1) * (1 + 0.01 * rng.standard_normal()):.6g}"
        for m, k in (("a", 0.001), ("b", 0.003)) for p in (1, 2, 4, 8, 16) for n in (1000, 2000, 4000) for _ in range(2)]
    (tmp_path / "phases.csv").write_text("\n".join(lines) + "\n")
    result = run("profile", tmp_path / "phases.csv", "--target", "fwd_s,bwd_s,comm_s", "--by", "model",
                 "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    with (tmp_path / "o" / "laws.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert {r["series"] for r in rows} == {f"model={m}:{t}" for m in "ab" for t in ("fwd_s", "bwd_s", "comm_s")}
    assert {r["series"] for r in rows[:2]} == {"model=a:comm_s", "model=b:comm_s"}  # the phase that grows
    assert all(set(json.loads(r.law_json)["factors"]) == {"p", "n"}
               for r in from_summary((tmp_path / "o" / "laws.json").read_text())[1])
    whole = run("profile", tmp_path / "phases.csv", "--target", "fwd_s,bwd_s,comm_s", "--factors", "p,n",
                "--out", tmp_path / "w")
    assert whole.exit_code == 0, whole.output
    with (tmp_path / "w" / "laws.csv").open() as stream:
        assert [r["series"] for r in csv.DictReader(stream)][0] == "comm_s"
    typo = run("profile", tmp_path / "phases.csv", "--target", "fwd_s,bwdd_s", "--out", tmp_path / "t")
    assert typo.exit_code == 2 and "target column 'bwdd_s' is not in" in typo.output
    alone = run("profile", tmp_path / "phases.csv", "--target", "fwd_s", "--out", tmp_path / "a")
    assert alone.exit_code == 2 and "or several --target columns (a time per phase)" in " ".join(alone.output.split())


@pytest.mark.slow  # an integration test of several commands: CI's slow step
def test_a_workbook_of_a_sheet_per_series_is_a_profile(tmp_path):
    """A workbook with a sheet per GPU is a series per sheet (with --by, per group of each sheet),
    where run asks for --sheet; a target no sheet has stops with one sentence."""
    import csv

    from tests.test_tables import _workbook

    laws = {"K80": lambda p: 2 + 40 / p, "P100": lambda p: 1 + 20 / p + 0.05 * p}
    sheets = [[["p", "model", "time"]] + [[p, m, f(p) * (1 + 0.01 * k) * (2 if m == "big" else 1)]
                                          for p in (1, 2, 4, 8, 16) for m in ("small", "big") for k in (-1, 1)]
              for f in laws.values()]
    path = _workbook(tmp_path / "gpus.xlsx", *sheets)
    result = run("profile", path, "--target", "time", "--factors", "p", "--by", "model", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    with (tmp_path / "o" / "laws.csv").open() as stream:
        names = {r["series"] for r in csv.DictReader(stream)}
    assert names == {f"sheet=sheet{i},model={m}" for i in (1, 2) for m in ("small", "big")}
    whole = run("profile", path, "--target", "time", "--factors", "p", "--out", tmp_path / "w")
    assert whole.exit_code == 0, whole.output
    with (tmp_path / "w" / "laws.csv").open() as stream:
        assert {r["series"] for r in csv.DictReader(stream)} == {"sheet=sheet1", "sheet=sheet2"}
    typo = run("profile", path, "--target", "tme", "--out", tmp_path / "t")
    assert typo.exit_code == 2 and "no sheet of" in typo.output and "target column 'tme' is not in" in typo.output


def test_a_rate_that_grows_least_ranks_first(tmp_path):
    """A throughput is good news when it grows: the series that scale worst are those whose rate
    grows least, so they rank first (a time's ranking, read the other way, put them last)."""
    import csv

    laws = {"flat": lambda p: 400 + 5 * p, "linear": lambda p: 100 * p}
    lines = ["model,gpus,samples_per_s"] + [f"{m},{p},{f(p) * (1 + 0.01 * r):.6g}" for m, f in laws.items()
                                            for p in (1, 2, 4, 8, 16) for r in (-1, 1)]
    (tmp_path / "rates.csv").write_text("\n".join(lines) + "\n")

    def order(out, *options):
        result = run("profile", tmp_path / "rates.csv", "--target", "samples_per_s", "--by", "model",
                     "-g", "data-parallel", "--map", "p=gpus", *options, "--out", tmp_path / out)
        assert result.exit_code == 0, result.output
        with (tmp_path / out / "laws.csv").open() as stream:
            rows = list(csv.DictReader(stream))
        return [r["series"] for r in rows], {r["target_kind"] for r in rows}, " ".join(result.output.split())

    names, kinds, said = order("o1")
    assert names == ["model=flat", "model=linear"] and kinds == {"rate"}
    assert "ranked by how little their rate grows" in said and "reads as a rate (higher is better)" in said
    names, kinds, said = order("o2", "--target-kind", "time")
    assert names == ["model=linear", "model=flat"] and kinds == {"time"} and "reads as a rate" not in said
    unbound = run("profile", tmp_path / "rates.csv", "--target", "samples_per_s", "--by", "model", "-g", "data-parallel",
                  "--out", tmp_path / "o3")
    assert unbound.exit_code == 2 and "pass --map p=gpus" in unbound.output and not (tmp_path / "o3").exists()


@pytest.mark.slow
def test_ctrl_c_keeps_the_finished_series_and_says_how_to_resume(tmp_path):
    data = write_profile(tmp_path / "p.txt", regions=40)
    command = [sys.executable, "-c", "from exprsearch.cli import entry; entry()", "profile", str(data),
               "--jobs", "1", "--out", str(tmp_path / "o")]  # the default grammar: about 0.4 s per series
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "COLUMNS": "200"}, preexec_fn=interruptible)
    time.sleep(5)  # imports, then a few of the 43 series
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Resume with the same command and --resume" in " ".join(stderr.split())
    finished = (tmp_path / "o" / "laws.csv").read_text().splitlines()[1:]
    assert 1 <= len(finished) < 44 and "Traceback" not in stderr


@pytest.mark.parametrize("args, fragment", [
    (["--jobs", "-1"], "--jobs -1: give a whole number of at least 0"),
    (["--scale", "0"], "--scale 0: give a positive multiple"),
    (["--at", "p64"], "--at p64: write FACTOR=NUMBER pairs"),
    (["--bootstrap", "-3"], "resamples"),
    (["--target", "x"], "--target, --by, --factors, --sheet, --drop-missing and --spread apply to tables"),
    (["--factors", "p"], "--target, --by, --factors, --sheet, --drop-missing and --spread apply to tables"),
    (["--sheet", "runs"], "--target, --by, --factors, --sheet, --drop-missing and --spread apply to tables"),
    (["--drop-missing"], "--target, --by, --factors, --sheet, --drop-missing and --spread apply to tables"),
    (["--spread", "sd,n"], "--target, --by, --factors, --sheet, --drop-missing and --spread apply to tables"),
    (["-g", "nonsense"], "no built-in grammar 'nonsense'"),  # once, not as every series' failure
    (["-g", "data-parallel", "--map", "q=p"], "'q' is not a factor of grammar 'data-parallel'"),
    (["--intrinsic", "layers"], "--intrinsic names 'layers', which is not a factor of the data"),
    (["--target-kind", "up"], "--target-kind up: give time or rate"),
    (["--loss", "cubic"], "loss (--loss) must be one of squared, huber, absolute"),
    (["--time-limit", "-1"], "time_limit (--time-limit) must be a finite number of at least 0"),
])
def test_bad_profile_options_exit_2_with_one_sentence(tmp_path, args, fragment):
    result = run("profile", write_profile(tmp_path / "p.txt"), *args, "--out", tmp_path / "o")
    assert result.exit_code == 2 and fragment in " ".join(result.output.split()), result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_one_search_refined_on_a_dask_cluster_gives_the_same_law():
    pytest.importorskip("dask.distributed")
    from exprsearch import search
    from tests.conftest import WORKERS, measurements

    frame = measurements(lambda p, n: 1 + 1e-4 * n**1.5 / p + 0.2 * p**0.5, {"p": WORKERS, "n": (1000, 4000, 16000)})
    alone = search(frame, "time", "data-parallel", jobs=1, resamples=0, prune_margin=None)
    clustered = search(frame, "time", "data-parallel", scheduler="local:2", resamples=0, prune_margin=None)
    assert alone.refined >= 16 and clustered.law.to_json() == alone.law.to_json()


@pytest.mark.slow
def test_a_local_dask_cluster_starts_quietly_beside_another():
    """With another cluster's dashboard on port 8787, dask used to warn 'Port 8787 is already in
    use' into the user's output; exprsearch asks for any free port."""
    pytest.importorskip("dask.distributed")
    import socket
    import warnings

    from exprsearch.executor import DaskCluster

    taken = socket.socket()
    try:
        taken.bind(("", 8787))
        taken.listen()
    except OSError:
        pass  # something holds it already: the situation under test
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cluster = DaskCluster("local:1")
            cluster.close()
    finally:
        taken.close()
    assert not [w for w in caught if "already in use" in str(w.message)]


def test_a_scheduler_that_cannot_be_one_is_refused_before_the_search(tmp_path):
    from exprsearch.errors import SettingsError
    from exprsearch.search import SearchSettings

    with pytest.raises(SettingsError, match="write a Dask address"):
        SearchSettings(scheduler="nonsense")
    if importlib.util.find_spec("distributed") is None:  # the README's test command installs no dask extra
        with pytest.raises(SettingsError, match=r"a scheduler needs dask.distributed: pip install 'exprsearch\[dask\]'"):
            SearchSettings(scheduler="local:2")
    else:
        assert SearchSettings(scheduler="local:2").scheduler == "local:2"


def test_rows_in_no_series_stop_profile_unless_dropped(tmp_path):
    lines = ["kernel,p,value"] + [f"{k},{p},{2 + 40 / p:.6g}" for k in ("solve", "halo", "") for p in (1, 2, 4, 8, 16)]
    (tmp_path / "k.csv").write_text("\n".join(lines) + "\n")
    stopped = run("profile", tmp_path / "k.csv", "-g", "data-parallel", "--out", tmp_path / "o")
    assert stopped.exit_code == 2
    assert "leaves --by column(s) kernel empty at lines 12, 13, 14, 15, 16" in " ".join(stopped.output.split())
    dropped = run("profile", tmp_path / "k.csv", "-g", "data-parallel", "--out", tmp_path / "o", "--drop-missing")
    assert dropped.exit_code == 0, dropped.output
    assert "2 of 2 series modelled" in " ".join(dropped.output.split())


def test_a_dominant_share_above_a_hundred_percent_is_explained_under_the_table():
    """The bundled pipeline's d=1 law `0.00521·√L·√m − 0.006126` has its dominant term at 105 % of
    the time: the negative constant takes the rest; the table now says so under it."""
    from rich.console import Console

    from exprsearch.cli.profile import _print
    from exprsearch.profiles import SeriesLaw

    def printed(share: int) -> str:
        console = Console(width=100, record=True)
        rows = [SeriesLaw("d=1", "t = x", largest={"L": 8.0}, at={"L": 16.0}, growth=2.0,
                          dominant_at=f"0.00521*sqrt(L) ({share} %)")]
        _print(rows, 10, {}, 2.0, console)
        return " ".join(console.export_text().split())

    assert "a share above 100 %: the law's other terms are negative there (a negative constant)" in printed(105)
    assert "a share above 100 %" not in printed(100)


def test_segments_along_a_factor_every_series_held_at_one_value_says_so(tmp_path):
    lines = ["kernel,p,n,value"] + [f"{k},{p},8,{2 + 40 / p}" for k in ("a", "b") for p in range(1, 7)]
    (tmp_path / "held.csv").write_text("\n".join(lines) + "\n")
    result = run("profile", tmp_path / "held.csv", "--segments", "n", "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert "--segments n: every series measured n at one value (8), so none can be split along it" in \
        " ".join(result.output.split())
    assert not (tmp_path / "o").exists()
