"""What a log of runs says beside its settings (runlogs.py): the time since a run began, how
each run ended, and the runs a per-step log's steps belong to."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprsearch.data import load_table
from exprsearch.runlogs import Runs, by_run
from tests.test_roles import _logged


def test_the_time_since_a_run_began_is_no_target(tmp_path):
    from typer.testing import CliRunner

    from exprsearch.cli import app

    path = _logged(tmp_path)
    frame = pd.read_csv(path).drop(columns=["perf/step_time"])
    frame["train/samples_per_sec"] = frame["batch"] * frame["gpus"] / 0.05
    frame.to_csv(path, index=False)
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "o")])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "(by its name perhaps --target 'train/samples_per_sec')" in said
    data = load_table(path, "_runtime")
    assert any(n.startswith("_runtime grows with the step at nearly every row") for n in data.notes)


@pytest.mark.parametrize("column, states, said", [
    ("State", ["finished", "crashed", "finished", "running", "finished", "finished"],  # W&B's runs table
     "2 run(s) as not finished (crashed 1, running 1) at lines 3, 5"),
    ("State", ["COMPLETED", "CANCELLED by 1042", "TIMEOUT", "COMPLETED", "COMPLETED", "COMPLETED"],  # Slurm's sacct
     "2 run(s) as not finished (cancelled 1, timeout 1) at lines 3, 4"),
    ("run/status", ["ok", "failed", "ok", "ok", "ok", "ok"], "1 run(s) as not finished (failed 1) at line 3"),
])
def test_runs_that_did_not_finish_are_named(tmp_path, column, states, said):
    rows = [{"p": p, "time": 2 + 40 / p, column: states[i]} for i, p in enumerate((1, 2, 4, 8, 16, 32))]
    pd.DataFrame(rows).to_csv(tmp_path / "runs.csv", index=False)
    notes = " ".join(load_table(tmp_path / "runs.csv", "time").notes)
    assert f"column {column} marks {said}:" in notes
    assert f"pass --by {column} to fit the finished runs apart" in notes


@pytest.mark.parametrize("states", [["finished"] * 4, ["warm cache", "cold cache", "failed", "finished"]])
def test_finished_runs_or_a_free_text_status_say_nothing(tmp_path, states):
    rows = [{"p": p, "time": 2 + 40 / p, "status": states[i % len(states)]} for i, p in enumerate((1, 2, 4, 8, 16, 32))]
    pd.DataFrame(rows).to_csv(tmp_path / "runs.csv", index=False)
    assert not any("not finished" in n for n in load_table(tmp_path / "runs.csv", "time").notes)


def test_the_steps_of_a_log_are_taken_as_runs(tmp_path):
    """A per-step log's rows are the steps of its runs: each run is one row, the median of its
    steps, in the order the runs began, named by its first step's line. With a column numbering
    a configuration's runs, each of them is a row, so how runs differ is measured."""
    path = _logged(tmp_path)
    frame = pd.read_csv(path)
    data = load_table(path, "perf/step_time")
    assert data.steps == "_step" and data.n_rows == 8
    assert any(n.startswith("the 320 rows are the steps of 8 runs (one per configuration; _step numbers the steps): "
                            "each run is taken as the median perf/step_time of its steps") and
               n.endswith("how runs differ is not measured: run some configurations again") for n in data.notes)
    medians = frame.groupby(["gpus", "batch"], sort=False)["perf/step_time"].median()
    assert data.X.tolist() == [list(k) for k in medians.index] and data.y.tolist() == pytest.approx(medians.tolist())
    assert data.rows_named([0, 1]) == "lines 2, 42"
    frame["run"] = ["a", "b"] * (len(frame) // 2)  # two runs of each configuration, by name, 20 steps each
    frame.to_csv(path, index=False)
    again = load_table(path, "perf/step_time")
    assert again.n_rows == 16 and any("(run numbers a configuration's runs, _step their steps)" in n for n in again.notes)
    assert not any("not measured" in n for n in again.notes)
    halves = frame.groupby(["gpus", "batch", "run"], sort=False)["perf/step_time"].median()
    assert sorted(again.y.tolist()) == pytest.approx(sorted(halves.tolist()))
    frame = frame.rename(columns={"run": "run_name"}).assign(run_name=lambda f: "run-" + f["run_name"] + f["gpus"].astype(str))
    frame.to_csv(path, index=False)  # a name per run, as W&B gives them: runs, not series to fit apart
    named = load_table(path, "perf/step_time")
    assert named.n_rows == 16 and any("(run_name numbers a configuration's runs" in n for n in named.notes)
    assert not any("--by" in n for n in named.notes)


def test_a_clock_is_taken_at_a_runs_last_step(tmp_path):
    """W&B's _runtime counts the time since the run began: a run's last value is how long it ran."""
    path = _logged(tmp_path)
    pd.read_csv(path).drop(columns=["perf/step_time"]).to_csv(path, index=False)
    data = load_table(path, "_runtime")
    assert any("each run is taken at its last step, the time it had run" in n for n in data.notes)
    assert data.y.tolist() == pytest.approx(pd.read_csv(path).groupby(["gpus", "batch"], sort=False)["_runtime"]
                                            .max().tolist())


def test_runs_logged_one_after_another_begin_where_the_step_starts_again(tmp_path):
    """Without a run column, a configuration's second run begins where its step does not follow
    the one before; a table of runs whose _step is each run's last (W&B's summary) is runs as it is."""
    log = ["gpus,step,time"] + [f"{g},{s},{t}" for g in (1, 2) for t in (10 / g, 12 / g) for s in range(5)]
    (tmp_path / "log.csv").write_text("\n".join(log) + "\n")
    data = load_table(tmp_path / "log.csv", "time")
    assert data.y.tolist() == [10, 12, 5, 6] and data.rows_named(np.arange(4)) == "lines 2, 7, 12, 17"
    assert any(n.startswith("the 20 rows are the steps of 4 runs (step numbers the steps, and a run begins where it "
                            "starts again)") and "not measured" not in n for n in data.notes)
    summary = ["gpus,_step,time"] + [f"{g},999,{t / g}" for g in (1, 2, 4) for t in (10, 11)]
    (tmp_path / "runs.csv").write_text("\n".join(summary) + "\n")
    runs = load_table(tmp_path / "runs.csv", "time")
    assert runs.n_rows == 6 and runs.steps is None and not any("steps of" in n for n in runs.notes)
    summary = ["gpus,_step,time"] + [f"{g},{s},{t / g}" for g in (1, 2, 4) for s, t in ((500, 10), (999, 11))]
    (tmp_path / "runs.csv").write_text("\n".join(summary) + "\n")  # a run that stopped at step 500
    kept = load_table(tmp_path / "runs.csv", "time")  # runs of one or two rows are no log of steps
    assert kept.n_rows == 6 and kept.steps is None
    assert any(n.startswith("_step numbers steps, but the runs it marks out would hold one or two rows each: every "
                            "row is taken as a run") for n in kept.notes)


def test_a_step_column_named_as_a_factor_is_a_setting(tmp_path):
    """--factors that name the step column fit the law along the steps: every row stays."""
    path = _logged(tmp_path)
    data = load_table(path, "perf/step_time", factors=["gpus", "batch", "_step"])
    assert data.n_rows == 320 and data.steps is None


def test_a_single_run_is_too_few(tmp_path):
    from exprsearch.errors import ShortData

    (tmp_path / "one.csv").write_text("gpus,step,time\n" + "".join(f"4,{s},{1 + s % 3 / 100}\n" for s in range(30)))
    with pytest.raises(ShortData, match="holds the 30 steps of a single run"):
        load_table(tmp_path / "one.csv", "time", factors=["gpus"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1.0, 2.0, 4.0]), st.sampled_from(["a", "b", "c"]),
                          st.floats(0.01, 100.0)), min_size=1, max_size=40),
       st.booleans())
