"""``exprsearch plot``: the law's figures, with the measurements it was fitted on where they can
be found again."""

import csv
import io
from pathlib import Path
from typing import Annotated

import typer

from . import segmented
from .common import _guard, _note, app, out
from .decide import _fixed, _folder, _law, _segments, _varied


@app.command("plot")
def plot_command(
    law_file: Annotated[Path, typer.Argument(metavar="LAW.json", help="A law.json written by run, or the folder run wrote it to.")],
    data: Annotated[Path | None, typer.Argument(help="The measurements, for measured-vs-predicted.")] = None,
    vary: Annotated[str | None, typer.Option(help="Factor and range to plot along: p=1..1024.")] = None,
    fix: Annotated[list[str], typer.Option(help="Other factors' values: n=16000 or n=16000,b=64 (repeatable).")] = [],  # noqa: B006
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", help="Directory for the PNGs (default: the law's).")] = None,
    force: Annotated[bool, typer.Option(help="Replace figures of these names already in another --out directory.")] = False,
    sheet: Annotated[str | None, typer.Option(help="With DATA: an Excel workbook's sheet, where more than one holds data (default: the one the law was fitted on, where the workbook has it).")] = None,
) -> None:
    """Write PNG figures: measured vs predicted, the law along a factor, the term breakdown, the front."""
    from .. import plot as plots

    notes = []

    def work():
        from ..export import FIGURES, check_free

        pieces = _segments(law_file)  # the folder run --segments wrote a series' segments to
        if pieces is not None:
            return [_segments_figure(pieces, law_file, data, vary, fix, out_dir, force, notes)]
        law = _law(law_file)
        folder = _folder(law_file)
        # the law's folder holds its own figures, redrawn; another directory may hold the user's files
        if out_dir is not None and not force and out_dir.resolve() != folder.resolve():
            check_free(out_dir, FIGURES)
        from ..configs import ConfigError

        if sheet is not None and data is None:
            raise ConfigError("--sheet names a sheet of the DATA workbook; give DATA")
        dataset = _given_data(law, data, sheet) if data is not None else _fitted_data(law, notes)
        front_file = folder / "front.csv"
        rows = list(csv.DictReader(io.StringIO(front_file.read_text()))) if front_file.is_file() else None
        view = None
        if vary is not None:
            (factor, values), = _varied([vary]).items()
            default_fixed = plots.default_view(law, dataset)[2]
            fixed = {k: v for k, v in {**default_fixed, **_fixed(fix)}.items() if k != factor}
            view = (factor, values, fixed)
        return plots.all_figures(law, out_dir or folder, dataset, rows, view)

    for path in _guard(work):
        out.print(f"wrote {path}", highlight=False)
    for note in notes:
        _note(note)


def _given_data(law, data: Path, sheet: str | None = None):
    """The measurements given to plot: a table, or the series of an Extra-P file that law.json
    names; summarised as it was fitted (--measure), of the segment it was fitted on (--segments)."""
    from ..segments import within

    dataset = _whole_series(law, data, sheet)
    segment = law.dataset.get("segment")
    if segment and segment["factor"] in dataset.factors:
        return dataset.subset(within(dataset.column(segment["factor"]), segment))
    return dataset


def _whole_series(law, data: Path, sheet: str | None = None):
    """The series the law's segment is part of (or the law's own data), summarised as it was fitted."""
    from ..repeats import summarised

    return summarised(_read_given(law, data, sheet), law.dataset.get("measure") or "all")


def _read_given(law, data: Path, sheet: str | None = None):
    from ..data import load_table
    from ..errors import DataError
    from ..grouped import group_name, load_grouped
    from ..readers import detect_format, law_series
    from ..rowfilter import from_record
    from ..tables import WORKBOOKS

    fmt = detect_format(data)
    stray = bool(law.dataset.get("drop_stray"))  # read as it was fitted: without the runs dropped then
    where = from_record(law.dataset)  # and of the rows its --where kept
    if fmt == "table":
        if sheet is None and Path(data).suffix.lower() in WORKBOOKS:  # the sheet the law was fitted on, as predict
            from ..workbooks import law_sheet

            sheet = law_sheet(Path(data), law.dataset.get("sheet"))
        dropping = bool(law.dataset.get("drop_missing"))
        if where:  # a table of the picked rows alone (one framework's, without the column) is taken whole
            from ..columns import columns_named
            from ..tables import read_table

            columns = [str(c) for c in read_table(data, sheet).columns]
            where = tuple(c for c in where if columns_named([c.column], columns)[0] in columns)
        group = law.dataset.get("group")
        if not group:
            return load_table(data, law.target, list(law.factors), drop_missing=dropping, sheet=sheet,
                              drop_stray=stray, where=where)
        # the rows of the --by group the law was fitted on, not the whole table
        groups, _ = load_grouped(data, law.target, list(group), list(law.factors), dropping, sheet=sheet,
                                 drop_stray=stray, where=where)
        name = group_name(group.items())
        if name not in groups:
            raise DataError(f"'{data}' holds no rows of {name}, the group the law was fitted on")
        return groups[name]
    if sheet is not None:
        from ..configs import ConfigError

        raise ConfigError(f"--sheet names a sheet of a workbook; '{data}' is a file of Extra-P's {fmt} format")
    return law_series(data, fmt, law.dataset.get("series"), drop_stray=stray, where=where)


def _fitted_data(law, notes: list[str], read=_given_data, what: str = "no measured-vs-predicted figure",
                 given: str = "LAW.json"):
    """The data the law was fitted on (a table, or the series of an Extra-P file; as ``read`` gives
    them), where law.json names it and it is still there unchanged (so that plot draws them without
    being given them); else a note saying why not, beginning with ``what``."""
    import hashlib

    from ..errors import ExprsearchError

    path, sha = law.dataset.get("path"), law.dataset.get("sha256")
    if not path:
        return None
    try:
        dataset = read(law, Path(path))  # it holds the file's sha256: one read
    except ExprsearchError:
        dataset = None
    if dataset is not None and dataset.sha256 == sha:
        return dataset
    if dataset is None and Path(path).is_file() and hashlib.sha256(Path(path).read_bytes()).hexdigest() == sha:
        notes.append(f"{what}: '{path}' is not a table; pass one: exprsearch plot {given} DATA")
    else:
        notes.append(f"{what}: '{path}', the data the law was fitted on, is not here or has changed since; pass the "
                     f"data: exprsearch plot {given} DATA")
    return None


SEGMENTS_FIGURE = segmented.FIGURE[0]


def _segments_figure(pieces, folder: Path, data: Path | None, vary: str | None, fix: list[str], out_dir: Path | None,
                     force: bool, notes: list[str]) -> Path:
    """The figure of a series' segments along their factor, beside the whole series' measurements
    (given, or read back from where law.json says they are), into the segments' folder or --out."""
    from .. import plot as plots
    from ..configs import ConfigError
    from ..errors import ExprsearchError
    from ..export import check_free

    if vary is not None:
        raise ConfigError(f"--vary: the segments are drawn along their factor, {pieces.factor}; give one "
                          "segment's law.json to draw it along another")
    law = pieces.laws[-1]
    if out_dir is not None and not force and out_dir.resolve() != folder.resolve():
        check_free(out_dir, (SEGMENTS_FIGURE,))
    what = "the figure shows no measurements"
    whole = None
    if data is not None:
        try:
            whole = _whole_series(law, data)
        except ExprsearchError as exc:  # the figure is drawn without measurements, and says why
            notes.append(f"{what}: {exc}")
    elif law.dataset.get("path"):
        whole = _fitted_data(law, notes, _whole_series, what, "FOLDER")
    else:
        notes.append(f"{what}: law.json names no data; pass them: exprsearch plot FOLDER DATA")
    return plots.segments_along(pieces, (out_dir or folder) / SEGMENTS_FIGURE, whole, _fixed(fix))
