import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from exprsearch import export, plot, report
from exprsearch.explain import explain
from tests.conftest import PLOT_EXTRA
from tests.test_explain import law

pytest.importorskip("matplotlib", reason=PLOT_EXTRA)
pytestmark = pytest.mark.plot  # the plot extra; CI runs them in its second step


def is_png(path):
    data = path.read_bytes()
    return data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_figures_are_real_pngs(tmp_path, amdahl_frame):
    from exprsearch.data import from_frame

    data = from_frame(amdahl_frame, "time")
    rows = [{"complexity": 5, "mape_pct": 10.0, "chosen": ""}, {"complexity": 8, "mape_pct": 1.5, "chosen": "yes"}]
    paths = plot.all_figures(law(), tmp_path, data, rows)
    assert sorted(p.name for p in paths) == sorted(export.FIGURES)
    assert all(is_png(p) for p in paths)


def test_default_view_prefers_the_factor_the_law_trades_off():
    factor, values, fixed = plot.default_view(law())
    assert factor == "p" and values.max() == pytest.approx(8 * 32) and set(fixed) == {"n"}


def test_report_is_self_contained(tmp_path):
    model = law()
    e = explain(model, "p", np.arange(1.0, 257.0), {"n": 16000})
    png = plot.breakdown(model, e, tmp_path / "b.png")
    front = "complexity,constants,mape_pct,cv_mape_pct,rmse,r2,extended_bic,lack_of_fit_p,chosen,law\n11,3,1.2,1.3,0.1,0.99,-500,0.4,yes,c0 + c1*p\n"
    page = report.html_page(model, front, e, [png])
    assert "<math" in page and "data:image/png;base64," in page and "time rises" in page
    assert "\\begin{equation}" in page
    assert "http" not in page.replace("http-equiv", "")  # nothing loaded from the network


def test_report_says_which_measurements_the_law_was_fitted_to():
    from dataclasses import replace

    front = ("complexity,constants,mape_pct,cv_mape_pct,rmse,r2,extended_bic,lack_of_fit_p,chosen,law\n"
             "11,3,1.2,1.3,0.1,0.99,-500,0.4,yes,c0 + c1*p\n")
    grouped = replace(law(), dataset={"path": "/data/tf_cnn.csv", "group": {"model": "AlexNet", "batch": 64}})
    page = report.html_page(grouped, front, None, [])
    assert "<title>exprsearch: time of tf_cnn.csv (model=AlexNet,batch=64)</title>" in page
    assert "<p>Fitted to tf_cnn.csv (model=AlexNet,batch=64).</p>" in page
    assert "Fitted to" not in report.html_page(replace(law(), dataset={}), front, None, [])


def test_the_curve_along_a_factor_is_drawn_at_measured_levels(amdahl_frame):
    """With data, the other factors are held at values that were measured (not the geometric
    middle of their range), so the drawn points are exactly the measurements on the curve."""
    from exprsearch.data import from_frame

    data = from_frame(amdahl_frame, "time")
    factor, _, fixed = plot.default_view(law(), data)
    assert factor == "p" and fixed["n"] in set(data.column("n"))
    rows = plot.matching_rows(data, fixed)
    assert len(set(data.column("p")[rows])) == len(set(data.column("p")))  # every p is on the curve
    assert np.all(data.column("n")[rows] == fixed["n"])


