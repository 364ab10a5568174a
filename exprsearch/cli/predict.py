"""``exprsearch predict``: the law's target at configurations given or in a table, beside the
measured target where the table holds it. Registered by the package's ``__init__``."""

import json
import sys
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table

from ..vocabulary import law_name
from .common import _guard, _note, _warn, app, out
from .layout import snug


@app.command()
def predict(
    law_file: Annotated[Path, typer.Argument(metavar="LAW.json", help="A law.json written by run, or the folder run wrote it to.")],
    at: Annotated[list[str], typer.Option("--at", help="A configuration: p=128,n=16000 (repeatable).")] = [],  # noqa: B006
    data: Annotated[Path | None, typer.Option(help="A table of configurations (columns named as the factors), or a file of Extra-P's formats (the points of the law's series); a measured target beside them is compared.")] = None,
    sheet: Annotated[str | None, typer.Option(help="With --data: an Excel workbook's sheet, where more than one holds data (default: the one the law was fitted on, where the workbook has it).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    levels: Annotated[str | None, typer.Option(help="Predict with the law's constants per value of this intrinsic factor (levels.json beside LAW.json; measured values only).")] = None,
    where: Annotated[list[str], typer.Option(help="With --data: the rows to predict, picked as run's --where picks them (platform=b, gpus>8; repeatable). A condition on a column the law was fitted with (its --where or --by group) takes the place of the law's.")] = [],  # noqa: B006
) -> None:
    """Predict the target at configurations, warning when far outside the measured range."""

    import pandas as pd

    from ..configs import ConfigError, check_factors, parse_point, setting
    from .decide import _law, _segments

    def work():
        pieces = _segments(law_file, levels)  # the folder run --segments wrote a series' segments to
        law = pieces.laws[-1] if pieces else _law(law_file)  # the segments' laws share their factors
        if data is not None:
            from ..data import configurations
            from ..tables import file_lines
            from .picked import rows_to_predict

            frame = rows_to_predict(data, sheet, law, where)
            present = {law_name(str(c)) for c in frame.columns}  # a factor the law leaves out may be missing
            columns = configurations(frame, tuple(f for f in law.factors if law.uses(f) or f in present), data)
            lines = file_lines(frame.index)  # to name a row by its line, as configurations() does
            _check_held(frame, law, data, lines)
            measured = _measured(frame, law.target, data, lines)
            # a column 'batch size' is the factor batch_size: shown and written under the law's name
            frame = frame.rename(columns={c: law_name(str(c)) for c in frame.columns if law_name(str(c)) in columns})
            frame = _own_names_kept(frame, law)
        elif at:
            if sheet is not None or where:
                raise ConfigError(f"{'--sheet names a sheet' if sheet is not None else '--where picks rows'} of the "
                                  "--data table; give --data")
            points = [parse_point(spec, "--at", repeatable=True) for spec in at]
            for point in points:
                check_factors(list(point), law.factors, "--at", law.held, point)
            frame = pd.DataFrame(points)
            missing = [f for f in law.factors if law.uses(f) and (f not in frame.columns or frame[f].isna().any())]
            if missing:
                raise ConfigError(f"give factor '{missing[0]}' a value in every configuration")
            columns = {f: frame[f].to_numpy(dtype=float) for f in law.factors if f in frame.columns}
            lines, measured = None, None
        else:
            raise ConfigError("give configurations with --at p=128,n=16000 or --data FILE")
        frame = frame.copy()
        if pieces:
            frame, warnings = _piecewise(pieces, columns, frame, data, lines)
        else:
            frame, warnings = _predicted(law, law_file, columns, frame, levels, data, lines)
        if measured is not None:  # the table holds the target: set beside the prediction, not replaced
            frame["measured"] = measured
            frame["error_pct"] = 100 * (frame[law.target] / measured - 1)
        return law, frame, warnings

    law, frame, warnings = _guard(work)
    checked = frame["error_pct"].dropna() if "error_pct" in frame else None
    mape = float(checked.abs().mean()) if checked is not None and len(checked) else None
    split = _split_by_range(law, frame.loc[checked.index]) if mape is not None else {}
    factors = [f for f in law.factors if f in frame.columns]  # a factor the law does not use may be left out
    shown, per_run = _by_configuration(frame, law.target, factors)
    if json_:
        records = [{**{k: None if isinstance(v, float) and v != v else v for k, v in r.items()},  # NaN is no JSON
                    "beyond_measured": bool(outside)}
                   for r, outside in zip(frame.to_dict(orient="records"), _beyond(law, frame))]
        runs = {"runs_mape_pct": float(per_run.abs().mean())} if per_run is not None and len(per_run) else {}
        sys.stdout.write(json.dumps({"predictions": records, "warnings": warnings,
                                     **({"mape_pct": mape} if checked is not None else {}), **runs,
                                     **{f"mape_{k}_pct": v for k, (v, _) in split.items()}}, indent=2) + "\n")
        return
    for w in warnings:
        _warn(w)
    rows, frame = len(frame), shown
    if len(frame) < rows:
        _note(f"the {rows} rows hold {len(frame)} configurations: one line each, beside the median of its measured "
              f"runs{' (each the median of its steps)' if per_run is not None else ''}; --json gives every row")
    parted = any(PARTED in w for w in warnings)  # the other plausible laws' range, where it matters
    extra = [c for c in ("low_95", "high_95", *(("plausible_low", "plausible_high") if parted else ()), "measured",
                         "runs", "error_pct") if c in frame]
    segmented = ["segment"] if "segment" in frame else []  # predicted by a folder of segments' laws
    table = Table(*[*factors, *segmented, law.target, *(c.replace("_pct", " %") for c in extra)])
    for column in table.columns:
        column.overflow = "fold"  # a number cut to '1.2413…' would read as another number
    marked = _beyond(law, frame)  # the rows the law extrapolates to
    for (_, row), outside in zip(frame.iterrows(), marked):
        table.add_row(*[setting(row[f]) + (" *" if outside and k == 0 else "") for k, f in enumerate(factors)],
                      *[row[c] for c in segmented],
                      *["" if row[c] != row[c] else f"{row[c]:+.3g}" if c == "error_pct" else
                        f"{int(row[c])}" if c == "runs" else f"{row[c]:.6g}" for c in (law.target, *extra)])
    if marked.any() and factors:
        table.caption = "* beyond the measured range of the law's factors: the law extrapolated"
        table.caption_justify = "left"
    out.print(snug(table))
    if per_run is not None and len(per_run):  # a log's steps: the error of its runs, as the law was fitted
        out.print(f"against the measured {law.target}: mean absolute error {float(per_run.abs().mean()):.3g} % over "
                  f"{len(per_run)} run{'s' if len(per_run) != 1 else ''}, each the median of its steps ({mape:.3g} % over the "
                  f"{len(checked)} steps)",
                  highlight=False)
    elif checked is not None:
        parts = (f"{split['within'][0]:.3g} % over the {split['within'][1]} within the measured range, "
                 f"{split['beyond'][0]:.3g} % over the {split['beyond'][1]} beyond it") if split else ""
        out.print(f"against the measured {law.target}: mean absolute error {mape:.3g} % over {len(checked)} row(s)"
                  + (f" ({parts})" if parts else "")
                  if len(checked) else f"no row of '{data}' holds a measured {law.target} to compare with",
                  highlight=False)


def _split_by_range(law, frame) -> dict[str, tuple[float, int]]:
    """The mean absolute error % of the rows within the law's measured range and of those beyond
    it (any factor outside), with their counts, where the table has both: how the law does where it
    was measured against where it predicts, which fitting on the small configurations asks."""
    beyond = _beyond(law, frame)
    if beyond.all() or not beyond.any():
        return {}
    errors = frame["error_pct"].abs().to_numpy(dtype=float)
    return {"within": (float(errors[~beyond].mean()), int((~beyond).sum())),
            "beyond": (float(errors[beyond].mean()), int(beyond.sum()))}


def _beyond(law, frame) -> np.ndarray:
    """Which rows lie outside the law's measured range (law.json's domain) in a factor it uses."""
    from .ranges import outside_measured

    beyond = np.zeros(len(frame), dtype=bool)
    for factor in law.domain:
        if factor in frame.columns and law.uses(factor):
            beyond |= outside_measured(law, factor, frame[factor].to_numpy(dtype=float))
    return beyond


def _predicted(law, law_file, columns: dict, frame, levels: str | None, data: Path | None, lines,
               crossing: bool = True):
    """``frame`` (the configurations, ``columns`` by factor) with the law's prediction, its interval
    and the other plausible laws' range where they part, and the warnings (``crossing``: also of a
    configuration past the change of regime a segment's law ends at)."""
    from ..configs import check_defined
    from .decide import _read_levels
    from .ranges import far_outside

    warnings = [w for f in columns if (w := far_outside(law, f, columns[f], crossing))]
    warnings += [f"the law leaves out {f} because its measurements were too few for a law that holds it (law.json: "
                 f"search.unaffordable), not because the times do not change with {f}: its prediction does not follow "
                 f"{f}" for f in law.search.get("unaffordable", ()) if f in columns]
    if levels is not None:
        per_value = _read_levels(law_file, law, levels)
        frame[law.target] = per_value.predict(columns)
        if not per_value.preferred:
            warnings.append(f"the law over the values of '{levels}' explained the measurements as well as "
                            "these per-value constants; without --levels it predicts unmeasured values too")
    else:
        frame[law.target] = check_defined(law, columns, f"--data '{data}'" if data is not None else "--at",
                                          table=data is not None, lines=lines)
    if law.bootstrap and levels is None:
        frame["low_95"], frame["high_95"] = law.predict_interval(columns)
        width = (frame["high_95"] - frame["low_95"]) / frame[law.target]
        if (width > 0.5).any():
            beyond = law.octave_error > 0 and bool((law.octaves_outside(columns)[width.to_numpy() > 0.5] > 0).any())
            warnings.append(f"the 95 % prediction interval is wider than half the prediction at "
                            f"{int((width > 0.5).sum())} configuration(s)"
                            + (f"; beyond the measured range it widens by {100 * law.octave_error:.3g} % (one standard "
                               "deviation) per doubling, the error the law's form made on its own top octave when "
                               "refitted without it" if beyond else ""))
    if levels is None:
        warnings += _apart(law, columns, frame)
    return frame, warnings


def _piecewise(pieces, columns: dict, frame, data: Path | None, lines):
    """Each configuration predicted by the law of the segment it lies in (``pieces``: a
    :class:`exprsearch.segmented.Segmented`), as :func:`_predicted` does for one law, with the segment
    named beside it."""
    import pandas as pd

    from ..configs import ConfigError, setting

    factor, edges, named = pieces.factor, pieces.edges, pieces.names
    if factor not in columns:
        raise ConfigError(f"give factor '{factor}' a value in every configuration: it says which segment's law "
                          "predicts it")
    which = pieces.which(columns[factor])
    parts, order, warnings = [], [], []
    for k, law in enumerate(pieces.laws):
        rows = np.flatnonzero(which == k)
        if not rows.size:
            continue
        # a value past a segment's end was sent to it as the nearer: said below, not as a crossing
        part, said = _predicted(law, None, {f: v[rows] for f, v in columns.items()}, frame.iloc[rows].copy(), None,
                                data, None if lines is None else lines[rows], crossing=False)
        parts.append(part.assign(segment=named[k]))
        order.append(rows)
        warnings += [f"{named[k]}: {w}" for w in said]
    spans = [law.dataset["segment"] for law in pieces.laws]
    between = [(v, below, above) for v in np.unique(columns[factor])
               for below, above in zip(spans, spans[1:]) if below["to"] < v < above["from"]]
    for v, below, above in between[:1]:
        nearer = named[int(pieces.which(np.array([v]))[0])]
        warnings.append(f"{factor} = {setting(v)} lies between the segments, past {factor} = {setting(below['to'])} "
                        f"and before {setting(above['from'])}, where the times change regime: it is predicted by the "
                        f"nearer segment's law ({nearer}), but the change may lie on either side of it")
    _note(f"each configuration is predicted by the law of its segment of {factor} ("
          + "; ".join(f"{named[k]} {'below' if k < len(edges) else 'from'} {factor} = "
                      f"{setting(edges[min(k, len(edges) - 1)])}" for k in range(len(named))) + ")")
    merged = pd.concat(parts)
    return merged.iloc[np.argsort(np.concatenate(order), kind="stable")], warnings


OWN = ("low_95", "high_95", "plausible_low", "plausible_high", "measured", "runs", "error_pct", "segment",
       "beyond_measured")


def _own_names_kept(frame, law):
    """``frame`` with its columns named as predict's own output columns (a table's count of runs
    in 'runs') renamed '…_in_table', said in a note: read as predict's, they were shown as counts
    of repeated rows or errors, and a text in them stopped the table."""
    clash = [c for c in frame.columns if str(c) in OWN and str(c) not in law.factors and str(c) != law.target]
    if not clash:
        return frame
    names = {c: f"{c}_in_table" for c in clash}
    for old, new in names.items():
        _note(f"the table's column '{old}' is kept as '{new}' (--json), as predict writes a '{old}' of its own")
    return frame.rename(columns=names)


def _by_configuration(frame, target: str, factors: list[str]):
    """``frame`` with one row per configuration of ``factors`` where the rows repeat them: the
    prediction, the median of the measured runs, their count and the error; and, where the rows
    are a log's steps, each run's error in %, else None. A log's runs are each the median of their
    steps first, as the law was fitted to them (runlogs.runs)."""
    from ..runlogs import run_of, runs, stepped

    if "measured" not in frame or not frame.duplicated(factors).any():
        return frame, None
    kept = [c for c in (target, "segment", "low_95", "high_95") if c in frame]
    shown = frame.groupby(factors, sort=False)[kept].first()
    steps = runs(frame, [str(c) for c in frame.columns], factors, "measured")
    run = None if steps is None else run_of(frame[factors].to_numpy(dtype=float), np.arange(len(frame)), steps)
    per_run = None
    if run is not None and stepped(len(frame), run.max() + 1):
        frame = frame.assign(_run=run).groupby([*factors, "_run"], sort=False).agg(
            measured=("measured", "median"), predicted=(target, "first")).reset_index()
        per_run = (100 * (frame["predicted"] / frame["measured"] - 1)).dropna()
    groups = frame.groupby(factors, sort=False)
    shown["measured"] = groups["measured"].median()
    shown["runs"] = groups["measured"].count()
    shown["error_pct"] = 100 * (shown[target] / shown["measured"] - 1)
    return shown.reset_index(), per_run


def _measured(frame, target: str, data: Path, lines):
    """The measured target of each row of a --data table that has the law's target column (NaN
    where a row leaves it empty), or None; a value that is not a finite positive number is refused."""
    import numpy as np
    import pandas as pd

    from ..errors import DataError
    from ..reciprocal import derived, reciprocal_of
    from ..tables import rows_named

    named = [c for c in frame.columns if str(c) == target or law_name(str(c)) == target]
    source = reciprocal_of(target)  # a law of 1/tokens_per_s is measured by the column tokens_per_s
    if not named and source is not None and source in [str(c) for c in frame.columns]:
        frame, named = derived(frame, target, f"'{data}'"), [target]
    if not named:
        return None
    column = frame[named[0]]
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(column.notna().to_numpy() & ~(np.isfinite(values) & (values > 0)))
    if bad.size:
        raise DataError(f"'{data}' column '{named[0]}' holds the law's target, measured, and is not a finite positive number "
                        f"at {rows_named(bad, lines if lines is not None else 0)}: fix those values, or leave them "
                        "empty where a configuration was not measured")
    return values


def _check_held(frame, law, data, lines) -> None:
    """Refuse a --data row that sets a factor the measurements held at one value to another: the
    law leaves it out, so it would predict as if at the measured value."""
    import numpy as np
    import pandas as pd

    from ..configs import check_factors
    from ..tables import rows_named

    for column in frame.columns:
        name = law_name(str(column))
        if name in law.held and name not in law.factors:
            values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
            off = np.flatnonzero(values != law.held[name])
            if off.size:
                where = rows_named(off[:1], lines if lines is not None else 0)
                check_factors([name], law.factors, f"--data '{data}' ({where})", law.held, {name: values[off[0]]})


PARTED = "laws that fit the measurements about as well as this one"


def _apart(law, columns, frame) -> list[str]:
    """Where the laws the data could not tell from this one (law.json's search.plausible) predict
    otherwise: their lowest and highest prediction beside each row, and a warning where they part
    by more than 5 % and beyond the prediction interval (which holds this law's form fixed)."""
    import numpy as np

    from ..configs import describe

    center = frame[law.target].to_numpy(dtype=float)
    predicted = law.plausible_predictions(columns)
    if not len(predicted):
        return []
    every = np.vstack([center, predicted])  # the chosen law is one of the plausible: a range that left it out
    frame["plausible_low"], frame["plausible_high"] = every.min(axis=0), every.max(axis=0)  # read as disowning it
    low = frame["low_95"].to_numpy() if "low_95" in frame else center
    high = frame["high_95"].to_numpy() if "high_95" in frame else center
    with np.errstate(all="ignore"):
        ratio = predicted / center
    outside = (ratio < 0.95) & (predicted < low) | (ratio > 1.05) & (predicted > high)
    rows = np.flatnonzero(outside.any(axis=0))
    if not rows.size:
        return []
    below = float(np.nanmax(np.where(outside, 1 - ratio, 0.0)))
    above = float(np.nanmax(np.where(outside, ratio - 1, 0.0)))
    spread = " and ".join(part for part in (f"{100 * below:.0f} % lower" if below > 0 else "",
                                             f"{100 * above:.0f} % higher" if above > 0 else "") if part)
    return [f"at {rows.size} configuration(s) (first {describe(columns, int(rows[0]))}), {PARTED} "
            f"({len(predicted)} in law.json's search.plausible) predict up to "
            f"{spread}, outside its 95 % interval: the measurements do not settle the law's form there; exprsearch "
            "suggest says which runs would"]
