"""``exprsearch suggest``: which configurations to measure next, and when to stop. Registered by
the package's ``__init__``; it uses ``common``'s consoles and error handling."""

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

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
)


def suggest(
    data: Annotated[Path, typer.Argument(help="The measurements so far: a table (or an Extra-P file with --target).")],
    target: Annotated[str | None, typer.Option("--target", "-t", help="The measured column, or 1/COLUMN to fit its reciprocal (Extra-P files: CALLPATH:METRIC).", rich_help_panel="Data")] = None,
    vary: Annotated[list[str], typer.Option(help="A factor's values that could be measured: p=1..64 (every integer), p=1..64:x2 (doubling) or n=1000,4000 (repeatable). Default: its measured values (its measured range, doubling, where it has more than 16).", rich_help_panel="Plan")] = [],  # noqa: B006
    at: Annotated[str | None, typer.Option(help="The configuration whose prediction should be settled: p=512,n=16000.", rich_help_panel="Plan")] = None,
    count: Annotated[int, typer.Option(help="How many configurations to suggest.", rich_help_panel="Plan")] = 3,
    devices: Annotated[str | None, typer.Option(help="The factor that counts the devices a run occupies (cost = devices × time).", rich_help_panel="Plan")] = None,
    price: Annotated[float | None, typer.Option(help="Price per device-hour (or per hour without --devices), as optimize takes it: costs and --cost-budget are then money. Without it a run costs its devices × its time, in the target's unit.", rich_help_panel="Plan")] = None,
    price_table: Annotated[Path | None, typer.Option(help="A table (CSV, workbook, …): factor columns and a 'price' column per hour (per device with --devices), as optimize takes it; configurations it does not price are not suggested.", rich_help_panel="Plan")] = None,
    price_sheet: Annotated[str | None, typer.Option(help="With --price-table: an Excel workbook's sheet, where more than one holds data.", rich_help_panel="Plan")] = None,
    time_unit: Annotated[str | None, typer.Option(help="Unit of the target (of its time, for a rate with --work): ms, s, min or h, for --price or --price-table; default: the unit its name ends in (ttt_min_mean, epoch_s), else s, said in a note.", rich_help_panel="Plan")] = None,
    tolerance: Annotated[float, typer.Option(help="Settled when the plausible laws agree and the 95 % interval at --at is within this (relative).", rich_help_panel="Plan")] = 0.05,
    budget: Annotated[float | None, typer.Option("--cost-budget", help="Cost you can still spend (devices × time, or money with --price or --price-table); suggestions are planned for it and fit in it. Default: planned for as much again as the measurements so far cost, without a limit.", rich_help_panel="Plan")] = None,
    overhead: Annotated[float, typer.Option("--run-overhead", help="Time each run takes beyond what the law predicts (queueing, start-up, loading), in the unit of the target's time (of --time-unit where given): added to every run's cost, so that a plan does not favour many short runs it cannot pay for. Default 0.", rich_help_panel="Plan")] = 0.0,
    grammar: Annotated[str, typer.Option("--grammar", "-g", help="Built-in grammar name or grammar file.", rich_help_panel="Search")] = "default",
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples of the law (20 to 10000).", rich_help_panel="Search")] = 100,
    seed: Annotated[int, typer.Option(help="Seed for differential evolution, folds and the bootstrap.", rich_help_panel="Search")] = 0,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of sentences and a table.", rich_help_panel="Output")] = False,
    target_kind: Annotated[str | None, typer.Option(help="time or rate (a throughput: a run takes work / rate). Default: read from the target's name.", rich_help_panel="Data")] = None,
    measure: Annotated[str, typer.Option(help="Fit every run (all), or each configuration's mean, median, min or max of its runs, as run --measure does; each suggestion is then as many runs as a configuration has had.", rich_help_panel="Data")] = "all",
    sheet: Annotated[str | None, typer.Option(help="An Excel workbook's sheet to read, where more than one holds data.", rich_help_panel="Data")] = None,
    work_: Annotated[float | None, typer.Option("--work", help="What one run processes: with a rate, its time is work / rate (default 1: costs per unit of work); with a time per step (or per sample), work × time.", rich_help_panel="Plan")] = None,
    factors: Annotated[str | None, typer.Option(help="Tables: comma-separated factor columns (default: the other numeric columns).", rich_help_panel="Data")] = None,
    drop_missing: Annotated[bool, typer.Option(help="Drop rows with missing values instead of stopping.", rich_help_panel="Data")] = False,
    drop_stray: Annotated[bool, typer.Option(help=DROP_STRAY_HELP, rich_help_panel="Data")] = False,
    where: Annotated[list[str], typer.Option(help=WHERE_HELP, rich_help_panel="Data")] = [],  # noqa: B006
    spread: Annotated[str | None, typer.Option(help=SPREAD_HELP + " Each suggestion is then as many runs as a row summarises.", rich_help_panel="Data")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help=FORMAT_HELP, rich_help_panel="Data")] = None,
    map_: Annotated[list[str], typer.Option("--map", help=MAP_HELP, rich_help_panel="Data")] = [],  # noqa: B006
    intrinsic: Annotated[str | None, typer.Option(help=INTRINSIC_HELP, rich_help_panel="Data")] = None,
    loss: Annotated[str, typer.Option(help=LOSS_HELP, rich_help_panel="Search")] = "squared",
    validation: Annotated[str, typer.Option(help=VALIDATION_HELP, rich_help_panel="Search")] = "largest",
    strategy: Annotated[str, typer.Option(help=STRATEGY_HELP, rich_help_panel="Search")] = "auto",
    time_limit: Annotated[float | None, typer.Option(help=TIME_LIMIT_HELP, rich_help_panel="Search")] = None,
    jobs: Annotated[int, typer.Option(help=JOBS_HELP, rich_help_panel="Search")] = 0,
    by: Annotated[str | None, typer.Option(help="Tables: the columns that name separate series, as run --by takes them; suggest plans for one, named by --series.", rich_help_panel="Data")] = None,
    series: Annotated[str | None, typer.Option(help="Tables: the series to plan for, as run --by names it: model=ResNet-50,platform=DGX-1 (its columns are --by's when --by is not given).", rich_help_panel="Data")] = None,
) -> None:
    """Suggest the next runs: those a plan for the budget makes to narrow the prediction at --at, the most telling per cost first.

    The law is searched as run searches it with the same options (--grammar, --map, --intrinsic, --loss, …)."""
    from .. import export
    from ..advice import per_step, share
    from ..configs import (
        ConfigError,
        amount,
        check_factors,
        listed,
        parse_assignments,
        parse_point,
        parse_values,
        setting,
    )
    from ..errors import SettingsError
    from ..fit import FitSettings
    from ..grammar import load as load_grammar
    from ..identify import unpinned_notes
    from ..optimize import named_unit, priced_unit
    from ..repeats import check_measure, robust_note, runs_each, summarised
    from ..roles import target_kind as kind_of
    from ..search import SearchSettings, search
    from ..spread import fixed
    from ..suggest import advise, check_work
    from ..vocabulary import law_name
    from . import common as cli
    from .common import _check_kind, _datasets
    from .layout import snug

    def work():
        for bad, sentence in ((count < 1, f"--count {count}: give at least 1"),
                              (bootstrap < 20, f"--bootstrap {bootstrap}: suggestions need at least 20 resamples"),
                              (not 0 < tolerance < 1, f"--tolerance {tolerance:g}: give a fraction between 0 and 1 (0.05 is 5 %)"),
                              (price is not None and not 0 < price < float("inf"),
                               f"--price {price or 0:g}: give a positive price per device-hour"),
                              (budget is not None and not 0 < budget < float("inf"),
                               f"--cost-budget {budget}: give a positive cost"),
                              (work_ is not None and not 0 < work_ < float("inf"),
                               f"--work {work_}: give the positive amount one run processes"),
                              (not 0 <= overhead < float("inf"),
                               f"--run-overhead {overhead:g}: give the time a run takes beyond the law's, 0 or more")):
            if bad:
                raise SettingsError(sentence)
        cli._check_prices(price, price_table, price_sheet, time_unit)
        _check_kind(target_kind)
        check_measure(measure)
        rules = load_grammar(grammar)  # a grammar file's mistake, before the data are read
        mapping = cli._pairs(map_, "--map")
        intrinsic_factors = tuple(law_name(name) for name in cli._split(intrinsic) or ())  # as run names them
        space = {name: parse_values(spec, name) for name, spec in parse_assignments(vary, "--vary").items()}
        columns = _series_columns(by, series)
        datasets, failed = _datasets(data, target, factors, fmt, (drop_missing, drop_stray),
                                     ",".join(columns) if columns else None, sheet=sheet, where=where, spread=spread)
        if columns:
            dataset = _one_series(datasets, failed, series)
        elif len(datasets) != 1:
            raise ConfigError(f"'{data}' holds {len(datasets)} series; choose one with --target CALLPATH:METRIC")
        else:
            dataset = next(iter(datasets.values()))
        runs = dataset.row_runs or (1 if measure == "all" else runs_each(dataset))
        dataset = summarised(dataset, measure)
        if at is None:
            example = ",".join(f"{f}={setting(2 * dataset.column(f).max())}" for f in dataset.factors)
            raise ConfigError(f"give the configuration whose time to settle, such as twice the largest measured: "
                              f"--at {example}")
        point = parse_point(at, "--at")
        held = dict(dataset.held)  # factors measured at one value, which no law can vary
        for name in (n for n in space if n in held):  # a held factor is never one of the dataset's
            _second_value(name, held[name], space[name], point.get(name))
        check_factors(list(space), dataset.factors, "--vary", held)  # before the search, not after it
        check_factors(list(point), dataset.factors, "--at", held, point)
        if devices is not None:
            check_factors([law_name(devices)], dataset.factors, "--devices", held)
        for note in [*dataset.notes, *filter(None, [robust_note(dataset, loss)])]:  # as run says them
            cli._note(note)
        measured = {f: _measured(dataset.column(f)) for f in dataset.factors if f not in space}
        together = _together(dataset, measured)
        alone = {f: values for f, values in measured.items() if not any(f in key for key in together)}
        if alone:
            shown = "; ".join(f"{f} {', '.join(setting(v) for v in values)}" for f, values in alone.items())
            cli._note(
                f"suggesting among the measured values of {shown}; --vary "
                f"{next(iter(alone))}=LOW..HIGH (every integer) or LOW..HIGH:x2 (doubling) offers values not measured")
        for key, rows in together.items():
            cli._note(f"{listed(list(key))} were measured together (each value of {key[0]} with one value of "
                      f"{listed(list(key[1:]))}): suggesting among their {len(rows)} measured combinations only; "
                      "--vary one of them offers others")
        space |= alone | together
        # every sum the screening forms: the plausible laws include those off the front
        settings = SearchSettings(FitSettings(seed=seed, loss=loss), validation, bootstrap, jobs, time_limit, strategy,
                                  near_front=False)
        kind = kind_of(dataset.target, target_kind)
        check_work(dataset.target, kind == "rate", dataset.steps, dataset.clock, work_, budget, overhead,
                   price is not None or price_table is not None)  # before the search, not after it
        if work_ is None:
            for note in per_step(dataset.target, kind == "rate", dataset.steps, dataset.clock):
                cli._note(note)
        result = search(dataset, grammar=rules, mapping=mapping, intrinsic=intrinsic_factors, settings=settings)
        result = replace(result, law=replace(result.law, target_kind=kind))
        # what the search says that warns, as run says it without its front (a grammar factor not in the
        # data, a limit or the time limit that cut the search); the unpinned shapes in suggest's own words
        in_own_words = unpinned_notes(result.law.search.get("unpinned", {}), result.law.domain)
        for note in cli._search_notes(result, front=False, skip=in_own_words):
            cli._note(note)
        for name, unpinned in result.law.search.get("unpinned", {}).items():
            if name in measured:  # only a value not measured yet can test the law's shapes there
                cli._note(f"the law's shapes of {name} ({', '.join(unpinned['shapes'])}) are as many as its "
                          f"{unpinned['values']} measured values can tell apart, so runs at those values cannot "
                          f"test its course beyond them; --vary {name}={setting(dataset.column(name).min())}.."
                          f"{setting(4 * dataset.column(name).max())}:x2 offers new values of {name}")
        if dataset.spread is not None:
            how = "" if fixed(dataset.spread[1]) else f" (the harmonic mean of {dataset.spread[1]}, as the noise was read)"
            cli._note(f"each suggestion is {runs} run{'s' if runs > 1 else ''}, as many as a row summarises{how}, "
                      "to be written as one row of "
                      f"{'their mean, standard deviation and count' if runs > 1 else 'its time and a count of 1'}; "
                      "a repeat (of a row or of another suggestion) adds its runs to that one row, pooling them, as "
                      "--spread takes one row per configuration")
        elif runs > 1:
            cli._note(f"each suggestion is {runs} runs, as many as a configuration has had (the median), to be "
                      f"fitted as one value like the others (--measure {measure}); its cost is that of all {runs}")
        prices = None if price_table is None else cli._read_prices(price_table, price_sheet, result.law.factors)
        priced = price is not None or prices is not None
        unit, said = priced_unit(result.law.target, time_unit, result.law.rate)
        if priced and said:
            cli._note(said)
        shown = None if priced else time_unit or named_unit(result.law.target, result.law.rate)  # of unpriced costs
        return result, runs, advise(result, space, point, count, devices and law_name(devices),
                                    1.0 if price is None else price, tolerance, budget, work_, runs,
                                    unit if priced else None, prices, shown, overhead)

    result, runs, advice = cli._guard(work)
    if where and not _series_columns(by, series) and not advice.settled:
        for sentence in _measured_but_left_out(data, sheet, where, result.law.factors, advice.suggestions,
                                               dict(result.law.held)):
            cli._note(sentence)
    if json_:
        shown = () if advice.settled else advice.suggestions  # settled: nothing more to measure
        record = {"suggestions": [{**s.config, "runs": runs, "cost": s.cost, "gain": s.gain, "measured": s.measured,
                                   "repeats_suggestion": s.repeats, "why": s.sentence} for s in shown],
                  "cost_basis": advice.cost_basis, "settled": advice.settled, "prediction_at": advice.prediction_at,
                  "interval_at": list(advice.interval_at),
                  "plausible": [{"law": law, "form": form, "weight": w, "prediction_at": p}
                                for law, form, w, p in advice.plausible]}
        sys.stdout.write(json.dumps(record, indent=2) + "\n")
        return
    cli.out.print(f"law: {result.law.target} = {export.rounded_text(result.law)}", highlight=False, soft_wrap=True)
    for sentence in advice.sentences:
        cli.out.print(sentence, highlight=False)
    if advice.suggestions and not advice.settled:
        factors = list(advice.suggestions[0].config)
        table = Table("#", *factors, "cost", "gain", "repeat of", title_justify="left")
        for column in table.columns:
            column.overflow = "fold"
        for i, s in enumerate(advice.suggestions, start=1):
            table.add_row(str(i), *[setting(s.config[f]) for f in factors], amount(s.cost), share(s.gain),
                          f"#{s.repeats}" if s.repeats else "a measured run" if s.measured else "")
        cli.out.print(snug(table))
        for i, s in enumerate(advice.suggestions, start=1):
            cli.out.print(f"{i}. {s.sentence}", highlight=False, soft_wrap=True)


