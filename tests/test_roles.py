"""Columns that are measurements of the runs (a rate, a statistic of the time) are not taken as
factors unless named; settings that explain the time, designed or derived, stay factors."""

import json

import numpy as np
import pandas as pd
import pytest

from exprsearch import rowfilter
from exprsearch.data import load_table
from exprsearch.roles import derived_notes, measured_columns, row_numbers, stem


def _table(tmp_path, extra=lambda frame: frame, noise: float = 0.02, seed: int = 0):
    """A p × n grid with repeats: time = 1 + n/(100 p), and whatever ``extra`` adds to it."""
    rng = np.random.default_rng(seed)
    rows = [{"p": p, "n": n, "time": (1 + n / (100 * p)) * (1 + noise * rng.standard_normal())}
            for p in (1, 2, 4, 8) for n in (1000, 4000) for _ in range(3)]
    frame = extra(pd.DataFrame(rows))
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    return path


def _rates(frame):
    rng = np.random.default_rng(5)
    frame["steps_per_sec_mean"] = 1 / frame["time"]
    frame["steps_per_sec_median"] = frame["steps_per_sec_mean"] * (1 + 0.01 * rng.standard_normal(len(frame)))
    frame["steps_per_sec_std"] = 0.05 * frame["steps_per_sec_mean"] * rng.uniform(0.5, 1.5, len(frame))
    return frame


def test_a_rate_and_its_statistics_are_left_out_and_named(tmp_path):
    data = load_table(_table(tmp_path, _rates), "time")
    assert data.factors == ("p", "n")
    note = next(n for n in data.notes if n.startswith("left out column(s) that look like measurements"))
    assert "steps_per_sec_mean (alone it gives time exactly: time ≈ 1/steps_per_sec_mean)" in note
    assert "steps_per_sec_median (alone it gives time within" in note
    assert "steps_per_sec_std (another statistic of steps_per_sec)" in note
    assert "--factors" in note


def test_named_factors_are_taken_as_given(tmp_path):
    data = load_table(_table(tmp_path, _rates), "time", factors=["p", "steps_per_sec_mean"])
    assert data.factors == ("p", "steps_per_sec_mean")
    assert not any("measurements of the runs" in n for n in data.notes)


def _statistics(frame):
    frame["time_max"] = frame["time"] * 1.3
    frame["time_sd"] = frame["time"] * 0.1 * (1 + frame.index % 3)
    return frame


def _medians(frame):
    # MLPerf's epochs to converge, a median over the runs as the time to train is: it repeats its levels
    frame = frame.rename(columns={"time": "ttt_median"})
    frame["epochs_median"] = 10 + 2 * (frame.index % 4)
    frame["avg_tensor_mb"] = np.where(frame["n"] > 1000, 40.0, 10.0)  # a model's property: not of the runs
    return frame


def _counted_runs(frame):
    frame["n_runs"] = 3 + frame.index % 2
    frame["avg_epochs"] = 10 + 2 * (frame.index % 4)
    return frame