def test_report_reads_right(tmp_path):
    """A visible product sign between factor names, constants rounded, metrics labelled for people."""
    from exprsearch.law import Law

    model = law("c0 + c1*n/p + c2*n*p")
    model = Law(**{**model.__dict__, "constants": {"c0": 2.000123456, "c1": 0.0100987654321, "c2": 0.15},
                   "intervals": {"c0": [1.9, 2.1], "c1": [0.0100, 0.0102], "c2": [0.1, 0.2]},
                   "metrics": {"mape_pct": 1.234567, "lack_of_fit_p": 0.0, "r2": 0.99912345}})
    e = explain(model, "p", np.geomspace(1, 256, 40), {"n": 16000})
    front = ("complexity,constants,mape_pct,cv_mape_pct,holdout_mape_pct,rmse,r2,extended_bic,lack_of_fit_p,chosen,law\n"
             "11,3,1.2,1.3,,0.1,0.99,-500,0.4,yes,2.0001234567891234 + 0.010098765432109876*n/p + 0.15*p\n")
    page = report.html_page(model, front, e, [])
    assert "&InvisibleTimes;" not in page and "<mi>n</mi><mo>&#xB7;</mo><mi>p</mi>" in page
    assert "2.0001234567891234" not in page and "0.0101*n/p + 0.15*p + 2.0<" in page  # front: 4 digits
    assert "<mn>2.0</mn>" in page and "<mn>0.0101</mn>" in page  # the law: digits its intervals support
    assert "mape_pct" not in page and "mean absolute percentage error (%)" in page and "&lt; 0.001" in page
    flat = explain(law("c0 + c1*n/p"), "p", np.geomspace(1, 5000, 50), {"n": 16000})  # diminishing returns
    assert flat.limit.kind == "diminishing"
    numbers = [n for s in e.sentences + flat.sentences for n in re.findall(r"\d+\.?\d*", s)]
    digits = [len((n.rstrip("0").rstrip(".") if "." in n else n).replace(".", "").lstrip("0")) for n in numbers]
    assert numbers and max(digits) <= 4  # at most 4 significant digits


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt install chromium)")
def test_report_renders_in_a_browser(tmp_path):
    """Headless Chromium lays out the report's MathML equation and decodes its figures: a probe
    appended to a copy of the page writes what the browser measured into the title."""
    model = law()
    e = explain(model, "p", np.geomspace(1, 256, 40), {"n": 16000})
    png = plot.breakdown(model, e, tmp_path / "b.png")
    front = "complexity,constants,mape_pct,cv_mape_pct,rmse,r2,extended_bic,lack_of_fit_p,chosen,law\n11,3,1.2,1.3,0.1,0.99,-500,0.4,yes,c0 + c1*p\n"
    page = report.html_page(model, front, e, [png])
    probe = ("<script>window.onload=()=>{const m=document.querySelector('math').getBoundingClientRect();"
             "const i=document.querySelector('img');"
             "document.title='probe '+Math.round(m.width)+' '+Math.round(m.height)+' '+i.naturalWidth;};</script>")
    path = tmp_path / "report.html"
    path.write_text(page.replace("</body>", probe + "</body>"))
    run = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                          "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r"<title>probe (\d+) (\d+) (\d+)</title>", run.stdout)
    assert found, run.stderr[-2000:]
    width, height, image = map(int, found.groups())
    assert width > 100 and height > 10  # the equation is laid out as math, not left as zero-size markup
    assert image > 100  # the embedded PNG decoded


