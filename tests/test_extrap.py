"""Extra-P's text and JSON measurement files: read, fitted per REGION:METRIC, through the CLI."""

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from exprsearch import search
from exprsearch.cli import app
from exprsearch.errors import DataError
from exprsearch.readers import detect_format, load_series
from tests.conftest import form

SHARED = Path(__file__).resolve().parents[2] / "shared" / "extrap-format"


def write_text_file(path: Path, seed: int = 0) -> Path:
    """Two regions over two parameters, 3 repetitions, 1 % noise, in Extra-P's text format."""
    rng = np.random.default_rng(seed)
    points = [(p, n) for p in (1, 2, 4, 8, 16) for n in (100, 400, 1600)]
    laws = {"solve": lambda p, n: 2 + 0.05 * n / p, "halo": lambda p, n: 1 + 0.5 * np.log2(p)}
    lines = ["# made by tests/test_extrap.py", "PARAMETER p", "PARAMETER n", ""]
    lines.append("POINTS " + " ".join(f"( {p} {n} )" for p, n in points))
    for region, law in laws.items():
        lines += ["", f"REGION {region}", "METRIC time"]
        for p, n in points:
            values = law(p, n) * (1 + 0.01 * rng.standard_normal(3))
            lines.append("DATA " + " ".join(f"{v:.6f}" for v in values))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_text_format_is_detected_and_read(tmp_path):
    path = write_text_file(tmp_path / "two.txt")
    assert detect_format(path) == "extrap-text"
    series = load_series(path)
    assert list(series) == ["solve:time", "halo:time"]
    assert series["solve:time"].factors == ("p", "n") and series["solve:time"].n_rows == 45


def test_each_region_gets_its_own_law(tmp_path):
    series = load_series(write_text_file(tmp_path / "two.txt"))
    assert str(search(series["solve:time"], grammar="data-parallel").law.template) == "c0 + c1*n/p"
    assert str(search(series["halo:time"], grammar="pmnf").law.template) == "a0 + c0*log2(p)"


def test_json_format(tmp_path):
    doc = {"parameters": ["x"], "measurements": {"kernel": {"time": [
        {"point": [x], "values": [1.5 + 0.5 * x] * 3} for x in (4, 8, 16, 32, 64)]}}}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    assert detect_format(path) == "extrap-json"
    law = search(load_series(path)["kernel:time"], grammar="pmnf").law
    assert law.constants["c0"] == pytest.approx(0.5, rel=1e-4) and law.constants["a0"] == pytest.approx(1.5, rel=1e-3)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\nDATA 3\n", "line 6: more DATA lines than the 2 POINTS"),
        ("PARAMETER p\nPOINTS (1 2) (3 4)\n", "line 2: a point has 2 coordinate(s) but there are 1 PARAMETER"),
        ("PARAMETER p\nPOINTS 1 2\nDATA 1\n", "line 3: DATA before any REGION"),
        ("PARAMETER p\nPOINTS 1 2\nREGON r\n", "line 3: unknown keyword 'REGON'"),
        ("PARAMETER p\nPOINTS 1 2 3\nREGION r\nDATA 1\nDATA 2\nREGION s\nDATA 1\n",
         "line 4: series 'r' has 2 DATA line(s) for 3 POINTS"),
        ("PARAMETER p\nPOINTS 1 2 3\nREGION r\nDATA 1\nDATA 2\n", "line 4: series 'r' has 2 DATA"),
        ("PARAMETER p\nPOINTS 1\nREGION r\nDATA 1\nREGION r\nDATA 2\n",
         "line 6: series 'r' was already given at line 4"),
        ("PARAMETER p q p\nPOINTS (1 2 3)\nREGION r\nDATA 1\n", "declares a PARAMETER twice"),
        ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 0 0\n", "series r: values at 1 point(s) ((2))"),
        ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2 3,5\n", "line 5: DATA holds '3,5', which is not a number"),
        ("PARAMETER p\nPOINTS (1) (2x)\nREGION r\n", "line 2: POINTS holds '2x', which is not a number; fix or remove it"),
        ("PARAMETER p\nPOINTS 1 2\nREGION r\n", "holds no measurements: read as --format extrap-text, it gives no "
         "series any values (a series is a REGION line, then one DATA line per point of POINTS)"),
        # a character no one sees is written out, or the number in the message looks whole
        ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\u200b5\n", "line 5: DATA holds '2\\\\u200b5', which"),
        ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\ufeff5\n", "line 5: DATA holds '2\\\\ufeff5', which"),
    ],
)
def test_broken_text_files_name_the_line(tmp_path, text, fragment):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        load_series(path, "extrap-text")


