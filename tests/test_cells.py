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
    # Slurm's Elapsed ([d-][hh:]mm:ss)
    ("01:10:00", r"holds durations written as clock times \('01:10:00' at line 2\); write them in seconds \(4200 there\)"),
    ("1-02:00:00", r"holds durations written as clock times \('1-02:00:00' at line 2\); write them in seconds \(93600 there\)"),
    ("10:40", r"holds durations written as clock times \('10:40' at line 2\); write them in seconds \(640 there\)"),
    ("12.3s", r"holds numbers with a unit \('12.3s' at line 2\); write the numbers alone, and the unit in the "
              r"column's name \(step_s\)"),
    ("12.3 ms", r"holds numbers with a unit \('12.3 ms' at line 2\).*\(step_ms\)"),
    ("8GB", r"holds numbers with a unit \('8GB' at line 2\).*\(step_GB\)"),
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
