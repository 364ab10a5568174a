"""What ``run`` writes beside the laws it finds: one form shared by its ``--by`` groups
(shared.json) and the per-value laws of its intrinsic factors (levels.json)."""

import json
from pathlib import Path

from rich.table import Column, Table

from .. import export
from ..configs import setting
from ..fit import FitSettings
from ..search import Result
from ..vocabulary import to_readable
from .common import _note, out
from .layout import law_column, series_cell, snug


def shared(results, directory: Path, force: bool, settings: FitSettings):
    """One form for all groups (lowest summed BIC among the groups' own laws), written to shared.json."""

    from ..groups import shared_form

    # a group whose own law is a constant (two runs of one model) cannot tell forms apart, and would
    # leave only the constant to share
    flat = {name: f"its own law is a constant, from {result.dataset.n_rows} rows"
            for name, _, result in results if not any(result.law.uses(f) for f in result.law.factors)}
    if len(results) - len(flat) < 2:
        flat = {}
    groups = {name: result.dataset for name, _, result in results if name not in flat}
    forms = [result.ranking.law.fit.candidate for name, _, result in results if name not in flat]
    shared = shared_form(groups, forms, settings, left_out=flat)
    for name, why in flat.items():
        _note(f"the shared form is chosen without {name}: {why}")
    for form, why in (shared.skipped if shared else {}).items():
        _note(f"the form {form} could not be shared: {why}")
    if shared is None:
        _note("no single form fits every group")
        return None
    path = directory / "shared.json"
    if path.exists() and not force:
        export.check_free(directory, ("shared.json",))
    export.write_all({path: json.dumps(shared.to_dict(), indent=2) + "\n"})
    return shared


def print_shared(shared) -> None:
    from ..groups import rounded

    column, laws = law_column(f"shared form {shared.candidate}", [rounded(f) for f in shared.fits.values()], beside=36)
    table = Table(Column("group", overflow="fold"), column, "MSE (relative)",
                  title=f"One form for all groups (lowest summed BIC of {len(shared.considered)} forms)",
                  title_justify="left")
    for (name, fitted), law in zip(shared.fits.items(), laws):
        table.add_row(series_cell(name), law, f"{fitted.mse:.3g}")
    out.print(snug(table))



LEVELS_FILE = "levels.json"


def levels(result: Result, intrinsic: tuple[str, ...], settings: FitSettings, directory: Path) -> list:
    """Test each intrinsic factor with few values as levels (exprsearch.levels), write what was
    found to levels.json, and return per factor its sentence and its levels (None: not tested)."""
    from ..levels import check_levels, untestable

    checked = []
    for factor in intrinsic:
        found = check_levels(result, factor, settings)
        if found is None:
            reason = untestable(result, factor) or "the law could not be refitted on each of its values alone"
            checked.append((f"'{factor}' was not tested as levels: {reason}", None))
        else:
            checked.append((found.sentence(), found))
    # written even when nothing could be tested, so no earlier run's levels stay beside this law
    tested = [found.to_dict() for _, found in checked if found is not None]
    export.write_all({directory / LEVELS_FILE: json.dumps(tested, indent=2) + "\n"})
    return checked


def print_levels(checked: list, directory: Path, tables: bool = True) -> None:
    for sentence, found in checked:
        _note(sentence)
        if found is not None and found.preferred and tables:
            column, laws = law_column("law with its coefficients fitted per value",
                                      [to_readable(found.at_level(value)) for value in found.constants], beside=16)
            table = Table(found.factor, column,
                          title=f"Constants per value of {found.factor}", title_justify="left")
            for value, law in zip(found.constants, laws):
                table.add_row(setting(value), law)
            out.print(snug(table))
    if checked and tables:
        out.print(f"wrote {LEVELS_FILE} to {directory}", highlight=False)