def test_a_file_that_is_not_utf8_names_the_byte(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes(b"PARAMETER p\nPOINTS 1 2\nREGION r\xe9gion\nDATA 1\nDATA 2\n")
    with pytest.raises(DataError, match=r"is not UTF-8 text \(byte 0xe9 at byte 32\); is --format extrap-text right"):
        load_series(path, "extrap-text")


def test_text_files_follow_extrap_conventions(tmp_path):
    """A METRIC carries over to later REGIONs (two metrics are never merged into one series),
    only whole lines starting with # are comments, tabs separate, and one PARAMETER line may
    name several parameters."""
    path = tmp_path / "metrics.txt"
    path.write_text("# a comment\nPARAMETER p\tn\nPOINTS (1 10) (2 20) (4 10)\n"
                    "METRIC bytes\nREGION main#loop\nDATA 100 101\nDATA 200\nDATA 400\n"
                    "REGION other\nDATA 5\nDATA 6\nDATA 7\n"
                    "METRIC time\nREGION main#loop\nDATA\t1.0\t1.1\nDATA 0.5\nDATA 0.25\n")
    series = load_series(path)
    assert list(series) == ["main#loop:bytes", "other:bytes", "main#loop:time"]
    assert series["main#loop:bytes"].factors == ("p", "n")
    assert series["main#loop:bytes"].y.tolist() == [100, 101, 200, 400]
    assert series["main#loop:time"].y.tolist() == [1.0, 1.1, 0.5, 0.25]


def test_a_series_that_cannot_be_fitted_does_not_block_the_others(tmp_path):
    path = tmp_path / "zero.txt"
    path.write_text("PARAMETER p\nPOINTS 1 2\nREGION idle\nDATA 0\nDATA 0\nREGION work\nDATA 2\nDATA 1\n")
    with pytest.raises(DataError, match="series idle:.*pass --target CALLPATH:METRIC to fit another.*"
                                        "or model every series that can be fitted with 'exprsearch profile"):
        load_series(path)
    assert list(load_series(path, target="work")) == ["work"]


def test_cli_writes_one_law_per_series_and_selects_one(tmp_path):
    path = write_text_file(tmp_path / "two.txt")
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(path), "-g", "data-parallel", "--out", str(tmp_path / "all")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["halo_time", "solve_time"]
    result = runner.invoke(app, ["run", str(path), "-g", "data-parallel", "-t", "solve", "--json",
                                 "--out", str(tmp_path / "one")])
    assert json.loads(result.stdout)["template"] == "c0 + c1*n/p"
    result = runner.invoke(app, ["run", str(path), "-t", "nope", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "its series are solve:time, halo:time" in " ".join(result.output.split())


def test_table_without_target_lists_the_columns(tmp_path, amdahl_csv):
    result = CliRunner().invoke(app, ["run", str(amdahl_csv), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "pass --target COLUMN" in result.output and "p, n, time" in result.output
    assert "(by its name perhaps --target 'time')" in " ".join(result.output.split())


@pytest.mark.parametrize("columns, guesses", [
    (["layers", "batch", "epoch_s"], ["epoch_s"]),
    (["model", "steps_per_sec_mean", "step_time_s_mean"], ["step_time_s_mean"]),  # a rate is no time
    (["gpus", "images_per_sec"], ["images_per_sec"]),  # no time: the rate
    (["gpus", "ttt_min_median", "ttt_min_std", "ttt_min_max"], ["ttt_min_median", "ttt_min_max"]),  # a spread is none
    (["p", "n", "value"], []),
])
def test_the_likely_targets_are_those_whose_names_say_so(columns, guesses):
    from exprsearch.cli.common import _likely_targets

    assert _likely_targets(columns) == guesses


def test_a_table_with_several_times_names_them_all(tmp_path):
    path = tmp_path / "ttt.csv"
    path.write_text("gpus,ttt_min_median,ttt_min_std,ttt_min_mean\n1,10,1,10\n2,6,1,6\n4,4,1,4\n")
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "perhaps --target one of 'ttt_min_median', 'ttt_min_mean');" in " ".join(result.output.split())


TRUTH = {  # ../shared/README.md: the laws behind Extra-P's test inputs
    ("one_parameter_1.txt", "compute:time"): "a0 + c0*x**2",
    ("one_parameter_6.txt", "met1"): "a0",
    ("one_parameter_6.txt", "met2"): "a0 + c0*p**2",
    ("one_parameter_6.txt", "met3"): "a0 + c0*p**2 + c1*log2(p)",
    ("one_parameter_6.txt", "met4"): "a0 + c0*p**2",
    ("input1.json", "sweep:time"): "a0 + c0*x",
}


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/extrap-format is not beside the project")
@pytest.mark.parametrize("case", sorted(TRUTH), ids=lambda c: f"{c[0]}-{c[1]}")
def test_extrap_examples_recover_the_true_form(case):
    file, name = case
    law = search(load_series(SHARED / file)[name], grammar="pmnf").law
    assert form(law.template) == form(TRUTH[case])


def test_a_stray_repetition_of_an_extrap_file_is_dropped_when_asked(tmp_path):
    """Repetitions of an Extra-P point are runs like a table's; --drop-stray drops one far off,
    and law.json records it so plot reads the same series; --drop-missing is for tables."""
    points = (20, 30, 40, 50, 60)
    data = [[1.5 + 0.2 * x**2 * (1 + 0.01 * r) for r in range(5)] for x in points]
    data[2][3] /= 40  # a repetition cut short
    text = "PARAMETER x\n\n" + "".join(f"POINTS ( {x} )\n" for x in points) + "\nREGION compute\nMETRIC time\n"
    path = tmp_path / "stray.txt"
    path.write_text(text + "".join("DATA " + " ".join(f"{v:.6g}" for v in row) + "\n" for row in data))
    result = CliRunner().invoke(app, ["run", str(path), "--drop-stray", "--out", str(tmp_path / "o"), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    recorded = json.loads((tmp_path / "o" / "law.json").read_text())
    assert recorded["dataset"]["drop_stray"] is True and recorded["metrics"]["mape_pct"] < 2
    assert any(n.startswith("dropped 1 run(s) far from the other runs") for n in recorded["dataset"]["notes"])
    refused = CliRunner().invoke(app, ["run", str(path), "--drop-missing", "--out", str(tmp_path / "m")])
    assert refused.exit_code == 2 and "--drop-missing drops a table's rows" in refused.output


def test_a_column_of_dates_named_as_a_time_is_not_proposed(tmp_path):
    """MLflow's start_time and end_time say when a run ran, not how long: the hint passes them by."""
    path = tmp_path / "runs.csv"
    path.write_text("start_time,end_time,metrics.train_runtime,params.num_gpus\n"
                    + "".join(f"2026-11-20 10:0{i}:00+00:00,2026-11-20 11:0{i}:00+00:00,{100 / g + 5},{g}\n"
                              for i, g in enumerate((1, 2, 4, 8))))
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "(by its name perhaps --target 'metrics.train_runtime')" in " ".join(result.output.split())


def test_a_series_law_is_written_in_its_metric_s_name():
    """A law of bytes or of a hardware counter is not a time: the series' target is its metric's
    name (as a law writes it), time only where the file names no metric, and never a parameter."""
    import tempfile
    from pathlib import Path

    from exprsearch.readers import load_series

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.txt"
        path.write_text("PARAMETER p\nPOINTS (1) (2) (4) (8)\nREGION main\nMETRIC bytes sent\n"
                        + "".join(f"DATA {100 * p}\n" for p in (1, 2, 4, 8))
                        + "METRIC p\n" + "".join(f"DATA {p + 1}\n" for p in (1, 2, 4, 8))
                        + "REGION solve\nMETRIC time\n" + "".join(f"DATA {2 + 40 / p}\n" for p in (1, 2, 4, 8)))
        series = load_series(path)
        assert {name: d.target for name, d in series.items()} == {
            "main:bytes sent": "bytes_sent", "main:p": "p_value", "solve:time": "time"}
        bare = Path(folder) / "bare.txt"  # no METRIC line: Extra-P names the series by its callpath
        bare.write_text("PARAMETER p\nPOINTS (1) (2) (4) (8)\nREGION main\n"
                        + "".join(f"DATA {2 + 40 / p}\n" for p in (1, 2, 4, 8)))
        assert [d.target for d in load_series(bare).values()] == ["time"]


def test_a_laws_series_is_read_again_by_its_name_or_refused_in_one_sentence(tmp_path):
    """plot and predict read the series a law was fitted on: by name, else the file's only one;
    a file without it lists its series, and a file of several where the law names none says so."""
    from exprsearch.errors import DataError
    from exprsearch.readers import law_series

    path = tmp_path / "m.txt"
    path.write_text("PARAMETER p\nPOINTS (1) (2) (4)\nREGION a\nMETRIC time\nDATA 3\nDATA 2\nDATA 1.5\n"
                    "REGION b\nMETRIC time\nDATA 5\nDATA 4\nDATA 3.5\n")
    assert law_series(path, None, "b:time").y.tolist() == [5, 4, 3.5]
    with pytest.raises(DataError, match=r"holds no series c:time, the one the law was fitted on \(its series are "
                                        r"a:time, b:time\)"):
        law_series(path, None, "c:time")
    with pytest.raises(DataError, match="holds 2 series and the law names none of them"):
        law_series(path, None, None)
