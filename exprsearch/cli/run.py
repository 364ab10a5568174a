"""``exprsearch run``: search a law per series and write it, with figures and a report on request."""

import csv
import io
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table

from .. import export
from ..errors import Failure, RepeatedSummaries
from ..fit import FitSettings
from ..grammar import load as load_grammar
from ..law import Law
from ..reciprocal import inverse
from ..repeats import check_measure, summarised
from ..roles import target_kind as kind_of
from ..search import Result, SearchError, SearchSettings, search
from ..segments import base as segment_base
from ..segments import grammar_for
from ..segments import name as segment_name
from ..vocabulary import law_name
from . import beside, segmented
from .common import (
    DROP_STRAY_HELP,
    FORMAT_HELP,
    INTRINSIC_HELP,
    JOBS_HELP,
    LOSS_HELP,
    MAP_HELP,
    SPREAD_HELP,
    STRATEGY_HELP,
    TIME_LIMIT_HELP,
    VALIDATION_HELP,
    WHERE_HELP,
    Heartbeat,
    _check_kind,
    _datasets,
    _folder,
    _guard,
    _note,
    _pairs,
    _progress,
    _search_notes,
    _split,
    _warn,
    app,
    out,
    robust_loss_note,
    too_few,
)
from .layout import law_column, series_cell, snug