def _measured_but_left_out(data: Path, sheet: str | None, where: list[str], factors: tuple[str, ...],
                           suggestions, held: dict[str, float]) -> list[str]:
    """The suggestions the table measured already in rows that a --where condition on a factor left
    out (the large configurations kept to check the law on), at the values of the factors the
    fitted rows held: a run there need not be paid for."""
    import numpy as np

    from ..configs import setting
    from ..data import configurations
    from ..errors import ExprsearchError
    from ..rowfilter import keep, parse
    from ..tables import file_lines, read_table, rows_named
    from ..vocabulary import law_name

    conditions = parse(where)
    on_factors = [c for c in conditions if law_name(c.column) in factors]
    fresh = [(k, s) for k, s in enumerate(suggestions, start=1) if not s.measured and not s.repeats]
    if not on_factors or not fresh:
        return []
    try:  # a table; an Extra-P file's points were read as the law's already
        frame = read_table(data, sheet)
        others = [c for c in conditions if c not in on_factors]
        frame = keep(frame, others, f"'{data}'")[0] if others else frame
        at = configurations(frame, (*factors, *held), data)
    except ExprsearchError:
        return []
    lines = file_lines(frame.index)
    said = " and ".join(map(str, on_factors))
    found = []
    for k, s in fresh:
        rows = np.flatnonzero(np.all([at[f] == value for f, value in {**s.config, **held}.items()], axis=0))
        if rows.size:
            where_ = ", ".join(f"{f}={setting(s.config[f])}" for f in factors)
            found.append(f"suggestion {k} ({where_}) is measured already: '{data}' holds it at "
                         f"{rows_named(rows, 0 if lines is None else lines)}, which --where {said} leaves out; "
                         "widen --where to fit on it, or keep it out and check the law there (exprsearch predict "
                         "LAW --data)")
    return found


