"""What repeats of one configuration say: a stray run, repeats of two setups mixed; and fitting a
statistic of them (--measure)."""

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from exprsearch.cli import app
from exprsearch.data import load_table
from exprsearch.law import load


def _runs(tmp_path, fusion_effect: float, noise: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    rows = []
    for p in (1, 2, 4, 8, 16):
        for fusion in ("with", "without"):
            for run in (1, 2):
                time = (2 + 40 / p) * (1 + (fusion_effect if fusion == "without" else 0.0)) * (1 + noise * rng.standard_normal())
                rows.append({"p": p, "variant": f"{fusion} kernel fusion", "run": run, "time": time})
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_repeats_far_apart_that_differ_in_a_label_are_said_to_mix_setups(tmp_path):
    data = load_table(_runs(tmp_path, 0.35, 0.01), "time")
    note = next(n for n in data.notes if n.startswith("repeats of one configuration"))
    assert "column(s) variant differ between them" in note and "--by" in note  # the label, not the run's id


def test_a_label_on_every_row_names_runs_not_setups(tmp_path):
    frame = pd.read_csv(_runs(tmp_path, 0.35, 0.01))
    frame["log"] = [f"logs/run-{i}.csv" for i in range(len(frame))]  # W&B's run names and files: one per row
    frame.to_csv(tmp_path / "runs.csv", index=False)
    note = next(n for n in load_table(tmp_path / "runs.csv", "time").notes if n.startswith("repeats of one"))
    assert "column(s) variant differ between them" in note


def test_repeats_of_one_setup_are_not_said_to_mix(tmp_path):
    assert not any(n.startswith("repeats of one") for n in load_table(_runs(tmp_path, 0.0, 0.02), "time").notes)


def test_noisy_repeats_that_differ_in_nothing_else_are_left_to_the_noise_estimate(tmp_path):
    rng = np.random.default_rng(1)
    rows = [{"p": p, "time": (2 + 40 / p) * (1 + 0.3 * rng.standard_normal() ** 2)} for p in (1, 2, 4, 8) for _ in range(3)]
    path = tmp_path / "noisy.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert not any(n.startswith("repeats of one") for n in load_table(path, "time").notes)


def _steps(tmp_path, effect: float, seed: int = 0):
    """A per-step log: 60 steps of each configuration, 5 % noise, two variants ``effect`` apart."""
    rng = np.random.default_rng(seed)
    rows = [{"p": p, "variant": v, "step": s,
             "step_s": (0.1 + 2 / p) * (1 + (effect if v == "b" else 0.0)) * (1 + 0.05 * rng.standard_normal())}
            for p in (1, 2, 4, 8) for v in ("a", "b") for s in range(30)]
    path = tmp_path / "steps.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_many_steps_of_one_setup_are_not_said_to_mix_setups(tmp_path):
    # the extremes of 60 draws lie ~25 % apart at 5 % noise; the 90th / 10th percentile ~14 %
    data = load_table(_steps(tmp_path, 0.0), "step_s")
    assert not any(n.startswith("repeats of one") for n in data.notes), data.notes


def test_a_per_step_log_of_two_setups_names_the_label_not_the_step(tmp_path):
    data = load_table(_steps(tmp_path, 0.4), "step_s")
    note = next(n for n in data.notes if n.startswith("repeats of one"))
    assert "(median of 90th / 10th percentile)" in note and "column(s) variant differ between them" in note


def _two_models(tmp_path, extra: dict | None = None):
    """Rates of two models at the same GPU counts, with nothing in the table to tell them apart
    (Hivemind's ConvNextLarge and RoBERTaXLM, 158 % apart, cut to a table of gpu_count and rate)."""
    rows = [{"gpus": p, **(extra or {}), "rate": base * p ** 0.9} for p in (1, 2, 4, 8) for base in (80.0, 210.0)]
    path = tmp_path / "rates.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_repeats_far_apart_are_said_to_mix_setups_where_no_column_names_them(tmp_path):
    """A table of numbers only is read without pandas; the note is the same either way."""
    for extra in (None, {"cluster": "lambda"}):
        note = next(n for n in load_table(_two_models(tmp_path, extra), "rate").notes if n.startswith("repeats of one"))
        assert "differ by 162 %" in note and "no column names what differs between them" in note, extra


def test_suggest_says_what_reading_the_data_noticed(tmp_path):
    from typer.testing import CliRunner

    from exprsearch.cli import app

    result = CliRunner().invoke(app, ["suggest", str(_two_models(tmp_path)), "-t", "rate", "--vary", "gpus=1..16",
                                      "--at", "gpus=16", "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    assert "no column names what differs between them" in " ".join(result.output.split())


@pytest.mark.parametrize("measure, expected", [("mean", [4, 3.5, 5.5]), ("median", [2, 3.5, 5.5]),
                                               ("min", [1, 3, 5]), ("max", [9, 4, 6])])
def test_each_configuration_fitted_as_a_statistic_of_its_runs(measure, expected):
    from exprsearch.data import from_columns
    from exprsearch.repeats import summarised

    data = from_columns({"p": np.array([4, 1, 2, 1, 4, 2, 1.0]), "time": np.array([5, 1, 3, 2, 6, 4, 9.0])}, "time")
    one = summarised(data, measure)
    assert one.X.ravel().tolist() == [1, 2, 4] and one.y.tolist() == pytest.approx(expected)
    assert one.measure == measure and f"(--measure {measure})" in one.notes[-1]
    assert summarised(data, "all") is data


def test_a_statistic_of_one_run_and_an_unknown_measure_are_said():
    from exprsearch.data import from_columns
    from exprsearch.errors import SettingsError
    from exprsearch.repeats import summarised

    data = from_columns({"p": np.array([1, 2, 4.0]), "time": np.array([3, 2, 1.5])}, "time")
    assert "every configuration was measured once" in summarised(data, "min").notes[-1]
    with pytest.raises(SettingsError, match="--measure mode: give one of all, mean, median, min, max"):
        summarised(data, "mode")


def test_run_measure_min_fits_each_configuration_s_minimum_and_plot_reads_it_back(tmp_path):
    """Extra-P's --measure minimum: a shared machine's interference only adds time."""
    rows = "".join(f"{p},{(2 + 40 / p) * extra}\n" for p in (1, 2, 4, 8, 16, 32) for extra in (1.0, 1.3, 1.1))
    (tmp_path / "t.csv").write_text("p,time\n" + rows)
    result = CliRunner().invoke(app, ["run", str(tmp_path / "t.csv"), "-t", "time", "--measure", "min",
                                      "--bootstrap", "0", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "each configuration is fitted as the minimum of its runs (--measure min)" in " ".join(result.output.split())
    law = load(tmp_path / "o" / "law.json")
    assert law.dataset["measure"] == "min" and law.metrics["rows"] == 6
    assert law.predict({"p": [4.0]})[0] == pytest.approx(12, rel=1e-3)
    from exprsearch.cli.figures import _given_data

    assert _given_data(law, tmp_path / "t.csv").y.tolist() == pytest.approx([2 + 40 / p for p in (1, 2, 4, 8, 16, 32)])
    bad = CliRunner().invoke(app, ["run", str(tmp_path / "t.csv"), "-t", "time", "--measure", "least"])
    assert bad.exit_code == 2 and "--measure least: give one of all, mean, median, min, max" in bad.output


def test_a_statistic_s_noise_is_measured_from_the_spread_of_its_runs():
    """A mean of m runs has 1/m of one run's variance; a minimum of three normal draws about 0.56
    of it (its variance, from order statistics); where no configuration repeats there is none."""
    from exprsearch.repeats import noise_parts, pooled_noise

    def statistic_noise(config, y, measure):
        return pooled_noise(noise_parts(config, y, measure))

    rng = np.random.default_rng(1)
    config = np.repeat(np.arange(400), 3)
    y = 10 * (1 + 0.02 * rng.standard_normal(len(config)))
    one_run, dof = statistic_noise(config, y, "mean")
    assert dof == 800
    pooled = np.sum((y - np.repeat(y.reshape(-1, 3).mean(axis=1), 3)) ** 2 / y**2) / dof
    assert one_run == pytest.approx(pooled / 3)
    least, _ = statistic_noise(config, y, "min")
    assert least / pooled == pytest.approx(0.56, abs=0.04)
    assert statistic_noise(np.arange(5), np.ones(5), "mean") is None


def test_rows_that_summarise_runs_are_held_against_the_noise_of_a_row():
    """Summarised rows keep no repeats, so their whole residual is the law's misfit plus one
    row's noise: a residual the size of that noise passes the lack-of-fit test, four times it fails."""
    from exprsearch.rank import lack_of_fit_p, noise

    pure = noise(np.ones(30), np.arange(30), given=(1e-4, 60))
    assert pure.summarised and pure.relative_sd == pytest.approx(0.01) and pure.configurations == 30
    assert lack_of_fit_p(1e-4, 30, 3, pure) > 0.3
    assert lack_of_fit_p(16e-4, 30, 3, pure) < 1e-6


@pytest.mark.slow
def test_the_mean_of_each_configuration_is_chosen_by_the_noise_rule_as_all_runs_are():
    """Each configuration's mean, tested against the noise of a mean, gets the law every run gets
    (1 + 0.01·n/p + 0.004·p², 2 % noise); before, the mean's law was chosen by BIC alone and
    put p^1.6 in place of p² (19 % off at 8×)."""
    from exprsearch import search
    from exprsearch.data import from_columns
    from exprsearch.repeats import summarised

    rng = np.random.default_rng(115)
    grid = np.repeat(np.array([(n, p) for n in (1e3, 4e3, 16e3) for p in (1, 2, 4, 8, 16.0)]), 3, axis=0)
    n, p = grid.T
    time = (1 + 0.01 * n / p + 0.004 * p**2) * (1 + 0.02 * rng.standard_normal(len(n)))
    data = from_columns({"n": n, "p": p, "time": time}, "time")
    every = search(data, resamples=0)
    mean = search(summarised(data, "mean"), resamples=0)
    terms = [{str(t.key) for t in r.ranking.law.fit.candidate.terms} for r in (every, mean)]
    assert terms[0] == terms[1] == {"1", "n/p", "p**2"}
    assert "within the measured noise" in mean.ranking.rule
    assert mean.law.metrics["noise_sd_pct"] == pytest.approx(every.law.metrics["noise_sd_pct"] / np.sqrt(3), rel=0.1)


@pytest.mark.slow
def test_a_per_step_log_of_a_law_with_a_fitted_power_is_fitted_end_to_end(tmp_path):
    """24 configurations logged 4,000 steps each (1 + 0.01·n/p + 0.05·p^1.4, 2 % noise): the F-test
    of a screened sum against 95,976 repeat degrees of freedom stopped the run with mpmath's
    NoConvergence, and its bootstrap refitted every one of the 96,000 rows 200 times."""
    rng = np.random.default_rng(7)
    grid = np.repeat(np.array([(p, n) for p in (1, 2, 4, 8, 16, 32) for n in (1e3, 4e3, 16e3, 64e3)]), 4000, axis=0)
    p, n = grid.T
    time = (1 + 0.01 * n / p + 0.05 * p**1.4) * (1 + 0.02 * rng.standard_normal(len(p)))
    path = tmp_path / "steps.csv"
    pd.DataFrame({"p": p, "n": n, "step_s": time}).to_csv(path, index=False)
    result = CliRunner().invoke(app, ["run", str(path), "-t", "step_s", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    law = load(tmp_path / "out" / "law.json")
    assert str(law.template) == "c0 + c1*p**k0 + c2*n/p"
    assert law.constants["k0"] == pytest.approx(1.4, abs=0.01)
    assert law.intervals["k0"][0] < law.constants["k0"] < law.intervals["k0"][1] < law.intervals["k0"][0] + 0.02


def test_a_robust_loss_on_many_repeats_points_to_a_statistic_of_them():
    from exprsearch.data import from_columns
    from exprsearch.repeats import robust_note

    p = np.repeat([1.0, 2, 4, 8], 600)
    steps = from_columns({"p": p, "time": 2 + 40 / p}, "time")
    note = robust_note(steps, "huber")
    assert "each of the 2,400 rows" in note and "4 configurations are measured 600 times each" in note
    assert "--measure median" in note
    assert robust_note(steps, "squared") is None
    assert robust_note(from_columns({"p": p[::3], "time": 2 + 40 / p[::3]}, "time"), "huber") is None  # 800 rows
    distinct = np.arange(1.0, 2401)
    assert robust_note(from_columns({"p": distinct, "time": 2 + 40 / distinct}, "time"), "absolute") is None


def test_run_says_the_robust_loss_note_before_its_search(tmp_path):
    rng = np.random.default_rng(3)
    p = np.repeat([1.0, 2, 4, 8, 16], 500)
    path = tmp_path / "steps.csv"
    pd.DataFrame({"p": p, "time": (2 + 40 / p) * (1 + 0.02 * rng.standard_normal(len(p)))}).to_csv(path, index=False)
    rules = tmp_path / "one.toml"
    rules.write_text('[factors]\np = "extrinsic"\n[constants]\nc = { min = 0, max = inf }\n[rules]\nstart = "c + c/p"\n')
    result = CliRunner().invoke(app, ["run", str(path), "-t", "time", "-g", str(rules), "--loss", "huber",
                                      "--bootstrap", "0", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "--loss huber weighs each of the 2,500 rows" in said
    assert said.index("--measure median") < said.index("time = ")


@pytest.mark.parametrize("take", [np.median, np.min])
def test_drawn_a_block_at_a_time_are_the_draws_made_all_at_once(monkeypatch, take):
    from exprsearch import repeats

    pool = np.random.default_rng(1).standard_normal(500)
    whole = take(np.random.default_rng(0).choice(pool, (repeats.DRAWS, 7)), axis=1)
    monkeypatch.setattr(repeats, "DRAW_VALUES", 7 * 3001)  # blocks of 3,001 draws, the last one shorter
    np.testing.assert_array_equal(repeats._drawn(np.random.default_rng(0), pool, 7, take), whole)
