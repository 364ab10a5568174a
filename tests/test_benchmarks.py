"""The benchmarks (benchmarks/*.py) hold the project's speed and accuracy targets, yet no test runs
them whole (they take minutes to hours). Each script must at least import and answer ``--help``:
a change to the library or to a module the scripts share that breaks one shows here, not the next
time someone measures with it."""

import runpy
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.stem for p in BENCHMARKS.glob("*.py") if 'if __name__ == "__main__":' in p.read_text())


@pytest.fixture
def benchmarks_importable(monkeypatch):
    """The benchmarks' folder first on the path, as when a script runs, and every module imported
    from it forgotten afterwards: its names (``profile``, ``speed``, ``suggest``) would otherwise
    shadow the standard library's and the tests' own for the rest of the session."""
    before = set(sys.modules)
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    yield
    for name in set(sys.modules) - before:
        if str(BENCHMARKS) in str(getattr(sys.modules[name], "__file__", "") or ""):
            del sys.modules[name]


def test_there_are_scripts_to_check():
    assert {"multifactor", "suggest", "speed", "random_laws", "accuracy"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_benchmark_imports_and_answers_help(name, benchmarks_importable, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
    with pytest.raises(SystemExit) as stopped:
        runpy.run_path(str(BENCHMARKS / f"{name}.py"), run_name="__main__")
    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith("usage:")