@app.command()
def run(
    data: Annotated[Path, typer.Argument(help="Measurements: a CSV/TSV/Parquet/JSON/Excel table, a JSON Lines log (one object per run), or an Extra-P file (text, JSON, JSON Lines, Talpas, .extra-p).")],
    target: Annotated[str | None, typer.Option("--target", "-t", help="Column with the measured time, or 1/COLUMN to fit its reciprocal (a throughput's time per unit of work) (Extra-P files: CALLPATH:METRIC, default all).", rich_help_panel="Data")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help=FORMAT_HELP, rich_help_panel="Data")] = None,
    factors: Annotated[str | None, typer.Option(help="Comma-separated factor columns (default: the other numeric columns).", rich_help_panel="Data")] = None,
    grammar: Annotated[str, typer.Option("--grammar", "-g", help="Built-in grammar name or grammar file.", rich_help_panel="Search")] = "default",
    map_: Annotated[list[str], typer.Option("--map", help=MAP_HELP, rich_help_panel="Data")] = [],  # noqa: B006
    intrinsic: Annotated[str | None, typer.Option(help=INTRINSIC_HELP, rich_help_panel="Data")] = None,
    seed: Annotated[int, typer.Option(help="Seed for differential evolution and folds.", rich_help_panel="Search")] = 0,
    jobs: Annotated[int, typer.Option(help=JOBS_HELP, rich_help_panel="Search")] = 0,
    time_limit: Annotated[float | None, typer.Option(help=TIME_LIMIT_HELP, rich_help_panel="Search")] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for the law's intervals (0: none; at most 10000).", rich_help_panel="Search")] = 200,
    loss: Annotated[str, typer.Option(help=LOSS_HELP, rich_help_panel="Search")] = "squared",
    validation: Annotated[str, typer.Option(help=VALIDATION_HELP, rich_help_panel="Search")] = "largest",
    strategy: Annotated[str, typer.Option(help=STRATEGY_HELP, rich_help_panel="Search")] = "auto",
    scheduler: Annotated[str | None, typer.Option(help="Refine on a Dask cluster: a scheduler address (tcp://host:8786) or local:N (the 'dask' extra); the law is the same.", rich_help_panel="Search")] = None,
    by: Annotated[str | None, typer.Option(help="Fit one law per value of this column, or per combination of comma-separated columns (framework, gpu, model).", rich_help_panel="Data")] = None,
    segments: Annotated[str | None, typer.Option(help="Split along this factor where the times change regime: a law below and one above the split, where two explain them much better than one (Extra-P's segmented modeler).", rich_help_panel="Search")] = None,
    shared_form: Annotated[bool, typer.Option(help="With --by: also fit one form shared by all groups, constants per group.", rich_help_panel="Search")] = False,
    levels: Annotated[bool, typer.Option(help="With --intrinsic: test whether each intrinsic factor's values order the times: the law against its coefficients refitted per value (levels.json).", rich_help_panel="Search")] = True,
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", help="Output directory (default: exprsearch-out/<data stem>).", rich_help_panel="Output")] = None,
    force: Annotated[bool, typer.Option(help="Replace result files already in the output directory.", rich_help_panel="Output")] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print law.json to stdout instead of tables.", rich_help_panel="Output")] = False,
    drop_missing: Annotated[bool, typer.Option(help="Drop rows with missing values (or in no --by group) instead of stopping.", rich_help_panel="Data")] = False,
    drop_stray: Annotated[bool, typer.Option(help=DROP_STRAY_HELP, rich_help_panel="Data")] = False,
    measure: Annotated[str, typer.Option(help="Fit every run (all), or each configuration's mean, median, min or max of its runs (Extra-P's --measure; min resists a shared machine's interference).", rich_help_panel="Data")] = "all",
    sheet: Annotated[str | None, typer.Option(help="An Excel workbook's sheet to read, where more than one holds data.", rich_help_panel="Data")] = None,
    where: Annotated[list[str], typer.Option(help=WHERE_HELP, rich_help_panel="Data")] = [],  # noqa: B006
    spread: Annotated[str | None, typer.Option(help=SPREAD_HELP, rich_help_panel="Data")] = None,
    target_kind: Annotated[str | None, typer.Option(help="time (lower is better) or rate (higher is better: a throughput), for optimize, explain and suggest. Default: read from the target's name (images_per_sec is a rate).", rich_help_panel="Data")] = None,
    plot: Annotated[bool, typer.Option("--plot", help="Also write PNG figures (needs matplotlib).", rich_help_panel="Output")] = False,
    report: Annotated[bool, typer.Option("--report", help="Also write report.html (figures need matplotlib).", rich_help_panel="Output")] = False,
) -> None:
    """Search the grammar's laws for the one that explains TARGET, and write it to --out."""
    directory = out_dir or Path("exprsearch-out") / data.stem
    mapping = _pairs(map_, "--map")
    names = export.FILES + (export.FIGURES if plot or report else ()) + ((export.REPORT,) if report else ())
    intrinsic_factors = tuple(law_name(name) for name in _split(intrinsic) or ())  # 'batch size' is batch_size
    names += (beside.LEVELS_FILE,) if levels and intrinsic_factors else ()

    def work() -> list[Result]:
        if plot:
            from ..plot import require_matplotlib

            require_matplotlib()  # fail before the search, not after it
        _check_kind(target_kind)  # before the data are read
        rules = load_grammar(grammar)  # a grammar file's mistake, before the data are read
        check_measure(measure)  # before the data are read
        datasets, unloaded = _datasets(data, target, factors, fmt, (drop_missing, drop_stray), by, sheet, where,
                                       spread)
        datasets = {name: summarised(dataset, measure) for name, dataset in datasets.items()}
        failed.update(unloaded)  # a group whose rows cannot hold a law (a single row) does not stop the others
        settings = SearchSettings(FitSettings(seed=seed, loss=loss), validation, bootstrap, jobs, time_limit, strategy,
                                  scheduler)
        rates = [] if target_kind else sorted({d.target for d in datasets.values() if kind_of(d.target, None) == "rate"})
        for note in _data_notes(datasets) + [_RATE_NOTE.format(t) for t in rates] + robust_loss_note(datasets, loss):
            _note(note)  # said before the search
        whole = datasets  # each series before --segments splits it, for the figure of its segments
        if segments:
            datasets = segmented.split(datasets, law_name(segments), rules, mapping, intrinsic_factors, settings,
                                       json_)
        count = len(datasets) + len(unloaded)  # a --by group left without a law keeps the others in their folders
        placed = {name: _place(directory, name, dataset, count) for name, dataset in datasets.items()}
        parents = {placed[name].parent for name, dataset in datasets.items() if dataset.segment} if plot else set()
        for folder, files in [*((f, names) for f in placed.values()), *((f, segmented.FIGURE) for f in parents)]:
            if force:  # before the search, not after it
                export.check_writable(folder)
            else:
                export.check_free(folder, files)
        kinds = {name: kind_of(dataset.target, target_kind) for name, dataset in datasets.items()}
        results = []
        for name, dataset in datasets.items():
            with _progress(quiet=json_) as bar:
                task = bar.add_task(f"fitting {name or 'candidates'}", total=None)
                beat = Heartbeat(f"fitting {name}" if name else "fitting", "candidates", quiet=json_)
                try:
                    result = search(  # above a change of regime the constant may be negative
                        dataset, grammar=grammar_for(rules, dataset), mapping=mapping, intrinsic=intrinsic_factors,
                        settings=settings,
                        progress=lambda done, total, bar=bar, task=task, beat=beat: (
                            bar.update(task, completed=done, total=total), beat(done, total)),
                    )
                except SearchError as exc:
                    if len(datasets) == 1:
                        raise
                    failed[name] = Failure(exc)  # one group's data say too little: the others still get their laws
                    continue
                if not (segments or json_) and beside.misses_as_rate(result.law, segmented.GROSS):
                    # its time is fitted to compare
                    bar.update(task, description=f"fitting the time of {dataset.target}, to compare", completed=0)
                    beat.what = f"fitting the time of {name or dataset.target}, to compare"
                    compared = beside.as_time(result, settings, grammar=rules, mapping=mapping,
                                              intrinsic=intrinsic_factors, progress=lambda done, total, bar=bar,
                                              task=task, beat=beat: (bar.update(task, completed=done, total=total),
                                                                     beat(done, total)))
                    timed.update({name: compared} if compared else {})
            if kinds[name]:  # law.json says what the target is, where the user or its name said it
                result = replace(result, law=replace(result.law, target_kind=kinds[name]))
            export.write(result.law, result.ranking, placed[name], overwrite=force)
            if levels and intrinsic_factors:
                checked[name] = beside.levels(result, intrinsic_factors, settings.fit, placed[name])
            if plot or report:
                verdicts = [sentence for sentence, _ in checked.get(name, [])]
                _figures_and_report(result, placed[name], plot, report, verdicts)
            results.append((name, placed[name], result))
        drawn.extend(segmented.figures(results, whole) if plot and parents else ())
        if failed and not results:
            name, reason = next(iter(failed.items()))
            short = too_few(failed)
            hint = f"; {short} of them hold too few configurations, and --by with fewer columns makes larger " \
                "groups" if 2 * short >= len(failed) else ""
            raise SearchError(f"none of the {len(failed)} groups could be fitted; the first, {name}: {reason}{hint}")
        shared = beside.shared(results, directory, force, settings.fit) if shared_form and len(results) > 1 else None
        return results, shared

    checked: dict[str, list] = {}
    timed: dict[str, beside.Compared] = {}  # a rate's time fitted to compare, where the rate's law misses
    failed: dict[str, str] = {}  # each a Failure where its kind of error is known
    drawn: list[Path] = []  # the figures of segments beside each other (--segments --plot)
    results, shared = _guard(work)
    if json_:
        _say_failed(failed)
        for name, folder, _ in results:  # stdout carries the JSON alone; the verdicts go to stderr
            beside.print_levels(checked.get(name, []), folder, tables=False)
        if len(results) == 1 and not failed:
            sys.stdout.write(results[0][2].law.to_json())
        else:
            import json

            laws = {name: result.law.to_dict() for name, _, result in results}
            laws.update((name, {"error": reason}) for name, reason in failed.items())
            sys.stdout.write(json.dumps(laws, indent=2) + "\n")
        return
    grouped = len(results) + len(failed) > 1
    compact = len(results) > MANY_GROUPS  # a front per group would bury the laws in pages of tables
    if compact:
        _note(
            f"{len(results)} groups: each is shown by its law, its Pareto front written to front.csv beside it "
            "(exprsearch plot draws it; exprsearch profile ranks many series in one table)")
    said: set[str] = set()  # the notes said whole once
    for name, folder, result in results:
        if grouped:
            out.rule(name)
        compared = timed.get(name)
        _report(result, folder, front=not compact, compared=compared)
        if not (segments or compared and compared.closer):  # where its time fits, that is the remedy said
            segmented.say_regime(result, said)
        beside.print_levels(checked.get(name, []), folder)
    if grouped:
        column, laws = law_column("law", [export.rounded_text(result.law) for _, _, result in results], beside=48)
        table = Table(Column("series", overflow="fold"), column, "MAPE %", "held-out %",
                      title="Side by side", title_justify="left")
        for (name, _, result), law in zip(results, laws):
            held = result.law.metrics.get("holdout_mape_pct")
            table.add_row(series_cell(name), law, f"{result.law.metrics['mape_pct']:.3g}",
                          "" if held is None else f"{held:.3g}")
        for name in failed:
            table.add_row(series_cell(name), "no law (see below)", "", "")
        out.print(snug(table))
    if shared is not None:
        beside.print_shared(shared)
    for path in drawn:
        out.print(f"wrote {path}", highlight=False)
    _say_failed(failed)