def _series_columns(by: str | None, series: str | None) -> list[str]:
    """The columns that name the series: --by's, or those --series names (COLUMN=VALUE,…)."""
    from .common import _split

    if by is not None:
        return _split(by) or [by]
    return list(_series_pairs(series)) if series is not None else []


def _series_pairs(series: str, columns: list[str] = ()) -> dict[str, str]:
    """--series' COLUMN=VALUE pairs; split where one of ``columns`` (the --by columns, where known)
    begins a pair, so that a column's name or a value may hold a comma."""
    import re

    from ..configs import ConfigError

    names = "|".join(re.escape(c) for c in sorted(columns, key=len, reverse=True))
    starts = list(re.finditer(rf"(?:^|,)\s*({names})\s*=", series)) if names else []
    if starts and starts[0].start() == 0:
        ends = [m.start() for m in starts[1:]] + [len(series)]
        return {m.group(1): series[m.end():end].strip() for m, end in zip(starts, ends)}
    pairs = [part.partition("=") for part in series.split(",")]
    if any(not sep or not column.strip() for column, sep, _ in pairs):
        values = [column.strip() for column, _, _ in pairs]  # without an '=' each piece is a value
        meant = (f"; for these values in --by's order: --series {','.join(f'{c}={v}' for c, v in zip(columns, values))}"
                 if "=" not in series and len(values) == len(columns) else " (model=ResNet-50,platform=DGX-1)")
        raise ConfigError(f"--series {series}: name the series as run --by names it, COLUMN=VALUE pairs joined by "
                          f"commas{meant}")
    return {column.strip(): value.strip() for column, _, value in pairs}


