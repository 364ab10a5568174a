"""Readers of Extra-P's formats: JSON Lines, Talpas, the older JSON layout and experiment files,
each on small files written here and on Extra-P's own test data where it is beside the project."""

import json
import zipfile
from pathlib import Path

import pytest

from exprsearch.data import load_table
from exprsearch.errors import DataError
from exprsearch.readers import detect_format, load_series, read_profile
from tests.test_cli_decide import run

DATA = Path(__file__).resolve().parents[2] / "shared" / "extrap-format" / "extrap-tests-data"
POINTS = [(1, 10), (2, 10), (4, 10), (1, 20), (2, 20), (4, 20)]


def law(p, n):
    return 1 + 0.1 * n / p


def write_jsonl(path: Path, talpas: bool = False) -> Path:
    key = "parameters" if talpas else "params"
    lines = []
    for p, n in POINTS:
        for r in (0.99, 1.01):
            record = {key: {"p": p, "n": n}, "callpath": "main->solve", "metric": "time", "value": law(p, n) * r}
            line = json.dumps(record)
            lines.append(line.replace(", ", ";").replace(",", ";") if talpas else line)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_json_lines_and_talpas_are_detected_and_read(tmp_path):
    for path, fmt in ((write_jsonl(tmp_path / "m.jsonl"), "extrap-jsonl"),
                      (write_jsonl(tmp_path / "t.txt", talpas=True), "talpas")):
        assert detect_format(path) == fmt
        series = load_series(path)
        assert list(series) == ["main->solve:time"]
        data = series["main->solve:time"]
        assert data.factors == ("p", "n") and data.n_rows == 12


def test_json_lines_default_names_and_value_lists_as_extrap(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"params": {"x": 1}, "value": [2, 2.2]}\n{"params": {"x": 2}, "value": 4}\n'
                    '{"params": {"x": 4}, "value": 8}\n')
    series = load_series(path)
    assert list(series) == ["<root>:<default>"] and series["<root>:<default>"].y.tolist() == [2, 2.2, 4, 8]


@pytest.mark.parametrize("text, fragment", [
    ('{"params": {"x": 1}, "value": 2}\n{"params": {"y": 2}, "value": 3}\n', "line 2 gives parameters y"),
    ('{"params": {"x": 1}, "value": "2"}\n', "line 1 needs numeric parameter values"),
    ('{"params": {"x": 1}, "value": 2}\nnot json\n', "line 2, column 1 is not JSON \\(Expecting value\\); each line "
                                                      'holds one object, {"params": {…}, "value": …}'),
])
def test_broken_json_lines_name_the_line(tmp_path, text, fragment):
    path = tmp_path / "b.jsonl"
    path.write_text(text)
    with pytest.raises(DataError, match=fragment):
        load_series(path)


