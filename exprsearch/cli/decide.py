"""From a law to decisions: ``explain`` and ``optimize`` (``predict`` is in ``predict``, ``plot`` in ``figures``)."""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from ..vocabulary import law_name
from .choice import contested, overrun
from .common import _check_prices, _guard, _note, _read_prices, _warn, app, out
from .layout import snug
from .ranges import far_outside, outside_measured, past_change


def _law(path: Path):
    from ..law import load

    return load(path)


def _segments(law_file: Path, levels: str | None = None):
    """The laws of a series' segments where ``law_file`` is the folder run --segments wrote them to
    (:func:`exprsearch.segmented.segment_laws`), else None; ``--levels`` needs one segment's law.json."""
    from ..configs import ConfigError
    from ..segmented import segment_laws

    pieces = segment_laws(law_file)
    if pieces is not None and levels is not None:
        raise ConfigError(f"--levels: give one segment's law.json (in a folder of '{law_file}'), not the folder of "
                          "all its segments")
    return pieces


def _folder(law_file: Path) -> Path:
    """The folder run wrote the law to, with levels.json and front.csv (``law_file`` may name it)."""
    from ..law import locate

    return locate(law_file).parent


def _read_levels(law_file: Path, law, factor: str):
    """The per-value law of ``factor`` from the levels.json that run wrote beside ``law_file``."""
    from ..errors import LawError
    from ..levels import Levels

    factor = law_name(factor)  # as --fix names it: 'batch size' is batch_size
    path = _folder(law_file) / "levels.json"
    if not path.is_file():
        raise LawError(f"no levels.json in '{path.parent}' beside the law: run with --intrinsic {factor} to test its values as levels")
    try:
        records = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise LawError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(records, list):
        raise LawError(f"{path} is not a list of levels as run writes it; run again to write it afresh")
    found = [r for r in records if isinstance(r, dict) and r.get("factor") == factor]
    if not found:
        tested = ", ".join(str(r.get("factor")) for r in records if isinstance(r, dict)) or "none"
        raise LawError(f"{path} has no levels of '{factor}'; the factors tested as levels: {tested}")
    return Levels.from_dict(law, found[0])


def _law_at_level(law_file: Path, levels: str | None, fixed: dict[str, float]):
    """The law of law.json, or with ``levels``, its law for the value of that factor in ``fixed``."""
    from ..configs import ConfigError

    law = _law(law_file)
    if levels is None:
        return law
    levels = law_name(levels)
    if levels not in fixed:
        raise ConfigError(f"--levels {levels} needs --fix {levels}=VALUE, one of its measured values")
    return _read_levels(law_file, law, levels).law_at(fixed[levels])


def _fixed(specs: list[str]) -> dict[str, float]:
    from ..configs import ConfigError, parse_assignments

    # --fix n=16000,b=64 as --at writes a configuration (a piece without '=' keeps the spec whole)
    specs = [piece for spec in specs for piece in (spec.split(",") if all("=" in p for p in spec.split(",")) else [spec])]
    fixed = {}
    for name, value in parse_assignments(specs, "--fix").items():
        try:
            fixed[name] = float(value)
        except ValueError:
            raise ConfigError(f"--fix {name}={value}: give one number") from None
    return fixed


def _varied(specs: list[str]) -> dict:
    from ..configs import parse_assignments, parse_values

    return {name: parse_values(value, name) for name, value in parse_assignments(specs, "--vary").items()}


