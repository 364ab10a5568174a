"""Table files: plain numeric CSV read without pandas exactly as pandas reads it."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprsearch.data import from_frame, load_table
from exprsearch.errors import ExprsearchError
from exprsearch.tables import plain_numbers, read_table

GOOD = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda v: f"{v:.17g}"),
    st.integers(-10**20, 10**20).map(str),
    st.sampled_from(["1.", ".5", "+3", "1E5", "2e-3", "007", "-0", "0", "12.50"]),
)
ODD = st.sampled_from(["1_000", " 4", "4 ", "nan", "inf", "", '"2"', "x", "0x10", "1e", "--1", "١"])
NUMBERS = st.one_of(GOOD, GOOD, GOOD, GOOD, GOOD, GOOD, ODD)
HEADERS = st.one_of(st.permutations(["p", "n", "b", "time"]), st.permutations(["p", "n", "b", "time"]),
                    st.lists(st.sampled_from(["p", "n", "time", " n", "", "p", "q r"]), min_size=4, max_size=4))
PLAIN_TABLES = st.integers(2, 4).flatmap(lambda width: st.tuples(
    HEADERS.map(lambda names: list(names)[-width:]),
    st.lists(st.lists(NUMBERS, min_size=width, max_size=width).map(",".join), min_size=1, max_size=6),
    st.sampled_from(["\n", "\r\n", ""]),
))


def _outcome(read):
    try:
        data = read()
    except ExprsearchError as exc:
        return str(exc)
    return data.factors, data.X.tolist(), data.y.tolist(), data.notes


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(PLAIN_TABLES)
def test_plain_numbers_read_without_pandas_as_pandas_reads_them(tmp_path_factory, table):
    """Where the reader of plain numeric CSV answers, pandas reads the same columns and values,
    and the Dataset (or the error) is the same as from pandas' frame."""
    header, lines, end = table
    path = tmp_path_factory.mktemp("plain") / "m.csv"
    path.write_bytes((",".join(header) + "\n" + "\n".join(lines) + end).replace("\n", "\r\n" if end == "\r\n" else "\n").encode())
    plain = plain_numbers(path)
    if plain is None:
        return
    frame = read_table(path)
    assert [str(c) for c in frame.columns] == list(plain)
    for name, values in plain.items():
        assert frame[name].to_numpy(dtype=float).tolist() == values.tolist()
    target = header[-1]
    assert _outcome(lambda: load_table(path, target)) == _outcome(
        lambda: from_frame(frame, target, name="m", path=str(path), header_lines=1))


def test_plain_numbers_leave_anything_else_to_pandas(tmp_path):
    for text in ["p,time\n1,2\n\n3,4\n", "p,time\n1,2,3\n", "p;time\n1;2\n", "p,p\n1,2\n", "p,time\n1_000,2\n",
                 "p,time\nnan,2\n", 'p,time\n"1",2\n', "p,time\n"]:
        path = tmp_path / "m.csv"
        path.write_text(text)
        assert plain_numbers(path) is None, text


def test_a_plain_table_is_read_and_searched_without_importing_pandas(tmp_path):
    """pandas costs a fifth of a second at start; a plain numeric CSV does not need it."""
    import subprocess
    import sys

    path = tmp_path / "m.csv"
    path.write_text("p,time\n" + "".join(f"{p},{3 + 10 / p}\n" for p in (1, 2, 4, 8, 16)))
    code = ("import sys, exprsearch; exprsearch.search(sys.argv[1], 'time', resamples=0, jobs=1); "
            "print('pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_plain_numbers_read_any_line_ending(tmp_path, end):
    path = tmp_path / "m.csv"
    path.write_bytes(f"p,time{end}1,2{end}4,5{end}".encode())
    plain = plain_numbers(path)
    assert plain is not None and {k: v.tolist() for k, v in plain.items()} == {"p": [1.0, 4.0], "time": [2.0, 5.0]}


def test_a_parquet_file_without_pyarrow_says_how_to_read_it(tmp_path, monkeypatch):
    """pandas' own message named two engines and no way to get one; the extra is named."""
    from exprsearch import tables
    from exprsearch.errors import DataError

    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setattr(tables, "_importable", lambda *modules: False)
    with pytest.raises(DataError, match=r"needs pyarrow: pip install 'exprsearch\[parquet\]'"):
        read_table(path)


def test_rows_are_named_by_their_line_past_quoted_line_breaks(tmp_path):
    """A note field holding line breaks spans lines; the lines named after it stay the file's."""
    path = tmp_path / "notes.csv"
    path.write_text('p,time,note\n1,10,"first\nrun"\n\n2,x,ok\n')
    with pytest.raises(ExprsearchError, match="non-numeric values at line 5"):
        load_table(path, "time", ["p"])
    path = tmp_path / "notes.txt"  # its separator is sniffed, so its records are not placed: rows, not lines
    path.write_text('p;time;note\n1;10;"first\nrun"\n\n2;x;ok\n')
    with pytest.raises(ExprsearchError, match="non-numeric values at row 2;"):
        load_table(path, "time", ["p"])