def test_each_run_is_the_median_of_its_steps_in_the_order_runs_begin(rows, clock):
    """by_run against pandas: a run is a configuration with one run label, wherever its steps lie."""
    frame = pd.DataFrame(rows, columns=["p", "run", "time"])
    labels = Runs("step", np.arange(len(frame)), "run", np.unique(frame["run"].to_numpy(), return_inverse=True)[1],
                  clock)
    X, y, first = by_run(frame[["p"]].to_numpy(), frame["time"].to_numpy(), np.arange(len(frame)), labels)
    grouped = frame.groupby(["p", "run"], sort=False)["time"]
    expected = grouped.max() if clock else grouped.median()
    assert X[:, 0].tolist() == [p for p, _ in expected.index]
    assert y.tolist() == pytest.approx(expected.tolist())
    assert first.tolist() == [int(i[0]) for i in grouped.indices.values()] == sorted(first.tolist())


def test_steps_of_runs_interleaved_without_a_run_column_stay_one_run(tmp_path):
    """Two runs' steps sorted by step (0, 0, 1, 1, …) cannot be told apart: one run per
    configuration, not a run begun at every repeated step."""
    log = ["gpus,step,time"] + [f"{g},{s},{t}" for g in (1, 2) for s in range(5) for t in (10 / g, 12 / g)]
    (tmp_path / "log.csv").write_text("\n".join(log) + "\n")
    data = load_table(tmp_path / "log.csv", "time")
    assert data.y.tolist() == [11, 5.5]


@pytest.mark.parametrize("header", ["Wall time,Step,Value", "step,time_s,Value"])
def test_one_runs_steps_with_no_setting_are_refused(tmp_path, header):
    """TensorBoard exports one run's scalar as Wall time, Step, Value: nothing set before a run
    varies, so no law of settings can come of it; named factors are taken as given."""
    from exprsearch.errors import DataError

    rows = [f"{1.7e9 + s if header.startswith('Wall') else s},{s if header.startswith('Wall') else 1.5 * s},"
            f"{0.5 + 0.01 * (s % 3)}" for s in range(1, 9)]
    (tmp_path / "tb.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataError, match="holds the steps of one run .* and no setting of it"):
        load_table(tmp_path / "tb.csv", "Value")
    step = header.split(",")[1] if header.startswith("Wall") else "step"
    assert load_table(tmp_path / "tb.csv", "Value", factors=[step]).n_rows == 8


def test_a_lightning_log_of_steps_and_validation_rows_is_read_as_runs(tmp_path):
    """Lightning's CSVLogger writes epoch and step on every row, a step's metrics on its rows and
    validation metrics on rows of their own: val_loss is no setting, the rows of validation hold
    no step time (dropped with --drop-missing), and the step, the finer numbering, numbers them."""
    rows = []
    for gpus in (1, 2, 4):
        for s in range(60):
            rows.append(f"{gpus},{s // 20},{s},{1 + 8 / gpus + 0.01 * (s % 3)},")
            if s % 20 == 19:
                rows.append(f"{gpus},{s // 20},{s},,0.5")
    (tmp_path / "metrics.csv").write_text("gpus,epoch,step,step_time,val_loss\n" + "\n".join(rows) + "\n")
    data = load_table(tmp_path / "metrics.csv", "step_time", drop_missing=True)
    assert data.factors == ("gpus",) and data.n_rows == 3 and data.steps == "step"
    assert "left out column 'val_loss': empty on every row that gives step_time (logged on rows of its own)" in data.notes