def _one_series(datasets: dict, failed: dict, series: str | None):
    """The --by group --series names (or the only one), or one sentence naming those to choose from
    (those that share a value with --series first). ``datasets`` holds one group at least (reading
    them stops where none can be fitted)."""
    from ..configs import ConfigError
    from ..grouped import group_name

    names = sorted([*datasets, *failed])
    if series is None and len(names) == 1:
        return next(iter(datasets.values()))
    # the --by columns as the table names them (--by 'batch, per device' was split at its comma)
    columns = [column for column, _ in next(iter(datasets.values())).group]
    pairs = _series_pairs(series, columns) if series is not None else {}
    given = set(group_name(pairs.items()).split(","))  # its COLUMN=VALUE parts, as group names hold them
    close = [n for n in names if set(n.split(",")) & given]
    listed = list(dict.fromkeys(close + names))
    shown = "; ".join(listed[:4]) + ("; …" if len(listed) > 4 else "")
    if series is None:
        raise ConfigError(f"the rows hold {len(names)} series by {', '.join(columns)}, and suggest plans for one: "
                          f"give --series with its name, such as --series {names[0]} (of {shown})")
    if set(pairs) != set(columns):
        raise ConfigError(f"--series {series} names the columns {', '.join(pairs)}, but --by names "
                          f"{', '.join(columns)}: give a value of each --by column")
    wanted = group_name((c, pairs[c]) for c in columns)
    if wanted in failed:
        raise ConfigError(f"--series {wanted}: {failed[wanted]}")
    if wanted not in datasets:
        raise ConfigError(f"--series {wanted}: no such series by {', '.join(columns)}; the series are {shown}")
    return datasets[wanted]


