"""Command line: ``exprsearch run``, ``exprsearch grammar …``. Thin: parse, call, print."""

from __future__ import annotations

import csv
import io
import re
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table
from rich.text import Text

from . import __version__, export
from . import candidates as _candidates
from . import grammar as _grammar
from .cli_profile import profile
from .cli_suggest import suggest
from .errors import ExprsearchError
from .fit import FitSettings
from .search import Result, SearchSettings, search

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
    data: Annotated[Path, typer.Argument(help="Measurements: a CSV/TSV/Parquet/JSON table or an Extra-P file (text, JSON, JSON Lines, Talpas, .extra-p).")],
    target: Annotated[str | None, typer.Option("--target", "-t", help="Column with the measured time (Extra-P files: CALLPATH:METRIC, default all).")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="table, extrap-text, extrap-json, extrap-jsonl, talpas, extrap-experiment or cube (a directory of CUBE runs; default: detected).")] = None,
    factors: Annotated[str | None, typer.Option(help="Comma-separated factor columns (default: the other numeric columns).")] = None,
    grammar: Annotated[str, typer.Option("--grammar", "-g", help="Built-in grammar name or grammar file.")] = "default",
    map_: Annotated[list[str], typer.Option("--map", help="Bind grammar factor to a column: p=gpus (repeatable).")] = [],  # noqa: B006
    intrinsic: Annotated[str | None, typer.Option(help="Comma-separated factors that are intrinsic (layers, parameters).")] = None,
    seed: Annotated[int, typer.Option(help="Seed for differential evolution and folds.")] = 0,
    jobs: Annotated[int, typer.Option(help="Processes refining candidates (0: one per core); the law does not depend on it.")] = 0,
    time_limit: Annotated[float | None, typer.Option(help="Seconds: stop refining when they run out and keep the best law found so far.")] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for the law's intervals (0: none).")] = 200,
    loss: Annotated[str, typer.Option(help="squared, or huber / absolute to resist outliers (warm-up rows, failed runs).")] = "squared",
    validation: Annotated[str, typer.Option(help="largest: prefer laws that predict the held-out largest configurations; kfold: 5-fold CV.")] = "largest",
    strategy: Annotated[str, typer.Option(help="auto: the data choose what to fit where the grammar's space is larger than its limits; exhaustive: fit up to the limits and report what they cut.")] = "auto",
    by: Annotated[str | None, typer.Option(help="Fit one law per value of this column (framework, gpu, model).")] = None,
    shared_form: Annotated[bool, typer.Option(help="With --by: also fit one form shared by all groups, constants per group.")] = False,
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", help="Output directory (default: exprsearch-out/<data stem>).")] = None,
    force: Annotated[bool, typer.Option(help="Replace result files already in the output directory.")] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print law.json to stdout instead of tables.")] = False,
    drop_missing: Annotated[bool, typer.Option(help="Drop rows with missing values instead of stopping.")] = False,
    plot: Annotated[bool, typer.Option("--plot", help="Also write PNG figures (needs matplotlib).")] = False,
    report: Annotated[bool, typer.Option("--report", help="Also write report.html (figures need matplotlib).")] = False,
) -> None:
    """Search the grammar's laws for the one that explains TARGET, and write it to --out."""
    directory = out_dir or Path("exprsearch-out") / data.stem
    mapping = _pairs(map_, "--map")
    names = export.FILES + (export.FIGURES if plot or report else ()) + ((export.REPORT,) if report else ())

    def work() -> list[Result]:
        if plot:
            from .plot import require_matplotlib

            require_matplotlib()  # fail before the search, not after it
        datasets = _datasets(data, target, factors, fmt, drop_missing, by)
        where = {name: directory / _folder(name) if len(datasets) > 1 else directory for name in datasets}
        if not force:
            for folder in where.values():
                export.check_free(folder, names)
        settings = SearchSettings(FitSettings(seed=seed, loss=loss), validation, bootstrap, jobs, time_limit, strategy)
        for dataset in datasets.values():  # what was left out of the data is said before the search
            for note in dataset.notes:
                err.print(Text("note: ", style="yellow") + Text(note), highlight=False)
        results = []
        for name, dataset in datasets.items():
            with _progress(quiet=json_) as bar:
                task = bar.add_task(f"fitting {name or 'candidates'}", total=None)
                result = search(
                    dataset, grammar=grammar, mapping=mapping, intrinsic=tuple(_split(intrinsic) or ()),
                    settings=settings, progress=lambda done, total, bar=bar, task=task: bar.update(task, completed=done, total=total),
                )
            export.write(result.law, result.ranking, where[name], overwrite=force)
            if plot or report:
                _figures_and_report(result, where[name], plot, report)
            results.append((name, where[name], result))
        shared = _shared(results, directory, force, settings.fit) if shared_form and len(results) > 1 else None
        return results, shared

    results, shared = _guard(work)
    if json_:
        if len(results) == 1:
            sys.stdout.write(results[0][2].law.to_json())
        else:
            import json

            laws = {name: result.law.to_dict() for name, _, result in results}
            sys.stdout.write(json.dumps(laws, indent=2) + "\n")
        return
    for name, folder, result in results:
        if len(results) > 1:
            out.rule(name)
        _report(result, folder)
    if len(results) > 1:
        table = Table("series", Column("law", overflow="fold"), "MAPE %", "held-out %", title="Side by side",
                      title_justify="left")
        for name, _, result in results:
            held = result.law.metrics.get("holdout_mape_pct")
            table.add_row(name, export.rounded_text(result.law), f"{result.law.metrics['mape_pct']:.3g}",
                          "" if held is None else f"{held:.3g}")
        out.print(table)
    if shared is not None:
        _print_shared(shared)


