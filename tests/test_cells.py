"""How cells are written where a law needs numbers (cells.py), through the table readers."""

import datetime
import json

import pytest

from exprsearch.data import load_table
from exprsearch.errors import DataError


def test_dates_are_labels_and_refused_as_a_factor_or_the_target(tmp_path):
    """pandas reads a JSON column named created_at as dates; as numbers they would be nanoseconds."""
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"p": [1, 2, 4, 8], "step_s": [10.1, 5.2, 2.7, 1.5],
                                "created_at": [1764000000 + 100 * i for i in range(4)]}))
    data = load_table(path, "step_s")
    assert data.factors == ("p",) and any("ignored non-numeric column(s) created_at" in n for n in data.notes)
    with pytest.raises(DataError, match="column 'created_at' holds dates and times, not a quantity to be a factor"):
        load_table(path, "step_s", ["p", "created_at"])
    with pytest.raises(DataError, match="not a quantity to be the target: give the time each run took"):
        load_table(path, "created_at")


@pytest.mark.parametrize("cell, expected", [
    # minutes:seconds or hours:minutes? ([d-]hh:mm:ss is read: the next test)
    ("10:40", r"holds durations written as clock times \('10:40' at line 2\); write them in seconds \(640 there\)"),
    # a unit of time is read (the test after the next); another unit is refused
    ("8GB", r"holds numbers with a unit \('8GB' at line 2\); write the numbers alone, and the unit in the "
            r"column's name \(step_GB\)"),
    ("12.3m", r"holds numbers with a unit \('12.3m' at line 2\).*\(step_m\)"),  # minutes or metres?
    ("40 samples/s", r"holds numbers with a unit \('40 samples/s' at line 2\).*\(step_samples_per_s\)"),
    # a decimal comma quoted in a file of commas (a TSV's or a ';' file's are read: test_dialect.py)
    ('"10,5"', r"holds numbers written with a comma \('10,5' at line 2\); write a decimal with a point \(10.5\)"),
    ('"1,000"', r"holds numbers written with a comma \('1,000' at line 2\).*a thousand without a separator"),
])
def test_a_target_written_as_no_number_is_refused_with_what_to_write(tmp_path, cell, expected):
    """Read as numbers every value would be missing; the message says what the cell should hold."""
    path = tmp_path / "runs.csv"
    path.write_text(f"nodes,step\n1,{cell}\n2,{cell}\n4,{cell}\n")
    with pytest.raises(DataError, match=rf"column 'step' {expected}"):
        load_table(path, "step")


def test_durations_written_as_hours_minutes_seconds_are_read_in_seconds(tmp_path):
    """Slurm's Elapsed ([d-]hh:mm:ss) has one reading; a column that also holds mm:ss has two."""
    path = tmp_path / "runs.csv"
    path.write_text("nodes,Elapsed\n1,1-02:00:00\n2,01:10:00\n4,00:00:01.5\n8,\n")
    data = load_table(path, "Elapsed", drop_missing=True)
    assert data.y.tolist() == [93600, 4200, 1.5]
    assert "column(s) Elapsed hold durations, read in seconds" in data.notes
    path.write_text("nodes,Elapsed\n1,01:10:00\n2,10:40\n4,05:20\n")
    with pytest.raises(DataError, match=r"holds durations written as clock times \('01:10:00' at line 2\)"):
        load_table(path, "Elapsed")


def test_durations_written_with_a_unit_of_time_are_read_in_seconds(tmp_path):
    """MLflow's UI exports a run's Duration as 1.2min or 37.5s: each unit of time has one reading,
    and units may differ from row to row. One value with no unit of time leaves the column to the
    check that refuses it."""
    path = tmp_path / "runs.csv"
    path.write_text("nodes,Duration\n1,1.2min\n2,37.5s\n4,350 ms\n8,2 h\n16,\n")
    data = load_table(path, "Duration", drop_missing=True)
    assert data.y.tolist() == pytest.approx([72, 37.5, 0.35, 7200])
    assert "column(s) Duration hold durations, read in seconds" in data.notes
    path.write_text("nodes,Duration\n1,1.2min\n2,37.5s\n4,350 ms\n8,2 GB\n")
    with pytest.raises(DataError, match=r"holds numbers with a unit \('1.2min' at line 2\)"):
        load_table(path, "Duration")


def test_slurm_job_steps_beside_their_jobs_are_refused(tmp_path):
    """sacct without -X lists each job's steps (1001.batch) with the job's time and the step's own
    resources; pipe-separated as sacct -P writes it."""
    lines = ["JobID|NNodes|Elapsed|State"]
    for job, nodes in ((1001, 1), (1002, 2), (1003, 4), (1004, 8)):
        elapsed = f"00:{int(60 / nodes):02d}:00"
        lines += [f"{job}|{nodes}|{elapsed}|COMPLETED", f"{job}.batch|1|{elapsed}|COMPLETED",
                  f"{job}.extern|{nodes}|{elapsed}|COMPLETED"]
    path = tmp_path / "sacct.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"lists 8 Slurm job step\(s\) beside their jobs \(JobID 1001.batch at lines "
                                        r"3, 4, 6…\).*export one row per job \(sacct -X\)"):
        load_table(path, "Elapsed")
    path.write_text("\n".join(line for line in lines if "." not in line.split("|")[0]) + "\n")
    assert load_table(path, "Elapsed").y.tolist() == [3600, 1800, 900, 420]


def test_a_workbook_s_durations_are_read_in_seconds_and_said_so(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["nodes", "walltime"])
    for nodes in (1, 2, 4, 8):
        book.active.append([nodes, datetime.timedelta(seconds=100 + 4000 / nodes)])
    book.save(tmp_path / "runs.xlsx")
    data = load_table(tmp_path / "runs.xlsx", "walltime")
    assert data.y.tolist() == [100 + 4000 / n for n in (1, 2, 4, 8)]  # not microseconds
    assert "column(s) walltime hold durations, read in seconds" in data.notes
