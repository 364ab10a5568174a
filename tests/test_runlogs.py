"""What a log of runs says beside its settings (runlogs.py): the time since a run began, how
each run ended, and the steps of one run per configuration."""

import pandas as pd
import pytest

from exprsearch.data import load_table
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


def test_the_steps_of_one_run_per_configuration_are_said_to_be_no_repeats(tmp_path):
    """A per-step log's rows repeat each configuration, but as steps of one run: their spread is
    no measure of how runs differ. With a column numbering runs beside the steps, it is."""
    from typer.testing import CliRunner

    from exprsearch.cli import app

    path = _logged(tmp_path)
    data = load_table(path, "perf/step_time")
    assert data.steps == "_step"
    assert any(n.startswith("the 320 rows are the steps of 8 runs, one per configuration (_step numbers them)")
               for n in data.notes)
    warned = CliRunner().invoke(app, ["suggest", str(path), "--target", "perf/step_time", "--at", "gpus=16,batch=64",
                                      "--bootstrap", "20"])
    assert warned.exit_code == 0, warned.output
    assert "warning: the rows are the steps of one run per configuration" in " ".join(warned.output.split())
    frame = pd.read_csv(path)
    frame["run"] = 1 + (frame.index // 20) % 2  # two runs of each configuration, 20 steps each
    frame.to_csv(path, index=False)
    again = load_table(path, "perf/step_time")
    assert again.steps is None and not any("are the steps of" in n for n in again.notes)
