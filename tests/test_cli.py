"""End to end through the command line (typer's CliRunner and a real subprocess)."""

import importlib.util
import inspect
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy
from sympy.codegen.cfunctions import log2
from typer.testing import CliRunner

from exprsearch import __version__, load
from exprsearch.cli import app
from tests.conftest import interruptible

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def law_module(path: Path, name: str):
    """The law.py at ``path``, imported as a module on its own."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_version_and_help():
    assert __version__ in run("--version").output
    assert "run" in run("--help").output


def test_every_command_is_listed_by_one_sentence():
    """The command list shows a docstring's first paragraph; a second line there (suggest's had one)
    crowds the list, so what more a command says goes after a blank line."""
    groups = [app]
    while groups:
        group = groups.pop()
        groups += [g.typer_instance for g in group.registered_groups]
        for command in group.registered_commands:
            first = inspect.getdoc(command.callback).split("\n\n")[0]
            assert "\n" not in first and first.endswith("."), command.callback.__name__


@pytest.mark.slow  # 1.5-4.7 s: an integration test, run in CI's second step
def test_run_says_how_far_the_fitting_is_where_no_bar_shows(amdahl_csv, tmp_path, monkeypatch):
    """Piped to a log, a line every LOG_EVERY seconds says how many candidates are fitted (none in
    the first LOG_EVERY seconds, and none with --json, whose output is the JSON alone)."""
    from exprsearch.cli import common

    plain = run("run", amdahl_csv, "--target", "time", "--out", tmp_path / "a")
    assert plain.exit_code == 0 and "candidates done in" not in plain.output
    monkeypatch.setattr(common, "LOG_EVERY", 0.0)
    logged = run("run", amdahl_csv, "--target", "time", "--out", tmp_path / "b")
    lines = [line for line in logged.output.splitlines() if line.startswith("fitting: ")]
    assert logged.exit_code == 0 and lines
    done, total = lines[-1].removeprefix("fitting: ").split(" candidates")[0].split(" of ")
    assert done == total and lines[-1].endswith(", about 0 s left")
    assert "candidates done" not in run("run", amdahl_csv, "--target", "time", "--out", tmp_path / "c", "--json").output


@pytest.mark.parametrize(("seconds", "said"), [(0.4, "0 s"), (99.4, "99 s"), (121, "2 min 01 s"),
                                                (5999, "99 min 59 s"), (7384, "2 h 03 min")])
def test_progress_lines_give_durations_as_people_read_them(seconds, said):
    from exprsearch.cli.common import _duration

    assert _duration(seconds) == said


@pytest.mark.parametrize("law", ["0.00049*params**3/(model_flops**2.27*workers)",
                                 "2.1*log2(TBS)**2*log2(gpu_count) + 8.0*log2(TBS)*log2(gpu_count)**2 - 420",
                                 "-3.5 + 1.1e-6*sqrt(model_flops)*log2(params)/workers**0.9", "300",
                                 "a + verylongname_without_ops*z - b"])
@pytest.mark.parametrize("width", [1, 8, 20, 32, 80])
def test_a_law_in_a_table_column_breaks_between_terms_or_factors_never_in_a_number(law, width):
    """rich folds a piece too long for its column anywhere: the side-by-side table of CM-DARE's
    laws showed ``model_flops**2.`` over ``27*workers``."""
    from exprsearch.cli.layout import _wrapped, law_column

    lines = _wrapped(law, width).split("\n")
    joined = lines[0] + "".join(line if line[0] in "*/" else " " + line for line in lines[1:])
    assert joined == law  # nothing lost, nothing added: a break is a space, or before a * or /
    assert all(line == line.strip() and line for line in lines)
    for before, after in zip(lines, lines[1:]):  # each break before a term's sign, a * or a / (not **)
        assert after[0] in "+-/" or (after[0] == "*" and after[1] != "*" and not before.endswith("*")), (before, after)
    pieces = [p for term in law.split() for p in re.split(r"(?<!\*)(?=[*/](?!\*))", term)]
    assert all(len(line) <= max(width, 2 + max(map(len, pieces))) for line in lines)  # a sign and its piece
    column, (wrapped,) = law_column("law", [law], beside=10**6)  # no room: the longest piece decides
    assert all(len(line) <= column.width for line in wrapped.split("\n")) and wrapped == _wrapped(law, column.width)


@pytest.mark.parametrize("width", [45, 60, 80, 200])
def test_a_table_too_wide_for_the_console_is_drawn_tighter_never_folding_a_header_or_a_number(width, monkeypatch):
    """At 80 columns explain folded ``step_time_s_mean`` into ``step_time_s_m`` over ``ean``, at 60
    numbers too (``0.0101`` over ``1``): snug drops the box, then the padding, then splits the
    columns into tables that each fit, the first column in every one."""
    import io

    from rich.console import Console
    from rich.table import Table

    from exprsearch.cli import common, layout

    console = Console(width=width, file=io.StringIO(), color_system=None)
    monkeypatch.setattr(common, "out", console)
    headers = ["workers", "step_time_s_mean", "term 1", "term 2", "term 3", "dominant", "speedup", "efficiency"]
    rows = [["16 *", "0.2041", "0.00493", "0.199", "0.000216", "term 2", "1.27", "7.94 %"],
            ["1024", "1.35e-05", "0.0101", "0.97", "0.000657", "term 3", "1.87", "100 %"]]
    table = Table(*headers, title="Where the time goes", caption="* beyond the measured workers")
    for row in rows:
        table.add_row(*row)
    shown = layout.snug(table)
    if width == 200:
        assert shown is table and table.show_edge  # room enough: drawn as it was
    console.print(shown)
    lines = console.file.getvalue().splitlines()
    assert all(len(line) <= width for line in lines)
    text = "\n".join(lines)
    for header in headers:  # whole, on one line
        assert any(header in line for line in lines), (header, text)
    for row in rows:
        for cell in row:
            assert any(cell in line for line in lines), (cell, text)
    headed = [line for line in lines if line.lstrip(" ┃").startswith("workers")]
    parts = len(headed)
    assert parts == 1 if width >= 80 else parts > 1
    assert sum(line.lstrip("│ ").startswith("16 *") for line in lines) == parts  # the key in every part
    assert text.index("Where the time goes") < text.index("workers")
    assert " ".join(" ".join(lines[-3:]).split()).endswith("* beyond the measured workers")  # the caption, last


def test_a_table_whose_first_column_is_long_is_not_split_it_folds(monkeypatch):
    """Splitting repeats the first column in every part: a series' name of 70 characters (hivemind's
    ``model=…,experiment=…,location=…``) would take most of each part's room again."""
    import io

    from rich.console import Console
    from rich.table import Table

    from exprsearch.cli import common, layout

    console = Console(width=80, file=io.StringIO(), color_system=None)
    monkeypatch.setattr(common, "out", console)
    table = Table("series", "law", "MAPE %", "held-out %")
    table.add_row("model=ConvNextLarge,experiment=A10 model suitability,location=Lambda US",
                  "85/gpu_count**3.0 + 58*log2(gpu_count)**2 + 100", "1.3", "4.28")
    console.print(layout.snug(table))
    lines = console.file.getvalue().splitlines()
    assert sum(line.startswith("series") for line in lines) == 1 and all(len(line) <= 80 for line in lines)
    assert "MAPE %" in lines[0] and "held-out %" in lines[0]