def _say_failed(failed: dict[str, str]) -> None:
    """The --by groups left without a law, and why (the others' laws are written); the groups that
    each repeat a configuration of summarised runs in one note, their reasons differing only in the
    rows they name."""
    repeated = [name for name, reason in failed.items() if issubclass(getattr(reason, "kind", type), RepeatedSummaries)]
    if len(repeated) > 1:
        _note(f"no law for {len(repeated)} groups ({_named(repeated)}): each holds a configuration on several rows, "
              f"and --spread takes one row per configuration; the first, {repeated[0]}: {failed[repeated[0]]}")
    reasons: dict[str, list[str]] = {}
    for name, reason in failed.items():
        if len(repeated) < 2 or name not in repeated:
            reasons.setdefault(reason, []).append(name)
    for reason, names in reasons.items():
        which = f"group {names[0]}" if len(names) == 1 else f"{len(names)} groups ({_named(names)})"
        _note(f"no law for {which}: {reason}")


def _named(names: list[str]) -> str:
    return "; ".join(names) if len(names) <= 3 else f"{names[0]}; {names[1]} and {len(names) - 2} more"


def _data_notes(datasets: dict) -> list[str]:
    """Each note of the data once, saying which --by groups it concerns when not all of them (the
    same note for sixteen groups is one sentence, not sixteen)."""
    groups: dict[str, list[str]] = {}
    for name, dataset in datasets.items():
        for note in dataset.notes:
            groups.setdefault(note, []).append(name)
    if len(datasets) < 2:
        return list(groups)
    said = []
    for note, names in groups.items():
        if len(names) == len(datasets):
            said.append(f"in every group: {note}")
        else:
            where = f"in group {names[0]}" if len(names) == 1 else \
                f"in {len(names)} of {len(datasets)} groups ({_named(names)})"
            said.append(f"{where}: {note}")
    return said


