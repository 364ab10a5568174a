import numpy as np
import pytest

from exprsearch import export, plot, report
from exprsearch.explain import explain
from tests.test_explain import law

pytest.importorskip("matplotlib")


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