@pytest.mark.parametrize("width", [80, 100, 120])
def test_a_series_name_breaks_after_its_commas_never_inside_a_value(width, monkeypatch):
    """Folded where its column ended, ``platform=GCE n1-standard-32,model=ResNet-152`` showed
    ``Re`` over ``sNet-152``: the name breaks after a comma, each ``key=value`` whole on its line."""
    import io

    from rich.console import Console
    from rich.table import Column, Table

    from exprsearch.cli import common, layout

    console = Console(width=width, file=io.StringIO(), color_system=None)
    monkeypatch.setattr(common, "out", console)
    names = ["platform=GCE n1-standard-32,model=ResNet-152,batch=64", "model=VGG16", "a=1,b=2"]
    column, laws = layout.law_column("law", ["-3.5 + 1.1e-6*sqrt(model_flops)*log2(params)/workers**0.9"] * 3,
                                     beside=48)
    table = Table(Column("series", overflow="fold"), column, "MAPE %")  # as run, profile and beside draw it
    for name, law in zip(names, laws):
        cell = layout.series_cell(name)
        assert cell.replace("\n", "") == name  # nothing lost or added
        assert all(len(line) <= max(width // 3, 12) or "," not in line.rstrip(",") for line in cell.split("\n"))
        table.add_row(cell, law, "1.3")
    console.print(layout.snug(table))
    text = console.file.getvalue()
    for piece in (p for name in names for p in name.split(",")):
        assert any(piece in line for line in text.splitlines()), (piece, text)
    assert layout.series_cell("a=1,b=2", room=3) == "a=1,\nb=2" and layout.series_cell("a=1,b=2", room=7) == "a=1,b=2"


def test_run_writes_every_file_and_they_agree(amdahl_csv, tmp_path):
    out = tmp_path / "out"
    result = run("run", amdahl_csv, "--target", "time", "--grammar", "data-parallel", "--out", out)
    assert result.exit_code == 0, result.output
    assert "Pareto front" in result.output and "time = " in result.output
    assert sorted(p.name for p in out.iterdir()) == ["front.csv", "law.json", "law.py", "law.tex"]
    record = json.loads((out / "law.json").read_text())
    for key in ("expression", "template", "constants", "target", "factors", "metrics", "complexity",
                "grammar", "dataset", "seed", "version"):
        assert key in record
    assert record["template"] == "c0 + c1*n/p"
    assert len(record["dataset"]["sha256"]) == 64 and len(record["grammar"]["sha256"]) == 64

    module = law_module(out / "law.py", "fitted_law")
    points = {"n": np.array([100.0, 5e3, 2e6]), "p": np.array([1.0, 64.0, 512.0])}
    from_module = module.predict(**points)
    from_memory = load(out / "law.json").predict(points)
    expr = sympy.sympify(record["expression"], locals={"log2": log2})
    from_sympy = [float(expr.subs({"n": n, "p": p})) for n, p in zip(points["n"], points["p"])]
    np.testing.assert_allclose(from_module, from_memory, rtol=1e-9)
    np.testing.assert_allclose(from_sympy, from_memory, rtol=1e-9)
    assert "\\begin{equation}" in (out / "law.tex").read_text()
    assert (out / "front.csv").read_text().startswith("complexity,constants,mape_pct")


def test_same_seed_gives_byte_identical_law_json(amdahl_csv, tmp_path):
    outputs = []
    for name in ("a", "b"):
        result = run("run", amdahl_csv, "-t", "time", "-g", "data-parallel", "--seed", 3, "--out", tmp_path / name)
        assert result.exit_code == 0
        outputs.append((tmp_path / name / "law.json").read_bytes())
    assert outputs[0] == outputs[1]


def test_json_prints_the_law(amdahl_csv, tmp_path):
    result = run("run", amdahl_csv, "-t", "time", "-g", "data-parallel", "--json", "--out", tmp_path / "o")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["template"] == "c0 + c1*n/p"


def test_existing_results_are_not_clobbered(amdahl_csv, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "law.json").write_text("precious")
    result = run("run", amdahl_csv, "-t", "time", "-g", "data-parallel", "--out", out)
    assert result.exit_code == 2 and "--force" in result.output
    assert (out / "law.json").read_text() == "precious"
    assert run("run", amdahl_csv, "-t", "time", "-g", "data-parallel", "--out", out, "--force").exit_code == 0
    assert (out / "law.json").read_text() != "precious"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


BAD_GRAMMARS = {
    "syntax": ('[rules]\nstart = "c + "p"\n', "TOML syntax error: Expected newline or end of document after a statement (at line 2"),
    "unknown-rule": ('[constants]\nc = { min = 0, max = inf }\n[rules]\nstart = "c + <trm>"\nterm = "c*<factor>"\n',
                     "line 4: rule 'start' refers to unknown rule '<trm>' (did you mean 'term'?)"),
    "no-end": ('[constants]\nc = { min = 0, max = inf }\n[rules]\nstart = "c + <loop>"\nloop = "c*<loop>"\n',
               "line 5: rule 'loop' can never finish"),
    "function": ('[constants]\nc = { min = 0, max = inf }\n[rules]\nstart = "c + c*lg(<factor>)"\n',
                 "line 4: rule 'start': unknown function 'lg'"),
    "factor": ('[factors]\nworkers = "extrinsic"\n[constants]\nc = { min = 0, max = inf }\n[rules]\nstart = "c + c/workers"\n',
               "needs factor 'workers'"),
}


@pytest.mark.parametrize("case", sorted(BAD_GRAMMARS))
def test_bad_grammars_exit_2_with_one_sentence(case, amdahl_csv, tmp_path):
    text, fragment = BAD_GRAMMARS[case]
    path = write(tmp_path, f"{case}.toml", text)
    result = run("run", amdahl_csv, "-t", "time", "-g", path, "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert fragment in " ".join(result.output.split())
    assert str(path) in "".join(result.output.split()) or case == "factor"  # rich may wrap a path anywhere
    assert isinstance(result.exception, (SystemExit, type(None))), result.exception  # a crash, not an exit
    assert not (tmp_path / "o").exists()


BAD_DATA = {
    "missing-target": ("p,n,time\n1,2,3\n2,2,2\n", ["-t", "tme"], "target column 'tme' is not in"),
    "several-targets": ("p,fwd_s,bwd_s\n1,2,3\n2,1,1.5\n", ["-t", "fwd_s,bwd_s"],
                        "--target fwd_s,bwd_s names 2 columns of '"),
    "nan": ("p,n,time\n1,2,3\n2,2,\n", ["-t", "time"], "column 'time' has missing or non-numeric values at line 3"),
    # pandas skips blank lines: the line named is still the file's (it said line 3)
    "nan-after-blank-line": ("p,n,time\n1,2,3\n\n2,2,\n4,2,1\n", ["-t", "time"], "non-numeric values at line 4;"),
    "negative-target": ("p,n,time\n1,2,3\n2,2,-1\n", ["-t", "time"], "must be positive"),
    "unknown-factor": ("p,n,time\n1,2,3\n2,2,2\n", ["-t", "time", "--factors", "p,m"], "factor column 'm' is not in"),
    "unknown-map": ("p,n,time\n1,2,3\n2,2,2\n", ["-t", "time", "-g", "data-parallel", "--map", "q=p"], "'q' is not a factor of grammar"),
    "bad-map": ("p,n,time\n1,2,3\n2,2,2\n", ["-t", "time", "--map", "p"], "--map takes NAME=COLUMN"),
    "map-without-declared-factors": ("p,n,time\n1,2,3\n2,2,2\n", ["-t", "time", "--map", "x=p"],
                                     "grammar 'default' declares no factors"),
    "cube-format-of-a-file": ("p,n,time\n1,2,3\n2,2,2\n", ["-t", "time", "--format", "cube"],
                              "--format cube reads a directory of CUBE runs, and"),
    "unknown-format": ("p,n,time\n1,2,3\n2,2,2\n", ["-t", "time", "--format", "xls"],
                       "'xls' is not a format of series; use one of table, cube"),
    "bad-loss": ("p,n,time\n1,2,3\n2,2,2\n4,2,1\n", ["-t", "time", "--loss", "l1"], "loss (--loss) must be one of squared, huber, absolute"),
    "too-few-rows": ("p,time\n1,3\n2,2\n", ["-t", "time", "-g", "data-parallel"], "m.csv' (2 rows; p at 1 and 2): the data have 2 distinct configurations and the simplest candidate "
                     "has 2 constants"),
    "duplicate-column": ("p,p,time\n1,2,3\n2,2,2\n4,2,1\n", ["-t", "time"],
                         "line 1 has two columns named 'p' (columns 1 and 2); rename one"),
    "thousands": ('p,n,time\n1,"1,000",3\n2,"1,000",2\n4,"2,000",1\n8,"2,000",1\n', ["-t", "time"],
                  "column 'n' holds numbers written with thousands separators ('1,000' at line 2)"),
    "pipes": ("p|n|time\n1|2|3\n2|2|2\n", ["-t", "time"], "line 1 seems separated by '|', but a .csv file"),
    "extra-field": ("# measured today\np,time\n1,2\n2,3,4\n4,5\n", ["-t", "time"],
                    "line 4 has 3 fields where its header has 2: remove the extra ones (a value holding commas needs quotes)"),
    "unclosed-quote": ('# measured today\np,n,time\n1,2,3\n2,2,"2\n4,2,1\n8,2,1\n', ["-t", "time"],
                       "line 4 opens a quoted value (\") that no line after it closes"),
    "repeated-header": ("p,n,time\n1,2,3\n2,2,2\np,n,time\n4,2,1\n8,2,1\n", ["-t", "time"],
                        "line 4 repeats the header (files joined together?)"),
}


@pytest.mark.parametrize("case", sorted(BAD_DATA))
def test_bad_data_exit_2_with_one_sentence(case, tmp_path):
    text, args, fragment = BAD_DATA[case]
    path = write(tmp_path, "m.csv", text)
    result = run("run", path, *args, "--out", tmp_path / "o")
    assert result.exit_code == 2, result.output
    assert fragment in " ".join(result.output.split())
    assert isinstance(result.exception, (SystemExit, type(None))), result.exception  # a crash, not an exit


def test_missing_file_exit_2(tmp_path):
    result = run("run", tmp_path / "none.csv", "-t", "time")
    assert result.exit_code == 2 and "does not exist" in result.output


def test_factor_with_zeros_skips_log_candidates_and_says_so(tmp_path):
    rows = ["p,n,time", "0,1000,"] + [f"{p},{n},{2 + 0.01 * n / max(p, 1) * (1 + 0.01 * r)}"
                                      for p in (0, 1, 2, 4, 8, 16) for n in (1000, 4000, 16000) for r in range(2)]
    path = write(tmp_path, "zeros.csv", "\n".join(rows) + "\n")
    result = run("run", path, "-t", "time", "--drop-missing", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    # the file's lines, past the header and the row dropped for its missing time
    assert "factor 'p' is zero or negative at lines 3, 4, 5, 6, 7, 8:" in text
    assert "rejected:" in text and "undefined term" in text


def test_factor_with_zeros_under_a_log_only_grammar_stops_with_advice(tmp_path):
    grammar = write(tmp_path, "logs.toml", '[constants]\nc = { min = 0, max = inf }\n[rules]\nstart = "c + c*log2(<factor>)"\n')
    path = write(tmp_path, "zeros.csv", "p,time\n0,1\n1,2\n2,3\n4,4\n")
    result = run("run", path, "-t", "time", "-g", grammar, "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert "every candidate was rejected" in result.output and "log2(p)" in result.output


def test_grammar_commands(tmp_path):
    listing = run("grammar", "list")
    assert listing.exit_code == 0 and "data-parallel" in listing.output and "pmnf" in listing.output
    shown = run("grammar", "show", "data-parallel")
    assert shown.exit_code == 0 and "[rules]" in shown.output
    checked = run("grammar", "check", "data-parallel")
    assert checked.exit_code == 0 and "is valid" in checked.output and "unique candidates" in checked.output
    bad = write(tmp_path, "bad.toml", '[rules]\nstart = "c"\n')
    result = run("grammar", "check", bad)
    assert result.exit_code == 2 and "[constants]" in result.output
    table = write(tmp_path, "t.csv", "p,time\n1,3\n2,2\n")
    untargeted = run("grammar", "check", "default", "--data", table)  # a sentence like run's, not typer's box
    assert untargeted.exit_code == 2 and "error: --data needs --target COLUMN" in untargeted.output
    assert "its columns are" not in untargeted.output and "are p, time" in " ".join(untargeted.output.split())


@pytest.mark.slow  # 1.5-4.7 s: an integration test, run in CI's second step
def test_console_script_runs_in_a_subprocess(amdahl_csv, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "exprsearch.cli", "run", str(amdahl_csv), "-t", "time", "-g", "data-parallel",
         "--out", str(tmp_path / "o"), "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["target"] == "time"
    bad = subprocess.run([sys.executable, "-m", "exprsearch.cli", "run", str(tmp_path / "x.csv"), "-t", "t"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


@pytest.mark.slow
def test_law_json_does_not_depend_on_python_hash_seed(amdahl_csv, tmp_path):
    """sympy objects hash by their names' str hash; nothing may iterate in hash order."""
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"h{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-m", "exprsearch.cli", "run", str(amdahl_csv), "-t", "time", "-g", "data-parallel",
             "--out", str(out)], capture_output=True, text=True, timeout=120, env=env,
        )
        assert done.returncode == 0, done.stderr
        outputs.append((out / "law.json").read_bytes() + (out / "front.csv").read_bytes())
    assert outputs[0] == outputs[1]


@pytest.mark.slow
def test_candidate_order_does_not_depend_on_python_hash_seed():
    script = ("from exprsearch import grammar, candidates\n"
              "g = grammar.bind(grammar.load('default'), ('p', 'n', 'L'), intrinsic=('L',))\n"
              "print('|'.join(str(c) for c in candidates.generate(g).candidates))\n")
    orders = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("3", "4")]
    assert orders[0] and orders[0] == orders[1]


@pytest.mark.slow  # 1.5-4.7 s: an integration test, run in CI's second step
def test_law_does_not_depend_on_jobs(tmp_path):
    from tests.conftest import WORKERS, measurements

    path = tmp_path / "m.csv"
    measurements(lambda p, n: 1 + 0.01 * n / p + 0.2 * p**0.5, {"p": WORKERS, "n": (1000, 4000, 16000)}).to_csv(path, index=False)
    outputs = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        result = run("run", path, "-t", "time", "--jobs", jobs, "--out", out)
        assert result.exit_code == 0, result.output
        outputs.append((out / "law.json").read_bytes() + (out / "front.csv").read_bytes())
    assert outputs[0] == outputs[1]


def test_law_does_not_depend_on_jobs_when_many_candidates_are_refined(monkeypatch):
    import importlib

    from exprsearch import search
    from tests.conftest import WORKERS, measurements

    module = importlib.import_module("exprsearch.refine")
    monkeypatch.setattr(module, "POOL_MINIMUM", 0.0)  # use the process pool for this small search
    frame = measurements(lambda p, n: 1 + 1e-4 * n**1.5 / p + 0.2 * p**0.5, {"p": WORKERS, "n": (1000, 4000, 16000)})
    results = [search(frame, "time", "data-parallel", jobs=jobs, resamples=20, prune_margin=None)
               for jobs in (1, 2)]
    assert results[0].refined >= 16  # enough work for the process pool to be used
    assert results[0].law.to_json() == results[1].law.to_json()


def test_time_limit_keeps_a_law_and_says_so(amdahl_csv, tmp_path):
    result = run("run", amdahl_csv, "-t", "time", "-g", "data-parallel", "--time-limit", "0", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "time limit" in result.output and (tmp_path / "o" / "law.json").exists()
    result = run("run", amdahl_csv, "-t", "time", "--time-limit", "-1", "--out", tmp_path / "x")
    assert result.exit_code == 2 and "time_limit (--time-limit) must be a finite number of at least 0, got -1.0" in result.output


@pytest.mark.slow
def test_law_json_says_what_the_search_covered_and_what_it_did_not(amdahl_csv, tmp_path):
    result = run("run", amdahl_csv, "-t", "time", "--bootstrap", "0", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    searched = json.loads((tmp_path / "o" / "law.json").read_text())["search"]
    assert searched["space"] > 1_000_000 and searched["candidates"] < 10_000  # screened by the data
    assert searched["screened"] and not searched["not_searched"]
    assert "the space holds" in " ".join(result.output.split())
    capped = run("run", amdahl_csv, "-t", "time", "--bootstrap", "0", "--strategy", "exhaustive",
                 "--out", tmp_path / "x")
    assert capped.exit_code == 0, capped.output
    searched = json.loads((tmp_path / "x" / "law.json").read_text())["search"]
    (reason, count), = searched["not_searched"].items()
    assert "max_candidates" in reason and count > 1_000_000
    assert f"not searched: {count:,} candidates" in " ".join(capped.output.split())


@pytest.mark.parametrize("name", ["default", "data-parallel", pytest.param("pmnf", marks=pytest.mark.slow), "generic-dl", "overlap",
                                  "hybrid-parallel"])
def test_grammar_show_to_a_file_round_trips_through_check(name, tmp_path):
    from exprsearch.grammar import source_text

    shown = run("grammar", "show", name).output
    assert shown == source_text(name)
    (tmp_path / "mine.toml").write_text(shown)
    assert run("grammar", "check", tmp_path / "mine.toml").exit_code == 0


@pytest.mark.slow  # 1.5-4.7 s: an integration test, run in CI's second step
def test_grammar_show_in_a_pipe_is_never_rewrapped_at_any_width():
    from exprsearch.grammar import source_text

    widest = max(["default", "data-parallel", "pmnf", "generic-dl", "overlap", "hybrid-parallel"],
                 key=lambda name: max(map(len, source_text(name).splitlines())))  # pmnf: lines of 121 characters
    for columns in ("40", "80"):
        shown = subprocess.run([sys.executable, "-m", "exprsearch.cli", "grammar", "show", widest], capture_output=True,
                               text=True, env={**os.environ, "COLUMNS": columns}, check=True).stdout
        assert shown == source_text(widest)  # byte-exact in a real pipe, whatever the terminal's width


@pytest.mark.slow
def test_laws_on_the_front_are_never_cut_at_any_width(amdahl_csv, tmp_path):
    from exprsearch import search

    front = [str(s.fit.candidate.template) for s in
             search(amdahl_csv, "time", resamples=0).ranking.front]
    assert max(len(law) for law in front) > 20  # longer than a narrow column
    for columns in ("40", "80"):
        shown = subprocess.run([sys.executable, "-m", "exprsearch.cli", "run", str(amdahl_csv), "-t", "time",
                                "--bootstrap", "0", "--out", str(tmp_path / columns)], capture_output=True, text=True,
                               env={**os.environ, "COLUMNS": columns}, check=True).stdout
        flat = "".join(ch for ch in shown if not ch.isspace() and ch not in "│┃")
        for law in front:
            assert law.replace(" ", "") in flat, (columns, law)


def test_a_stray_word_in_a_numeric_column_stops_with_the_column_row_and_value(tmp_path):
    rows = ["p,n,time"] + [f"{p},{n},{2 + 0.01 * n / p}" for p in (1, 2, 4, 8, 16) for n in (1000, 4000, 16000)]
    rows[7] = "four" + rows[7][1:]  # line 8 of the file: p = 4 written as a word
    path = write(tmp_path, "typo.csv", "\n".join(rows) + "\n")
    result = run("run", path, "-t", "time", "--out", tmp_path / "o")
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "column 'p' is numbers except 'four' at line 8" in text
    assert "--drop-missing" in text and not (tmp_path / "o").exists()
    dropped = run("run", path, "-t", "time", "--bootstrap", "0", "--out", tmp_path / "d", "--drop-missing")
    assert dropped.exit_code == 0, dropped.output
    law = json.loads((tmp_path / "d" / "law.json").read_text())
    assert law["factors"] == ["p", "n"] and "dropped 1 row(s)" in " ".join(dropped.output.split())


def test_columns_left_out_as_non_numeric_are_named_before_the_search(tmp_path):
    rows = ["model,workers,n,time"] + [f"resnet,{p},{n},{2 + 0.01 * n / p}" for p in (1, 2, 4, 8, 16)
                                       for n in (1000, 4000, 16000)]
    path = write(tmp_path, "named.csv", "\n".join(rows) + "\n")
    # the search stops at its start (data-parallel needs a factor p): the note came before it
    result = run("run", path, "-t", "time", "-g", "data-parallel", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "--map p=workers" in " ".join(result.output.split())
    assert result.output.index("ignored non-numeric column(s) model") < result.output.index("needs factor 'p'")


@pytest.mark.parametrize("option, value, fragment", [
    ("--seed", "-1", "seed (--seed) must be a whole number from 0 to 4294967295, got -1"),
    ("--bootstrap", "-5", "resamples (--bootstrap) must be a whole number from 0 to 10000, got -5"),
    # a typo of a few zeros used to fill memory with resample draws (11 GB at 10**8)
    ("--bootstrap", "100000000", "resamples (--bootstrap) must be a whole number from 0 to 10000, got 100000000"),
    ("--jobs", "-2", "jobs (--jobs) must be a whole number 0 or more, got -2"),
    ("--strategy", "greedy", "strategy (--strategy) must be one of auto, exhaustive, got 'greedy'"),
])
def test_settings_out_of_range_stop_with_a_sentence_and_no_traceback(amdahl_csv, tmp_path, option, value, fragment):
    """In process (an exception other than the exit would be the runner's ``exception``); the
    first case also through a real process, whose stderr must hold no traceback."""
    args = ["run", str(amdahl_csv), "-t", "time", option, value, "--out", str(tmp_path / "o")]
    result = run(*args)
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert fragment in " ".join(result.output.split()) and not (tmp_path / "o").exists()
    if option == "--seed":
        done = subprocess.run([sys.executable, "-m", "exprsearch.cli", *args], capture_output=True, text=True)
        assert done.returncode == 2 and "Traceback" not in done.stderr + done.stdout
        assert fragment in " ".join((done.stderr + done.stdout).split())


def test_every_setting_is_checked_where_it_is_made():
    from exprsearch.errors import SettingsError
    from exprsearch.fit import FitSettings
    from exprsearch.search import SearchSettings

    for bad in ({"grid": 0}, {"regularization": -1.0}, {"regularization": 0.0}, {"regularization": float("nan")}, {"tol": 0.0},
                {"popsize": 0}, {"prune_margin": -0.1}, {"seed": 1.5}):
        with pytest.raises(SettingsError, match=next(iter(bad))):
            FitSettings(**bad)
    for bad in ({"resamples": -1}, {"time_limit": float("inf")}, {"validation": "holdout"}):
        with pytest.raises(SettingsError, match=next(iter(bad))):
            SearchSettings(**bad)
    with pytest.raises(SettingsError, match="grid"):
        SearchSettings().updated(grid=1)


def _slow_run(path, out, *extra):
    """A run long enough to be interrupted in its search (exhaustive default grammar, 3 factors, a
    robust loss: about 20 s here, where the squared loss now takes under 3 s)."""
    return subprocess.Popen([sys.executable, "-m", "exprsearch.cli", "run", str(path), "-t", "epoch_s", "--strategy",
                             "exhaustive", "--loss", "huber", "--jobs", "1", "--out", str(out), *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)


@pytest.mark.slow
@pytest.mark.parametrize("signum, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_an_interrupted_run_says_so_and_leaves_the_old_results_whole(tmp_path, signum, code, word):
    data = Path(__file__).resolve().parent.parent / "datasets" / "numpy_mlp_epochs.csv"
    first = subprocess.run([sys.executable, "-m", "exprsearch.cli", "run", str(data), "-t", "epoch_s", "--bootstrap",
                            "0", "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in (tmp_path / "o").iterdir()}
    running = _slow_run(data, tmp_path / "o", "--force")
    first_note = running.stderr.readline()  # past the imports, which a loaded machine makes slow
    assert first_note.startswith("note: ") and running.poll() is None, "the run ended before it could be interrupted"
    running.send_signal(signum)
    stdout, stderr = running.communicate(timeout=60)
    stderr = first_note + stderr
    assert running.returncode == code, stderr
    assert word in stderr and "Traceback" not in stderr + stdout
    assert {p.name: p.read_bytes() for p in (tmp_path / "o").iterdir()} == before  # no temporary left behind


@pytest.mark.slow
def test_the_process_pool_works_where_processes_are_spawned_not_forked(monkeypatch):
    import multiprocessing

    from exprsearch import search
    from tests.conftest import WORKERS, measurements

    module = importlib.import_module("exprsearch.refine")
    monkeypatch.setattr(module, "POOL_MINIMUM", 0.0)
    monkeypatch.setattr(module.multiprocessing, "get_all_start_methods", lambda: ["spawn"])  # as on Windows
    assert multiprocessing.get_all_start_methods() == ["spawn"]
    frame = measurements(lambda p, n: 1 + 1e-4 * n**1.5 / p + 0.2 * p**0.5, {"p": WORKERS, "n": (1000, 4000, 16000)})
    spawned = search(frame, "time", "data-parallel", jobs=2, resamples=0, prune_margin=None)
    alone = search(frame, "time", "data-parallel", jobs=1, resamples=0, prune_margin=None)
    assert spawned.refined >= 16 and spawned.law.to_json() == alone.law.to_json()


@pytest.mark.slow
def test_a_table_of_thousands_of_configurations_with_repetitions_gets_its_law(tmp_path):
    """10,000 rows over 3,330 configurations: the lack-of-fit test's thousands of degrees of
    freedom once stopped the run with a traceback (mpmath's series did not converge)."""
    rng = np.random.default_rng(0)
    p, n = (a.ravel() for a in np.meshgrid([1.0, 2, 4, 8, 16, 32], np.geomspace(1000, 64000, 555)))
    p, n = np.tile(p, 3)[:10_000], np.tile(n, 3)[:10_000]
    time_ = (2 + 0.01 * n / p + 0.15 * p) * (1 + 0.02 * rng.standard_normal(p.size))
    data = tmp_path / "big.csv"
    data.write_text("p,n,time\n" + "\n".join(f"{a},{b},{c}" for a, b, c in zip(p, n, time_)))
    result = run("run", data, "-t", "time", "--bootstrap", "0", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert str(load(tmp_path / "o" / "law.json").template) == "c0 + c1*p + c2*n/p"


def test_factors_named_like_constants_keep_their_names(tmp_path):
    """Extra-P's parameters are often a, b, c: the constants give way, not the data."""
    c, c1 = np.meshgrid([1.0, 2, 4, 8, 16], [1e3, 4e3, 16e3, 64e3])
    table = tmp_path / "named.csv"
    table.write_text("c,c1,time\n" + "".join(f"{p:g},{n:g},{2 + 0.001 * n / p:.9g}\n"
                                                for p, n in zip(c.ravel(), c1.ravel())))
    out = tmp_path / "out"
    result = run("run", table, "--target", "time", "--out", out)
    assert result.exit_code == 0, result.output
    record = json.loads((out / "law.json").read_text())
    assert record["factors"] == ["c", "c1"] and record["template"] == "cc0 + c1*cc1/c"
    module = law_module(out / "law.py", "named_law")
    points = {"c": np.array([1.0, 64.0]), "c1": np.array([1e3, 1e6])}
    np.testing.assert_allclose(module.predict(**points), 2 + 0.001 * points["c1"] / points["c"], rtol=1e-6)
    np.testing.assert_allclose(load(out / "law.json").predict(points), module.predict(**points), rtol=1e-9)
    explained = run("explain", out, "--vary", "c=1..1024", "--fix", "c1=1000000", "--json")
    assert explained.exit_code == 0, explained.output


def test_factors_named_like_python_builtins_give_a_working_law_py(tmp_path):
    """law.py's predict takes the factors as arguments: one named float must not shadow what
    the module needs (it used to end in 'Cannot interpret 2.0 as a data type')."""
    grid = [(p, n) for p in (1.0, 2, 4, 8, 16) for n in (1e3, 4e3, 16e3)]
    table = tmp_path / "builtins.csv"
    table.write_text("float,int,time\n" + "".join(f"{p:g},{n:g},{2 + 0.001 * n / p:.9g}\n" for p, n in grid))
    out = tmp_path / "out"
    result = run("run", table, "--target", "time", "--out", out)
    assert result.exit_code == 0, result.output
    module = law_module(out / "law.py", "builtin_named_law")
    np.testing.assert_allclose(module.predict(2.0, 1000.0), 2 + 0.001 * 1000 / 2, rtol=1e-6)


def test_factors_named_like_law_py_names_give_a_working_law_py(tmp_path):
    """Columns named numpy, predict and TARGET are searched as they are, and law.py renames its
    numpy import around them (they used to be refused with "rename the column")."""
    grid = [(p, n) for p in (1.0, 2, 4, 8, 16) for n in (1e3, 4e3, 16e3)]
    table = tmp_path / "names.csv"
    table.write_text("numpy,predict,TARGET\n" + "".join(
        f"{n:g},{p:g},{2 + 0.001 * n / p + 0.5 * np.log2(p):.9g}\n" for p, n in grid))
    out = tmp_path / "out"
    result = run("run", table, "--target", "TARGET", "--out", out)
    assert result.exit_code == 0, result.output
    source = (out / "law.py").read_text()
    assert "import numpy as numpy_" in source and "log" in source
    module = law_module(out / "law.py", "numpy_named_law")
    assert module.FACTORS == ("numpy", "predict") and module.TARGET == "TARGET"
    np.testing.assert_allclose(module.predict(numpy=64000.0, predict=256.0),
                               2 + 0.001 * 64000 / 256 + 0.5 * 8, rtol=1e-3)


@pytest.mark.parametrize("args", [
    ("run", "DATA", "--target", "time", "-t", "time"),
    ("run", "DATA", "--target=time", "--target=other"),
    ("explain", "LAW", "--vary", "p=1..64", "--vary", "n=64000"),
    ("grammar", "check", "default", "-t", "a", "--target", "b"),
])
def test_an_option_that_takes_one_value_given_twice_is_refused(tmp_path, args):
    """click keeps the last of a repeated one-value option silently; the user meant both."""
    result = run(*args)
    assert result.exit_code == 2
    assert "was given 2 times but takes one value" in result.output
    assert ("--target/-t" if "-t" in args else "--vary" if "--vary" in args else "--target") in result.output


@pytest.mark.parametrize("args", [
    ("predict", "LAW", "p=128,n=16000"),
    ("predict", "LAW", "--json", "p=128"),
    ("suggest", "DATA", "--target", "time", "p=512"),
    ("profile", "DATA", "--grammar", "pmnf", "p=64"),
])
def test_a_configuration_given_without_at_is_pointed_to_at(args):
    """click said only "unexpected extra argument"; the user meant a configuration."""
    result = run(*args)
    setting = args[-1]
    assert result.exit_code == 2 and f"give it with --at {setting}" in " ".join(result.output.split())


def test_repeatable_options_and_repeated_flags_are_not_refused(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("p,time\n" + "".join(f"{p},{2 + 10 / p:.6g}\n" for p in (1, 2, 4, 8, 16)))
    assert run("run", table, "--target", "time", "--out", tmp_path / "out").exit_code == 0
    result = run("predict", tmp_path / "out", "--at", "p=32", "--at", "p=64", "--json", "--json")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)["predictions"]) == 2


def test_law_json_keeps_what_reading_the_data_noticed(tmp_path):
    rows = [(p, (2 + 40 / p) * (5 if (p, r) == (8, 1) else 1 + 0.01 * r)) for p in (1, 2, 4, 8, 16, 32) for r in range(3)]
    path = write(tmp_path, "s.csv", "p,time\n" + "".join(f"{p},{t:.6g}\n" for p, t in rows))
    assert run("run", path, "-t", "time", "--out", tmp_path / "o", "--bootstrap", "0").exit_code == 0
    (note,) = json.loads((tmp_path / "o" / "law.json").read_text())["dataset"]["notes"]
    assert note.startswith("1 run(s) lie far above the other runs of their configuration: line 12")
    assert load(tmp_path / "o" / "law.json").dataset["notes"] == [note]
    clean = write(tmp_path, "c.csv", "p,time\n" + "".join(f"{p},{2 + 40 / p:.6g}\n" for p in (1, 2, 4, 8, 16)))
    assert run("run", clean, "-t", "time", "--out", tmp_path / "c", "--bootstrap", "0").exit_code == 0
    assert "notes" not in json.loads((tmp_path / "c" / "law.json").read_text())["dataset"]  # bytes as before


@pytest.mark.slow
def test_columns_named_as_people_name_them_work_from_run_to_optimize(tmp_path):
    """'num gpus' and 'batch size' are num_gpus and batch_size in the law; every command takes
    either name (they were refused with advice to rename the columns)."""
    rows = ["num gpus,batch size,time (s)"] + [f"{p},{b},{(1 + 0.3 * b / p) * (1 + 0.01 * ((p + b) % 3 - 1))}"
                                              for p in (1, 2, 4, 8, 16) for b in (16, 32, 64)]
    data = write(tmp_path, "spaced.csv", "\n".join(rows) + "\n")
    out = tmp_path / "o"
    made = run("run", data, "-t", "time (s)", "-g", "data-parallel", "--map", "p=num gpus",
               "--intrinsic", "batch size", "--bootstrap", "0", "--out", out)
    assert made.exit_code == 0, made.output
    text = " ".join(made.output.split())
    assert "column 'num gpus' is the factor num_gpus" in text and "batch_size/num_gpus" in text
    assert "not tested as levels" not in text
    at = run("predict", out, "--at", "num gpus=32,batch size=64", "--json")
    assert at.exit_code == 0, at.output
    assert json.loads(at.stdout)["predictions"][0]["num_gpus"] == 32
    configs = write(tmp_path, "configs.csv", "num gpus,batch size\n32,64\n")
    table = run("predict", out, "--data", configs, "--json")
    assert table.exit_code == 0, table.output
    assert json.loads(table.stdout)["predictions"][0] == json.loads(at.stdout)["predictions"][0]
    prices = write(tmp_path, "prices.csv", "num gpus,price\n" + "".join(f"{p},{p}\n" for p in (1, 2, 4, 8, 16)))
    cheapest = run("optimize", out, "--vary", "num gpus=1,2,4,8,16", "--fix", "batch size=64",
                   "--price-table", prices, "--json")
    assert cheapest.exit_code == 0 and json.loads(cheapest.stdout)["best"]["cost"] > 0, cheapest.output
    devices = run("optimize", out, "--vary", "num gpus=1..16", "--fix", "batch_size=64", "--price", "2",
                  "--devices", "num gpus", "--json")
    assert devices.exit_code == 0, devices.output
    plan = run("suggest", data, "-t", "time (s)", "--vary", "num gpus=1..32", "--vary", "batch size=16,32,64",
               "--at", "num gpus=32,batch size=64", "--devices", "num gpus", "--json")
    assert plan.exit_code == 0, plan.output
    assert set(json.loads(plan.stdout)["suggestions"][0]) >= {"num_gpus", "batch_size"}


def test_an_output_folder_that_cannot_be_written_is_refused_before_the_search(tmp_path, monkeypatch):
    rows = ["p,time"] + [f"{p},{2 + 40 / p}" for p in (1, 2, 4, 8)]
    path = write(tmp_path, "t.csv", "\n".join(rows) + "\n")
    (tmp_path / "afile").write_text("the user's own")
    under_a_file = run("run", path, "-t", "time", "--out", tmp_path / "afile" / "o")
    assert under_a_file.exit_code == 2 and "cannot write results to" in under_a_file.output
    assert "is a file); pass another --out" in " ".join(under_a_file.output.split())
    import sys

    monkeypatch.setattr(sys.modules["exprsearch.search"], "search", lambda *a, **k: pytest.fail("searched first"))
    forced = run("run", path, "-t", "time", "--out", tmp_path / "afile" / "o", "--force")
    assert forced.exit_code == 2 and "cannot write results to" in forced.output
    assert (tmp_path / "afile").read_text() == "the user's own"


def test_a_write_that_fails_is_one_sentence(tmp_path, monkeypatch):
    from exprsearch import export

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export.tempfile, "mkstemp", full)
    with pytest.raises(export.OutputError, match=r"could not write '.*law.json' \(No space left on device\); "
                                                 "nothing was replaced"):
        export.write_all({tmp_path / "law.json": "{}"})


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs a device file")
def test_a_path_that_is_no_regular_file_is_named_as_such(tmp_path):
    """/dev/null exists: it was reported as not existing, which sends the user to check a path
    that is right."""
    (tmp_path / "grammars").mkdir()
    for args, kind in [(("predict", "/dev/null", "--at", "p=1"), "law file '/dev/null' is not a regular file"),
                       (("run", "/dev/null", "-t", "time"), "data file '/dev/null' is not a regular file"),
                       (("grammar", "check", tmp_path / "grammars"), "is a folder; give the path of the file itself")]:
        result = run(*args)
        assert result.exit_code == 2 and kind in " ".join(result.output.split()), (args, result.output)


def test_a_missing_grammar_file_stops_run_before_the_data_are_read(tmp_path):
    """The grammar's mistake is named first: the data's notes (here a column left out) had come
    before it, after the table was read."""
    rows = ["model,p,time"] + [f"resnet,{p},{2 + 40 / p}" for p in (1, 2, 4, 8, 16)]
    path = write(tmp_path, "t.csv", "\n".join(rows) + "\n")
    result = run("run", path, "-t", "time", "--grammar", tmp_path / "nope.toml", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "grammar file" in result.output and "does not exist" in result.output
    assert "note:" not in result.output and not (tmp_path / "o").exists()


def test_a_missing_grammar_file_stops_suggest_before_its_notes(tmp_path):
    rows = ["p,n,time"] + [f"{p},{n},{2 + 0.01 * n / p}" for p in (1, 2, 4, 8) for n in (1000, 4000)]
    path = write(tmp_path, "t.csv", "\n".join(rows) + "\n")
    result = run("suggest", path, "-t", "time", "--vary", "p=1..16", "--at", "p=64,n=4000",
                 "--grammar", tmp_path / "nope.toml")
    assert result.exit_code == 2 and "grammar file" in result.output and "note:" not in result.output, result.output


@pytest.mark.parametrize("seed, said", [
    (0, "c0 fitted at 0, so the law leaves that term out, but its refits on resamples of the data put c0 up to 0.03"),
    (1, "the interval of c0 is wider than the value itself: the data barely determine the part of time no factor changes"),
])
def test_a_loose_constant_is_said_as_what_it_is(tmp_path, seed, said):
    """A constant the fit set to 0 was called wider than its value, and the one term no factor
    changes was to be pinned down by 'a wider range of its factor'."""
    from tests.conftest import WORKERS, measurements

    frame = measurements(lambda p, n: 0.01 * n / p + 0.3 * np.log2(p), {"p": WORKERS, "n": (1000, 4000, 16000)}, seed=seed)
    frame.to_csv(tmp_path / "t.csv", index=False)
    result = run("run", tmp_path / "t.csv", "-t", "time", "-g", "data-parallel", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert said in text and "range of its factor" not in text


def test_an_exponent_stopped_by_its_range_is_warned_of_and_recorded(tmp_path):
    grammar = write(tmp_path, "narrow.toml", '[constants]\nc = { min = 0, max = inf }\nk = { min = -1, max = 1 }\n'
                    '[rules]\nstart = "c + c*<factor>**k"\n')
    path = write(tmp_path, "t.csv", "p,time\n" + "".join(f"{p},{2 + 40 / p**2}\n" for p in (1, 2, 4, 8, 16, 32)))
    result = run("run", path, "-t", "time", "-g", grammar, "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "k0 = -1 stopped at the end of its range [-1, 1]" in " ".join(result.output.split())
    assert load(tmp_path / "o").search["at_limit"] == {"k0": [-1.0, 1.0]}
    free = run("run", path, "-t", "time", "--out", tmp_path / "free")
    assert free.exit_code == 0 and "stopped at the end" not in free.output
    assert "at_limit" not in load(tmp_path / "free").search


def test_a_factor_named_with_the_micro_sign_gets_its_law(tmp_path):
    data = tmp_path / "micro.csv"
    data.write_text("p\u00b5,time\n" + "".join(f"{p},{2 + 40 / p:.4f}\n" for p in (1, 2, 4, 8, 16, 32)), encoding="utf-8")
    result = run("run", data, "-t", "time", "--bootstrap", "0", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "column 'p\u00b5' is the factor p\u03bc" in " ".join(result.output.split())
    assert load(tmp_path / "o").factors == ("p\u03bc",)


def test_command_modules_keep_their_annotations_evaluated():
    """typer reads every command's annotations each time it builds the app (each CliRunner call,
    each process): as strings they cost 20 ms of eval a time (exprsearch/cli/__init__.py)."""
    folder = Path(__file__).resolve().parent.parent / "exprsearch" / "cli"
    deferred = [p.name for p in sorted(folder.glob("*.py")) if "\nfrom __future__ import annotations\n" in p.read_text()]
    assert not deferred


@pytest.mark.parametrize("width", [60, 70])
def test_a_split_table_s_title_and_caption_run_the_console_s_width(width, monkeypatch):
    """Split, the caption went under the last part, two columns wide, and wrapped there into five
    lines of explain's output (``* beyond the`` / ``measured workers`` / …); it reads as one line."""
    import io

    from rich.console import Console
    from rich.table import Table

    from exprsearch.cli import common, layout

    console = Console(width=width, file=io.StringIO(), color_system=None)
    monkeypatch.setattr(common, "out", console)
    caption = "* beyond the measured workers (1..8): the law extrapolated"
    table = Table("workers", "1/steps_per_sec_mean", "term 1", "term 2", "term 3", "dominant", "speedup",
                  "efficiency", title="Where the time goes; the terms are listed below", caption=caption)
    table.add_row("16 *", "0.03972", "0.000756", "0.00432", "0.0346", "term 3", "2.21", "13.8 %")
    console.print(layout.snug(table))
    lines = console.file.getvalue().splitlines()
    assert sum(line.startswith("workers") for line in lines) > 1  # split
    assert any(caption in line for line in lines) and lines[-1].strip() == caption
    assert any("Where the time goes; the terms are listed below" in line for line in lines[:2])