MANY_GROUPS = 6  # more --by groups than this are shown by their laws alone
_RATE_NOTE = ("target {0} reads as a rate (higher is better): optimize takes the largest as the fastest, explain's "
              "speedup is its growth, and a time is work / {0}; pass --target-kind time if it is a time")


_RATE_MISFIT = ("{0} is a rate and its law misses the measurements by more than their noise (lack-of-fit p < 0.01): "
                "sums of terms that rise cannot level off or fall as a rate does where scaling saturates; ")
_RATE_TIME = "its time, --target {0}, may have a law that fits (docs/accuracy.md compares the two on public tables)"


def _figures_and_report(result: Result, directory: Path, plot: bool, report: bool, verdicts: list[str]) -> None:
    from .. import plot as plots
    from ..explain import explain
    from ..report import html_page

    front_csv = export.front_csv(result.ranking)
    rows = list(csv.DictReader(io.StringIO(front_csv)))
    figures: list[Path] = []
    notes = [*result.notes, *verdicts]  # what the data and the search left out belongs in the report too
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




def _report(result: Result, directory: Path, front: bool = True, compared: "beside.Compared | None" = None) -> None:
    """A law's search and result; without ``front``, the law alone (with the notes that warn: how
    the search space was screened is in law.json's search, as the front is in front.csv);
    ``compared``, a rate's time fitted beside it."""
    for note in _search_notes(result, front):  # data notes came before
        _note(note)
    if front:
        _front(result)
    _chosen(result, directory, compared)


def _front(result: Result) -> None:
    """What the search did, and the Pareto front with its laws listed whole."""
    found = result.candidates
    skipped = ", ".join(f"{n} {r}" for r, n in sorted(result.rejected.items()))
    out.print(
        f"grammar [bold]{result.grammar.name}[/]: {found.generated} expansions, "
        f"{len(found)} unique candidates, {result.fitted} fitted, {result.refined} refined "
        f"({result.refined - result.searched} polished from a grid start, {result.searched} by differential evolution)"
        + (f" (rejected: {skipped})" if skipped else ""), highlight=False,
    )
    table = Table(title="Pareto front (error vs complexity); its laws are listed below", title_justify="left")
    for column in ("#", "complexity", "constants", "MAPE %", "CV MAPE %", "held-out %", "R²"):
        # folded onto more lines when the terminal is narrow, never cut
        table.add_column(column, justify="left" if column == "#" else "right", overflow="fold")
    laws = []
    for i, s in enumerate(result.ranking.front, start=1):
        mark = "→" if i - 1 == result.ranking.chosen else " "
        held = "" if s.holdout_mape is None else f"{s.holdout_mape:.3g}" if math.isfinite(s.holdout_mape) else "—"
        table.add_row(f"{mark}{i}", str(s.complexity), str(s.n_constants), f"{s.mape:.3g}", f"{s.cv_mape:.3g}", held,
                      f"{s.r2:.4f}")
        laws.append(f"{mark}{i:>3}  {s.fit.candidate}")
    if any(s.holdout_mape is not None and not math.isfinite(s.holdout_mape) for s in result.ranking.front):
        table.caption = export.HELD_OUT_LOST
        table.caption_justify = "left"
    out.print(snug(table))
    for line in laws:  # whole, one per line: a narrow terminal wraps them, a pipe gets them as they are
        out.print(line, highlight=False, soft_wrap=True, markup=False)


