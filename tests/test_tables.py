"""Table files: plain numeric CSV read without pandas exactly as pandas reads it."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprsearch.data import from_frame, load_table
from exprsearch.errors import ExprsearchError
from exprsearch.tables import plain_numbers, read_table
from tests.conftest import PLOT_EXTRA

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


# 100 tables in the README's test command, 300 where CI runs the property tests at length (EXPRSEARCH_FUZZ=thorough)
@pytest.mark.fuzz
@settings(max_examples=300 if os.environ.get("EXPRSEARCH_FUZZ") == "thorough" else 100, deadline=None,
          derandomize=True, suppress_health_check=[HealthCheck.too_slow])
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


@pytest.mark.slow  # 1.2-1.4 s: an integration test, run in CI's second step
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


def _workbook(path, *sheets):
    """An Excel workbook with one sheet per list of rows (None: an empty cell; [] an empty row)."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.remove(book.active)
    for number, rows in enumerate(sheets):
        sheet = book.create_sheet(f"sheet{number + 1}")
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def test_a_workbook_sheet_is_read_below_its_title_with_rows_named_by_the_sheet(tmp_path):
    import datetime

    start = datetime.datetime(2026, 1, 1)
    runs = [[None, p, 2 + 40 / p, start + datetime.timedelta(hours=p)] for p in (1, 2, 4, 8, 16)]
    path = _workbook(tmp_path / "runs.xlsx", [["measured on cluster X"], [], [None, "gpus", "step s", "logged"],
                                              *runs[:2], [], *runs[2:]])
    data = load_table(path, "step s")
    assert data.factors == ("gpus",) and data.y.tolist() == [2 + 40 / p for p in (1, 2, 4, 8, 16)]
    assert any("ignored non-numeric column(s) logged" in n and "--by" not in n for n in data.notes)  # a date
    bad = _workbook(tmp_path / "bad.xlsx", [[None, "gpus", "step s"], [None, 1, 42.0], [None, 2, "x"], [None, 4, 12.0]])
    with pytest.raises(ExprsearchError, match="is numbers except 'x' at row 3:"):  # the sheet's row 3, as Excel numbers it
        load_table(bad, "step s", ["gpus"])


def test_a_sheet_s_rows_are_named_as_the_spreadsheet_numbers_them_in_groups_too(tmp_path):
    from exprsearch.grouped import load_groups

    rows = [["gpu", "p", "time"], *[[g, p, 2 + 40 / p] for g in ("K80", "V100") for p in (1, 2, 4)]]
    rows[5][2] = "x"  # V100 at p = 2: the sheet's row 6
    path = _workbook(tmp_path / "g.xlsx", rows)
    with pytest.raises(ExprsearchError, match=r"group gpu=V100: .* is numbers except .x. at row 6:"):
        load_groups(path, "time", ["gpu"], ["p"])


def test_a_workbook_with_data_on_several_sheets_or_none_is_refused(tmp_path):
    table = [["p", "time"], [1, 10.0], [2, 5.0], [4, 3.0]]
    two = _workbook(tmp_path / "two.xlsx", table, [["notes"], ["by hand"]])
    with pytest.raises(ExprsearchError, match=r"has data on 2 sheets \(sheet1, sheet2\); name the one to read with --sheet"):
        read_table(two)
    assert read_table(two, "sheet1").shape == (3, 2)
    with pytest.raises(ExprsearchError, match=r"--sheet sheet3: .* has no such sheet \(did you mean 'sheet2' or 'sheet1'\?\); its sheets"):
        read_table(two, "sheet3")
    with pytest.raises(ExprsearchError, match="--sheet runs: .* is no Excel workbook"):
        (tmp_path / "t.csv").write_text("p,time\n1,2\n")
        read_table(tmp_path / "t.csv", "runs")
    assert read_table(_workbook(tmp_path / "one.xlsx", table, [])).shape == (3, 2)  # an empty sheet is no data
    with pytest.raises(ExprsearchError, match="holds no rows of measurements"):
        read_table(_workbook(tmp_path / "none.xlsx", []))
    with pytest.raises(ExprsearchError, match=r"row 2 has two columns named 'p' \(columns B and D\); rename one"):
        read_table(_workbook(tmp_path / "twice.xlsx", [["title"], [None, "p", "time", "p"], [None, 1, 2.0, 3]]))
    (tmp_path / "fake.xlsx").write_text("p,time\n1,2\n")
    with pytest.raises(ExprsearchError, match="is not an Excel workbook that can be read"):
        read_table(tmp_path / "fake.xlsx")