def _shared(results, directory: Path, force: bool, settings: FitSettings):
    """One form for all groups (lowest summed BIC among the groups' own laws), written to shared.json."""
    import json

    from .groups import shared_form

    groups = {name: result.dataset for name, _, result in results}
    forms = [result.ranking.law.fit.candidate for _, _, result in results]
    shared = shared_form(groups, forms, settings)
    if shared is None:
        err.print(Text("note: ", style="yellow") + Text("no single form fits every group"), highlight=False)
        return None
    path = directory / "shared.json"
    if path.exists() and not force:
        export.check_free(directory, ("shared.json",))
    export.write_all({path: json.dumps(shared.to_dict(), indent=2) + "\n"})
    return shared


def _print_shared(shared) -> None:
    from .groups import rounded

    table = Table("group", Column(f"shared form {shared.candidate.template}", overflow="fold"), "MSE (relative)",
                  title=f"One form for all groups (lowest summed BIC of {len(shared.considered)} forms)",
                  title_justify="left")
    for name, fitted in shared.fits.items():
        table.add_row(name, rounded(fitted), f"{fitted.mse:.3g}")
    out.print(table)

def _folder(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "series"


def _datasets(data: Path, target: str | None, factors: str | None, fmt: str | None, drop_missing: bool,
              by: str | None = None):
    """The series to fit: one table column (per --by group), or an Extra-P file's CALLPATH:METRICs."""
    from .data import DataError, load_groups, load_table, read_table
    from .readers import detect_format, load_series

    fmt = fmt or detect_format(data)
    if fmt == "table":
        if target is None:
            columns = ", ".join(str(c) for c in read_table(data).columns)
            raise DataError(f"pass --target COLUMN, the measured time; the columns of '{data}' are {columns}")
        if by is not None:
            return load_groups(data, target, by, _split(factors), drop_missing=drop_missing)
        return {"": load_table(data, target, _split(factors), drop_missing=drop_missing)}
    if by is not None:
        raise DataError("--by groups the rows of a table; an Extra-P file is already split into series")
    return load_series(data, fmt, target)


def _figures_and_report(result: Result, directory: Path, plot: bool, report: bool) -> None:
    from . import plot as plots
    from .explain import explain
    from .report import html_page

    front_csv = export.front_csv(result.ranking)
    rows = list(csv.DictReader(io.StringIO(front_csv)))
    figures: list[Path] = []
    notes = []
    try:
        figures = plots.all_figures(result.law, directory, result.dataset, rows)
    except plots.PlotError as exc:
        if plot:
            raise
        notes.append(f"no figures: {exc}")
    if report:
        factor, values, fixed = plots.default_view(result.law, result.dataset)
        explanation = explain(result.law, factor, values, fixed)
        export.write_all({directory / export.REPORT: html_page(result.law, front_csv, explanation, figures, notes)})


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True, disable=quiet,
    )


