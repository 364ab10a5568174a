"""Pipe tables (pipes.py): Markdown's, JUBE's result.dat and psql's output, read with each row's line."""

import pytest

from exprsearch.data import load_table
from exprsearch.errors import DataError

MARKDOWN = """# Strong scaling of the solver

Measured on 2026-11-20.

| nodes | time (s) |
|------:|---------:|
| 1     | 100.2    |
| 2     | 52.1     |
| 4     | 27.9     |
| 8     | 15.8     |

The 8-node run shared its switch.
"""

JUBE = """ nodes | tasks | time_avg
-------+-------+---------
     1 |    48 |   100.2
     2 |    96 |    52.1
     4 |   192 |    27.9
     8 |   384 |    15.8
"""

PSQL = JUBE + "(4 rows)\n\n"


@pytest.mark.parametrize("name, text, target", [
    ("scaling.md", MARKDOWN, "time (s)"), ("result.dat", JUBE, "time_avg"), ("query.txt", PSQL, "time_avg"),
])
def test_pipe_tables_are_read_with_their_lines(tmp_path, name, text, target):
    path = tmp_path / name
    path.write_text(text)
    data = load_table(path, target)
    assert data.y.tolist() == [100.2, 52.1, 27.9, 15.8] and data.factors[0] == "nodes"
    first = text.splitlines().index(next(line for line in text.splitlines() if "100.2" in line)) + 1
    assert data.rows_named([0, 3]) == f"lines {first}, {first + 3}"


def test_a_value_that_is_no_number_is_named_by_its_line(tmp_path):
    path = tmp_path / "result.dat"
    path.write_text(JUBE.replace("27.9", "n/a"))
    with pytest.raises(DataError, match="line 5"):
        load_table(path, "time_avg")


@pytest.mark.parametrize("name, text, said", [
    ("result.dat", JUBE.replace("52.1", "52.1 | 3"), "line 4 has 4 cells between pipes where its header has 3"),
    ("result.txt", JUBE + "done in 3 s\n", "line 7 is no row of its pipe table"),
    ("two.md", MARKDOWN + "\n| a | b |\n|---|---|\n| 1 | 2 |\n", "holds a second table at line 14"),
    ("notes.md", "# Nothing measured yet\n", "holds no pipe table"),
    ("twice.md", "| p | p |\n|---|---|\n| 1 | 2 |\n", "names a column twice or leaves one unnamed"),
])
def test_what_cannot_be_read_as_one_table_is_refused_by_its_line(tmp_path, name, text, said):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataError, match=said):
        load_table(path, "time_avg")


def test_lines_that_all_hold_pipes_are_a_table_without_a_rule(tmp_path):
    """sacct -P writes no rule under its header, and sacct -p ends every line with a pipe."""
    path = tmp_path / "sacct.txt"
    path.write_text("JobID|NNodes|Elapsed|\n1001|1|01:00:00|\n1002|2|00:30:00|\n1003|4|00:15:00|\n1004|8|00:07:00|\n")
    assert load_table(path, "Elapsed").y.tolist() == [3600, 1800, 900, 420]