@pytest.mark.parametrize("name", ["t.csv", "t.json", "t.jsonl"])
def test_a_file_in_another_code_page_says_to_save_it_as_utf8(tmp_path, name):
    """Excel on Windows writes CSV in cp1252: 'µs' is the byte 0xb5, which pandas' UTF-8 refused
    with a codec's message."""
    path = tmp_path / name
    text = {"t.csv": "p,time (µs)\n1,10\n2,5\n", "t.json": '{"p": [1, 2], "time (µs)": [10, 5]}',
            "t.jsonl": '{"p": 1, "time (µs)": 10}\n'}[name]
    path.write_bytes(text.encode("cp1252"))
    with pytest.raises(ExprsearchError, match=r"is not UTF-8 text \(byte 0xb5 at byte \d+\); save it as UTF-8") as caught:
        read_table(path)
    assert ("in Excel: CSV UTF-8" in str(caught.value)) == (name == "t.csv")  # Excel's way only where Excel wrote it


def test_comment_lines_above_the_header_are_skipped_and_lines_still_named(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("# measured on cluster X, 2026-11-20\n\n# p: GPUs\np,time\n1,10\n2,x\n4,3\n")
    assert list(read_table(path).columns) == ["p", "time"]
    with pytest.raises(ExprsearchError, match="is numbers except .x. at line 6:"):
        load_table(path, "time", ["p"])
    path.write_text("# a note\np,p,time\n1,2,3\n")
    with pytest.raises(ExprsearchError, match="line 2 has two columns named 'p'"):
        read_table(path)
    path.write_text("#p,time\n1,10\n2,5\n")  # a header written as a comment is still the header
    assert list(read_table(path).columns) == ["#p", "time"]


def test_a_workbook_under_another_extension_is_named_as_one(tmp_path):
    from exprsearch.readers import load_series

    path = _workbook(tmp_path / "runs.xlsx", [["p", "time"], [1, 2.0], [2, 1.1]])
    renamed = path.rename(tmp_path / "runs.csv")  # a zip, which Extra-P's experiments are too
    with pytest.raises(ExprsearchError, match=r"'.*runs.csv' is an Excel workbook; name it .xlsx"):
        load_series(renamed, "extrap-experiment")


def test_a_workbook_without_openpyxl_says_how_to_read_it(tmp_path, monkeypatch):
    from exprsearch import tables

    path = _workbook(tmp_path / "t.xlsx", [["p", "time"], [1, 2.0]])
    monkeypatch.setattr(tables, "_importable", lambda *modules: False)
    with pytest.raises(ExprsearchError, match=r"needs openpyxl: pip install 'exprsearch\[excel\]'"):
        read_table(path)


def test_run_fits_a_workbook_and_predicts_at_its_configurations(tmp_path):
    from typer.testing import CliRunner

    from exprsearch.cli import app

    path = _workbook(tmp_path / "runs.xlsx", [["gpus", "time"], *[[p, 2 + 40 / p] for p in (1, 2, 4, 8, 16)]])
    result = CliRunner().invoke(app, ["run", str(path), "-t", "time", "--bootstrap", "0", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "time = 2.0 + 40.0/gpus" in " ".join(result.output.split())
    predicted = CliRunner().invoke(app, ["predict", str(tmp_path / "o"), "--data", str(path), "--json"])
    assert predicted.exit_code == 0, predicted.output


@pytest.mark.slow  # workbooks are read and searched in the fast step
@pytest.mark.plot
def test_run_reads_the_sheet_named_and_plot_finds_it_again(tmp_path):
    import json

    from typer.testing import CliRunner

    from exprsearch.cli import app

    runs = [["gpus", "time"], *[[p, 2 + 40 / p] for p in (1, 2, 4, 8, 16)]]
    path = _workbook(tmp_path / "book.xlsx", [["notes on the cluster"], ["by hand"]], runs)
    refused = CliRunner().invoke(app, ["run", str(path), "-t", "time", "--out", str(tmp_path / "n")])
    assert refused.exit_code == 2 and "name the one to read with --sheet (sheet2)" in " ".join(refused.output.split())
    result = CliRunner().invoke(app, ["run", str(path), "-t", "time", "--sheet", "sheet2", "--bootstrap", "0",
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "o" / "law.json").read_text())["dataset"]["sheet"] == "sheet2"
    predicted = CliRunner().invoke(app, ["predict", str(tmp_path / "o"), "--data", str(path), "--sheet", "sheet2",
                                         "--json"])
    assert predicted.exit_code == 0 and json.loads(predicted.stdout)["mape_pct"] < 1, predicted.output
    # without --sheet, the sheet the law was fitted on, as plot reads it, and said
    again = CliRunner().invoke(app, ["predict", str(tmp_path / "o"), "--data", str(path), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout) == json.loads(predicted.stdout), again.output
    assert "reading sheet sheet2 of" in " ".join(again.stderr.split())
    pytest.importorskip("matplotlib", reason=PLOT_EXTRA)
    drawn = CliRunner().invoke(app, ["plot", str(tmp_path / "o")])
    assert drawn.exit_code == 0 and (tmp_path / "o" / "measured_vs_predicted.png").is_file(), drawn.output
    assert "no measured" not in drawn.output


def test_a_law_s_rows_are_read_from_its_sheet_where_the_workbook_has_it_among_several(tmp_path):
    """One rule for predict and plot: the sheet the law was fitted on where the workbook has data
    on several sheets and that one among them, else the workbook's one sheet whatever its name."""
    from exprsearch.workbooks import law_sheet

    runs = [["gpus", "time"], [1, 42], [2, 22]]
    several = _workbook(tmp_path / "several.xlsx", [["notes"], ["by hand"]], runs)
    one = _workbook(tmp_path / "one.xlsx", runs)
    assert law_sheet(several, "sheet2") == "sheet2" and law_sheet(several, "runs") is None
    assert law_sheet(one, "sheet2") is None and law_sheet(several, None) is None


@pytest.mark.slow
@pytest.mark.plot
def test_plot_reads_another_workbook_of_the_law_s_rows_as_predict_does(tmp_path):
    """plot DATA read the sheet the law was fitted on whatever the workbook, so a one-sheet copy
    named otherwise was refused with '--sheet sheet3: no such sheet', an option plot did not have;
    now it reads that one sheet, and --sheet picks one of several."""
    from typer.testing import CliRunner

    from exprsearch.cli import app

    pytest.importorskip("matplotlib", reason=PLOT_EXTRA)
    runs = [["gpus", "time"], *[[p, 2 + 40 / p] for p in (1, 2, 4, 8, 16)]]
    fitted = _workbook(tmp_path / "book.xlsx", [["notes"], ["by hand"]], [["more notes"], ["by hand"]], runs)
    result = CliRunner().invoke(app, ["run", str(fitted), "-t", "time", "--sheet", "sheet3", "--bootstrap", "0",
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    copy = _workbook(tmp_path / "copy.xlsx", runs)  # its one sheet is sheet1
    drawn = CliRunner().invoke(app, ["plot", str(tmp_path / "o"), str(copy), "--out", str(tmp_path / "a")])
    assert drawn.exit_code == 0 and (tmp_path / "a" / "measured_vs_predicted.png").is_file(), drawn.output
    both = _workbook(tmp_path / "both.xlsx", runs, runs)  # neither is sheet3
    refused = CliRunner().invoke(app, ["plot", str(tmp_path / "o"), str(both), "--out", str(tmp_path / "b")])
    assert refused.exit_code == 2 and "name the one to read with --sheet" in " ".join(refused.output.split())
    picked = CliRunner().invoke(app, ["plot", str(tmp_path / "o"), str(both), "--sheet", "sheet1",
                                      "--out", str(tmp_path / "b")])
    assert picked.exit_code == 0 and (tmp_path / "b" / "measured_vs_predicted.png").is_file(), picked.output
    alone = CliRunner().invoke(app, ["plot", str(tmp_path / "o"), "--sheet", "sheet1", "--out", str(tmp_path / "c")])
    assert alone.exit_code == 2 and "give DATA" in alone.output


def test_a_table_with_a_bad_line_among_many_is_refused_at_once(tmp_path):
    """Each plain number matches one way only. Where the digits of a whole number could split two
    ways (16 as 1|6), the table's regex tried every split of every row before a bad line: 30 rows
    of batch sizes and an empty cell among them did not finish in ten minutes."""
    import signal

    rows = [f"{2.0 ** (i % 4)},{16 * 2 ** (i % 3)},{1 + i / 7!r}" for i in range(40)]
    rows[30] = "4.0,16,"
    path = tmp_path / "t.csv"
    path.write_text("p,b,time\n" + "\n".join(rows) + "\n")
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the plain-number reader backtracked for 10 s"))
    signal.alarm(10)
    try:
        assert plain_numbers(path) is None
        with pytest.raises(ExprsearchError, match="column 'time' has missing or non-numeric values at line 32"):
            load_table(path, "time")
    finally:
        signal.alarm(0)


def test_rows_an_export_lists_under_one_key_are_read_and_said(tmp_path):
    """{"runs": [...], "meta": {...}}: the rows under the one key that lists objects, with a note
    naming it and the keys that hold none; two such keys are refused, naming them."""
    import json

    rows = [{"p": p, "time": 1 + 10 / p} for p in (1, 2, 4, 8)]
    (tmp_path / "wrapped.json").write_text(json.dumps({"meta": {"tool": "x"}, "runs": rows}))
    data = load_table(tmp_path / "wrapped.json", "time")
    assert data.X[:, 0].tolist() == [1, 2, 4, 8]
    assert "read the 4 rows listed under 'runs'; the file's other keys (meta) hold no rows" in data.notes
    (tmp_path / "two.json").write_text(json.dumps({"train": rows, "eval": rows}))
    with pytest.raises(ExprsearchError, match=r"holds lists of rows under 2 keys \(train, eval\); save the one"):
        load_table(tmp_path / "two.json", "time")