def _report(result: Result, directory: Path) -> None:
    for note in result.notes:
        if note not in result.dataset.notes:  # those were printed before the search
            err.print(Text("note: ", style="yellow") + Text(note), highlight=False)
    found = result.candidates
    skipped = ", ".join(f"{n} {r}" for r, n in sorted(result.rejected.items()))
    out.print(
        f"grammar [bold]{result.grammar.name}[/]: {found.generated} expansions, "
        f"{len(found)} unique candidates, {result.fitted} fitted, {result.refined} refined by differential evolution"
        + (f" (rejected: {skipped})" if skipped else ""), highlight=False,
    )
    table = Table(title="Pareto front (error vs complexity); its laws are listed below", title_justify="left")
    for column in ("#", "complexity", "constants", "MAPE %", "CV MAPE %", "held-out %", "R²"):
        # folded onto more lines when the terminal is narrow, never cut
        table.add_column(column, justify="left" if column == "#" else "right", overflow="fold")
    laws = []
    for i, s in enumerate(result.ranking.front, start=1):
        mark = "→" if i - 1 == result.ranking.chosen else " "
        held = "" if s.holdout_mape is None else f"{s.holdout_mape:.3g}"
        table.add_row(f"{mark}{i}", str(s.complexity), str(s.n_constants), f"{s.mape:.3g}", f"{s.cv_mape:.3g}", held,
                      f"{s.r2:.4f}")
        laws.append(f"{mark}{i:>3}  {s.fit.candidate.template}")
    out.print(table)
    for line in laws:  # whole, one per line: a narrow terminal wraps them, a pipe gets them as they are
        out.print(line, highlight=False, soft_wrap=True, markup=False)
    law = result.law
    noise = law.metrics.get("noise_sd_pct")
    out.print(f"[bold]{law.target} = {export.rounded_text(law)}[/]", highlight=False, soft_wrap=True)  # never cut
    out.print(
        f"MAPE {law.metrics['mape_pct']:.3g} %, cross-validated {law.metrics['cv_mape_pct']:.3g} %, "
        f"R² {law.metrics['r2']:.4f}"
        + (f", measured noise {noise:.3g} %" if noise is not None else "")
        + f"; chosen by {law.selection}.", highlight=False,
    )
    if law.intervals:
        spans = ", ".join(f"{k} = {law.constants[k]:.4g} [{lo:.4g}, {hi:.4g}]" for k, (lo, hi) in law.intervals.items())
        out.print(f"95 % bootstrap intervals ({len(law.bootstrap)} resamples): {spans}", highlight=False)
        wide = [k for k, (lo, hi) in law.intervals.items() if hi - lo > abs(law.constants[k])]
        if wide:
            err.print(Text("warning: ", style="yellow") + Text(
                f"the interval of {', '.join(wide)} is wider than the value itself: the data barely "
                "determine that term; measure a wider range of its factor"), highlight=False)
    out.print(f"wrote {', '.join(export.FILES)} to {directory}", highlight=False)


def _law(path: Path):
    from .law import load

    return load(path)


def _fixed(specs: list[str]) -> dict[str, float]:
    from .configs import ConfigError, parse_assignments

    fixed = {}
    for name, value in parse_assignments(specs, "--fix").items():
        try:
            fixed[name] = float(value)
        except ValueError:
            raise ConfigError(f"--fix {name}={value}: give one number") from None
    return fixed


def _varied(specs: list[str]) -> dict:
    from .configs import parse_assignments, parse_values

    return {name: parse_values(value, name) for name, value in parse_assignments(specs, "--vary").items()}


def _far_outside(law, name: str, values) -> str | None:
    low, high = law.domain.get(name, [None, None])
    if low is None:
        return None
    worst = max(values, key=lambda v: max(v / high if high > 0 else 0, low / v if v > 0 and low > 0 else 0))
    if high > 0 and worst > 2 * high:
        return f"{name} = {worst:g} is {worst / high:.3g}× the largest measured {name} ({high:g}): extrapolating"
    if worst > 0 and low > 0 and worst < low / 2:
        return f"{name} = {worst:g} is below half the smallest measured {name} ({low:g}): extrapolating"
    return None


