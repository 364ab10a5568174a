"""Which columns of a table are factors (columns.py): what is left out, and what --by is offered for."""

from exprsearch.data import load_table

SPANNED = ("; one law is fitted across the values of {}: where they name separate series (a framework, a model), "
           "pass --by with those columns to fit one law per series")


def _ignored(tmp_path, header: str, rows: list[str]) -> str:
    """The note on the columns a table of ``rows`` under ``header`` leaves out as no setting."""
    (tmp_path / "runs.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    (note,) = [n for n in load_table(tmp_path / "runs.csv", "time").notes if n.startswith("ignored")]
    return note


def test_text_columns_that_may_name_series_are_said_but_not_a_runs_own_labels(tmp_path):
    """A text column whose values repeat (a model) may name series, so --by is offered; one with a
    value on every row (a run's id, name or start, as MLflow exports them) labels runs."""
    rows = [f"m{i % 2},a{i:07x}f,2026-11-20T10:{i:02d}:00,r{i},{p},{2 + 40 / p}"
            for i, p in enumerate((1, 2, 4, 8, 16, 32))]
    assert _ignored(tmp_path, "model,run_id,start_time,name,p,time", rows) == (
        "ignored non-numeric column(s) model, run_id, start_time, name" + SPANNED.format("model (2)"))


def test_columns_that_hold_every_configuration_evenly_are_told_from_the_runs_outcomes(tmp_path):
    """Extra-P's mpi_data.csv: the MPI library holds every rank count under each of its values, as
    a series label does; which statistic came out smallest varies from row to row, an outcome of
    the runs. Only the first is offered for --by."""
    rows = [f"{lib},{'IQR' if (p + r) % 3 else 'SD'},{p},{(2 + 40 / p) * (1 + 0.01 * r)}"
            for lib in ("IntelMPI", "OpenMPI") for p in (1, 2, 4, 8) for r in range(2)]
    assert _ignored(tmp_path, "mpi,smallest,p,time", rows) == (
        "ignored non-numeric column(s) mpi, smallest; one law is fitted across the values of mpi (2), each of which "
        "holds every configuration of p as separate series do: pass --by mpi to fit one law per series; the values "
        "of smallest (2) are spread unevenly over the configurations, as outcomes of the runs are rather than settings")


def test_a_column_of_days_shared_by_runs_is_not_offered_for_by(tmp_path):
    """W&B's Created, written by day, repeats where runs began the same day: when, not a series."""
    rows = [f"2026-11-{20 + i // 3},{p},{2 + 40 / p}" for i, p in enumerate((1, 2, 4, 8, 16, 32))]
    assert _ignored(tmp_path, "Created,p,time", rows) == "ignored non-numeric column(s) Created"


def test_a_column_whose_name_holds_a_comma_can_be_named():
    """--factors and --by split their text at commas; the pieces of a column named with one are put
    back together, unless they name columns of their own."""
    from exprsearch.columns import rejoined

    columns = ["batch, per device", "gpus", "time"]
    assert rejoined(["batch", "per device", "gpus"], columns) == ["batch, per device", "gpus"]
    assert rejoined(["gpus", "batch", "per device"], columns) == ["gpus", "batch, per device"]
    assert rejoined(["batch"], columns) == ["batch"]  # not a column: said so by the reader, not guessed
    assert rejoined(["a", "b"], ["a", "b", "a,b"]) == ["a", "b"]  # two columns of their own
    assert rejoined(["gpus", "time"], ["gpus", "time"]) == ["gpus", "time"]


def test_factors_and_series_with_a_comma_in_a_column_s_name(tmp_path):
    from typer.testing import CliRunner

    from exprsearch.cli import app

    rows = [f"{b},{g},{m},{(0.5 + b / (8 * g)) * (1.01 if g % 3 else 0.99):.6g}"
            for m in ("a", "b") for b in (16, 32, 64) for g in (1, 2, 4, 8)]
    (tmp_path / "c.csv").write_text('"batch, per device",gpus,model,time\n' + "\n".join(rows) + "\n")
    named = load_table(tmp_path / "c.csv", "time", ["batch", "per device", "gpus"])
    assert named.factors == ("batch_per_device", "gpus")
    result = CliRunner().invoke(app, ["suggest", str(tmp_path / "c.csv"), "-t", "time", "--by", "batch, per device,model",
                                      "--series", "batch, per device=16,model=a", "--at", "gpus=64", "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    assert "law: time = " in result.output


def test_a_text_column_that_labels_each_configuration_is_not_offered_for_by(tmp_path):
    """A name per configuration ('1ps2w' for one server and two workers) labels the settings the
    factors hold already, not a series of them; a zone that differs between repeats may."""
    rows = [f"{ps}ps{w}w,zone-{(w + r) % 2},{ps},{w},{r},{2 + 40 / w + ps}"
            for ps in (1, 2) for w in (1, 2, 4, 8) for r in range(2)]
    assert _ignored(tmp_path, "config,zone,num_ps,workers,run,time", rows) == (
        "ignored non-numeric column(s) config, zone" + SPANNED.format("zone (2)"))


def test_a_column_name_given_with_a_stray_line_end_is_shown_so(tmp_path):
    """A name read from a Windows file keeps its '\\r' ('time\\r'), and the error had printed it as
    the column's own name beside 'did you mean time?'; it now shows the character and says so."""
    import pytest

    from exprsearch.errors import DataError

    (tmp_path / "runs.csv").write_text("p,time\r\n1,42\r\n2,22\r\n4,12\r\n")
    with pytest.raises(DataError) as raised:
        load_table(tmp_path / "runs.csv", "time\r")
    assert str(raised.value).startswith(r"target column 'time\r' (it has spaces or unprinted characters around it) "
                                        "is not in")
    assert "did you mean" not in str(raised.value)