def _counted_samples(frame):
    # CM-DARE's n_samples (34-37 mostly) beside steps_per_sec_mean and _std: the statistics' sample
    # size; the designed n, in a full grid with p beside time_max and time_sd (_statistics), stays
    frame = frame.rename(columns={"time": "time_mean"})
    frame["time_std"] = 0.02 * frame["time_mean"]
    frame["n_samples"] = [35, 36, 36, 37, 36, 72, 35, 36, 34, 36, 37, 36] * (len(frame) // 12)
    return frame


def _peers_sampled(frame):
    # hivemind's n (the samples its statistics summarise) beside samples_per_sec_mean and
    # num_peers_median, the median of the peers the run saw: a statistic of the same samples
    frame = _counted_samples(frame)
    frame["peers_median"] = frame["p"] * (1 - 0.1 * (frame.index % 3))
    return frame


def _bare_statistics(frame):
    # Extra-P's mpi_data.csv: one row per configuration, statistics named alone (mean, sd, median,
    # iqr), bounds of their confidence intervals and N, the samples they summarise
    rng = np.random.default_rng(7)
    frame = frame.rename(columns={"time": "median"})
    frame["mean"] = frame["median"] * rng.uniform(1.05, 1.6, len(frame))
    frame["sd"] = frame["median"] * rng.uniform(0.1, 3, len(frame))
    frame["iqr"] = frame["median"] * rng.uniform(0.01, 0.3, len(frame))
    frame["ci_sd_left"] = frame["sd"] * rng.uniform(0.6, 0.95, len(frame))
    frame["N"] = rng.integers(1500, 2000, len(frame))
    return frame


def _olympic(frame):
    # MLPerf's summaries: the olympic mean (best and worst runs dropped) beside n_runs
    frame["n_runs"] = 5 + frame.index % 2
    frame["epochs_olympic"] = 10 + 2 * (frame.index % 4)
    return frame


def _bare_spread(frame):
    # a summary table as --spread takes it, its columns named bare: time (the mean), sd, count
    frame["sd"] = frame["time"] * (0.01 + 0.002 * (frame.index % 5))
    frame["count"] = 3 + frame.index % 4
    return frame


def _bare_sd(frame):
    frame["sd"] = frame["time"] * (0.01 + 0.002 * (frame.index % 5))
    return frame


def _steps(frame):
    frame["global_step"] = 100 * (1 + frame.index % 3)  # where in its run each row was logged
    frame["epochs"] = 1 + frame.index % 2  # how many a run takes: a setting
    return frame


@pytest.mark.parametrize("extra, target, factors, said", [
    (_statistics, "time", ("p", "n"), "time_sd (another statistic of time)"),
    (_medians, "ttt_median", ("p", "n", "avg_tensor_mb"),
     "epochs_median (a median, as ttt_median is: a statistic of the same runs)"),
    (_counted_runs, "time", ("p", "n"), "avg_epochs (a mean over the runs that n_runs counts)"),
    (_counted_samples, "time_mean", ("p", "n"),
     "n_samples (it counts the samples that time's statistics summarise, their sample size)"),
    (_peers_sampled, "time_mean", ("p", "n"), "peers_median (a median over the samples that n_samples counts)"),
    (_bare_statistics, "median", ("p", "n"),
     "mean (another statistic of the measured value); sd (another statistic of the measured value); iqr (another "
     "statistic of the measured value); ci_sd_left (another statistic of the measured value); N (it counts the "
     "samples that the measured value's statistics summarise, their sample size)"),
    (_olympic, "time", ("p", "n"), "epochs_olympic (an olympic over the runs that n_runs counts)"),
    (_bare_spread, "time", ("p", "n"), "sd (a std over the runs that count counts); count (it counts the runs a "
     "row summarises, the sample size of its statistics). A law for time needs what is set before a run; name the "
     "factors with --factors to use them; where sd is the standard deviation of the runs each row summarises, "
     "--spread sd,count tests the law against their noise"),
    (_bare_sd, "time", ("p", "n"), "sd (a std named alone beside time: the scatter of the runs each row summarises)"),
    (_steps, "time", ("p", "n", "epochs"),
     "global_step (it numbers the steps or epochs within a run, which are no setting of it)"),
])
def test_columns_that_summarise_or_number_the_runs_are_left_out_by_name(tmp_path, extra, target, factors, said):
    data = load_table(_table(tmp_path, extra), target)
    assert data.factors == factors
    assert said in next(n for n in data.notes if "measurements of the runs" in n)


def test_columns_named_as_measurements_that_differ_on_most_rows_are_left_out(tmp_path):
    rng = np.random.default_rng(2)

    def more(frame):
        frame["mfu_pct"] = 40 * rng.uniform(0.8, 1.2, len(frame))
        frame["cost_usd"] = frame["time"] * frame["p"] * 0.9 * rng.uniform(0.9, 1.1, len(frame))
        return frame

    def logged(frame):  # what a W&B export adds: the run's wall time and when it was logged
        frame = more(frame)
        return frame.assign(_runtime=frame["time"] * 1000 * rng.uniform(0.95, 1.05, len(frame)),
                            _timestamp=1.764e9 + 3600 * np.arange(len(frame)))

    data = load_table(_table(tmp_path, logged), "time")
    assert data.factors == ("p", "n")
    note = next(n for n in data.notes if "measurements of the runs" in n)
    assert "mfu_pct (named as a measurement (mfu) and different on 100 % of the rows" in note
    assert "cost_usd (named as a measurement (cost)" in note
    assert "_runtime (alone it gives time within" in note and "_timestamp (named as a measurement (timestamp)" in note


def test_another_phase_s_time_beside_the_target_is_a_measurement(tmp_path):
    """A table of phases (fwd_s, bwd_s, comm_s): fitting one, another phase's time differs on every
    row while the settings repeat their levels, so it is no factor, even where it does not follow
    the target (comm_s grows with log2 p where fwd_s falls as n/p); a time set at levels is kept."""
    rng = np.random.default_rng(4)

    def phases(frame):
        return frame.assign(comm_s=(0.5 * np.log2(frame["p"]) + 0.1) * rng.uniform(0.98, 1.02, len(frame)),
                            timeout_s=[60.0, 120.0, 600.0] * (len(frame) // 3))

    data = load_table(_table(tmp_path, phases), "time")
    assert data.factors == ("p", "n", "timeout_s")
    note = next(n for n in data.notes if "measurements of the runs" in n)
    assert "comm_s (named as a measurement (time) and different on 100 % of the rows" in note


@pytest.mark.parametrize("extra", [
    # a setting named like a measurement but set at levels: an injected network latency
    lambda f: f.assign(latency_ms=[0.1, 1.0, 10.0] * (len(f) // 3)),
    # a derived setting unique to nearly every row that the time follows: a product of the others
    lambda f: f.assign(work=f["n"] / f["p"] * (1 + 0 * f["p"])),
    # a column different on every row that does not explain the time (a free memory reading; one
    # named as a run's or job's number is left out by its name: test_the_number_of_a_repeated_run_is_no_setting)
    lambda f: f.assign(free_gb=np.arange(len(f)) + 1),
    # a column named like a statistic of something else than the time
    lambda f: f.assign(batch_max=64.0 * (1 + (f["p"] > 2))),
])
def test_settings_stay_factors(tmp_path, extra):
    data = load_table(_table(tmp_path, extra, noise=0.0), "time")
    assert not any("measurements of the runs" in n for n in data.notes)
    assert len(data.factors) == 3


def test_a_factor_unique_to_every_row_that_explains_the_time_stays_when_nothing_repeats():
    """A scattered design (every factor different on every row): the time following one of them
    alone is a law, not a restatement."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.uniform(1, 64, 30), rng.uniform(1e3, 1e4, 30)])
    assert measured_columns("time", ["p", "n"], X, 5 / X[:, 0]) == {}


def test_a_column_the_time_follows_only_roughly_is_a_factor():
    rng = np.random.default_rng(4)
    p = np.repeat([1.0, 2, 4, 8], 6)
    rate = rng.uniform(1, 100, 24)
    time = 1 / rate * rng.uniform(0.6, 1.6, 24)  # 20-30 % off: not the same measurement
    assert measured_columns("time", ["p", "rate"], np.column_stack([p, rate]), time) == {}


def test_a_count_of_runs_summarised_is_no_setting(tmp_path):
    data = load_table(_table(tmp_path, lambda f: f.assign(n_runs=np.where(f["p"] > 2, 5, 10))), "time")
    assert data.factors == ("p", "n")
    assert any("n_runs (it counts the runs a row summarises" in n for n in data.notes)


@pytest.mark.parametrize("name, first", [("run", 1), ("rep", 0), ("trial_id", 1), ("Seed", 42)])
def test_the_number_of_a_repeated_run_is_no_setting(tmp_path, name, first):
    data = load_table(_table(tmp_path, lambda f: f.assign(**{name: first + np.arange(len(f)) % 3})), "time")
    assert data.factors == ("p", "n")
    assert any(f"{name} (it numbers a configuration's repeated runs" in n for n in data.notes)


def test_a_scheduler_s_job_number_is_no_setting(tmp_path):
    data = load_table(_table(tmp_path, lambda f: f.assign(JobID=812340 + np.arange(len(f)))), "time")
    assert data.factors == ("p", "n")
    assert any("JobID (it is the scheduler's number for each run's job" in n for n in data.notes)


def test_a_column_named_like_a_run_number_stays_a_factor_where_it_is_no_whole_number(tmp_path):
    data = load_table(_table(tmp_path, lambda f: f.assign(rep=0.5 * (1 + np.arange(len(f)) % 3))), "time")
    assert "rep" in data.factors
    kept = load_table(_table(tmp_path, lambda f: f.assign(run=1 + np.arange(len(f)) % 3)), "time", ["p", "n", "run"])
    assert kept.factors == ("p", "n", "run")  # named with --factors: the user's word stands


def test_stem_reads_statistic_prefixes_and_suffixes():
    assert stem("ttt_min_max") == "ttt_min"
    assert stem("step_time_s_mean") == "step_time_s"
    assert stem("Mean time") == "time"
    assert stem("time_p99") == "time"
    assert stem("workers") is None
    assert stem("sd") == stem("ci_sd_left") == stem("median_ci_low") == ""  # of the quantity left unnamed
    assert stem("max_batch") == "batch" and stem("sdk") is None and stem("maxima") is None


def test_run_says_what_it_left_out_and_the_law_is_in_the_settings(tmp_path):
    from typer.testing import CliRunner

    from exprsearch.cli import app

    result = CliRunner().invoke(app, ["run", str(_table(tmp_path, _rates)), "-t", "time", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "look like measurements of the runs" in " ".join(result.output.split())
    law = json.loads((tmp_path / "out" / "law.json").read_text())
    assert law["factors"] == ["p", "n"] and "steps_per_sec" not in law["expression"]


def test_few_configurations_make_no_factor_a_product_of_the_others(recwarn):
    """Three configurations of three factors: any column is "a product" of two others there."""
    X = np.array([[1.0, 10.0, 3.0], [2.0, 7.0, 5.0], [4.0, 3.0, 11.0]])
    assert derived_notes(["p", "n", "b"], X) == []
    X = np.array([[1.0, 1e300, 3.0], [2.0, 1e-300, 5.0], [4.0, 1e200, 11.0]])
    assert derived_notes(["p", "n", "b"], X) == [] and not recwarn.list


def test_a_written_index_is_left_out_and_a_factor_counting_up_is_not(tmp_path):
    frame = pd.read_csv(_table(tmp_path))
    frame.to_csv(tmp_path / "indexed.csv")  # pandas' default: the index as an unnamed first column
    data = load_table(tmp_path / "indexed.csv", "time")
    assert data.factors == ("p", "n")
    assert any(n.startswith("left out the unnamed column 1: it numbers the rows") for n in data.notes)
    assert row_numbers(["p"], np.arange(1.0, 9.0)[:, None]) == []  # p = 1..8, one run each: a factor
    assert row_numbers(["index"], np.arange(1.0, 9.0)[:, None]) == ["index"]
    assert row_numbers(["index"], np.array([[0.0], [2.0], [1.0]])) == []  # not the rows' numbers


def _logged(tmp_path, steps: int = 40):
    """A W&B-style per-step log: runs over gpus × batch, logged at every step under namespaced
    keys, with a learning-rate schedule and the time since each run began."""
    rng = np.random.default_rng(2)
    rows = []
    for gpus in (1, 2, 4, 8):
        for batch in (32, 64):
            clock = 0.0
            for s in range(steps):
                step_s = (0.02 + 0.004 * batch / gpus) * (1 + 0.03 * rng.standard_normal())
                clock += step_s
                rows.append({"_step": s, "trainer/global_step": s, "_runtime": clock, "gpus": gpus, "batch": batch,
                             "train/loss": 3 * 0.99**s * (1 + 0.01 * rng.standard_normal()),
                             "lr": 1e-3 * (1 - s / steps), "perf/step_time": step_s})
    path = tmp_path / "log.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_a_namespaced_per_step_log_keeps_only_the_settings(tmp_path):
    """W&B's _step, Lightning's trainer/global_step and train/loss, and a learning rate that
    follows the step (one value at each step, the same in every run) are no settings of a run."""
    data = load_table(_logged(tmp_path), "perf/step_time")
    assert data.factors == ("gpus", "batch")
    (note,) = [n for n in data.notes if n.startswith("left out column(s)")]
    assert "_step (it numbers the steps" in note and "trainer/global_step (it numbers the steps" in note
    assert "train/loss (named as a measurement (loss)" in note
    assert "lr (it follows _step, one value at each _step the same in every run (a schedule)" in note


def test_a_step_counted_on_across_runs_makes_no_schedule(tmp_path):
    """Where the step does not start again in each run (a global step counted on), every column
    has one value per step; gpus and batch are settings still."""
    frame = pd.read_csv(_logged(tmp_path))
    frame["_step"] = np.arange(len(frame))
    frame = frame.drop(columns=["trainer/global_step"])
    frame.to_csv(tmp_path / "on.csv", index=False)
    data = load_table(tmp_path / "on.csv", "perf/step_time")
    assert {"gpus", "batch"} <= set(data.factors) and not any("(a schedule)" in n for n in data.notes)


def test_a_summary_of_one_row_per_setting_has_its_bare_sd_and_count_left_out(tmp_path):
    """No factor repeats its levels in such a summary, which kept count as a factor: suggest then
    asked for --at count=10."""
    frame = pd.DataFrame({"p": [1, 2, 4, 8, 16, 32, 64], "samples_per_sec": [90, 170, 330, 600, 1000, 1500, 2000]})
    frame["sd"], frame["count"] = frame["samples_per_sec"] * 0.02, [1, 2, 3, 5, 10, 3, 2]
    frame.to_csv(tmp_path / "summary.csv", index=False)
    data = load_table(tmp_path / "summary.csv", "samples_per_sec")
    assert data.factors == ("p",)
    assert "--spread sd,count tests the law" in next(n for n in data.notes if "measurements of the runs" in n)


def _summaries(tmp_path):
    """CM-DARE-like summaries: per model and GPU a series over p, each row the mean, median and sd of
    a run's step rates over n_samples samples (a near-constant count with strays)."""
    rng = np.random.default_rng(3)
    rows = []
    for model, scale in (("a", 1.0), ("b", 2.5), ("c", 4.0)):
        for gpu, speed in (("K80", 1.0), ("P100", 2.2)):
            for p in range(1, 9):
                rate = p * speed / (scale * (1 + 0.05 * p)) * (1 + 0.01 * rng.standard_normal())
                rows.append({"model": model, "gpu": gpu, "workers": p, "n_samples": int(rng.choice([28, 29, 35, 36, 37])),
                             "steps_per_sec_mean": rate, "steps_per_sec_median": rate * (1 + 0.01 * rng.standard_normal()),
                             "steps_per_sec_std": 0.02 * rate * rng.uniform(0.5, 1.5)})
    path = tmp_path / "summaries.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("target", ["steps_per_sec_mean", "1/steps_per_sec_mean"])
def test_the_roles_of_columns_are_the_file_s_whatever_where_keeps(tmp_path, target):
    """One series kept by --where repeats no factor's levels, which took n_samples for a setting (and
    suggest then asked for --at n_samples=37); the file says what its columns are."""
    path = _summaries(tmp_path)
    whole = load_table(path, target)
    one = load_table(path, target, where=rowfilter.parse(["model=b", "gpu=K80"]))
    assert whole.factors == one.factors == ("workers",)
    note = next(n for n in one.notes if "measurements of the runs" in n)
    assert "n_samples (it counts the samples that steps_per_sec's statistics summarise" in note
    assert "steps_per_sec_median (" in note and "steps_per_sec_std (another statistic of steps_per_sec)" in note


def test_a_reciprocal_target_s_column_names_the_statistics_beside_it(tmp_path):
    """Statistics too scattered to give the target alone are known by the name of the column
    ``1/COLUMN`` reads, as by the target's own name."""

    def scattered(frame):
        rng = np.random.default_rng(6)
        frame["steps_per_sec_mean"] = 1 / frame["time"]
        frame["steps_per_sec_max"] = frame["steps_per_sec_mean"] * rng.uniform(1.1, 1.6, len(frame))
        frame["steps_per_sec_std"] = 0.05 * frame["steps_per_sec_mean"] * rng.uniform(0.5, 1.5, len(frame))
        return frame.drop(columns="time")

    data = load_table(_table(tmp_path, scattered), "1/steps_per_sec_mean")
    note = next(n for n in data.notes if "measurements of the runs" in n)
    assert data.factors == ("p", "n")
    assert "steps_per_sec_std (another statistic of steps_per_sec)" in note
    assert "steps_per_sec_max (another statistic of steps_per_sec)" in note


def test_groups_of_the_rows_where_keeps_read_the_roles_from_the_file(tmp_path):
    from exprsearch.grouped import load_grouped, load_targets

    path = _summaries(tmp_path)
    groups, failed = load_grouped(path, "steps_per_sec_mean", ["gpu"], where=rowfilter.parse(["model=b"]))
    assert not failed and [g.factors for g in groups.values()] == [("workers",), ("workers",)]
    series, failed = load_targets(path, ["1/steps_per_sec_mean"], [], where=rowfilter.parse(["model=b", "gpu=K80"]))
    assert not failed and series["1/steps_per_sec_mean"].factors == ("workers",)
