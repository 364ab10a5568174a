import itertools
import json

import numpy as np
import pandas as pd
import pytest

from exprsearch.data import from_frame, load_table
from exprsearch.errors import DataError, ExprsearchError


def test_loads_csv_and_defaults_factors_to_numeric_columns(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("p,n,framework,time\n1,10,tf,3.0\n2,20,tf,2.0\n2,20,tf,2.1\n")
    data = load_table(path, "time")
    assert data.factors == ("p", "n")
    assert data.n_rows == 3  # repetitions are kept
    assert "framework" in data.notes[0]
    assert list(data.configurations()) == [0, 1, 1]
    assert data.sha256 and data.name == "m"


@pytest.mark.parametrize(
    "text, target, fragment",
    [
        ("p,time\n1,2\n", "tme", "column 'tme' is not in"),
        ("p,time\n1,2\n2,\n", "time", "column 'time' has missing or non-numeric values at line 3"),
        ("p,time\n1,10.2\n2,5.3\n4,1600ms\n", "time", "target 'time' is numbers except '1600ms' at line 4: fix those "
         "values (all in one unit), pass --drop-missing to drop those rows"),
        ("p,time\n1,2\n2,0\n3,-1\n", "time", "must be positive (errors are relative to it) but is zero or negative at lines 3, 4"),
        ("time\n1\n2\n", "time", "no numeric factor column"),
        ("batch size,batch_size,time\n1,1,2\n2,2,3\n", "time",
         "columns 'batch size' and 'batch_size' would both be the factor batch_size in a law; rename one"),
        ("p,cost,time\n1,,2\n2,0.5,3\n4,,1\n", "time", "column 'cost' has missing or non-numeric values at "
         "lines 2, 4; fill or remove them, pass --drop-missing to drop those rows, or leave the column out"),
    ],
)
def test_rejects_bad_tables_with_a_sentence(tmp_path, text, target, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(DataError) as info:
        load_table(path, target)
    assert fragment in str(info.value)
    assert str(path) in str(info.value)


def test_a_law_given_as_the_data_names_the_table_it_was_fitted_on(tmp_path):
    """law.json is JSON, which tables are read from too: read as a table it gave pandas' "All
    arrays must be of the same length"."""
    law = tmp_path / "law.json"
    law.write_text(json.dumps({"expression": "2 + 40/p", "template": "c0 + c1/p", "constants": {"c0": 2, "c1": 40},
                               "dataset": {"path": "runs.csv"}}))
    with pytest.raises(DataError, match=r"law.json' is a law that exprsearch run wrote, not measurements; give the "
                                        r"table of measurements it was fitted on \(runs.csv\)"):
        load_table(law, "time")


def test_missing_file_and_unknown_extension(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_table(tmp_path / "nope.csv", "time")
    (tmp_path / "runs_a100.csv").write_text("p,time\n1,2\n")
    with pytest.raises(DataError) as info:  # a misspelt name: the file beside it that is meant
        load_table(tmp_path / "runs_a10.csv", "time")
    assert f"does not exist (did you mean '{tmp_path / 'runs_a100.csv'}'?); check the path" in str(info.value)
    (tmp_path / "model_ResNet18").mkdir()
    (tmp_path / "model_ResNet18" / "law.json").write_text("{}")
    (tmp_path / "model_ResNet152").mkdir()  # close too, but without the file asked for
    (tmp_path / "model_ResNet50").mkdir()
    (tmp_path / "model_ResNet50" / "law.json").write_text("{}")
    from exprsearch.errors import missing_file  # a group's folder named as the group prints (model=ResNet18)
    assert missing_file("law", tmp_path / "model=ResNet18" / "law.json").endswith(
        f"does not exist (did you mean '{tmp_path / 'model_ResNet18' / 'law.json'}'?); check the path")
    assert missing_file("law", tmp_path / "elsewhere" / "law.json").endswith("does not exist; check the path")
    odd = tmp_path / "m.xyz"
    odd.write_text("x")
    with pytest.raises(DataError, match="unknown extension"):
        load_table(odd, "time")
    old = tmp_path / "m.xls"  # Excel before 2007
    old.write_bytes(b"\xd0\xcf\x11\xe0")
    with pytest.raises(DataError, match=r"is a \.xls spreadsheet, which exprsearch does not read; save it as \.xlsx"):
        load_table(old, "time")
    packed = tmp_path / "runs.csv.gz"
    packed.write_bytes(b"\x1f\x8b")
    with pytest.raises(DataError, match=r"is compressed; decompress it first \(to '.*runs\.csv'\)"):
        load_table(packed, "time")
    for text, suffix in itertools.product(("", "\n\n", "  \n"), (".csv", ".txt", ".dat")):  # .txt: sniffed
        (tmp_path / f"empty{suffix}").write_text(text)
        with pytest.raises(DataError, match="is empty; a table needs a header line and a line per run"):
            load_table(tmp_path / f"empty{suffix}", "time")


def test_drop_missing_keeps_line_numbers_honest():
    frame = pd.DataFrame({"p": [1, 2, np.nan, 4], "time": [1.0, 2.0, 3.0, -4.0]})
    with pytest.raises(DataError, match="row 4"):
        from_frame(frame, "time", drop_missing=True)
    data = from_frame(frame.iloc[:3], "time", drop_missing=True)
    assert data.n_rows == 2 and "dropped 1 row" in data.notes[0]


def test_dataset_is_immutable(amdahl_frame):
    data = from_frame(amdahl_frame, "time")
    with pytest.raises(ValueError):
        data.X[0, 0] = 5


def test_columns_of_labels_are_left_out_and_said_to_mix_series_when_their_values_differ(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("framework,xla,gpus,time\ntf,True,1,3.0\ntf,False,2,2.0\nmx,True,4,2.1\nmx,False,8,2.4\n")
    data = load_table(path, "time")
    # True/False says which variant ran, not how large a run was: a label, not a factor 0/1
    assert data.factors == ("gpus",)
    note = " ".join(data.notes)
    assert "framework, xla" in note and "framework (2), xla (2)" in note and "--by" in note
    chosen = load_table(path, "time", ["gpus", "xla"])  # named, it is a factor, True = 1
    assert chosen.factors == ("gpus", "xla") and chosen.X[:, 1].tolist() == [1, 0, 1, 0]
    gaps = tmp_path / "gaps.csv"  # True, False and empty cells: still labels, not numbers with a stray value
    gaps.write_text("spot,gpus,time\nTrue,1,3.0\n,2,2.0\nFalse,4,2.1\n")
    assert load_table(gaps, "time").factors == ("gpus",)
    single = tmp_path / "one.csv"
    single.write_text("framework,gpus,time\ntf,1,3.0\ntf,2,2.0\ntf,4,2.1\n")
    assert load_table(single, "time").notes == ("ignored non-numeric column(s) framework",)


def test_a_column_whose_name_a_law_cannot_use_is_a_factor_under_a_name_it_can(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("num gpus,min,2nd,time (s)\n1,1,5,3.0\n2,2,6,2.0\n4,3,7,2.1\n")
    data = load_table(path, "time (s)")
    assert data.factors == ("num_gpus", "min_", "x_2nd") and data.target == "time (s)"
    assert "column 'num gpus' is the factor num_gpus" in " ".join(data.notes)
    # --factors may name a column either way
    assert load_table(path, "time (s)", ["num gpus"]).factors == ("num_gpus",)
    assert load_table(path, "time (s)", ["num_gpus", "min"]).factors == ("num_gpus", "min_")
    frame = pd.read_csv(path)
    assert from_frame(frame, "time (s)", ["2nd"]).factors == ("x_2nd",)


def test_a_factor_that_is_a_product_of_others_is_named_with_the_product(tmp_path):
    rows = ["gpus,per_gpu,global_batch,time"] + [f"{p},{b},{p * b},{1 + b / p}" for p in (1, 2, 4) for b in (8, 16)]
    path = tmp_path / "m.csv"
    path.write_text("\n".join(rows) + "\n")
    data = load_table(path, "time")
    assert data.factors == ("gpus", "per_gpu", "global_batch")  # said, not dropped
    assert [n for n in data.notes if "on every row" in n] == [
        "factor global_batch is gpus × per_gpu on every row: a law can write it through those, so leave one of "
        "them out with --factors to keep the law readable"]
    crossed = load_table(path, "time", ["gpus", "per_gpu"])
    assert not any("on every row" in n for n in crossed.notes)


def test_single_valued_factors_are_left_out_with_a_note(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("p,n,time\n1,10,3.0\n2,10,2.0\n4,10,2.1\n")
    data = load_table(path, "time")
    assert data.factors == ("p",) and "single value: n" in data.notes[0]


def _repeated(seed: int, noise: float, reps: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(p, (2 + 40 / p) * (1 + noise * rng.standard_normal())) for p in (1, 2, 4, 8, 16, 32) for _ in range(reps)]
    return pd.DataFrame(rows, columns=["p", "time"])


def test_a_run_far_from_its_repeats_is_noted_with_its_line_and_kept(tmp_path):
    frame = _repeated(1, 0.02)
    frame.loc[10, "time"] *= 5  # a stalled run among the three at p = 8
    path = tmp_path / "stall.csv"
    frame.to_csv(path, index=False)
    data = load_table(path, "time")
    assert data.n_rows == len(frame)  # noted, not dropped
    (note,) = [n for n in data.notes if "lie far" in n]
    assert note.startswith("1 run(s) lie far above the other runs of their configuration: line 12 (")
    assert "--loss huber" in note


@pytest.mark.parametrize("noise", [0.0, 0.02, 0.10])
def test_ordinary_noise_and_identical_repeats_are_not_called_stray(noise):
    import warnings

    for seed in range(20):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no numpy warning from identical repeats either
            data = from_frame(_repeated(seed, noise, reps=5), "time")
        assert not [n for n in data.notes if "lie far" in n], (noise, seed)


@pytest.mark.parametrize("data, fragment", [
    ([1, 2], "data is a list; pass a pandas DataFrame, a dict of columns"),
    ({"p": [1, 2, "x"], "time": [1, 2, 3]}, "could not convert string to float: 'x'"),
    ({"p": [1, 2, 4], "time": [1, 2]}, "all of the same length"),
    ({"p": [[1, 2], [3, 4]], "time": [1, 2]}, "each column must be one list of values"),
])
def test_search_validates_what_it_is_given(data, fragment):
    """The library's boundary: a TypeError from deep inside (a list), or a 2-D column silently cut
    to its first column, is now the library's own error naming what to pass."""
    from exprsearch import search

    with pytest.raises(ExprsearchError, match=fragment.replace("(", r"\(")):
        search(data, "time", resamples=0)


def test_search_takes_a_dict_of_columns():
    from exprsearch import search

    law = search({"p": [1, 2, 4, 8, 16], "time": [12, 7, 4.5, 3.2, 2.6]}, "time", resamples=0).law
    assert law.predict({"p": [32]})[0] == pytest.approx(2.28, abs=0.01)


def test_a_column_of_numbers_pandas_keeps_as_objects_is_a_factor(tmp_path):
    """An integer beyond 64 bits makes pandas keep the column as Python objects; every value is
    still a number, so it is a factor (the message had named no stray value: 'is numbers except  at line :')."""
    path = tmp_path / "big.csv"
    path.write_text("ops,pad,time\n" + "".join(f"{p},{2**64 + p},{2 + 40 / p}\n" for p in (1, 2, 4, 8)))
    data = load_table(path, "time")
    assert set(data.factors) <= {"ops", "pad"} and "ops" in data.factors


def test_an_empty_column_is_left_out_and_said(tmp_path):
    """A comma at the end of every line makes an unnamed column with no value: it had stopped the
    run as 'missing or non-numeric values' on every line."""
    path = tmp_path / "trailing.csv"
    path.write_text("p,time,\n1,10,\n2,5.5,\n4,3,\n8,2,\n")
    data = load_table(path, "time")
    assert data.factors == ("p",)
    assert "left out the unnamed column 3: empty on every row" in data.notes


def test_a_run_far_below_its_repeats_is_said_to_weigh_as_many():
    """Relative errors are bounded above a run (a law misses a 5x stall by 80 % of its value) but
    not below it: a stalled step of a rate at 0.02x its repeats is missed by about 4,900 %, and the law
    follows it (CM-DARE's per-sample log: steps_per_sec = 0.0026 for rates of 0.7-28)."""
    frame = _repeated(1, 0.02, reps=5)
    frame.loc[7, "time"] /= 50  # a step cut short, among the five at p = 2
    frame.loc[20, "time"] *= 5  # and a stall at p = 16
    data = from_frame(frame, "time")
    (note,) = [n for n in data.notes if "lie far" in n]
    above, below = note.split("; and ")
    assert above.startswith("1 run(s) lie far above the other runs of their configuration: row 21 (")
    assert below.startswith("1 run(s) lie far below the other runs of their configuration: row 8 (0.02")
    assert "misses it by up to 4,8" in below and "--drop-stray drops them" in below


def test_drop_stray_drops_the_runs_the_note_names(tmp_path):
    frame = _repeated(1, 0.02, reps=5)
    frame.loc[7, "time"] /= 50
    path = tmp_path / "steps.csv"
    frame.to_csv(path, index=False)
    kept, dropped = load_table(path, "time"), load_table(path, "time", drop_stray=True)
    assert kept.n_rows == len(frame) and dropped.n_rows == len(frame) - 1 and dropped.drop_stray
    assert frame["time"][7] in kept.y and frame["time"][7] not in dropped.y
    (note,) = [n for n in dropped.notes if "far from" in n]
    assert note.startswith("dropped 1 run(s) far from the other runs of their configuration: line 9 (0.02")
    assert note.endswith("(--drop-stray)")
    assert dropped.rows_named([7]) == "line 10"  # the rows after it keep their lines


def test_dropping_every_row_with_a_missing_value_names_the_columns_to_blame(tmp_path):
    from exprsearch.errors import ShortData

    (tmp_path / "t.csv").write_text("p,cost,time\n1,,3\n2,,2\n4,,1.5\n8,1,\n")
    with pytest.raises(ShortData, match=r"has 0 row\(s\) left after dropping those with missing values; most are "
                                        r"missing in column\(s\) cost, time: leave a factor out with --factors"):
        load_table(tmp_path / "t.csv", "time", factors=["p", "cost"], drop_missing=True)
    assert load_table(tmp_path / "t.csv", "time", drop_missing=True).factors == ("p",)  # cost: logged apart


def test_what_the_rows_measure_lists_a_few_values_and_gives_many_as_a_range(tmp_path):
    path = tmp_path / "runs.csv"
    pd.DataFrame({"p": [1, 2, 4, 8, 16, 32, 64] * 2, "n": [1000, 4000] * 7, "b": 32, "time": 1.0}).to_csv(path, index=False)
    assert load_table(path, "time").measured() == f"'{path}' (14 rows; p at 1..64 (7 values); n at 1000 and 4000; b held at 32)"
    assert from_frame(pd.DataFrame({"p": [1, 2, 4], "time": 1.0}), "time").measured() == "the data (3 rows; p at 1, 2 and 4)"