def _say_loose(law: Law) -> None:
    """Warn of constants the bootstrap leaves loose, saying which runs would pin them down."""
    loose = law.loose()
    absent = [k for k in loose if law.constants[k] == 0]
    if absent:
        highs = ", ".join(f"{k} up to {law.intervals[k][1]:.4g}" for k in absent)
        _warn(f"{', '.join(absent)} fitted at 0, so the law leaves {'that term' if len(absent) == 1 else 'those terms'} "
              f"out, but its refits on resamples of the data put {highs}: the data cannot tell whether it is there")
    present = [k for k in loose if law.constants[k] != 0]
    if present:
        factors = sorted({f for k in present for f in loose[k]}, key=law.factors.index)
        what = ((f"the part of {law.target} no factor changes" if not factors else
                 "that term" if len(present) == 1 else "those terms") +
                (f"; measure a wider range of {', '.join(factors)}" if factors else ""))
        _warn(f"the interval of {', '.join(present)} is wider than the value itself: the data barely determine "
              f"{what} (exprsearch suggest says which runs would narrow the prediction where you need it)")


def _say_at_limit(law: Law) -> None:
    """Warn of fitted exponents that stopped at an end of the range the grammar gives them."""
    for name, (low, high) in law.search.get("at_limit", {}).items():
        kind = name.rstrip("0123456789")
        _warn(f"{name} = {law.constants[name]:g} stopped at the end of its range [{low:g}, {high:g}]: the data would "
              f"take that power further than the grammar allows, so the shape of its term is the grammar's limit, "
              f"not a measurement; widen {kind}'s range in a grammar file (docs/grammar.md) to let the data set it")


def _chosen(result: Result, directory: Path, compared: "beside.Compared | None" = None) -> None:
    """The chosen law, its figures and intervals, and where it was written; a rate's law that misses
    its measurements is said once, with its time's law where ``compared`` holds it."""
    law = result.law
    noise = law.metrics.get("noise_sd_pct")
    out.print(f"[bold]{law.target} = {export.rounded_text(law)}[/]", highlight=False, soft_wrap=True)  # never cut
    out.print(
        f"MAPE {law.metrics['mape_pct']:.3g} %, cross-validated {law.metrics['cv_mape_pct']:.3g} %, "
        f"R² {law.metrics['r2']:.4f}"
        + (f", measured noise {noise:.3g} %" if noise is not None else "")
        + f"; chosen by {law.selection}.", highlight=False,
    )
    misfit = law.metrics.get("lack_of_fit_p")
    if law.rate and misfit is not None and misfit < 0.01:  # a rate that levels off or falls: the time may fit
        _note(_RATE_MISFIT.format(law.target) + (compared.sentence if compared else _RATE_TIME.format(inverse(law.target))))
    elif compared:
        _note(compared.sentence)
    if law.intervals:
        spans = ", ".join(f"{k} = {law.constants[k]:.4g} [{lo:.4g}, {hi:.4g}]" for k, (lo, hi) in law.intervals.items())
        out.print(f"95 % bootstrap intervals ({len(law.bootstrap)} resamples): {spans}", highlight=False)
        _say_loose(law)
    _say_at_limit(law)
    out.print(f"wrote {', '.join(export.FILES)} to {directory}", highlight=False)


def _place(directory: Path, name: str, dataset, count: int) -> Path:
    """The folder of one law of a run of ``count``: ``directory`` itself for a run of one, else a
    folder per group or series, holding one folder per segment where --segments split it (so
    that the series' folder is what predict and optimize take whole)."""
    if count == 1:
        return directory
    if dataset.segment is None:
        return directory / _folder(name)
    series = segment_base(name, dataset.segment)
    return (directory / _folder(series) if series else directory) / _folder(segment_name("", dataset.segment))