@app.command("explain")
def explain_command(
    law_file: Annotated[Path, typer.Argument(metavar="LAW.json", help="A law.json written by run, or the folder run wrote it to.")],
    vary: Annotated[str | None, typer.Option(help="The factor and its range: p=1..1024; p alone: from its smallest measured value, doubling, to 8× its largest (the default for the one factor --fix leaves open).")] = None,
    fix: Annotated[list[str], typer.Option(help="Other factors' values: n=16000 or n=16000,b=64 (repeatable).")] = [],  # noqa: B006
    threshold: Annotated[float, typer.Option(help="Doubling the factor must save at least this share of time.")] = 0.05,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    levels: Annotated[str | None, typer.Option(help="Use the law's constants for the --fix value of this intrinsic factor (levels.json beside LAW.json).")] = None,
) -> None:
    """Each term's contribution along a factor, speedup, efficiency and the scalability limit."""
    from ..explain import explain

    def work():
        fixed = _fixed(fix)
        pieces = _segments(law_file, levels)
        if pieces is None:
            law = _law_at_level(law_file, levels, fixed)
            factor, values, note = _followed(law, vary, fixed)
            return [(None, law, explain(law, factor, values, fixed, threshold))], note
        return _explained_segments(pieces, vary, fixed, threshold)

    explained, note = _guard(work)
    if note:
        _note(note)
    given = vary is not None and "=" in vary
    records = [_said(law, e, json_, segment, given) for segment, law, e in explained]
    if json_:
        sys.stdout.write(json.dumps(records[0] if len(records) == 1 else {"segments": records}, indent=2) + "\n")


def _explained_segments(pieces, vary: str | None, fixed: dict[str, float], threshold: float):
    """Each segment's law explained over the values of its side of the change (of --vary, or from
    the series' smallest measured value, doubling, to 8× its largest), with a note saying so."""
    from dataclasses import replace

    from ..configs import ConfigError, setting
    from ..explain import default_values, explain

    factor = pieces.factor
    if vary is not None and "=" in vary:
        (named, values), = _varied([vary]).items()
    else:
        named = law_name(vary) if vary is not None and vary.strip() else factor
        values = None
    if named != factor:
        raise ConfigError(f"--vary {named}: a series' segments are explained along their factor, {factor}; give one "
                          "segment's law.json to follow another")
    if values is None:  # explain's default range, over the whole series' measured range of the factor
        last = pieces.laws[-1]
        values = default_values(replace(last, domain={**last.domain, factor: pieces.domain[factor]}), factor)
    which = pieces.which(values)
    explained = [(pieces.names[k], law, explain(law, factor, values[which == k], fixed, threshold))
                 for k, law in enumerate(pieces.laws) if (which == k).sum() >= 2]
    if not explained:
        raise ConfigError(f"--vary {factor}: give at least two values on one side of the change")
    return explained, (f"each segment's law is explained over its side of the change ({'; '.join(pieces.names)}), "
                       f"following {factor} from {setting(values[0])} to {setting(values[-1])}; speedup and "
                       "efficiency are from each side's first value")


