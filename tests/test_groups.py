"""--by: one law per group, side by side, and optionally one shared form."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from exprsearch import search
from exprsearch.cli import app
from exprsearch.grouped import load_groups
from exprsearch.groups import shared_form
from tests.conftest import WORKERS, measurements

GRID = {"p": WORKERS, "n": (1000, 4000, 16000)}


def frameworks(tmp_path):
    parts = [
        measurements(lambda p, n: 2 + 0.01 * n / p + 0.15 * p, GRID, seed=1).assign(framework="tf"),
        measurements(lambda p, n: 1 + 0.02 * n / p + 0.1 * p, GRID, seed=2).assign(framework="mxnet"),
        measurements(lambda p, n: 3 + 0.008 * n / p + 0.05 * p, GRID, seed=3).assign(framework="torch"),
    ]
    path = tmp_path / "fw.csv"
    pd.concat(parts).to_csv(path, index=False)
    return path


def test_groups_are_separate_datasets(tmp_path):
    groups = load_groups(frameworks(tmp_path), "time", "framework")
    assert list(groups) == ["framework=mxnet", "framework=tf", "framework=torch"]
    assert all(g.factors == ("p", "n") and g.n_rows == 54 for g in groups.values())


def test_shared_form_has_constants_per_group(tmp_path):
    groups = load_groups(frameworks(tmp_path), "time", "framework")
    forms = [search(d, grammar="data-parallel", resamples=0).ranking.law.fit.candidate for d in groups.values()]
    shared = shared_form(groups, forms)
    assert str(shared.candidate.template) == "c0 + c1*p + c2*n/p"
    assert round(shared.fits["framework=tf"].values["c2"], 3) == 0.010
    assert round(shared.fits["framework=mxnet"].values["c2"], 3) == 0.020


def test_cli_by_writes_a_law_per_group_and_a_shared_form(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(frameworks(tmp_path)), "-t", "time", "-g", "data-parallel",
                                      "--by", "framework", "--shared-form", "--bootstrap", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["framework_mxnet", "framework_tf", "framework_torch", "shared.json"]
    assert "Side by side" in result.output and "One form for all groups" in result.output
    assert json.loads((out / "shared.json").read_text())["template"] == "c0 + c1*p + c2*n/p"


@pytest.mark.slow  # 1.2-1.4 s: an integration test, run in CI's second step
def test_a_group_of_a_constant_law_is_left_out_of_the_shared_form_and_skipped_forms_are_said(tmp_path):
    # LLM Foundry's A100-80GB bf16: two runs of one model, whose law is a constant, had made the
    # constant the only form to share; a group measured at one n cannot take a form in n
    parts = [pd.read_csv(frameworks(tmp_path)),
             measurements(lambda p, n: 2 + 0.01 * n / p, {"p": WORKERS, "n": (4000,)}, seed=4).assign(framework="jax"),
             pd.DataFrame({"p": [4, 8], "n": [1000, 1000], "time": [3.0, 3.1], "framework": "mx2"})]
    pd.concat(parts).to_csv(tmp_path / "more.csv", index=False)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "more.csv"), "-t", "time",
                                      "--by", "framework", "--shared-form", "--bootstrap", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "the shared form is chosen without framework=mx2: its own law is a constant, from 2 rows" in text
    assert "could not be shared: framework=jax does not vary n" in text
    shared = json.loads((out / "shared.json").read_text())
    assert shared["template"] != "c0" and "framework=mx2" in shared["groups_left_out"]
    assert any(why == "framework=jax does not vary n" for why in shared["forms_skipped"].values())


@pytest.mark.slow  # six searches; --by of one column is tested in the fast step
def test_cli_by_takes_several_columns_as_profile_does(tmp_path):
    data = pd.read_csv(frameworks(tmp_path)).assign(precision=lambda f: ["fp16", "fp32"] * (len(f) // 2))
    data.to_csv(tmp_path / "two.csv", index=False)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "two.csv"), "-t", "time", "--by", "framework,precision",
                                      "--bootstrap", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len([p for p in out.iterdir() if p.is_dir()]) == 6
    assert (out / "framework_tf_precision_fp16" / "law.json").is_file()


def test_by_unknown_column_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["run", str(frameworks(tmp_path)), "-t", "time", "--by", "framewrk",
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "did you mean 'framework'" in result.output


def test_kfold_validation_is_an_option():
    frame = measurements(lambda p, n: 2 + 0.01 * n / p + 0.15 * p, GRID, seed=4)
    law = search(frame, "time", "data-parallel", resamples=0, validation="kfold").law
    assert str(law.template) == "c0 + c1*p + c2*n/p"


def test_a_group_s_bad_value_is_named_by_its_line_in_the_file(tmp_path):
    """Groups interleave in the file: a message names the file's line, not the row in the group."""
    path = tmp_path / "g.csv"
    path.write_text("k,p,time\na,1,2\nb,1,3\na,2,\nb,2,4\na,4,1\nb,4,2\n")
    result = CliRunner().invoke(app, ["run", str(path), "-t", "time", "--by", "k", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "group k=a: '" in result.output and "column 'time' has missing or non-numeric values at line 4" in (
        " ".join(result.output.split()))


def test_a_note_on_several_groups_is_said_once_naming_them(tmp_path):
    # n is measured at one value in two of the three groups: one note, not two, and which groups
    data = pd.read_csv(frameworks(tmp_path))
    data = data[(data.framework == "tf") | (data.n == 4000)]
    data.to_csv(tmp_path / "some.csv", index=False)
    result = CliRunner().invoke(app, ["run", str(tmp_path / "some.csv"), "-t", "time", "-g", "data-parallel",
                                      "--by", "framework", "--bootstrap", "0", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert text.count("single value: n") == 1
    assert "in 2 of 3 groups (framework=mxnet; framework=torch): left out factor(s) with a single value: n" in text
    assert "\n\n" not in result.output.split("Pareto front")[0]  # no blank line left by a progress bar


@pytest.mark.slow
def test_a_group_too_small_for_a_law_is_named_and_the_others_get_theirs(tmp_path):
    data = pd.concat([pd.read_csv(frameworks(tmp_path)),
                      pd.DataFrame({"p": [4, 4], "n": [1000, 1000], "time": [3.1, 3.0], "framework": ["jax", "jax"]})])
    data.to_csv(tmp_path / "small.csv", index=False)
    args = ["run", str(tmp_path / "small.csv"), "-t", "time", "-g", "data-parallel", "--by", "framework",
            "--bootstrap", "0"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    said = "no law for group framework=jax: '{}' (2 rows; p at 4; n at 1000): the data have 1 distinct configuration"
    assert "".join(said.format(tmp_path / "small.csv").split()) in "".join(text.split())  # a long path folds
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["framework_mxnet", "framework_tf", "framework_torch"]
    printed = CliRunner().invoke(app, [*args, "--json", "--out", str(tmp_path / "j")])
    laws = json.loads(printed.stdout)
    assert "distinct configuration" in laws["framework=jax"]["error"] and "expression" in laws["framework=tf"]
    only = tmp_path / "only.csv"
    only.write_text("k,p,time\na,1,2\na,1,2.1\nb,2,3\nb,2,3.2\n")
    none = CliRunner().invoke(app, ["run", str(only), "-t", "time", "--by", "k", "--out", str(tmp_path / "n")])
    assert none.exit_code == 2 and "none of the 2 groups could be fitted; the first, k=a" in " ".join(none.output.split())
    assert "2 of them hold too few configurations, and --by with fewer columns makes larger groups" in \
        " ".join(none.output.split())
    # MLPerf by benchmark and system: a row per group, each too few for a law; said of them all
    single = tmp_path / "single.csv"
    single.write_text("k,p,time\na,1,2\nb,2,3\nc,4,5\n")
    few = CliRunner().invoke(app, ["run", str(single), "-t", "time", "--by", "k", "--out", str(tmp_path / "s")])
    assert few.exit_code == 2 and "none of the 3 groups of --by k holds rows enough for a law (the first, k=a: " \
        in " ".join(few.output.split()) and "--by with fewer columns makes larger groups" in " ".join(few.output.split())


@pytest.mark.slow  # an integration test of several commands: CI's slow step
def test_a_group_of_one_row_is_named_and_the_others_get_theirs(tmp_path):
    data = pd.concat([pd.read_csv(frameworks(tmp_path)),
                      pd.DataFrame({"p": [4], "n": [1000], "time": [3.1], "framework": ["jax"]})])
    data.to_csv(tmp_path / "one.csv", index=False)
    result = CliRunner().invoke(app, ["run", str(tmp_path / "one.csv"), "-t", "time", "-g", "data-parallel", "--by",
                                      "framework", "--bootstrap", "0", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "no law for group framework=jax: '" in " ".join(result.output.split())
    assert "has 1 usable row(s)" in " ".join(result.output.split())
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["framework_mxnet", "framework_tf", "framework_torch"]


def test_groups_take_the_file_s_column_roles(tmp_path):
    """Labels and measurements of the runs are decided on the whole file, as without --by: a
    True/False column is no factor in any group, and a rate is left out of every group."""
    data = pd.read_csv(frameworks(tmp_path))
    data["fused"] = data["p"] > 2
    data["samples_per_s"] = 64 / data["time"]
    data.to_csv(tmp_path / "roles.csv", index=False)
    groups = load_groups(tmp_path / "roles.csv", "time", "framework")
    assert all(g.factors == ("p", "n") for g in groups.values())
    assert all(any(n.startswith("left out column(s) that look like measurements") for n in g.notes)
               for g in groups.values())


@pytest.mark.slow  # an integration test of several commands: CI's slow step
def test_predict_with_a_group_s_law_takes_that_group_s_rows_of_a_table(tmp_path):
    out = tmp_path / "out"
    data = frameworks(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["run", str(data), "-t", "time", "-g", "data-parallel", "--by", "framework",
                               "--bootstrap", "0", "--out", str(out)]).exit_code == 0
    result = runner.invoke(app, ["predict", str(out / "framework_tf"), "--data", str(data), "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["predictions"]) == 54  # tf's rows, not all 162
    assert "predicting the 54 row(s) of framework=tf, the group the law was fitted on; left out 108 row(s) of " \
           "other groups (lines 56, 57" in " ".join(result.stderr.split())
    other = tmp_path / "other.csv"
    pd.read_csv(data).query("framework == 'torch'").to_csv(other, index=False)
    none = runner.invoke(app, ["predict", str(out / "framework_tf"), "--data", str(other)])
    assert none.exit_code == 2 and "holds no row of framework=tf" in " ".join(none.output.split())
    plain = tmp_path / "plain.csv"
    pd.read_csv(data).drop(columns="framework").head(5).to_csv(plain, index=False)  # configurations alone
    assert len(json.loads(runner.invoke(app, ["predict", str(out / "framework_tf"), "--data", str(plain),
                                              "--json"]).stdout)["predictions"]) == 5


@pytest.mark.slow  # an integration test of several commands: CI's slow step
def test_rows_with_no_group_stop_the_run_unless_dropped(tmp_path):
    frame = pd.read_csv(frameworks(tmp_path))
    frame.loc[frame.index[:3], "framework"] = None  # rows whose framework was not logged
    frame.to_csv(tmp_path / "gaps.csv", index=False)
    args = ["run", str(tmp_path / "gaps.csv"), "-t", "time", "-g", "data-parallel", "--by", "framework",
            "--bootstrap", "0", "--out", str(tmp_path / "o")]
    stopped = CliRunner().invoke(app, args)
    assert stopped.exit_code == 2 and "leaves --by column(s) framework empty at lines 2, 3, 4" in " ".join(
        stopped.output.split())
    dropped = CliRunner().invoke(app, [*args, "--drop-missing"])
    assert dropped.exit_code == 0, dropped.output
    assert "dropped 3 row(s) in no --by group (framework empty): lines 2, 3, 4" in " ".join(dropped.output.split())
    frame["site"] = "lab"  # of two --by columns, only the one left empty is named
    frame.to_csv(tmp_path / "gaps.csv", index=False)
    both = CliRunner().invoke(app, ["run", str(tmp_path / "gaps.csv"), "-t", "time", "-g", "data-parallel", "--by",
                                    "site,framework", "--bootstrap", "0", "--out", str(tmp_path / "b")])
    assert "leaves --by column(s) framework empty at lines 2, 3, 4" in " ".join(both.output.split()), both.output


def test_a_group_named_na_is_a_group_not_missing(tmp_path):
    # North America's runs: pandas reads "NA" as a missing value unless told only empty cells are
    rows = [f"{region},{p},{(a + 40 / p):.6g}" for region, a in (("NA", 2), ("EU", 3)) for p in (1, 2, 4, 8, 16)]
    (tmp_path / "regions.csv").write_text("region,p,time\n" + "\n".join(rows) + "\n")
    groups = load_groups(tmp_path / "regions.csv", "time", "region")
    assert list(groups) == ["region=EU", "region=NA"] and groups["region=NA"].n_rows == 5


@pytest.mark.slow
def test_many_groups_are_shown_by_their_laws_with_the_fronts_in_files(tmp_path):
    parts = [measurements(lambda p, n, a=a: a + 0.01 * n / p, GRID, seed=a).assign(framework=f"fw{a}")
             for a in range(1, 8)]
    pd.concat(parts).to_csv(tmp_path / "seven.csv", index=False)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "seven.csv"), "-t", "time", "-g", "data-parallel",
                                      "--by", "framework", "--bootstrap", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "7 groups: each is shown by its law, its Pareto front written to front.csv beside it" in text
    assert "Pareto front (error vs complexity)" not in text and "the space holds" not in text and "Side by side" in text
    assert all((out / f"framework_fw{a}" / "front.csv").is_file() for a in range(1, 8))


def test_predict_matches_a_numeric_group_by_value(tmp_path):
    data = tmp_path / "batches.csv"
    parts = [measurements(lambda p, n, b=b: 2 + 0.01 * n / p * 64 / b, GRID, seed=b).assign(batch=b) for b in (32, 64)]
    pd.concat(parts).to_csv(data, index=False)
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["run", str(data), "-t", "time", "-g", "data-parallel", "--by", "batch",
                                    "--bootstrap", "0", "--out", str(out)]).exit_code == 0
    floats = tmp_path / "floats.csv"
    pd.read_csv(data).astype({"batch": float}).to_csv(floats, index=False)  # 32.0 where the law says 32
    result = CliRunner().invoke(app, ["predict", str(out / "batch_32"), "--data", str(floats), "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["predictions"]) == 54


def test_grouped_reading_is_still_imported_from_data():
    """load_groups moved to grouped.py; scripts that import it from exprsearch.data keep working."""
    import pytest

    from exprsearch import data, grouped

    assert data.load_groups is grouped.load_groups and data.group_name is grouped.group_name
    with pytest.raises(AttributeError):
        data.no_such_reader  # noqa: B018


def test_a_group_column_empty_on_every_row_stops_with_a_sentence(tmp_path):
    """--drop-missing drops rows in no --by group; where that is every row, the run stops naming the
    column, where it had crashed finding no group and no reason (robustness seed 111)."""
    path = tmp_path / "t.csv"
    path.write_text("kernel,metric,p,value\n,time,32,9.1\n,time,64,5.0\n")
    result = CliRunner().invoke(app, ["run", str(path), "-t", "value", "--by", "kernel,metric", "--drop-missing",
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "leaves --by column(s) kernel empty on every row" in " ".join(result.output.split())


def test_a_law_spans_a_text_columns_values_only_where_its_group_holds_several(tmp_path):
    """The platform names the GPU, so a law per platform is fitted on one GPU's rows and the note
    must not say it spans the GPUs; a model column that varies within each platform is said."""
    parts = [measurements(lambda p: 2 + 40 / p, {"p": WORKERS}, seed=s).assign(platform=name, gpu=gpu, model=m)
             for s, (name, gpu, m) in enumerate([("dgx", "P100", "a"), ("dgx", "P100", "b"), ("aws", "K80", "a"),
                                                  ("aws", "K80", "b")])]
    path = tmp_path / "platforms.csv"
    pd.concat(parts).to_csv(path, index=False)
    for group in load_groups(path, "time", "platform").values():
        assert [n for n in group.notes if n.startswith(("ignored", "one law"))] == [
            "ignored non-numeric column(s) gpu, model",
            "one law is fitted across the values of model (2): where they name separate series (a framework, a "
            "model), pass --by with those columns to fit one law per series"]
    for group in load_groups(path, "time", ["platform", "model"]).values():
        assert [n for n in group.notes if n.startswith(("ignored", "one law"))] == [
            "ignored non-numeric column(s) gpu"]


def test_a_group_of_a_column_with_an_empty_cell_is_named_as_the_file_writes_it(tmp_path):
    """pandas reads a column with an empty cell as floats; its groups are still tbs=8192, not 8192.0,
    so that --series tbs=8192 and the folders name them as the file does."""
    from exprsearch.grouped import group_name, load_grouped

    rows = [f"{tbs},{p},{1 + 8 / p}" for tbs in (8192, 16384) for p in (1, 2, 4, 8)] + [",16,1.5"]
    (tmp_path / "g.csv").write_text("tbs,p,time\n" + "\n".join(rows) + "\n")
    groups, _ = load_grouped(tmp_path / "g.csv", "time", ["tbs"], drop_missing=True)
    assert sorted(groups) == ["tbs=16384", "tbs=8192"]
    assert group_name([("x", 0.5), ("y", "a"), ("z", 3)]) == "x=0.5,y=a,z=3"