def test_log_axes_read_as_plain_numbers():
    """2, 3, 5 rather than 2×10⁰, 3×10⁰, 5×10⁰, whose labels overlapped on a narrow range."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1.8, 17], [2.1, 5.2])
    ax.set(xscale="log", yscale="log")
    plot._plain_log_ticks(fig)
    fig.canvas.draw()
    x = [t.get_text() for t in ax.get_xticklabels(minor=True) + ax.get_xticklabels() if t.get_text()]
    y = [t.get_text() for t in ax.get_yticklabels(minor=True) + ax.get_yticklabels() if t.get_text()]
    plt.close(fig)
    assert "10" in x and "2" in x and "5" in x and not any("times" in t or "^" in t for t in x + y)
    assert {"3", "4", "5"} <= set(y)  # within one decade every minor tick is labelled


def test_plot_finds_the_data_law_json_names_unless_it_changed(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from exprsearch.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text("p,time\n" + "".join(f"{p},{2 + 40 / p:.6g}\n" for p in (1, 2, 4, 8, 16, 32)))
    runner = CliRunner()
    assert runner.invoke(app, ["run", "t.csv", "-t", "time", "--out", "o", "--bootstrap", "0"]).exit_code == 0
    found = runner.invoke(app, ["plot", "o"])
    assert found.exit_code == 0 and (tmp_path / "o" / "measured_vs_predicted.png").is_file()
    (tmp_path / "o" / "measured_vs_predicted.png").unlink()
    (tmp_path / "t.csv").write_text((tmp_path / "t.csv").read_text() + "64,2.6\n")
    changed = runner.invoke(app, ["plot", "o"])
    assert changed.exit_code == 0 and not (tmp_path / "o" / "measured_vs_predicted.png").exists()
    assert "'t.csv', the data the law was fitted on, is not here or has changed" in " ".join(changed.output.split())


def test_report_carries_the_notes_on_the_data_and_the_search(tmp_path):
    """A stalled run and a search stopped at its time limit are said in report.html as on the
    console (the report used to hold only the warnings about the law's intervals)."""
    from typer.testing import CliRunner

    from exprsearch.cli import app

    rng = np.random.default_rng(1)
    rows = [(p, (2 + 40 / p) * (5 if (p, r) == (8, 1) else 1 + 0.02 * rng.standard_normal()))
            for p in (1, 2, 4, 8, 16, 32) for r in range(3)]
    (tmp_path / "s.csv").write_text("p,time\n" + "".join(f"{p},{t:.6g}\n" for p, t in rows))
    result = CliRunner().invoke(app, ["run", str(tmp_path / "s.csv"), "-t", "time", "--out", str(tmp_path / "o"),
                                      "--report", "--bootstrap", "0", "--time-limit", "0"])
    assert result.exit_code == 0, result.output
    page = " ".join((tmp_path / "o" / "report.html").read_text().split())
    assert "1 run(s) lie far above the other runs of their configuration: line 12" in page
    assert "stopped at the time limit of 0 s" in page


@pytest.mark.slow  # plot finding a CSV's data is tested in the fast step
def test_plot_finds_the_series_of_an_extrap_file_law_json_names(tmp_path, monkeypatch):
    """A law of one series of an Extra-P file records the series, so plot draws measured vs
    predicted from the file (it said the file was not a table), with or without it given."""
    from typer.testing import CliRunner

    from exprsearch.cli import app

    monkeypatch.chdir(tmp_path)
    lines = ["PARAMETER p", "POINTS 1 2 4 8 16", ""]
    for region, a in (("main", 40), ("solve", 10)):
        lines += [f"REGION {region}", "METRIC time"] + [f"DATA {2 + a / p:g}" for p in (1, 2, 4, 8, 16)] + [""]
    (tmp_path / "k.txt").write_text("\n".join(lines))
    runner = CliRunner()
    assert runner.invoke(app, ["profile", "k.txt", "--laws", "--out", "o"]).exit_code == 0
    law = tmp_path / "o" / "series" / "solve_time" / "law.json"
    assert json.loads(law.read_text())["dataset"]["series"] == "solve:time"
    figure = law.parent / "measured_vs_predicted.png"
    assert runner.invoke(app, ["plot", str(law)]).exit_code == 0 and figure.is_file()
    figure.unlink()
    given = runner.invoke(app, ["plot", str(law), "k.txt"])
    assert given.exit_code == 0 and figure.is_file(), given.output


@pytest.mark.slow  # a search and four figures
def test_plot_draws_the_rows_of_the_group_a_law_was_fitted_on(tmp_path, monkeypatch):
    """A law of one --by group records the group (and --drop-missing), so plot draws that group's
    measurements, not the whole table's (LLM Foundry: 78 of 216 rows), and finds them at all where
    rows had been dropped for a missing value."""
    from typer.testing import CliRunner

    from exprsearch.cli import app

    monkeypatch.chdir(tmp_path)
    rows = [f"{fw},{p},{(a + 40 / p) if (fw, p) != ('tf', 4) else ''}" for fw, a in (("tf", 2), ("torch", 9))
            for p in (1, 2, 4, 8, 16, 32)]
    (tmp_path / "g.csv").write_text("framework,p,time\n" + "\n".join(rows) + "\n")
    runner = CliRunner()
    fitted = runner.invoke(app, ["run", "g.csv", "-t", "time", "--by", "framework", "--drop-missing", "--out", "o",
                                 "--bootstrap", "0"])
    assert fitted.exit_code == 0, fitted.output
    recorded = json.loads((tmp_path / "o" / "framework_tf" / "law.json").read_text())["dataset"]
    assert recorded["group"] == {"framework": "tf"} and recorded["drop_missing"] is True
    drawn = []
    monkeypatch.setattr(plot, "measured_vs_predicted", lambda law, data, path: drawn.append(data.y.tolist()) or path)
    assert runner.invoke(app, ["plot", "o/framework_tf"]).exit_code == 0
    assert drawn == [[42.0, 22.0, 7.0, 4.5, 3.25]]  # tf's five rows with a time


@pytest.mark.slow  # a search and four figures
def test_a_law_fitted_without_stray_runs_is_drawn_without_them(tmp_path, monkeypatch):
    """--drop-stray is recorded in law.json, so plot reads the rows the law was fitted on: runs of
    a rate, the last repeat of each configuration cut short: kept, those runs decide the law (a
    constant near their value); dropped, the rate."""
    from typer.testing import CliRunner

    from exprsearch.cli import app

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    rows = [f"{p},{s},{(p / (1 + 0.05 * p)) * (0.02 if s == 9 else 1 + 0.01 * rng.standard_normal()):.6g}"
            for p in (1, 2, 4, 8, 16) for s in range(10)]
    (tmp_path / "log.csv").write_text("gpus,rep,samples_per_sec\n" + "\n".join(rows) + "\n")
    runner = CliRunner()
    kept = runner.invoke(app, ["run", "log.csv", "-t", "samples_per_sec", "--out", "kept", "--bootstrap", "0"])
    assert kept.exit_code == 0 and "--drop-stray drops them" in " ".join(kept.output.split())
    dropped = runner.invoke(app, ["run", "log.csv", "-t", "samples_per_sec", "--drop-stray", "--out", "o",
                                  "--bootstrap", "0"])
    assert dropped.exit_code == 0, dropped.output
    mape = {name: json.loads((tmp_path / name / "law.json").read_text())["metrics"]["mape_pct"] for name in ("kept", "o")}
    assert mape["o"] < 3 < 50 < mape["kept"]
    assert json.loads((tmp_path / "o" / "law.json").read_text())["dataset"]["drop_stray"] is True
    drawn = []
    monkeypatch.setattr(plot, "measured_vs_predicted", lambda law, data, path: drawn.append(len(data.y)) or path)
    assert runner.invoke(app, ["plot", "o"]).exit_code == 0
    assert drawn == [45]  # the 50 runs but the five cut short


def test_a_per_step_logs_points_are_named_as_its_runs(tmp_path):
    """The points of a law fitted to a per-step log are runs, each the median of its steps, or its
    last step where the target is a clock."""
    from exprsearch.data import load_table

    log = ["gpus,step,time"] + [f"{g},{s},{10 / g + s % 2}" for g in (1, 2, 4) for s in range(6)]
    (tmp_path / "log.csv").write_text("\n".join(log) + "\n")
    (tmp_path / "runs.csv").write_text("gpus,time\n1,10\n2,5\n4,2.5\n")
    assert plot._measured(load_table(tmp_path / "log.csv", "time")) == "runs (each the median of its steps)"
    assert plot._measured(load_table(tmp_path / "runs.csv", "time")) == "measurements"
    # a clock (the time since the run began) is each run's last step
    clock = ["gpus,_step,_runtime"] + [f"{g},{s},{(s + 1) * 10 / g}" for g in (1, 2, 4) for s in range(6)]
    (tmp_path / "clock.csv").write_text("\n".join(clock) + "\n")
    assert plot._measured(load_table(tmp_path / "clock.csv", "_runtime")) == "runs (each at its last step)"


def test_the_band_beyond_the_data_says_by_how_much_it_widened(tmp_path, monkeypatch):
    """The interval widens beyond the measured range by the error the law's form made on its own
    top octave; the legend says so, and says nothing of it where there is none to add."""
    from dataclasses import replace

    drawn = []
    monkeypatch.setattr(plot, "_save", lambda fig, path: drawn.append(
        [t.get_text() for t in fig.axes[0].get_legend().get_texts()]) or path)
    sampled = replace(law(), bootstrap=((2.0, 0.01, 0.15),) * 3, residual_sd=0.01)
    e = explain(sampled, "p", np.array([1.0, 8, 32, 256]), {"n": 16000.0})
    plot.along(replace(sampled, metrics={"holdout_mape_pct": 4.0}), e, tmp_path / "a.png")
    plot.along(sampled, e, tmp_path / "b.png")
    widened, plain = (next(t for t in texts if t.startswith("95 %")) for texts in drawn)
    assert widened.endswith("widened 4.9 % (1 sd) per doubling beyond the data)")
    assert plain == "95 % prediction interval (3 bootstrap fits)"


def test_profile_plot_draws_the_growth_of_the_series_ranked_first(tmp_path):
    from typer.testing import CliRunner

    from exprsearch.cli import app
    from tests.test_profiles import write_profile

    out = tmp_path / "o"
    result = CliRunner().invoke(app, ["profile", str(write_profile(tmp_path / "p.txt")), "-g", "data-parallel",
                                      "--at", "p=64", "--plot", "--report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "laws.json, report.html, growth.png to" in " ".join(result.output.split())
    assert (out / "growth.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<img alt='growth' src='data:image/png;base64," in (out / "report.html").read_text()  # below the ranking


def test_profile_plot_stacks_a_table_of_phases(tmp_path):
    """A table of phases (a time per column) gets phases.png beside growth.png, both in report.html;
    a profile of other series gets growth.png alone (the test above)."""
    from typer.testing import CliRunner

    from exprsearch.cli import app

    rng = np.random.default_rng(0)
    rows = [(p, 0.2 + 40 / p, 0.4 + 80 / p, 0.5 * np.log2(p) + 0.1 * p + 0.05) for p in (1, 2, 4, 8, 16) for _ in range(3)]
    (tmp_path / "phases.csv").write_text("gpus,fwd_s,bwd_s,comm_s\n" + "".join(
        f"{p}," + ",".join(f"{v * (1 + 0.02 * rng.standard_normal()):.5g}" for v in values) + "\n"
        for p, *values in rows))
    out = tmp_path / "o"
    result = CliRunner().invoke(app, ["profile", str(tmp_path / "phases.csv"), "--target", "fwd_s,bwd_s,comm_s",
                                      "--at", "gpus=128", "--plot", "--report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "report.html, growth.png, phases.png to" in " ".join(result.output.split())
    page = (out / "report.html").read_text()
    assert "<img alt='growth'" in page and "<img alt='phases'" in page