@app.command()
def predict(
    law_file: Annotated[Path, typer.Argument(metavar="LAW.json", help="A law.json written by run.")],
    at: Annotated[list[str], typer.Option("--at", help="A configuration: p=128,n=16000 (repeatable).")] = [],  # noqa: B006
    data: Annotated[Path | None, typer.Option(help="A table of configurations (columns named as the factors).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Predict the target at configurations, warning when far outside the measured range."""
    import json

    import pandas as pd

    from .configs import ConfigError, check_factors, parse_point

    def work():
        law = _law(law_file)
        if data is not None:
            from .data import read_table

            frame = read_table(data)
        elif at:
            frame = pd.DataFrame([parse_point(spec, "--at") for spec in at])
        else:
            raise ConfigError("give configurations with --at p=128,n=16000 or --data FILE")
        if data is None:
            check_factors(list(frame.columns), law.factors, "--at")
        missing = [f for f in law.factors if f not in frame.columns]
        if missing:
            raise ConfigError(f"give factor '{missing[0]}' a value in every configuration")
        frame = frame.copy()
        columns = {f: frame[f].to_numpy(dtype=float) for f in law.factors}
        frame[law.target] = law.predict(columns)
        warnings = [w for f in law.factors if (w := _far_outside(law, f, columns[f]))]
        if law.bootstrap:
            frame["low_95"], frame["high_95"] = law.predict_interval(columns)
            width = (frame["high_95"] - frame["low_95"]) / frame[law.target]
            if (width > 0.5).any():
                warnings.append(f"the 95 % prediction interval is wider than half the prediction at "
                                f"{int((width > 0.5).sum())} configuration(s)")
        return law, frame, warnings

    law, frame, warnings = _guard(work)
    if json_:
        sys.stdout.write(json.dumps({"predictions": frame.to_dict(orient="records"), "warnings": warnings}, indent=2) + "\n")
        return
    for w in warnings:
        err.print(Text("warning: ", style="yellow") + Text(w), highlight=False)
    extra = ["low_95", "high_95"] if "low_95" in frame else []
    table = Table(*[*law.factors, law.target, *extra])
    for _, row in frame.iterrows():
        table.add_row(*[f"{row[f]:g}" for f in law.factors], *[f"{row[c]:.6g}" for c in (law.target, *extra)])
    out.print(table)


@app.command("explain")
def explain_command(
    law_file: Annotated[Path, typer.Argument(metavar="LAW.json", help="A law.json written by run.")],
    vary: Annotated[str, typer.Option(help="The factor and its range: p=1..1024.")],
    fix: Annotated[list[str], typer.Option(help="Other factors' values: n=16000 (repeatable).")] = [],  # noqa: B006
    threshold: Annotated[float, typer.Option(help="Doubling the factor must save at least this share of time.")] = 0.05,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Each term's contribution along a factor, speedup, efficiency and the scalability limit."""
    import json

    from .explain import explain

    def work():
        law = _law(law_file)
        (factor, values), = _varied([vary]).items()
        return law, explain(law, factor, values, _fixed(fix), threshold)

    law, e = _guard(work)
    if json_:
        limit = None if e.limit is None else e.limit.__dict__
        record = {"factor": e.factor, "fixed": e.fixed, "values": e.values.tolist(), "time": e.total.tolist(),
                  "terms": [{"rule": lab, "term": t, "contribution": c.tolist()}
                            for lab, t, c in zip(e.labels, e.terms, e.contributions)],
                  "speedup": e.speedup.tolist(), "efficiency": e.efficiency.tolist(), "limit": limit,
                  "summary": list(e.sentences)}
        sys.stdout.write(json.dumps(record, indent=2) + "\n")
        return
    names = [f"term {k}" for k in range(1, len(e.terms) + 1)]
    table = Table(e.factor, law.target, *names, "dominant", "speedup", "efficiency", box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False, show_edge=False,
                  title="Where the time goes; the terms are listed below", title_justify="left")
    for column in table.columns:
        column.overflow = "fold"  # never cut
    dominant = e.dominant()
    for i in _shown(e.values):
        table.add_row(f"{e.values[i]:g}", f"{e.total[i]:.4g}", *[f"{c[i]:.3g}" for c in e.contributions],
                      names[dominant[i]], f"{e.speedup[i]:.3g}", f"{100 * e.efficiency[i]:.3g} %")
    out.print(table)
    for name, label, term in zip(names, e.labels, e.terms):
        out.print(f"{name}: {term} ({label})", highlight=False, soft_wrap=True, markup=False)
    for sentence in e.sentences:
        out.print(sentence, highlight=False)


def _shown(values) -> list[int]:
    """At most ~16 rows: powers of two where the values hold them, else evenly spread."""
    import numpy as np

    if len(values) <= 16:
        return list(range(len(values)))
    powers = [i for i, v in enumerate(values) if v > 0 and float(np.log2(v)).is_integer()]
    if 4 <= len(powers) <= 24:
        return powers
    return sorted(set(np.linspace(0, len(values) - 1, 16).round().astype(int).tolist()))


@app.command("optimize")
def optimize_command(
    law_file: Annotated[Path, typer.Argument(metavar="LAW.json", help="A law.json written by run.")],
    vary: Annotated[list[str], typer.Option(help="A factor to search: p=1..512 or b=32,64,128 (repeatable).")] = [],  # noqa: B006
    fix: Annotated[list[str], typer.Option(help="A factor held fixed: n=1281167 (repeatable).")] = [],  # noqa: B006
    where: Annotated[list[str], typer.Option(help="A constraint: 'p*b <= 65536' (repeatable).")] = [],  # noqa: B006
    price: Annotated[float | None, typer.Option(help="Price per device-hour (or per hour without --devices).")] = None,
    devices: Annotated[str | None, typer.Option(help="Factor that counts the devices paid for, e.g. p.")] = None,
    price_table: Annotated[Path | None, typer.Option(help="CSV: factor columns and a 'price' column per hour.")] = None,
    budget: Annotated[float | None, typer.Option(help="Largest acceptable predicted time, in the target's unit.")] = None,
    time_unit: Annotated[str, typer.Option(help="Unit of the target: s, min or h (for cost).")] = "s",
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """The fastest configuration, or the cheapest within --budget, and the time/cost Pareto set."""
    import json

    import pandas as pd

    from .configs import ConfigError
    from .optimize import Pricing, optimize

    def work():
        law = _law(law_file)
        table = None
        if price_table is not None:
            if not price_table.is_file():
                raise ConfigError(f"--price-table '{price_table}' does not exist")
            table = pd.read_csv(price_table)
        pricing = Pricing(price, devices, table, time_unit) if (price is not None or table is not None) else None
        if devices is not None and pricing is None:
            raise ConfigError("--devices needs --price or --price-table")
        return law, optimize(law, _varied(vary), _fixed(fix), where, pricing, budget)

    law, o = _guard(work)
    if json_:
        record = {"objective": o.objective, "best": o.best.__dict__, "considered": o.considered,
                  "feasible": o.feasible, "pareto": [c.__dict__ for c in o.pareto]}
        sys.stdout.write(json.dumps(record, indent=2) + "\n")
        return
    best = o.best
    config = ", ".join(f"{k} = {v:g}" for k, v in best.config.items())
    cost = "" if best.cost is None else f", cost {best.cost:.4g}"
    what = "cheapest" if o.objective == "cost" else "fastest"
    out.print(f"{what} of {o.feasible} feasible configurations (of {o.considered}): {config} → "
              f"{law.target} {best.time:.4g}{cost}", highlight=False)
    if o.objective == "cost" and len(o.pareto) > 1:
        table = Table(*best.config, law.target, "cost", title="time vs cost: Pareto set", title_justify="left")
        for c in o.pareto[:30]:
            table.add_row(*[f"{v:g}" for v in c.config.values()], f"{c.time:.4g}", f"{c.cost:.4g}")
        out.print(table)


@app.command("plot")
def plot_command(
    law_file: Annotated[Path, typer.Argument(metavar="LAW.json", help="A law.json written by run.")],
    data: Annotated[Path | None, typer.Argument(help="The measurements, for measured-vs-predicted.")] = None,
    vary: Annotated[str | None, typer.Option(help="Factor and range to plot along: p=1..1024.")] = None,
    fix: Annotated[list[str], typer.Option(help="Other factors' values: n=16000 (repeatable).")] = [],  # noqa: B006
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", help="Directory for the PNGs (default: the law's).")] = None,
) -> None:
    """Write PNG figures: measured vs predicted, the law along a factor, the term breakdown, the front."""
    from . import plot as plots
    from .data import load_table

    def work():
        law = _law(law_file)
        dataset = load_table(data, law.target, list(law.factors)) if data is not None else None
        front_file = law_file.parent / "front.csv"
        rows = list(csv.DictReader(io.StringIO(front_file.read_text()))) if front_file.is_file() else None
        view = None
        if vary is not None:
            (factor, values), = _varied([vary]).items()
            default_fixed = plots.default_view(law, dataset)[2]
            fixed = {k: v for k, v in {**default_fixed, **_fixed(fix)}.items() if k != factor}
            view = (factor, values, fixed)
        return plots.all_figures(law, out_dir or law_file.parent, dataset, rows, view)

    for path in _guard(work):
        out.print(f"wrote {path}", highlight=False)


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
    """Print a grammar file, byte for byte (to save and edit: grammar show NAME > mine.toml)."""
    sys.stdout.write(_guard(lambda: _grammar.source_text(name)))


@grammar_app.command("check")
def grammar_check(
    file: Annotated[str, typer.Argument(help="Grammar file (or built-in name) to validate.")],
    data: Annotated[Path | None, typer.Option(help="Count candidates for this dataset's factors.")] = None,
    target: Annotated[str | None, typer.Option("--target", "-t", help="Target column of --data.")] = None,
    intrinsic: Annotated[str | None, typer.Option(help="Comma-separated intrinsic factors.")] = None,
) -> None:
    """Validate a grammar; print its factors, rules and how many candidates it expands to."""
    from .data import load_table

    def work() -> tuple[_grammar.Grammar, _grammar.Grammar, _candidates.CandidateSet, tuple[str, ...]]:
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
        return g, bound, _candidates.generate(bound), columns

    g, bound, found, columns = _guard(work)
    out.print(f"{g.source} is valid.", highlight=False)
    for f in g.factors:
        out.print(f"  factor {f.name}: {f.role}{' — ' + f.about if f.about else ''}", highlight=False)
    for c in g.constants:
        out.print(f"  constant {c.name} in [{c.min:g}, {c.max:g}]{' — ' + c.about if c.about else ''}",
                  highlight=False)
    for rule, alts in g.rules.items():
        out.print(f"  <{rule}> ::= " + " | ".join(a.text for a in alts), highlight=False, markup=False)
    source = f"the factors of {data}" if data else f"factors {', '.join(columns)}"
    size = _candidates.space_size(bound)
    if size > len(found):
        out.print(f"its space holds {size:,} laws for {source}, more than max_candidates = "
                  f"{bound.limits.max_candidates:,}: `run` lets the data choose which to fit (docs/method.md), or "
                  "with --strategy exhaustive fits the simplest and reports the rest as not searched", highlight=False)
    else:
        out.print(f"expands to {len(found)} unique candidates for {source} ({found.generated} expansions)",
                  highlight=False)


app.command("profile")(profile)
app.command("suggest")(suggest)


class _Terminated(BaseException):
    """SIGTERM, raised where the program is, so it stops like Ctrl-C does."""


def _terminate(signum, frame) -> None:
    raise _Terminated


def entry() -> None:
    """The console script: the app, with Ctrl-C and SIGTERM turned into one sentence and exit
    code 130 or 143 (result files are written whole or not at all: export.write_all)."""
    signal.signal(signal.SIGTERM, _terminate)
    interrupted = "interrupted (Ctrl-C); no result files were written or changed by the unfinished run"
    try:
        app()
    except KeyboardInterrupt:
        _error(interrupted)
        sys.exit(130)
    except SystemExit as exc:
        if exc.code == 130:  # typer's own answer to Ctrl-C, which says nothing
            _error(interrupted)
        raise
    except _Terminated:
        _error("terminated (SIGTERM); no result files were written or changed by the unfinished run")
        sys.exit(143)


if __name__ == "__main__":  # pragma: no cover
    entry()
