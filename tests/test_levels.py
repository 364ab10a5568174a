"""An intrinsic factor whose values do not order the times: the law with its coefficients per value."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from exprsearch import search
from exprsearch.cli import app
from exprsearch.errors import LawError
from exprsearch.levels import check_levels, untestable
from tests.conftest import PLOT_EXTRA

P = (1, 2, 4, 8, 16)
FLOPS = (1.0, 2.0, 4.0, 8.0)


def models(work, noise=0.02, seed=0) -> pd.DataFrame:
    """time = 1 + work(flops)/p on every (p, flops), three repetitions with relative noise."""
    rng = np.random.default_rng(seed)
    rows = [{"p": p, "flops": f, "time": (1 + work[f] / p) * (1 + noise * rng.standard_normal())}
            for p in P for f in FLOPS for _ in range(3)]
    return pd.DataFrame(rows)


UNORDERED = {1.0: 20.0, 2.0: 80.0, 4.0: 30.0, 8.0: 60.0}  # models whose FLOPs do not order their work
ORDERED = {f: 10.0 * f for f in FLOPS}


@pytest.fixture(scope="module")
def unordered():
    return search(models(UNORDERED), "time", resamples=0, intrinsic=("flops",))


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """What `run --intrinsic flops` writes for the unordered models (tests copy it to change it)."""
    folder = tmp_path_factory.mktemp("levels")
    models(UNORDERED).to_csv(folder / "models.csv", index=False)
    result = CliRunner().invoke(app, ["run", str(folder / "models.csv"), "--target", "time", "--intrinsic", "flops",
                                      "--bootstrap", "0", "--out", str(folder / "out")])
    assert result.exit_code == 0, result.output
    return folder, result.output


def test_unordered_levels_prefer_coefficients_per_value_and_predict_each_level(unordered):
    result = unordered
    levels = check_levels(result, "flops")
    assert levels is not None and levels.preferred
    assert levels.bic_levels < levels.bic_law
    held = pd.DataFrame({"p": [64.0] * 4, "flops": list(FLOPS)})
    truth = np.array([1 + UNORDERED[f] / 64 for f in FLOPS])
    assert np.max(np.abs(levels.predict(held) / truth - 1)) < 0.05
    assert np.max(np.abs(levels.predict(held) / truth - 1)) < np.max(np.abs(result.law.predict(held) / truth - 1))
    assert "do not order the times" in levels.sentence()
    record = levels.to_dict()
    assert record["preferred"] and sorted(record["levels"]) == ["1.0", "2.0", "4.0", "8.0"]


def test_a_law_that_orders_the_levels_keeps_them():
    result = search(models(ORDERED), "time", resamples=0, intrinsic=("flops",))
    levels = check_levels(result, "flops")
    assert levels is not None and not levels.preferred
    assert "explains the times as well" in levels.sentence()


def test_a_level_not_measured_has_no_law(unordered):
    levels = check_levels(unordered, "flops")
    with pytest.raises(LawError, match="flops=3 was not measured"):
        levels.predict(pd.DataFrame({"p": [4.0], "flops": [3.0]}))


@pytest.mark.slow
def test_levels_are_written_in_full_as_the_data_hold_them(tmp_path):
    """CM-DARE's FLOPs counts: the table of constants per value showed 4.85674e+06 for 4856736. The
    form is the one the search finds at the unscaled FLOPs, given as a grammar: which law fits
    unordered models best depends on the unit (log2 of the counts is another shape), and this test
    is about how the levels are written."""
    scale = 4856736.0
    frame = models(UNORDERED).assign(flops=lambda f: f.flops * scale)
    frame.to_csv(tmp_path / "big.csv", index=False)
    (tmp_path / "one.toml").write_text('[factors]\nflops = "intrinsic"\np = "extrinsic"\n[constants]\n'
                                       'c = { min = 0, max = inf }\n[rules]\nstart = "c + c * sqrt(flops) / p"\n')
    result = CliRunner().invoke(app, ["run", str(tmp_path / "big.csv"), "--target", "time", "--intrinsic", "flops",
                                      "--bootstrap", "0", "--out", str(tmp_path / "out"), "-g", str(tmp_path / "one.toml")])
    assert result.exit_code == 0 and "Constants per value of flops" in result.output, result.output
    rows = result.output.split("Constants per value of flops")[1].split("└")[0]
    assert "│ 4856736 " in rows and "│ 38853888 " in rows and "e+0" not in rows
    levels = check_levels(search(frame, "time", str(tmp_path / "one.toml"), resamples=0, intrinsic=("flops",)), "flops")
    with pytest.raises(LawError, match=r"flops=14570208 was not measured, so it has no per-level law; the measured "
                                       r"values are 4856736, 9713472, 19426944, 38853888"):
        levels.predict(pd.DataFrame({"p": [4.0], "flops": [3 * scale]}))


@pytest.mark.slow
def test_only_a_factor_with_few_values_and_enough_configurations_per_value_is_checked():
    frame = models(ORDERED)
    found = search(frame, "time", resamples=0)
    assert untestable(found, "flops") == ""
    assert "does not vary" in untestable(found, "missing")
    sparse = search(frame[(frame.flops != 8.0) | (frame.p <= 2)], "time", resamples=0)  # flops=8 at two p
    assert "flops=8 was measured at 2 configuration(s)" in untestable(sparse, "flops")
    assert check_levels(sparse, "flops") is None
    many = pd.DataFrame({"p": np.repeat([1.0, 2.0, 4.0], 13), "flops": np.tile(np.arange(1.0, 14.0), 3)})
    many["time"] = 1 + many.flops / many.p
    assert "13 values" in untestable(search(many, "time", resamples=0), "flops")


@pytest.mark.slow  # an integration test of several commands: CI's slow step
def test_cli_writes_levels_json_for_intrinsic_factors_and_refuses_to_overwrite_it(written, tmp_path):
    folder, output = written
    assert "do not order the times" in output and "Constants per value of flops" in output
    record = json.loads((folder / "out" / "levels.json").read_text())
    assert record[0]["factor"] == "flops" and record[0]["preferred"]
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(folder / "out" / "levels.json", out)  # only levels.json is there: a run must still refuse
    runner = CliRunner()
    args = ["run", str(folder / "models.csv"), "--target", "time", "--intrinsic", "flops", "--bootstrap", "0"]
    again = runner.invoke(app, [*args, "--out", str(out)])
    assert again.exit_code == 2 and "levels.json" in again.output
    assert not (out / "law.json").exists()
    plain = tmp_path / "plain"
    without = runner.invoke(app, [*args, "--out", str(plain), "--no-levels"])
    assert without.exit_code == 0 and not (plain / "levels.json").exists()


def test_predict_with_levels_uses_each_values_constants_and_refuses_what_it_cannot(written, tmp_path):
    out = shutil.copytree(written[0] / "out", tmp_path / "out")
    runner = CliRunner()
    law = out / "law.json"
    result = runner.invoke(app, ["predict", str(law), "--levels", "flops", "--json", "--at", "p=64,flops=2",
                                 "--at", "p=64,flops=4"])
    assert result.exit_code == 0, result.output
    predicted = [row["time"] for row in json.loads(result.stdout)["predictions"]]
    assert np.allclose(predicted, [1 + UNORDERED[2.0] / 64, 1 + UNORDERED[4.0] / 64], rtol=0.05)
    unmeasured = runner.invoke(app, ["predict", str(law), "--levels", "flops", "--at", "p=64,flops=3"])
    assert unmeasured.exit_code == 2 and "flops=3 was not measured" in unmeasured.output
    other = runner.invoke(app, ["predict", str(law), "--levels", "p", "--at", "p=64,flops=2"])
    assert other.exit_code == 2 and "no levels of 'p'" in other.output
    (out / "levels.json").write_text('[{"factor": "flops", "template": "c0"}]')
    stale = runner.invoke(app, ["predict", str(law), "--levels", "flops", "--at", "p=64,flops=2"])
    assert stale.exit_code == 2 and "not for this law.json" in stale.output
    template = json.loads(law.read_text())["template"]
    (out / "levels.json").write_text(json.dumps([{"factor": "flops", "template": template, "levels": {"2.0": 5}}]))
    broken = runner.invoke(app, ["predict", str(law), "--levels", "flops", "--at", "p=64,flops=2"])
    assert broken.exit_code == 2 and "lack their constants" in broken.output
    (out / "levels.json").write_text("5")
    odd = runner.invoke(app, ["predict", str(law), "--levels", "flops", "--at", "p=64,flops=2"])
    assert odd.exit_code == 2 and "not a list of levels" in odd.output
    (out / "levels.json").unlink()
    missing = runner.invoke(app, ["predict", str(law), "--levels", "flops", "--at", "p=64,flops=2"])
    assert missing.exit_code == 2 and "--intrinsic flops" in missing.output


def test_cli_says_why_a_factor_was_not_tested_and_leaves_no_stale_levels(written, tmp_path):
    out = shutil.copytree(written[0] / "out", tmp_path / "out")
    assert json.loads((out / "levels.json").read_text())
    frame = models(UNORDERED)
    sparse = tmp_path / "sparse.csv"
    frame[(frame.flops != 8.0) | (frame.p <= 2)].to_csv(sparse, index=False)
    again = CliRunner().invoke(app, ["run", str(sparse), "--target", "time", "--intrinsic", "flops", "--bootstrap", "0",
                                     "--out", str(out), "--force"])
    assert again.exit_code == 0, again.output
    assert "'flops' was not tested as levels: flops=8 was measured at 2" in " ".join(again.output.split())
    assert json.loads((out / "levels.json").read_text()) == []


def test_explain_and_optimize_with_levels_use_the_fixed_values_constants(written):
    runner = CliRunner()
    law = str(written[0] / "out" / "law.json")
    for flops in (2.0, 4.0):
        result = runner.invoke(app, ["explain", law, "--levels", "flops", "--vary", "p=1..64", "--fix", f"flops={flops:g}",
                                     "--json"])
        assert result.exit_code == 0, result.output
        record = json.loads(result.stdout)
        truth = 1 + UNORDERED[flops] / np.array(record["values"])
        assert np.allclose(record["time"], truth, rtol=0.05)
    best = runner.invoke(app, ["optimize", law, "--levels", "flops", "--vary", "p=1..64", "--fix", "flops=2", "--json",
                               "--where", "p <= 32"])
    assert best.exit_code == 0, best.output
    assert json.loads(best.stdout)["best"]["config"]["p"] == 32
    unfixed = runner.invoke(app, ["explain", law, "--levels", "flops", "--vary", "p=1..64"])
    assert unfixed.exit_code == 2 and "--fix flops=VALUE" in unfixed.output
    unmeasured = runner.invoke(app, ["optimize", law, "--levels", "flops", "--vary", "p=1..64", "--fix", "flops=3"])
    assert unmeasured.exit_code == 2 and "flops=3 was not measured" in unmeasured.output


def test_run_json_keeps_stdout_to_the_law_and_says_the_verdict_on_stderr(written, tmp_path):
    result = CliRunner().invoke(app, ["run", str(written[0] / "models.csv"), "--target", "time", "--intrinsic", "flops",
                                      "--bootstrap", "0", "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["factors"] == ["p", "flops"]
    assert "do not order the times" in result.stderr and (tmp_path / "out" / "levels.json").is_file()


@pytest.mark.slow  # the report and levels.json are tested apart in the fast step
def test_report_states_the_levels_verdict(written, tmp_path):
    pytest.importorskip("matplotlib", reason=PLOT_EXTRA)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(written[0] / "models.csv"), "--target", "time", "--intrinsic", "flops",
                                      "--bootstrap", "0", "--out", str(out), "--report"])
    assert result.exit_code == 0, result.output
    assert "do not order the times" in (out / "report.html").read_text()
