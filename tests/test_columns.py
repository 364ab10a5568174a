"""Which columns of a table are factors (columns.py): what is left out, and what --by is offered for."""

from exprsearch.data import load_table


def test_text_columns_that_may_name_series_are_said_but_not_a_runs_own_labels(tmp_path):
    """A text column whose values repeat (a model) may name series, so --by is offered; one with a
    value on every row (a run's id, name or start, as MLflow exports them) labels runs."""
    rows = [f"m{i % 2},a{i:07x}f,2026-11-20T10:{i:02d}:00,r{i},{p},{2 + 40 / p}"
            for i, p in enumerate((1, 2, 4, 8, 16, 32))]
    (tmp_path / "runs.csv").write_text("model,run_id,start_time,name,p,time\n" + "\n".join(rows) + "\n")
    (note,) = [n for n in load_table(tmp_path / "runs.csv", "time").notes if n.startswith("ignored")]
    assert note == ("ignored non-numeric column(s) model, run_id, start_time, name; one law is fitted across the "
                    "values of model (2): where they name separate series (a framework, a model), pass --by with "
                    "those columns to fit one law per series")


def test_a_column_of_days_shared_by_runs_is_not_offered_for_by(tmp_path):
    """W&B's Created, written by day, repeats where runs began the same day: when, not a series."""
    rows = [f"2026-11-{20 + i // 3},{p},{2 + 40 / p}" for i, p in enumerate((1, 2, 4, 8, 16, 32))]
    (tmp_path / "runs.csv").write_text("Created,p,time\n" + "\n".join(rows) + "\n")
    (note,) = [n for n in load_table(tmp_path / "runs.csv", "time").notes if n.startswith("ignored")]
    assert note == "ignored non-numeric column(s) Created"
