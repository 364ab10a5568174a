"""``exprsearch profile``: a law for every series of a profile, summarised and ranked. Registered
by the package's ``__init__``; it uses ``common``'s consoles and error handling."""

import json
import re
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from .common import (
    DROP_STRAY_HELP,
    FORMAT_HELP,
    INTRINSIC_HELP,
    LOSS_HELP,
    SPREAD_HELP,
    STRATEGY_HELP,
    VALIDATION_HELP,
    WHERE_HELP,
)
from .layout import law_column, series_cell, snug

SUMMARY = ("laws.csv", "laws.json")
GROWTH, PHASES, DRAWN = "growth.png", "phases.png", 8  # profile --plot's figures, and the series drawn at most


def profile(
    data: Annotated[Path, typer.Argument(help="An Extra-P file (text, JSON, JSON Lines, Talpas, .extra-p), a directory of CUBE runs, or a table.")],
    target: Annotated[str | None, typer.Option("--target", "-t", help="Tables: the measured column (default: 'value' if present), or several, comma-separated (a time per phase: fwd_s,bwd_s,comm_s), each a series; 1/COLUMN fits a column's reciprocal.", rich_help_panel="Data")] = None,
    by: Annotated[str | None, typer.Option(help="Tables: comma-separated columns naming a series (default: callpath/kernel and metric if present).", rich_help_panel="Data")] = None,
    factors: Annotated[str | None, typer.Option(help="Tables: comma-separated factor columns (default: the other numeric columns).", rich_help_panel="Data")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help=FORMAT_HELP, rich_help_panel="Data")] = None,
    grammar: Annotated[str, typer.Option("--grammar", "-g", help="Built-in grammar name or grammar file; pmnf (Extra-P's normal form) is about 4x faster on large profiles.", rich_help_panel="Search")] = "default",
    at: Annotated[str | None, typer.Option(help="The configuration to rank series at: p=512,n=16000 (factors not given: --scale × their largest measured value).", rich_help_panel="Ranking")] = None,
    scale: Annotated[float, typer.Option(help="Factors missing from --at are taken at this multiple of their largest measured value.", rich_help_panel="Ranking")] = 2.0,
    jobs: Annotated[int, typer.Option(help="Local processes, one series each (0: one per core).", rich_help_panel="Search")] = 0,
    scheduler: Annotated[str | None, typer.Option(help="A Dask scheduler address (tcp://host:8786), or local:N for a local cluster of N workers.", rich_help_panel="Search")] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples per law, for the intervals in each law.json (0: none; at most 10000).", rich_help_panel="Search")] = 0,
    seed: Annotated[int, typer.Option(help="Seed for differential evolution and folds.", rich_help_panel="Search")] = 0,
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", help="Output directory (default: exprsearch-out/<data stem>-profile).", rich_help_panel="Output")] = None,
    laws: Annotated[bool, typer.Option("--laws", help="Also write each series' law.json under <out>/series/.", rich_help_panel="Output")] = False,
    report: Annotated[bool, typer.Option("--report", help="Also write report.html ranking the series.", rich_help_panel="Output")] = False,
    plot: Annotated[bool, typer.Option("--plot", help=f"Also write {GROWTH}: the growth of the series ranked first (up to {DRAWN}) along the factor --at names first (default: the one most laws use), each relative to its law at its largest measured values; for a table of phases (--target fwd_s,bwd_s,...) also {PHASES}, their laws stacked (needs matplotlib).", rich_help_panel="Output")] = False,
    resume: Annotated[bool, typer.Option(help="Keep the series already in <out>/laws.json and model only the rest.", rich_help_panel="Output")] = False,
    force: Annotated[bool, typer.Option(help="Replace laws.csv and laws.json already in the output directory.", rich_help_panel="Output")] = False,
    top: Annotated[int, typer.Option(help="Series shown in the ranking (all are in laws.csv).", rich_help_panel="Ranking")] = 15,
    map_: Annotated[list[str], typer.Option("--map", help="Bind a grammar factor to a column in every series: p=gpus (repeatable).", rich_help_panel="Data")] = [],  # noqa: B006
    intrinsic: Annotated[str | None, typer.Option(help=INTRINSIC_HELP, rich_help_panel="Data")] = None,
    sheet: Annotated[str | None, typer.Option(help="An Excel workbook's sheet to read, where more than one holds data.", rich_help_panel="Data")] = None,
    target_kind: Annotated[str | None, typer.Option(help="time (lower is better) or rate (higher is better: a throughput); a rate that grows little ranks first. Default: read from each target's name (images_per_sec is a rate).", rich_help_panel="Data")] = None,
    drop_missing: Annotated[bool, typer.Option(help="Tables: drop rows with missing values (or in no --by series) instead of stopping.", rich_help_panel="Data")] = False,
    drop_stray: Annotated[bool, typer.Option(help=DROP_STRAY_HELP, rich_help_panel="Data")] = False,
    where: Annotated[list[str], typer.Option(help=WHERE_HELP, rich_help_panel="Data")] = [],  # noqa: B006
    measure: Annotated[str, typer.Option(help="Fit every run (all), or each configuration's mean, median, min or max of its runs (Extra-P's --measure; min resists a shared machine's interference).", rich_help_panel="Data")] = "all",
    spread: Annotated[str | None, typer.Option(help=SPREAD_HELP, rich_help_panel="Data")] = None,
    segments: Annotated[str | None, typer.Option(help="Model a series whose times change regime along this factor by the segment above the change, where two laws explain them much better than one (run's --segments; the law below is in the series' notes).", rich_help_panel="Search")] = None,
    loss: Annotated[str, typer.Option(help=LOSS_HELP, rich_help_panel="Search")] = "squared",
    validation: Annotated[str, typer.Option(help=VALIDATION_HELP, rich_help_panel="Search")] = "largest",
    strategy: Annotated[str, typer.Option(help=STRATEGY_HELP, rich_help_panel="Search")] = "auto",
    time_limit: Annotated[float | None, typer.Option(help="Seconds per series: stop refining its law when they run out and keep the best found so far (said in its notes).", rich_help_panel="Search")] = None,
) -> None:
    """A law for every series (callpath × metric, or table group), ranked by predicted growth."""
    from .. import export as _export
    from ..configs import parse_point
    from ..errors import OutputError, SettingsError
    from ..executor import executor
    from ..fit import FitSettings
    from ..profiles import SeriesLaw, check_binding, from_summary, model_profile, summary_csv, summary_json
    from ..readers import digest
    from ..repeats import check_measure, summarised
    from ..search import SearchSettings
    from ..vocabulary import law_name
    from . import common as cli
    from .common import _check_kind

    directory = out_dir or Path("exprsearch-out") / f"{data.stem}-profile"
    mapping = cli._pairs(map_, "--map")
    intrinsic_factors = tuple(law_name(name) for name in cli._split(intrinsic) or ())

    def prepare():
        for name, value, least in (("--jobs", jobs, 0), ("--top", top, 1)):
            if value < least:
                raise SettingsError(f"{name} {value}: give a whole number of at least {least}")
        if not scale > 0:
            raise SettingsError(f"--scale {scale:g}: give a positive multiple")
        _check_kind(target_kind)
        if plot:
            from ..plot import require_matplotlib

            require_matplotlib()  # before the series are modelled, not after
        if not (force or resume):
            _export.check_free(directory, SUMMARY + (("report.html",) if report else ()) + (("series",) if laws else ())
                               + ((GROWTH, PHASES) if plot else ()))
        check_measure(measure)  # before the data are read
        series, failures = _series(data, fmt, target, by, cli._split(factors), sheet, (drop_missing, drop_stray),
                                   where, spread)
        series = {name: summarised(dataset, measure) for name, dataset in series.items()}
        if segments and not any(law_name(segments) in dataset.factors for dataset in series.values()):
            raise SettingsError(_no_segments(law_name(segments), list(series.values())))
        check_binding(series, grammar, mapping, intrinsic_factors)
        point = parse_point(at, "--at") if at else {}
        # as run searches each series (the series themselves go to --jobs processes or --scheduler)
        settings = SearchSettings(FitSettings(seed=seed, loss=loss), validation, bootstrap, time_limit=time_limit,
                                  strategy=strategy)
        sha = next((d.sha256 for d in series.values()), None) or digest(data)  # read once when it can be
        context = {"data": str(data), "sha256": sha, "grammar": grammar, "at": point, "factors": factors,
                   "scale": scale, "seed": seed, "bootstrap": bootstrap}
        # each only when given, so that a summary written before these options resumes
        context.update({k: v for k, v in (("target_kind", target_kind), ("map", mapping), ("sheet", sheet),
                                          ("intrinsic", list(intrinsic_factors)), ("drop_missing", drop_missing),
                                          ("drop_stray", drop_stray), ("where", list(where)),
                                          ("measure", "" if measure == "all" else measure),
                                          ("spread", spread or ""),
                                          ("segments", law_name(segments) if segments else ""),
                                          ("loss", "" if loss == "squared" else loss),
                                          ("validation", "" if validation == "largest" else validation),
                                          ("strategy", "" if strategy == "auto" else strategy),
                                          ("time_limit", time_limit)) if v})
        done = []
        if resume and (directory / "laws.json").is_file():
            earlier, rows = from_summary((directory / "laws.json").read_text())
            if earlier != context:
                changed = ", ".join(k for k in context if earlier.get(k) != context[k])
                raise OutputError(f"'{directory / 'laws.json'}' was made with other inputs ({changed}); "
                                  "--resume needs the same data and options, or use another --out")
            done = [r for r in rows if r.series in series or r.series in failures]
        return series, failures, done, context, settings

    series, failures, done, context, settings = cli._guard(prepare)
    point = context["at"]
    finished: list[SeriesLaw] = list(done) + [SeriesLaw(name, error=message) for name, message in failures.items()
                                              if name not in {r.series for r in done}]
    todo = {name: data_ for name, data_ in series.items() if name not in {r.series for r in finished}}
    pool = cli._guard(lambda: executor(jobs, scheduler, len(todo)))
    started = time.monotonic()
    cli.err.print(f"modelling {len(todo)} series on {pool.description}"
                  + (f" ({len(done)} kept from an earlier run)" if done else ""), highlight=False)
    for note in cli.robust_loss_note(todo, settings.fit.loss):
        cli._note(note)
    progress = Progress(TextColumn("series"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("eta"), TimeRemainingColumn(), console=cli.err, transient=True)
    stopped, ran = False, 0
    beat = cli.Heartbeat("modelling", "series")
    try:
        with progress:
            task = progress.add_task("series", total=len(todo))
            for row in model_profile(todo, grammar, settings, point, scale, pool, target_kind=target_kind or "",
                                     mapping=mapping, intrinsic=intrinsic_factors,
                                     segments=law_name(segments) if segments else None):
                finished.append(row)
                ran += 1
                progress.advance(task)
                beat(ran, len(todo))
    except KeyboardInterrupt:
        stopped = True
    finally:
        pool.close()
    seconds = time.monotonic() - started
    files = {directory / "laws.csv": summary_csv(finished), directory / "laws.json": summary_json(finished, context)}
    if laws:
        for row in finished:
            if row.law_json:
                files[directory / "series" / cli._folder(row.series) / "law.json"] = row.law_json
    _export.write_all(files)  # the laws first: nothing after them may lose them
    phases = by is None and len(cli._split(target) or ()) > 1  # a table of phases: a series per target column
    drawn = cli._guard(lambda: _figures(finished, point, top, directory, phases)) if plot else []
    if report:
        from ..report import profile_page

        _export.write_all({directory / "report.html": profile_page(finished, context, drawn)})
    _print(finished, top, point, scale, cli.out)
    modelled = sum(1 for r in finished if not r.error)
    cli.out.print(f"{modelled} of {len(finished)} series modelled in {seconds:.1f} s "
                  f"({1000 * seconds / max(1, ran):.0f} ms per series searched); wrote "
                  f"{', '.join(SUMMARY)}{', report.html' if report else ''}{' and series/*/law.json' if laws else ''}"
                  f"{''.join(f', {p.name}' for p in drawn)} to {directory}", highlight=False)
    if plot and not drawn:
        cli._note(f"no {GROWTH}: no series' law follows a factor, so there is no growth to draw")
    if stopped:
        left = len(series) - sum(1 for r in finished if r.series in series)
        cli._error(f"interrupted (Ctrl-C) with {left} series left; the summary holds the {len(finished)} finished. "
                   f"Resume with the same command and --resume")
        raise typer.Exit(130)
    rates = sorted({json.loads(r.law_json)["target"] for r in finished if r.rate and r.law_json})
    if rates and not target_kind:
        cli._note(
            f"target {', '.join(rates)} reads as a rate (higher is better): a series whose rate grows least ranks "
            "first; pass --target-kind time if it is a time", soft_wrap=True)
    noticed: dict[str, list[str]] = {}  # each note on the data, with the series it is about
    for row in finished:
        for note in row.data_notes:
            noticed.setdefault(note, []).append(row.series)
    for note, names in list(noticed.items())[:3]:
        about = names[0] if len(names) == 1 else f"{len(names)} series"
        cli._note(f"on the data of {about}: {note}", soft_wrap=True)
    if len(noticed) > 3:
        cli._note(f"{len(noticed) - 3} more notes on the data in laws.csv")
    if segments:
        changed = [r.series for r in finished if any(n.startswith("the times change regime") for n in r.notes)]
        cli._note(f"{len(changed)} of {len(finished)} series change regime along {law_name(segments)}"
                  + (f" ({', '.join(changed[:3])}{', …' if len(changed) > 3 else ''}): each is ranked by the law above "
                     "the change, and laws.csv's notes give the law below it" if changed else ""), soft_wrap=True)
    blind = [r.series for r in finished if r.blind]
    if blind:
        one = len(blind) == 1
        verb, its, they = ("leaves", "its", "it ranks") if one else ("leave", "their", "they rank")
        cli._note(f"{len(blind)} series {verb} out a factor {its} data vary, with too few configurations for a law "
                  f"that holds it ({', '.join(blind[:3])}{', …' if len(blind) > 3 else ''}): {its} growth along it is "
                  f"not measured, so {they} after the others; laws.csv's notes say which factor", soft_wrap=True)
    unmodelled = [r for r in finished if r.error]
    if unmodelled:
        cli._note(
            f"{len(unmodelled)} series could not be modelled; laws.csv gives each reason (first: "
            f"{unmodelled[0].series}: {unmodelled[0].error})", soft_wrap=True)


def _series(data: Path, fmt: str | None, target: str | None, by: str | None, factors: list[str] | None,
            sheet: str | None = None, drops: tuple[bool, bool] = (False, False), where: list[str] = (),
            spread: str | None = None):
    """The series of ``data`` and the ones that cannot be fitted, with their reasons; ``drops``:
    --drop-missing and --drop-stray; ``where``: the --where conditions the rows must meet;
    ``spread``: --spread's columns of the runs each row summarises."""
    from ..data import DataError
    from ..readers import detect_format, load_profile
    from ..rowfilter import parse
    from ..spread import parse as parse_spread
    from ..tables import WORKBOOKS
    from ..workbooks import data_sheets

    conditions = parse(where)  # a malformed --where, before the file is read
    pair = parse_spread(spread)
    fmt = fmt or detect_format(data)
    drop_missing, drop_stray = drops
    if fmt != "table":
        if target or by or factors or sheet or drop_missing or spread:
            raise DataError("--target, --by, --factors, --sheet, --drop-missing and --spread apply to tables; an "
                            "Extra-P file is split into series and names its parameters already")
        return load_profile(data, fmt, drop_stray, conditions)
    sheets = data_sheets(data) if sheet is None and data.suffix.lower() in WORKBOOKS else []
    if len(sheets) < 2:
        return _sheet_series(data, target, by, factors, sheet, drops, conditions, whole=False, spread=pair)
    series, failures = {}, {}  # a workbook of a sheet per series (a GPU, a cluster): each sheet is one
    for name in sheets:
        try:
            found, failed = _sheet_series(data, target, by, factors, name, drops, conditions, whole=True, spread=pair)
        except DataError as exc:
            found, failed = {}, {"": str(exc)}
        series |= {f"sheet={name}" + (f",{inner}" if inner else ""): d for inner, d in found.items()}
        failures |= {f"sheet={name}" + (f",{inner}" if inner else ""): why for inner, why in failed.items()}
    if not series:  # the same mistake on every sheet (a target no sheet has): one sentence, not a table of them
        name, why = next(iter(failures.items()))
        raise DataError(f"no sheet of '{data}' could be modelled; {name}: {why}")
    return series, failures


def _sheet_series(data: Path, target: str | None, by: str | None, factors: list[str] | None, sheet: str | None,
                  drops: tuple[bool, bool], where, whole: bool, spread: tuple[str, str] | None = None):
    """The series of a table (or of one sheet of a workbook): one per --by group, or per --target
    column where several are named; ``whole``: the sheet is one series where neither is given;
    ``spread``: the columns of the runs each row summarises."""
    from ..data import DataError, load_table
    from ..grouped import load_grouped, load_targets
    from ..tables import read_table
    from .common import _split, _target_needed

    drop_missing, drop_stray = drops
    columns = [str(c) for c in read_table(data, sheet).columns]
    target = target or ("value" if "value" in columns else None)
    if target is None:
        raise _target_needed(data, what="the measured value", columns=columns)
    keys = _split(by) if by else [c for c in ("callpath", "kernel", "metric") if c in columns]
    targets = _split(target)
    if len(targets) > 1 and target not in columns:  # a table of phases: a series per column (per --by group)
        if spread:
            raise DataError(f"--spread {','.join(spread)} gives the runs' spread of one target; with several "
                            f"--target columns ({', '.join(targets)}) profile each alone")
        return load_targets(data, targets, keys, factors, drop_missing, sheet=sheet, drop_stray=drop_stray, where=where)
    if keys:
        return load_grouped(data, target, keys, factors, drop_missing, sheet=sheet, drop_stray=drop_stray, where=where,
                            spread=spread)
    if whole:
        return {"": load_table(data, target, factors, drop_missing, sheet=sheet, drop_stray=drop_stray,
                               where=where, spread=spread)}, {}
    raise DataError(f"pass --by COLUMNS naming each series (callpath, kernel, metric…), or several --target "
                    f"columns (a time per phase); the columns of '{data}' are {', '.join(columns)}")


def _figures(rows, point: dict, top: int, directory: Path, phases: bool) -> list[Path]:
    """growth.png: the series ranked first whose growth is measured, along the factor --at names
    first that their laws use (else the one most of them use), up to its --at value; and for a
    table of phases (times), phases.png: their laws stacked along the same factor."""
    from ..law import Law
    from ..plot import profile_growth, profile_phases
    from ..profiles import growth_along, ranked

    drawn = [r for r in ranked(rows) if not r.error and not r.blind][:min(top, DRAWN)]
    named = next((f for f in point if any(f in r.largest for r in drawn)), None)
    found = growth_along(drawn, named, point.get(named) if named else None)
    if found is None:
        return []
    factor, x, curves = found
    measured = max(r.largest.get(factor, 0.0) for r in drawn)
    others = any(f != factor and Law.from_json(r.law_json).uses(f) for r in drawn for f in r.largest)
    paths = [profile_growth(factor, x, curves, measured, directory / GROWTH, rate=all(r.rate for r in drawn),
                            total=sum(1 for r in rows if not r.error and not r.blind), others=others)]
    if phases and drawn and not any(r.rate for r in drawn):
        order = [r for r in rows if r in drawn]  # the table's order of its columns, not the ranking's
        _, _, values = growth_along(order, factor, x[-1], relative=False)
        paths.append(profile_phases(factor, x, values, measured, directory / PHASES, "time", others))
    return paths


def _print(rows, top: int, point: dict, scale: float, out) -> None:
    from ..configs import setting
    from ..profiles import ranked, ranked_by

    where = ", ".join(f"{k}={setting(v)}" for k, v in point.items()) or "the largest measured values"
    others = any(f not in point for r in rows if not r.error for f in r.largest)  # factors --at leaves to scale
    title = (f"Series ranked by {ranked_by(rows)} from the largest measured configuration to {where}"
             + ((f" (other factors × {scale:g})" if others else "") if point else f" × {scale:g}")
             + "; their laws are in laws.csv")
    modelled = [r for r in ranked(rows) if not r.error]
    if len(modelled) > top:
        title += f"; the first {top} of {len(modelled)} shown (--top sets how many)"
    column, terms = law_column("dominant term there", [r.dominant_at for r in modelled[:top]], beside=44)
    table = Table("#", "series", "growth", column, title=title, title_justify="left")
    for column in table.columns:
        column.overflow = "fold"
    for i, (r, term) in enumerate(zip(modelled[:top], terms), start=1):
        growth = "—" if r.blind else f"{r.growth:.3g}×" if r.growth else ""
        table.add_row(str(i), series_cell(r.series), growth, term)
    captions = []
    if any(r.blind for r in modelled[:top]):
        captions.append("—: the law leaves out a factor the data vary, with too few configurations for a law that "
                        "holds it (laws.csv's notes say which)")
    if any(int(share) > 100 for r in modelled[:top] for share in re.findall(r"\((\d+) %\)$", r.dominant_at)):
        captions.append("a share above 100 %: the law's other terms are negative there (a negative constant)")
    if captions:
        table.caption, table.caption_justify = "\n".join(captions), "left"
    out.print(snug(table))


def _no_segments(name: str, series: list) -> str:
    """Why no series can be split along ``name``: every one held it at one value, or none has it."""
    from ..configs import setting

    held = sorted({value for d in series for f, value in d.held if f == name})
    if held:
        return (f"--segments {name}: every series measured {name} at one value ({', '.join(map(setting, held))}), "
                "so none can be split along it; two segments need 3 values each")
    factors = sorted({f for d in series for f in d.factors})
    return (f"--segments {name}: no series has a factor {name} "
            + (f"(their factors: {', '.join(factors)})" if factors else "(no factor varies in any series)"))
