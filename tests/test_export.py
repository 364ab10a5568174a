import csv
import importlib.util
import io
import signal
import sys
import threading

import numpy as np
import pytest

from exprsearch import export
from tests.conftest import PLOT_EXTRA
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


def test_files_are_written_whole_or_not_at_all(tmp_path):
    from exprsearch.export import write_all

    old = tmp_path / "law.json"
    old.write_text("old")
    write_all({old: "new", tmp_path / "sub" / "law.tex": b"\\begin"})
    assert old.read_text() == "new" and (tmp_path / "sub" / "law.tex").read_bytes() == b"\\begin"
    old.write_text("old")
    with pytest.raises(TypeError):
        write_all({tmp_path / "first.txt": "staged", old: object()})  # the second cannot be written
    assert old.read_text() == "old" and not (tmp_path / "first.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["law.json", "sub"]  # no temporary left


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="signals cannot be blocked here")
def test_an_interrupt_while_the_output_folder_is_tried_leaves_no_temporary_folder(tmp_path, monkeypatch):
    """`run --force` tries the folder with a temporary folder before the search; a Ctrl-C or SIGTERM
    that landed between making and removing it left `.exprsearch-…` beside the results (seen once
    in CI, under load). Now the signal waits until it is removed."""
    made = export.tempfile.mkdtemp

    def interrupted(*args, **kwargs):
        folder = made(*args, **kwargs)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        return folder

    monkeypatch.setattr(export.tempfile, "mkdtemp", interrupted)
    with pytest.raises(KeyboardInterrupt):
        export.check_writable(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_files_are_written_with_the_permissions_a_new_file_gets(tmp_path):
    """Staged through mkstemp (0600), the results had been readable by their owner alone; a new
    file gets 0666 less the umask, a file replaced keeps its own."""
    import os
    import stat

    from exprsearch.export import write_all

    kept = tmp_path / "law.json"
    kept.write_text("old")
    kept.chmod(0o640)
    mask = os.umask(0o022)
    try:
        write_all({tmp_path / "law.tex": "new", kept: "new"})
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "law.tex").stat().st_mode) == 0o644
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text() == "new"


@pytest.mark.plot  # matplotlib's mathtext reads the LaTeX
def test_latex_writes_a_name_in_words_as_one_word_and_parses():
    import sympy

    from exprsearch.compile import factor_symbol
    from exprsearch.law import Law
    from exprsearch.vocabulary import parse

    symbols = {"batch_size": factor_symbol("batch_size"), "gpus": factor_symbol("gpus"), "p": factor_symbol("p"),
               **{c: sympy.Symbol(c, real=True) for c in ("c0", "c1", "c2")}}
    law = Law("Time (s)", ("batch_size", "gpus", "p"), parse("c0 + c1*batch_size/gpus + c2*log2(p)", symbols),
              {"c0": 0.47, "c1": 0.28, "c2": 0.1}, 9)
    body = export.latex(law).splitlines()[1].strip()
    # not batch with a subscript size, nor the product of the letters of gpus
    assert body.startswith(r"\mathit{Time\ (s)} = ") and r"\mathit{batch\_size}" in body and r"\mathit{gpus}" in body
    assert r"\log_{2}{\left(p \right)}" in body
    mathtext = pytest.importorskip("matplotlib.mathtext", reason=PLOT_EXTRA)
    mathtext.MathTextParser("path").parse(f"${body}$")  # raises on LaTeX it cannot read


def test_a_target_named_with_a_backslash_or_quotes_gives_a_module_that_imports(tmp_path):
    import warnings
    from dataclasses import replace

    for name in ('t "q" \\ x', 'a """ b', "ends with \\"):
        path = tmp_path / "odd_law.py"
        path.write_text(export.python_module(replace(make_law(), target=name)))
        spec = importlib.util.spec_from_file_location("odd_law", path)
        module = importlib.util.module_from_spec(spec)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an invalid escape is a SyntaxWarning from Python 3.12
            spec.loader.exec_module(module)
        assert module.TARGET == name and module.__doc__.startswith(f"{name} = ")


@pytest.mark.slow
def test_the_fronts_laws_are_written_with_six_significant_digits(amdahl_frame):
    """front.csv rounds each law's constants to 6 digits; it had written the binary value they
    hold (1708.80322265625 for 1708.8)."""
    import re

    from exprsearch import search

    rows = list(csv_rows(export.front_csv(search(amdahl_frame, "time", resamples=0).ranking)))
    numbers = [m for r in rows for m in re.findall(r"\d+\.\d+(?:e-?\d+)?", r["law"])]
    assert numbers and all(len(re.sub(r"e.*|\.|^0+", "", m).lstrip("0")) <= 6 for m in numbers), numbers


def test_a_held_out_error_lost_with_its_term_is_a_dash_with_its_reason(amdahl_frame, capsys):
    """An infinite held-out error (the refit without the held-out values drops a term that varies)
    reads as a dash, and the run's table and the report say why."""
    from dataclasses import replace

    from exprsearch import search
    from exprsearch.cli.run import _front
    from exprsearch.report import _front as report_front

    result = search(amdahl_frame, "time", resamples=0)
    front = list(result.ranking.front)
    front[-1] = replace(front[-1], holdout_mape=float("inf"))
    lost = replace(result, ranking=replace(result.ranking, front=tuple(front)))
    _front(lost)
    shown = " ".join(capsys.readouterr().out.split())
    assert "inf" not in shown and "—" in shown and " ".join(export.HELD_OUT_LOST.split()) in shown
    rows = list(csv_rows(export.front_csv(lost.ranking)))
    assert rows[-1]["holdout_mape_pct"] == "inf"  # the file keeps the number
    page = report_front(rows, lost.law)
    assert "inf" not in page and "rests on them alone" in page
    _front(result)
    assert "rests on them alone" not in capsys.readouterr().out


def csv_rows(text):
    return csv.DictReader(io.StringIO(text))