def test_the_older_json_layout(tmp_path):
    doc = {"parameters": [{"id": 1, "name": "x"}], "callpaths": [{"id": 1, "name": "sweep"}],
           "metrics": [{"id": 1, "name": "time"}],
           "coordinates": [{"id": i, "parameter_value_pairs": [{"parameter_id": 1, "parameter_value": x}]}
                           for i, x in enumerate((4, 8, 16), start=1)],
           "measurements": [{"coordinate_id": i, "callpath_id": 1, "metric_id": 1, "value": 1.5 + 0.5 * x + r}
                            for i, x in enumerate((4, 8, 16), start=1) for r in (0, 0.01)]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    assert detect_format(path) == "extrap-json"
    data = load_series(path)["sweep:time"]
    assert data.column("x").tolist() == [4, 4, 8, 8, 16, 16] and data.y[0] == 3.5
    doc["measurements"][0]["metric_id"] = 9
    path.write_text(json.dumps(doc))
    with pytest.raises(DataError, match="measurement 1 needs a numeric 'value' and the ids of a known"):
        load_series(path)


def test_experiment_files_with_values_or_only_summaries(tmp_path):
    entries = [{"coordinate": [float(x)], "values": [x * 1.0, x * 1.02]} for x in (1, 2, 4, 8)]
    summaries = [{"coordinate": [float(x)], "mean": x * 2.0, "median": x * 2.0, "values": None} for x in (1, 2, 4, 8)]
    path = tmp_path / "e.extra-p"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("experiment.json", json.dumps({"parameters": ["p"], "measurements": {
            "main": {"time": entries, "bytes": summaries}}}))
    assert detect_format(path) == "extrap-experiment"
    series = load_series(path)
    assert series["main:time"].n_rows == 8 and series["main:bytes"].n_rows == 4
    assert any("keeps only summaries at 4 point(s)" in n for n in series["main:bytes"].notes)
    (tmp_path / "broken.extra-p").write_bytes(b"PK not really")
    with pytest.raises(DataError, match="is not an Extra-P experiment"):
        load_series(tmp_path / "broken.extra-p", "extrap-experiment")


def test_a_series_measured_at_fewer_points_says_so(tmp_path):
    path = tmp_path / "f.jsonl"
    lines = [{"params": {"x": x}, "callpath": c, "metric": "t", "value": x} for x in (1, 2, 4, 8) for c in ("a", "b")]
    path.write_text("\n".join(json.dumps(r) for r in lines[:-1]) + "\n")
    series = load_series(path)
    assert any("measured at 3 of the file's 4 points" in n for n in series["b:t"].notes)
    assert not any("measured at" in n for n in series["a:t"].notes)


def test_cli_runs_a_json_lines_file(tmp_path):
    result = run("run", write_jsonl(tmp_path / "m.jsonl"), "-g", "data-parallel", "--bootstrap", "0",
                 "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "o" / "law.json").read_text())["template"] == "c0 + c1*n/p"  # one series: no subfolder


# Extra-P's own test inputs (the files without an extension are Extra-P 3 experiments). The files
# its tests expect it to refuse are refused here too; two it
# refuses because a series lacks some points are read here, with a note (see benchmarks/readers.py).
REFUSED = {"experiment_MP_neg1.txt", "experiment_MP_neg2.txt", "experiment3_neg.txt", "experiment_neg.txt"}
SHARED_FILES = sorted(p for sub in ("text", "json", "jsonlines", "talpas", "input", "experiments")
                      for p in (DATA / sub).rglob("*")
                      if p.is_file() and p.suffix.lower() in (".txt", ".json", ".jsonl", ".extra-p", "")) if DATA.is_dir() else []


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/extrap-format is not beside the project")
@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_extrap_test_inputs(path):
    fmt = "talpas" if path.parent.name == "talpas" else None
    if path.name in REFUSED:
        with pytest.raises(DataError):
            read_profile(path, fmt)
    else:
        assert read_profile(path, fmt).series


CUBES = sorted(d for d in (DATA / "cubeset").iterdir() if d.is_dir()) if (DATA / "cubeset").is_dir() else []


@pytest.mark.skipif(not CUBES, reason="../shared/extrap-format is not beside the project")
@pytest.mark.parametrize("folder", CUBES, ids=lambda d: d.name)
def test_cube_experiments_as_extrap_reads_them(folder):
    """Parameters from the run folders' names, one series per callpath × metric of exclusive
    values; the two sets whose folders name different parameters are refused, as by Extra-P."""
    pytest.importorskip("pycubexr")
    assert detect_format(folder) == "cube"
    if folder.name.startswith("negative_example"):
        with pytest.raises(DataError, match="names parameters"):
            read_profile(folder)
        return
    profile = read_profile(folder)
    assert "main:time" in profile.series and all(len(p) == len(profile.parameters) for p, _ in profile.series["main:time"])
    if folder.name == "multi_parameter":
        assert profile.parameters == ("x", "y", "z") and len(profile.series["main:time"]) == 27


def test_cube_without_pycubexr_says_how_to_get_it(tmp_path, monkeypatch):
    import builtins

    (tmp_path / "mm.x1.r1").mkdir()
    (tmp_path / "mm.x1.r1" / "profile.cubex").write_bytes(b"")
    real = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **k: (_ for _ in ()).throw(ImportError(name))
                        if name.startswith("pycubexr") else real(name, *a, **k))
    with pytest.raises(DataError, match=r"needs pycubexr: pip install 'exprsearch\[cube\]'"):
        load_series(tmp_path)


def test_a_folder_without_cube_runs_names_the_folders_that_have_them(tmp_path):
    """A folder of sets of CUBE runs (as Extra-P's cubeset) points to the sets; any other folder asks
    for a data file."""
    with pytest.raises(DataError, match="is a folder without CUBE run folders .*; give a data file, or a folder of "
                                        "CUBE runs"):
        detect_format(tmp_path)
    for name in ("strong", "weak"):
        (tmp_path / name / "mm.x1.r1").mkdir(parents=True)
        (tmp_path / name / "mm.x1.r1" / "profile.cubex").write_bytes(b"")
    with pytest.raises(DataError, match=f"its folders strong, weak have them: give one, such as {tmp_path / 'strong'}"):
        detect_format(tmp_path)


def test_one_cube_run_points_to_its_experiment(tmp_path):
    """A run's .cubex file, or its folder, is one configuration: the error names the experiment's
    folder instead of an unknown extension or a folder without runs."""
    for x in (1, 2):
        (tmp_path / f"mm.x{x}.r1").mkdir()
        (tmp_path / f"mm.x{x}.r1" / "profile.cubex").write_bytes(b"")
    for given in (tmp_path / "mm.x1.r1" / "profile.cubex", tmp_path / "mm.x1.r1"):
        with pytest.raises(DataError, match=f"is one run of a CUBE experiment; .* give '{tmp_path}'$"):
            detect_format(given)
    assert detect_format(tmp_path) == "cube"


def test_a_series_with_many_bad_points_says_how_many_it_does_not_name(tmp_path):
    lines = [f'{{"params": {{"x": {x}}}, "metric": "time", "value": {0.0 if x < 7 else float(x)}}}' for x in range(1, 10)]
    (tmp_path / "zeros.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"at 6 point\(s\) \(\(1\), \(2\), \(3\), \(4\) and 2 more\) are zero or negative"):
        load_series(tmp_path / "zeros.jsonl")


def test_the_only_series_with_a_zero_is_not_told_to_fit_another(tmp_path):
    """In a file of one series, a zero value cannot be avoided by choosing another series: the
    error says to remove the point, where in a file of many series it points to --target and profile."""
    lines = [f'{{"params": {{"x": {x}}}, "metric": "time", "value": {0.0 if x == 1 else float(x)}}}' for x in range(1, 6)]
    (tmp_path / "one.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"at 1 point\(s\) \(\(1\)\) are zero or negative.*it is the file's only series: "
                                        "remove those points from the file to fit the others$"):
        load_series(tmp_path / "one.jsonl")
    more = lines + [line.replace('"time"', '"bytes"').replace("0.0", "1.0") for line in lines]
    (tmp_path / "two.jsonl").write_text("\n".join(more) + "\n")
    with pytest.raises(DataError, match="pass --target CALLPATH:METRIC to fit another series"):
        load_series(tmp_path / "two.jsonl")


def test_an_extrap_text_file_without_its_parameter_line_is_read_as_one(tmp_path):
    """Extra-P's own negative example starts at POINTS: the reader says what is missing, instead
    of reading it as a table whose columns are POINTS, 1000, 2000."""
    path = tmp_path / "neg.txt"
    path.write_text("POINTS 1000 2000 4000\n\nREGION met1\nDATA 4.1 3.9 4.0\nDATA 4.1 3.9 4.0\nDATA 4.1 3.9 4.0\n")
    assert detect_format(path) == "extrap-text"
    with pytest.raises(DataError, match="line 1: POINTS before any PARAMETER; name the parameters first"):
        load_series(path)
    result = run("profile", path, "--out", tmp_path / "out")
    assert result.exit_code == 2 and "POINTS before any PARAMETER" in result.output


def test_a_table_whose_first_column_is_named_like_a_keyword_stays_a_table(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("data time\n1 2.0\n2 3.1\n4 5.2\n")
    assert detect_format(path) == "table"


def test_an_extrap_text_file_without_an_extension_is_read_as_one(tmp_path):
    """Extra-P text saved as 'kernels' was refused as a table of unknown extension."""
    path = tmp_path / "kernels"
    path.write_text("PARAMETER p\nPOINTS 1 2 4 8\nREGION main\nMETRIC time\n"
                    + "".join(f"DATA {10 / p + 1:g}\n" for p in (1, 2, 4, 8)))
    assert detect_format(path) == "extrap-text"
    assert load_series(path)["main:time"].n_rows == 4
    other = tmp_path / "table.out"
    other.write_text("p,time\n1,2\n2,1\n")
    from exprsearch.data import load_table

    with pytest.raises(DataError, match=r"unknown extension '\.out'.*an Extra-P file is known by its content, or by run's and profile's --format"):
        load_table(other, "time")


def test_json_lines_without_params_are_a_table_such_as_a_training_log(tmp_path):
    """One JSON object per run, as training scripts log them: a table, its rows named by line."""
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"gpus": p, "batch": b, "step_s": 0.1 + b / (100 * p)}) + "\n"
                            for p in (1, 2, 4, 8) for b in (32, 64)))
    assert detect_format(path) == "table"
    data = load_table(path, "step_s")
    assert data.factors == ("gpus", "batch") and data.n_rows == 8
    (tmp_path / "gap.ndjson").write_text('{"gpus": 1, "step_s": 1.0}\n\n{"gpus": 2, "step_s": null}\n')
    with pytest.raises(DataError, match="column 'step_s' has missing or non-numeric values at line 3"):
        load_table(tmp_path / "gap.ndjson", "step_s")
    nested = tmp_path / "nested.jsonl"  # as logs nest them: {"config": {...}, "metrics": {...}}
    nested.write_text("".join(json.dumps({"config": {"gpus": p}, "metrics": {"step_s": 1 + 8 / p}}) + "\n"
                              for p in (1, 2, 4, 8)))
    assert load_table(nested, "metrics.step_s").factors == ("gpus",)
    listed = tmp_path / "runs.json"  # the same runs as one JSON list
    listed.write_text(json.dumps([json.loads(line) for line in nested.read_text().splitlines()]))
    assert load_table(listed, "metrics.step_s").factors == ("gpus",)
    tagged = tmp_path / "tags.jsonl"  # a list in a cell is a label, not a crash
    tagged.write_text("".join(json.dumps({"gpus": p, "tags": ["a"] * p, "step_s": 1 + 8 / p}) + "\n" for p in (1, 2, 4)))
    tagged_data = load_table(tagged, "step_s")
    assert tagged_data.factors == ("gpus",) and any("ignored non-numeric column(s) tags" in n for n in tagged_data.notes)
    (tmp_path / "none.jsonl").write_text("\n")
    with pytest.raises(DataError, match="holds no rows of measurements"):
        load_table(tmp_path / "none.jsonl", "step_s")
    (tmp_path / "bad.jsonl").write_text('{"gpus": 1, "step_s": 1.0}\n[1, 2]\n')
    with pytest.raises(DataError, match="line 2 is not a JSON object"):
        load_table(tmp_path / "bad.jsonl", "step_s")


