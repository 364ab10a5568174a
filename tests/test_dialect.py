"""Tables saved as Excel saves CSV where the comma is the decimal mark (';' between columns,
10,5) are read as written and said; a number that reads two ways is refused."""

import re

import numpy as np
import pytest

from exprsearch.data import load_table
from exprsearch.dialect import unclosed_quote
from exprsearch.errors import DataError

ROWS = [(1, 1000, "10,5"), (2, 1000, "5,4"), (4, 1000, "2,9"), (8, 1000, "1,7"), (1, 2000, "20,1"), (2, 2000, "10,2")]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_semicolons_and_decimal_commas_are_read_as_excel_writes_them(tmp_path):
    text = "# from the lab's Excel\np;n;time\n" + "".join(f"{p};{n};{t}\n" for p, n, t in ROWS)
    data = load_table(_write(tmp_path, "eu.csv", text), "time")
    assert data.factors == ("p", "n")
    np.testing.assert_allclose(data.y, [10.5, 5.4, 2.9, 1.7, 20.1, 10.2])
    assert any(n.startswith("read '") and "as separated by ';' with decimal commas" in n for n in data.notes)
    assert data.rows_named(np.array([0])) == "line 3"  # below the comment and the header


def test_semicolons_with_decimal_points_are_read_too(tmp_path):
    data = load_table(_write(tmp_path, "s.csv", "p;time\n1;10.5\n2;5.5\n4;3.25\n"), "time")
    np.testing.assert_allclose(data.y, [10.5, 5.5, 3.25])
    assert any(n.endswith("as separated by ';'") for n in data.notes)


def test_decimal_commas_in_a_tsv_are_read(tmp_path):
    data = load_table(_write(tmp_path, "t.tsv", "p\ttime\n1\t10,5\n2\t5,25\n4\t3\n"), "time")
    np.testing.assert_allclose(data.y, [10.5, 5.25, 3.0])
    assert any("with decimal commas (10,5 is 10.5)" in n for n in data.notes)


def test_a_comma_csv_with_semicolons_inside_quotes_stays_a_comma_csv(tmp_path):
    data = load_table(_write(tmp_path, "q.csv", 'p,note,time\n1,"a;b",3\n2,"c;d",2\n4,"e",1.5\n'), "time")
    assert data.factors == ("p",) and not any("separated by ';'" in n for n in data.notes)


@pytest.mark.parametrize("name, text, said", [
    ("mixed.csv", "p;time\n1;1,5\n2;2.5\n", "line 2 writes 1,5 with a decimal comma and line 3 writes 2.5 with a point"),
    ("grouped.csv", "p;time\n1;1.000\n2;2.500\n", "line 2 writes 1.000: is the '.' a decimal mark or a thousands separator"),
    ("grouped.tsv", "p\ttime\n1\t1,000\n2\t2,500\n", "line 2 writes 1,000: is the ',' a decimal mark or a thousands"),
])
def test_a_number_that_reads_two_ways_is_refused(tmp_path, name, text, said):
    with pytest.raises(DataError, match=said.replace("(", r"\(").replace(".", r"\.")):
        load_table(_write(tmp_path, name, text), "time")


@pytest.mark.parametrize("name, text, said", [
    ("spaces.csv", "p,time\n1,10\n2 5.2\n", "line 3 seems separated by spaces, where its header (line 1) is separated by commas"),
    ("spaces.tsv", "p\tn\ttime\n1\t2\t3\n2 2 2\n", "line 3 seems separated by spaces, where its header (line 1) is separated by tabs"),
    ("semi.csv", "# runs\np,n,time\n1;2;3\n", "line 3 seems separated by ';', where its header (line 2) is separated by commas"),
])
def test_a_row_separated_otherwise_than_its_header_is_refused(tmp_path, name, text, said):
    """pandas reads such a row as one text value and the other columns missing."""
    with pytest.raises(DataError, match=re.escape(said)):
        load_table(_write(tmp_path, name, text), "time")


def test_a_short_row_of_the_same_separator_is_a_missing_value_as_before(tmp_path):
    with pytest.raises(DataError, match="column 'time' has missing or non-numeric values at line 3"):
        load_table(_write(tmp_path, "short.csv", "p,time\n1,10\n2\n4,3\n"), "time")


def test_spaces_after_the_commas_are_formatting(tmp_path):
    text = 'model, p, time\n"res net", 1, 10\n"res net", 2, 5.5\n"res net", 4, 3\n'
    data = load_table(_write(tmp_path, "typed.csv", text), "time")  # not ' time'
    assert data.factors == ("p",)
    np.testing.assert_allclose(data.y, [10, 5.5, 3])


@pytest.mark.parametrize("header, said", [
    ("p,p ,time", "has two columns named 'p' but for spaces around one of them"),
    ("p, p,time", "line 1 has two columns named 'p' (columns 1 and 2)"),
])
def test_names_alike_but_for_spaces_are_refused(tmp_path, header, said):
    with pytest.raises(DataError, match=re.escape(said)):
        load_table(_write(tmp_path, "twins.csv", f"{header}\n1,1,10\n2,2,5.5\n4,4,3\n"), "time")


def test_spaces_around_a_name_are_formatting(tmp_path):
    data = load_table(_write(tmp_path, "trailing.csv", "p ,time \n1,10\n2,5.5\n4,3\n"), "time")
    assert data.factors == ("p",) and data.target == "time"


def test_a_second_header_of_units_is_refused_with_where_units_go(tmp_path):
    text = "gpus,batch,time\n-,samples,s\n1,32,10\n2,32,5.5\n4,32,3\n8,32,2\n"
    with pytest.raises(DataError, match=re.escape("line 2 looks like a second header (-, samples, s), of units "
                                                  "perhaps: put each unit in its column's name (time_s)")):
        load_table(_write(tmp_path, "units.csv", text), "time")


def test_utf16_as_excel_saves_unicode_text_is_read(tmp_path):
    text = "gpus\tbatch\ttime\n1\t32\t10\n2\t32\t5.5\n4\t32\t3.1\n8\t32\t2\n"
    path = tmp_path / "unicode.txt"
    path.write_bytes(text.encode("utf-16"))  # with its byte-order mark, as Excel writes it
    data = load_table(path, "time")
    assert data.factors == ("gpus",) and data.y.tolist() == [10, 5.5, 3.1, 2]
    assert data.rows_named(np.array([0])) == "line 2"


@pytest.mark.parametrize("lines, line", [
    (['p,name,time', '1,"a, b",3', '2,"c",2'], None),  # quoted values closed on their lines
    (['p,name,time', '1,"a ""big"" one",3', '2,c,2'], None),  # a doubled quote is the character itself
    (['p,name,time', '1,"two', 'lines",3', '2,c,2'], None),  # a value may run over lines
    (['p,name,time', '1,a,3', '2,"c,2', '4,d,1'], 3),
    (['p,name,time', '1,"a ""b",3', '2,"c,2'], 3),
])
def test_the_line_of_a_quote_no_later_line_closes(lines, line):
    assert unclosed_quote(lines, 0) == line
