"""The README's and docs' examples run as tests, so the documentation cannot drift from the code."""

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from exprsearch import grammar
from exprsearch.cli import app
from tests.conftest import PLOT_EXTRA

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md"))
# Tutorials of several searches each (1.5-5 s): run in the slow step, beside the other integration tests.
LONG_TUTORIALS = {"where-scaling-stops.md", "generic-model-frameworks.md", "scalability-optimiser.md",
                  "hybrid-parallel-split.md", "from-a-training-log.md"}
SHARED = ROOT.parent / "shared"


def blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), flags=re.S)


def test_the_long_tutorials_named_are_tutorials():
    assert LONG_TUTORIALS <= {t.name for t in TUTORIALS}  # a renamed one would otherwise not run in either step


@pytest.mark.slow  # 1.5-4.7 s: an integration test, run in CI's second step
def test_readme_commands_run_as_written(tmp_path, monkeypatch):
    commands = [line[2:] for block in blocks(ROOT / "README.md", "console")
                for line in block.splitlines() if line.startswith("$ exprsearch ")]
    # The Extra-P example names the user's own file; run it on one this test writes.
    from tests.test_extrap import write_text_file

    write_text_file(tmp_path / "kernels.txt")
    assert commands
    monkeypatch.chdir(tmp_path)
    (tmp_path / "datasets").symlink_to(ROOT / "datasets")
    law_line = next(line for line in blocks(ROOT / "README.md", "console")[0].splitlines()
                    if line.startswith("epoch_s = "))
    outputs = []
    for command in commands:  # in README order: the first writes the law the others read
        result = CliRunner().invoke(app, shlex.split(command)[1:])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    assert law_line in outputs[0]  # the README shows the law this code finds
    flat = " ".join(outputs[0].replace("│", " ").split())  # rich wraps table cells at the runner's width
    levels = blocks(ROOT / "README.md", "console")[0].split("Constants per value of")[1].split("└")[0]
    rows = [line for line in levels.splitlines() if line.startswith("│ ")]
    assert rows and all(" ".join(row.replace("│", " ").split()) in flat for row in rows)  # the per-value laws shown
    notes = blocks(ROOT / "README.md", "console")[0].split("note: the space holds")[1].split("Pareto front")[0]
    assert "note: the space holds " + " ".join(notes.split()) in flat  # the screening and the counts, as printed
    prose = " ".join((ROOT / "README.md").read_text().split())
    chosen, rejected = re.search(r"chose which (\d+) to fit .*?, and (\d+) of those were rejected", prose).groups()
    assert f"{chosen} unique candidates" in flat
    about, space = re.search(r"space holds about (\d\.\d)·10⁸ laws", prose).group(1), re.search(r"holds ([\d,]+) laws", flat).group(1)
    assert float(about) == round(int(space.replace(",", "")) / 1e8, 1)
    assert int(rejected) == sum(map(int, re.findall(r"(\d+) more shapes of", flat.split("(rejected:")[1].split("Pareto")[0])))
    shown = blocks(ROOT / "README.md", "text")[0].split("┘")[-1]  # the sentences under the table
    assert any(" ".join(shown.split()) in " ".join(o.split()) for o in outputs)  # as explain prints them


def test_readme_setup_commands_name_the_bundled_dataset():
    setup = blocks(ROOT / "README.md", "bash")
    assert any("exprsearch run datasets/" in b for b in setup) and any("pytest" in b for b in setup)
    for block in setup:
        for path in re.findall(r"datasets/\S+", block):
            assert (ROOT / path).is_file()


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_python_examples_run(path):
    for code in blocks(path, "python"):
        exec(compile(code, str(path), "exec"), {})


def draws(path: Path) -> bool:
    """Whether a page's commands draw figures (plot, --plot), which need the plot extra."""
    return bool(re.search(r"^\$ exprsearch (plot\b|.*--plot\b)", path.read_text(), flags=re.M))


@pytest.mark.parametrize("path", [pytest.param(t, marks=[mark for mark, applies in ((pytest.mark.slow, t.name in LONG_TUTORIALS),
                                                                                     (pytest.mark.plot, draws(t))) if applies])
                                  for t in TUTORIALS], ids=lambda p: p.name)
def test_tutorials_run_as_written(path, tmp_path, monkeypatch):
    """Each tutorial's code, then its commands, in a fresh directory laid out like the project
    (datasets/ inside, ../shared beside it), so files the code writes are there for the commands."""
    if draws(path):
        pytest.importorskip("matplotlib", reason=PLOT_EXTRA)
    if "../shared" in path.read_text() and not SHARED.is_dir():
        pytest.skip("../shared/datasets is not beside the project")
    project = tmp_path / "project"
    project.mkdir()
    (project / "datasets").symlink_to(ROOT / "datasets")
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED)
    monkeypatch.chdir(project)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for code in blocks(path, "python"):
            exec(compile(code, str(path), "exec"), {})
    commands = [line[2:] for block in blocks(path, "console") for line in block.splitlines()
                if line.startswith("$ exprsearch ")]
    assert commands
    for command in commands:
        result = CliRunner().invoke(app, shlex.split(command)[1:])
        assert result.exit_code == 0, (command, result.output)
        printed.write(result.output)
    flat = " ".join(printed.getvalue().split())
    for shown in blocks(path, "text"):  # what the page says the code and the commands print, line by line
        for line in shown.splitlines():
            assert " ".join(line.split()) in flat, (path.name, line)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_grammar_examples_are_valid(path, tmp_path):
    for i, text in enumerate(blocks(path, "toml")):
        if "# invalid" in text:
            continue
        parsed = grammar.parse_text(text, f"{path.name} example {i}")
        columns = tuple(f.name for f in parsed.factors) + ("n",)
        from exprsearch import candidates
        assert len(candidates.generate(grammar.bind(parsed, columns))) > 0