def _text(tmp_path: Path, second: str) -> Path:
    path = tmp_path / "two.txt"
    path.write_text("PARAMETER x\nPOINTS 1 2 4 8\nREGION reg\nMETRIC metr\nDATA 1 1.1\nDATA 2\nDATA 3\nDATA 4\n"
                    f"REGION two\nMETRIC metr\nDATA 1 1.1\nDATA 2\n{second}\nDATA 4\n")
    return path


@pytest.mark.parametrize("target, remedy", [
    (None, "; pass --target CALLPATH:METRIC to fit another series"),
    ("two:metr", "; remove those points from the file to fit this series"),
])
def test_a_value_that_is_no_number_is_named_by_its_point(tmp_path, target, remedy):
    """'nan' in a DATA line read as a number and failed later as a missing value 'at row 4' of a
    column named after the metric, with --drop-missing offered, which Extra-P files do not take."""
    with pytest.raises(DataError) as error:
        load_series(_text(tmp_path, "DATA 3 nan"), target=target)
    said = str(error.value)
    assert f"'{tmp_path / 'two.txt'}', series two:metr: values at 1 point(s) ((4)) are not numbers (nan or inf)" \
           f"{remedy}" in said
    assert "row" not in said and "--drop-missing" not in said


def test_a_series_error_names_the_file_once(tmp_path):
    path = tmp_path / "few.jsonl"
    path.write_text('{"params": {"x": 1}, "value": 2.0}\n')
    with pytest.raises(DataError) as error:
        load_series(path)
    assert str(error.value).startswith(f"'{path}' series <root>:") and str(error.value).count(str(path)) == 1