def _said(law, e, json_: bool, segment: str | None, given: bool = False) -> dict | None:
    """What explain says of one law (``segment``: the segment it holds on, where it is one of a
    series' segments; ``given``: --vary gave the range): the warnings, then the table and
    sentences, or the JSON record."""
    import numpy as np

    from ..configs import setting

    if segment is None:  # past a change of regime, where the shapes are unpinned, or beyond a given --vary range
        values = e.values.tolist()  # (the default range says in a note how far past the measurements it goes)
        unpinned = e.factor in law.search.get("unpinned", {})
        if warning := far_outside(law, e.factor, values) if given or unpinned else past_change(law, e.factor, values):
            _warn(warning)
    # a fixed value far outside the measurements makes every row an extrapolation, as predict warns
    for warning in [w for f, v in e.fixed.items() if f in law.factors and (w := far_outside(law, f, [v]))]:
        _warn(f"--fix {warning}")
    beyond = outside_measured(law, e.factor, e.values)  # the rows the law extrapolates to
    if json_:
        limit = None if e.limit is None else e.limit.__dict__
        # "time" holds the law's target along the factor: a rate where target_kind says so
        return {**({"segment": segment} if segment else {}), "factor": e.factor, "fixed": e.fixed,
                "values": e.values.tolist(), "beyond_measured": beyond.tolist(), "time": e.total.tolist(),
                "target_kind": "rate" if e.rate else "time",
                "terms": [{"rule": lab, "term": t, "contribution": c.tolist()}
                          for lab, t, c in zip(e.labels, e.terms, e.contributions)],
                "speedup": e.speedup.tolist(),
                "efficiency": [None if v != v else v for v in e.efficiency.tolist()],  # none from 0: NaN is no JSON
                "limit": limit,
                "regimes": [{**r.__dict__, "interval": None if r.interval is None else list(r.interval)}
                            for r in e.regimes],
                "summary": list(e.sentences)}
    if segment:
        out.rule(segment)
    names = [f"term {k}" for k in range(1, len(e.terms) + 1)]
    table = Table(e.factor, law.target, *names, "dominant", "speedup", "efficiency", box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False, show_edge=False,
                  title=f"Where the {'rate comes from' if e.rate else 'time goes'}; the terms are listed below", title_justify="left")
    for column in table.columns:
        column.overflow = "fold"  # never cut
    dominant = e.dominant()
    for i in _shown(e.values):
        table.add_row(setting(e.values[i]) + (" *" if beyond[i] else ""), f"{e.total[i]:.4g}",
                      *[f"{c[i]:.3g}" for c in e.contributions],
                      names[dominant[i]], f"{e.speedup[i]:.3g}",
                      "" if np.isnan(e.efficiency[i]) else f"{100 * e.efficiency[i]:.3g} %")
    if beyond[_shown(e.values)].any():
        low, high = law.domain[e.factor]
        table.caption = f"* beyond the measured {e.factor} ({setting(low)}..{setting(high)}): the law extrapolated"
        table.caption_justify = "left"
    out.print(snug(table))
    for name, label, term in zip(names, e.labels, e.terms):
        out.print(f"{name}: {term} ({label})", highlight=False, soft_wrap=True, markup=False)
    for sentence in e.sentences:
        out.print(sentence, highlight=False)
    return None


