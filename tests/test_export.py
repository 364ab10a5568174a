import importlib.util
import sys

import numpy as np

from exprsearch import export
from tests.test_law import make_law


def test_latex_rounds_constants_and_prints_log2():
    tex = export.latex(make_law())
    assert tex.startswith("\\begin{equation}")
    assert "\\log_{2}{\\left(p \\right)}" in tex
    assert "0.002" in tex and "3.1" in tex


def test_python_module_needs_only_numpy_and_agrees(tmp_path):
    law = make_law()
    path = tmp_path / "law_module.py"
    path.write_text(export.python_module(law))
    spec = importlib.util.spec_from_file_location("law_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "sympy" not in path.read_text() and "exprsearch" not in path.read_text().split('"""')[2]
    p, n = np.array([1.0, 3.0, 128.0]), np.array([10.0, 1e4, 1e6])
    np.testing.assert_allclose(module.predict(n=n, p=p), law.predict({"p": p, "n": n}), rtol=1e-12)
    assert module.FACTORS == ("n", "p") and module.TARGET == "time"
    assert module.predict(1000, 2).shape == ()
    sys.modules.pop("law_module", None)
