"""Command line: ``exprsearch run``, ``exprsearch grammar …``. Thin: parse, call, print."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from . import __version__, export
from . import candidates as _candidates
from . import grammar as _grammar
from .errors import ExprsearchError
from .search import Result, search

app = typer.Typer(
    help="Discover interpretable closed-form performance laws from measurements.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
)
grammar_app = typer.Typer(help="List, show and check grammar files.", no_args_is_help=True)
app.add_typer(grammar_app, name="grammar")
out = Console()
err = Console(stderr=True)
T = TypeVar("T")


def _guard(action: Callable[[], T]) -> T:
    """Run ``action``; turn the library's errors into one sentence on stderr and exit code 2."""
    try:
        return action()
    except ExprsearchError as exc:
        _error(str(exc))
        raise typer.Exit(2) from None


def _error(message: str) -> None:
    err.print(Text("error: ", style="bold red") + Text(message), highlight=False, soft_wrap=True)


def _version(value: bool) -> None:
    if value:
        out.print(f"exprsearch {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Discover interpretable closed-form performance laws from measurements."""


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, sep, column = value.partition("=")
        if not sep or not name or not column:
            _error(f"{option} takes NAME=COLUMN, got '{value}'")
            raise typer.Exit(2)
        pairs[name.strip()] = column.strip()
    return pairs


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


@app.command()
def run(
    data: Annotated[Path, typer.Argument(help="Measurements: CSV, TSV, Parquet or JSON table.")],
    target: Annotated[str, typer.Option("--target", "-t", help="Column with the measured time.")],
    factors: Annotated[str | None, typer.Option(help="Comma-separated factor columns (default: the other numeric columns).")] = None,
    grammar: Annotated[str, typer.Option("--grammar", "-g", help="Built-in grammar name or grammar file.")] = "default",
    map_: Annotated[list[str], typer.Option("--map", help="Bind grammar factor to a column: p=gpus (repeatable).")] = [],  # noqa: B006
    intrinsic: Annotated[str | None, typer.Option(help="Comma-separated factors that are intrinsic (layers, parameters).")] = None,
    seed: Annotated[int, typer.Option(help="Seed for differential evolution and folds.")] = 0,
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", help="Output directory (default: exprsearch-out/<data stem>).")] = None,
    force: Annotated[bool, typer.Option(help="Replace result files already in the output directory.")] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print law.json to stdout instead of tables.")] = False,
    drop_missing: Annotated[bool, typer.Option(help="Drop rows with missing values instead of stopping.")] = False,
) -> None:
    """Search the grammar's laws for the one that explains TARGET, and write it to --out."""
    from .data import load_table

    directory = out_dir or Path("exprsearch-out") / data.stem
    mapping = _pairs(map_, "--map")

    def work() -> Result:
        if not force:
            export.check_free(directory)
        dataset = load_table(data, target, _split(factors), drop_missing=drop_missing)
        with _progress(quiet=json_) as bar:
            task = bar.add_task("fitting candidates", total=None)
            result = search(
                dataset, grammar=grammar, mapping=mapping, intrinsic=tuple(_split(intrinsic) or ()),
                seed=seed, progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
        export.write(result.law, result.ranking, directory, overwrite=force)
        return result

    result = _guard(work)
    if json_:
        sys.stdout.write(result.law.to_json())
        return
    _report(result, directory)


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True, disable=quiet,
    )


def _report(result: Result, directory: Path) -> None:
    for note in result.notes:
        err.print(Text("note: ", style="yellow") + Text(note), highlight=False)
    found = result.candidates
    skipped = ", ".join(f"{n} {r}" for r, n in sorted(result.rejected.items()))
    out.print(
        f"grammar [bold]{result.grammar.name}[/]: {found.generated} expansions, "
        f"{len(found)} unique candidates, {result.fitted} fitted"
        + (f" (rejected: {skipped})" if skipped else ""), highlight=False,
    )
    table = Table(title="Pareto front (error vs complexity)", title_justify="left")
    for column in ("", "complexity", "constants", "MAPE %", "CV MAPE %", "R²", "law"):
        table.add_column(column, justify="left" if column in ("", "law") else "right")
    for i, s in enumerate(result.ranking.front):
        mark = "→" if i == result.ranking.chosen else ""
        table.add_row(mark, str(s.complexity), str(s.n_constants), f"{s.mape:.3g}", f"{s.cv_mape:.3g}",
                      f"{s.r2:.4f}", str(s.fit.candidate.template))
    out.print(table)
    law = result.law
    noise = law.metrics.get("noise_sd_pct")
    out.print(f"[bold]{law.target} = {export.rounded_text(law)}[/]", highlight=False)
    out.print(
        f"MAPE {law.metrics['mape_pct']:.3g} %, cross-validated {law.metrics['cv_mape_pct']:.3g} %, "
        f"R² {law.metrics['r2']:.4f}"
        + (f", measured noise {noise:.3g} %" if noise is not None else "")
        + f"; chosen by {law.selection}.", highlight=False,
    )
    out.print(f"wrote {', '.join(export.FILES)} to {directory}", highlight=False)


@grammar_app.command("list")
def grammar_list() -> None:
    """List the built-in grammars."""
    table = Table("name", "about")
    for name in _grammar.builtin_names():
        g = _grammar.load(name)
        table.add_row(name, " ".join(g.description.split())[:110])
    out.print(table)


@grammar_app.command("show")
def grammar_show(name: Annotated[str, typer.Argument(help="Built-in grammar name or file.")]) -> None:
    """Print a grammar file."""
    out.print(_guard(lambda: _grammar.source_text(name)), highlight=False, markup=False)


@grammar_app.command("check")
def grammar_check(
    file: Annotated[str, typer.Argument(help="Grammar file (or built-in name) to validate.")],
    data: Annotated[Path | None, typer.Option(help="Count candidates for this dataset's factors.")] = None,
    target: Annotated[str | None, typer.Option("--target", "-t", help="Target column of --data.")] = None,
    intrinsic: Annotated[str | None, typer.Option(help="Comma-separated intrinsic factors.")] = None,
) -> None:
    """Validate a grammar; print its factors, rules and how many candidates it expands to."""
    from .data import load_table

    def work() -> tuple[_grammar.Grammar, _candidates.CandidateSet, tuple[str, ...]]:
        g = _grammar.load(file)
        if data is not None:
            if target is None:
                raise typer.BadParameter("--data needs --target")
            columns = load_table(data, target).factors
        else:
            columns = tuple(f.name for f in g.factors) or ("x1", "x2")
            if g.factors and _grammar.uses_free_factors(g):
                columns += ("x1",)
        bound = _grammar.bind(g, columns, intrinsic=tuple(_split(intrinsic) or ()))
        return g, _candidates.generate(bound), columns

    g, found, columns = _guard(work)
    out.print(f"{g.source} is valid.", highlight=False)
    for f in g.factors:
        out.print(f"  factor {f.name}: {f.role}{' — ' + f.about if f.about else ''}", highlight=False)
    for c in g.constants:
        out.print(f"  constant {c.name} in [{c.min:g}, {c.max:g}]{' — ' + c.about if c.about else ''}",
                  highlight=False)
    for rule, alts in g.rules.items():
        out.print(f"  <{rule}> ::= " + " | ".join(a.text for a in alts), highlight=False, markup=False)
    dropped = "".join(f"; dropped {n} {r}" for r, n in found.dropped.items())
    source = f"the factors of {data}" if data else f"factors {', '.join(columns)}"
    out.print(f"expands to {len(found)} unique candidates for {source} ({found.generated} expansions{dropped})",
              highlight=False)


if __name__ == "__main__":  # pragma: no cover
    app()