def _followed(law, vary: str | None, fixed: dict[str, float]):
    """The factor explain follows and its values, as --vary gives them or by default (with a note
    saying which range was taken)."""
    from ..configs import check_factors, setting
    from ..explain import default_values, measured_range, to_follow

    if vary is not None and "=" in vary:
        (factor, values), = _varied([vary]).items()
        return factor, values, None
    factor = law_name(vary) if vary is not None and vary.strip() else to_follow(law, fixed)
    check_factors([factor], law.factors, "--vary", law.held)
    values = default_values(law, factor)
    return factor, values, (f"following {factor} from {setting(values[0])} to {setting(values[-1])}, doubling (measured "
                            f"{measured_range(law, factor)}); --vary {factor}=LOW..HIGH sets the range")


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
    law_file: Annotated[Path, typer.Argument(metavar="LAW.json", help="A law.json written by run, or the folder run wrote it to.")],
    vary: Annotated[list[str], typer.Option(help="A factor to search: p=1..512 or b=32,64,128 (repeatable). Default: the measured range of every factor not fixed, doubling.", rich_help_panel="Configurations")] = [],  # noqa: B006
    fix: Annotated[list[str], typer.Option(help="Factors held fixed: n=1281167 or n=1281167,b=64 (repeatable).", rich_help_panel="Configurations")] = [],  # noqa: B006
    where: Annotated[list[str], typer.Option(help="A constraint: 'p*b <= 65536' (repeatable).", rich_help_panel="Configurations")] = [],  # noqa: B006
    price: Annotated[float | None, typer.Option(help="Price per device-hour (or per hour without --devices).", rich_help_panel="Cost and budget")] = None,
    devices: Annotated[str | None, typer.Option(help="Factor that counts the devices paid for, e.g. p; without a price, a run costs devices × its time.", rich_help_panel="Cost and budget")] = None,
    price_table: Annotated[Path | None, typer.Option(help="A table (CSV, workbook, …): factor columns and a 'price' column per hour.", rich_help_panel="Cost and budget")] = None,
    price_sheet: Annotated[str | None, typer.Option(help="With --price-table: an Excel workbook's sheet, where more than one holds data.", rich_help_panel="Cost and budget")] = None,
    budget: Annotated[float | None, typer.Option(help="Largest acceptable predicted time of a run, in the target's unit.", rich_help_panel="Cost and budget")] = None,
    time_unit: Annotated[str | None, typer.Option(help="Unit of the target (of its time, for a rate with --work): ms, s, min or h, for --price or --price-table; default: the unit its name ends in (ttt_min_mean, epoch_s), else s, said in a note.", rich_help_panel="Cost and budget")] = None,
    work_: Annotated[float | None, typer.Option("--work", help="What one run processes, for --budget and prices: with a rate (samples/s) a run's time is work / rate; with a time per step (or per sample), work × time.", rich_help_panel="Cost and budget")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.", rich_help_panel="Output")] = False,
    plot: Annotated[Path | None, typer.Option("--plot", help="Also draw the time/cost Pareto set into this PNG (with a price).", rich_help_panel="Output")] = None,
    force: Annotated[bool, typer.Option(help="With --plot: replace the file if it exists.", rich_help_panel="Output")] = False,
    levels: Annotated[str | None, typer.Option(help="Use the law's constants for the --fix value of this intrinsic factor (levels.json beside LAW.json).", rich_help_panel="Configurations")] = None,
) -> None:
    """The fastest configuration, or the cheapest within --budget, and the time/cost Pareto set."""

    from ..configs import ConfigError, described, setting
    from ..optimize import Pricing, measured_space, named_unit, optimize, priced_unit

    notes: list[str] = []

    def work():
        law = _segments(law_file, levels)  # a series' segments: each configuration by its own segment's law
        if law is not None:
            notes.append(f"each configuration is predicted by the law of its segment of {law.factor} ("
                         + "; ".join(law.names) + ")")
        else:
            law = _law_at_level(law_file, levels, _fixed(fix))
        _check_prices(price, price_table, price_sheet, time_unit)
        table = None if price_table is None else _read_prices(price_table, price_sheet, law.factors)
        devices_factor = None if devices is None else law_name(devices)
        unit, said = priced_unit(law.target, time_unit, law.rate)
        if price is not None or table is not None:
            notes.extend([said] if said else [])
        pricing = Pricing(price, devices_factor, table, unit, f"the price table '{price_table}'") \
            if (price is not None or table is not None or devices is not None) else None
        if devices is not None and price is None and table is None:
            run_time = f"--work / {law.target}" if law.rate else f"--work × {law.target}" if work_ else law.target
            notes.append(f"without --price, a run's cost is its device-time, {devices_factor} × {run_time}")
        if plot is not None:
            if pricing is None:
                raise ConfigError("--plot draws time against cost: give --price, --price-table or --devices")
            if plot.exists() and not force:
                from ..errors import OutputError

                raise OutputError(f"'{plot}' already exists; give --plot another file, or --force to replace it")
            from ..plot import require_matplotlib

            require_matplotlib()  # before the search, not after it
        space = _varied(vary) if vary else measured_space(law, _fixed(fix))
        if not vary:
            notes.append("searched the measured range of " + ", ".join(
                f"{f} ({', '.join(setting(v) for v in values)})" for f, values in space.items())
                + "; --vary searches other values, beyond the measurements too")
        found = optimize(law, space, _fixed(fix), where, pricing, budget, work_)
        if plot is not None:
            from ..plot import pareto_set

            pareto_set(list(found.pareto), found.best, f"time (work / {law.target})" if law.rate else
                       f"time ({work_:g} × {law.target})" if work_ is not None else law.target, plot, budget)
        return law, found

    law, o = _guard(work)
    if work_ is None and (budget is not None or price is not None or price_table is not None):
        from ..advice import per_step

        notes += per_step(law.target, law.rate, law.dataset.get("steps"), bool(law.dataset.get("clock")))
    for note in notes:
        _note(note)
    # the best configuration is where the decision is made: the law's reach there is said with it
    warnings = [w for f, v in o.best.config.items() if (w := far_outside(law, f, [v]))]
    if json_:
        record = {"objective": o.objective, "best": o.best.__dict__, "considered": o.considered,
                  "feasible": o.feasible, "ties": o.ties, "pareto": [c.__dict__ for c in o.pareto],
                  "safe": None if o.safe is None else o.safe.__dict__, "safe_searched": o.safe_searched,
                  "rivals": [{"config": c, "extra": None if e == float("inf") else e} for c, e in o.rivals],
                  "left_out": [{"why": why, "count": count, "first": first} for why, count, first in o.left_out],
                  "warnings": warnings}
        sys.stdout.write(json.dumps(record, indent=2) + "\n")
        return
    best = o.best
    config = described(best.config)
    cost = "" if best.cost is None else f", cost {best.cost:.4g}"
    what = "cheapest" if o.objective == "cost" else "fastest"
    run_time = law.rate or work_ is not None  # a time apart from the target's own value
    unit = time_unit or named_unit(law.target, law.rate)  # of a run's time: the target's (a rate's: its per)
    unit = f" {unit}" if unit else ""
    upto = "" if best.slowest is None else f" (95 % up to {best.slowest:.4g}{unit if run_time else ''})"
    upto = upto if best.lowest is None else f" (95 % down to {best.lowest:.4g})"  # a rate given no --work
    timed = f", time {best.time:.4g}{unit}{upto}" if run_time and best.time is not None else ""
    out.print(f"{what} of {o.feasible} feasible configurations (of {o.considered}): {config} → "
              f"{law.target} {best.value:.4g}{'' if timed else upto}{timed}{cost}", highlight=False)
    if law.rate:
        _note(
            f"{law.target} is read as a rate (higher is better), so the fastest configuration has the largest; "
            "if it is a time, fit it again with exprsearch run … --target-kind time")
    if o.ties > 1:
        lead = f"all {o.feasible}" if o.ties == o.feasible else f"{o.ties} of the {o.feasible}"
        _note(f"{lead} feasible configurations {'cost the least' if o.objective == 'cost' else 'are the fastest'}, "
              "alike to 9 significant digits; the fastest of them is shown")
    for why, count, first in o.left_out:
        _note(f"left out {count} configuration(s) {why}, first {first}")
    for w in warnings:
        _warn(f"in the {what} configuration, {w}; measure near it before relying on it (exprsearch suggest "
              "plans runs)")
    if budget is not None and best.slowest is not None and best.slowest > budget:
        _warn(overrun(o, budget, unit))
    if rivalled := contested(o, len(law.search.get("plausible", ())) if hasattr(law, "search") else 0):
        _warn(rivalled)
    if o.objective == "cost" and len(o.pareto) > 1:
        bounded = best.slowest is not None
        table = Table(*best.config, law.target, *(["time"] if run_time else []), *(["95 % up to"] if bounded else []),
                      "cost", title="time vs cost: Pareto set", title_justify="left")
        for c in o.pareto[:30]:
            table.add_row(*[setting(v) for v in c.config.values()], f"{c.value:.4g}",
                          *([f"{c.time:.4g}"] if run_time else []), *([f"{c.slowest:.4g}"] if bounded else []),
                          f"{c.cost:.4g}")
        out.print(snug(table))
        if len(o.pareto) > 30:
            out.print(f"… and {len(o.pareto) - 30} more on the Pareto set (all of them with --json)", highlight=False)
    if plot is not None:
        out.print(f"wrote {plot}", highlight=False)