def _together(dataset, measured: dict) -> dict:
    """Factors of ``measured`` (not varied) whose values the data hold only together: each value
    of one of them comes with a single value of each of the others (a model's parameters, FLOPs
    and layers). New combinations of them may not exist, so they are offered as measured, keyed
    by their names, a row per combination (:func:`exprsearch.suggest.candidates`)."""
    import numpy as np

    # the factors offered at their measured values (not a span), with how many they have
    columns = {f: dataset.column(f) for f in measured if len(measured[f]) == len(np.unique(dataset.column(f)))}
    distinct = {f: len(measured[f]) for f in columns}
    blocks, taken = {}, set()
    for lead in sorted(columns, key=lambda f: (-distinct[f], list(measured).index(f))):
        if lead in taken:
            continue
        key = [lead] + [f for f in columns if f != lead and f not in taken and
                        len(np.unique(np.column_stack([columns[lead], columns[f]]), axis=0)) == distinct[lead]]
        if len(key) > 1:
            taken |= set(key)
            blocks[tuple(key)] = np.unique(np.column_stack([columns[f] for f in key]), axis=0)
    return blocks


def _measured(values):
    """A factor's values to suggest where --vary gives none: those measured (new combinations of
    them, or repeats), not values between them, which a factor such as a model may not have;
    where it takes more than 16, its measured range, doubling (as optimize searches it)."""
    import numpy as np

    from ..configs import measured_span

    distinct = np.unique(values)
    return distinct if len(distinct) <= 16 else measured_span(float(distinct[0]), float(distinct[-1]))


def _second_value(name: str, value: float, offered, target: float | None) -> None:
    """Refuse to plan along a factor every run so far held at ``value``, naming the run to make
    first: the --vary value nearest twice (or half) it, toward the --at target where one is given,
    a step the noise cannot hide that costs little more than the runs so far."""
    import numpy as np

    from ..configs import ConfigError, setting

    offered = np.unique(np.asarray(offered, dtype=float))
    others = offered[offered != value]
    if not others.size:
        return  # --vary offers only the measured value: check_factors says what is wrong
    direction = 0.0 if target is None else target - value  # 0: no target, or the measured value
    toward_target = others[(others - value) * direction > 0]
    side = toward_target if toward_target.size else others
    double = 2 * value if (side > value).any() else value / 2
    nearest = side[np.argmin(np.abs(np.log(side / double)))] if value > 0 and (side > 0).all() else side[0]
    toward = f", toward --at {name}={setting(target)}" if direction * (nearest - value) > 0 else ""
    raise ConfigError(
        f"--vary names '{name}', which every run so far held at {setting(value)}: no law can say yet how {name} "
        f"changes the time, so none can plan runs along it; measure one run at {name}={setting(nearest)} first (the "
        f"--vary value nearest {'twice' if nearest > value else 'half'} {setting(value)}{toward}), with the other "
        "factors as measured, then ask again")
