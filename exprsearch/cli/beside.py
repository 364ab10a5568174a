"""What ``run`` writes and says beside the laws it finds: one form shared by its ``--by`` groups
(shared.json), the per-value laws of its intrinsic factors (levels.json), and a rate's time
fitted to compare where the rate's own law misses."""

import json
from dataclasses import dataclass, replace
from pathlib import Path

from rich.table import Column, Table

from .. import export
from ..configs import setting
from ..fit import FitSettings
from ..reciprocal import inverse
from ..search import Result, SearchError, SearchSettings, search
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



def misses_as_rate(law, gross: float) -> bool:
    """Whether ``law`` is of a rate and misses its measurements: by more than their noise (lack of
    fit, p < 0.01), or by ``gross`` % (MAPE) where nothing measured the noise."""
    misfit, noise = law.metrics.get("lack_of_fit_p"), law.metrics.get("noise_sd_pct")
    return law.rate and (misfit is not None and misfit < 0.01 or noise is None and law.metrics["mape_pct"] >= gross)


@dataclass(frozen=True)
class Compared:
    """A rate's time fitted over the same rows, said as a sentence; ``closer`` when its law misses
    them by less than the rate's own law does."""

    sentence: str
    closer: bool


def as_time(result: Result, settings: SearchSettings, progress=None, **grammar) -> Compared | None:
    """For a rate's law that misses its measurements (:func:`misses_as_rate`), the same search of its
    time over the same rows (``grammar``: the search's grammar, mapping and intrinsic factors;
    ``progress`` as :func:`~exprsearch.search` takes it), said with both errors: the grammars' terms
    were written for times, and a time that levels off is a sum of them where its rate is not."""
    law, data = result.law, result.dataset
    timed = replace(data, y=1.0 / data.y, target=inverse(law.target))
    try:
        other = search(timed, settings=replace(settings, resamples=0), progress=progress, **grammar).law
    except SearchError:
        return None
    mine, theirs = law.metrics["mape_pct"], other.metrics["mape_pct"]
    verdict = (f"run again with --target {timed.target} to write that law" if theirs < mine else
               f"this law of {law.target} stays the closer")
    return Compared(f"fitted as its time, {timed.target} (the same rows and grammar), the law misses them by "
                    f"{theirs:.3g} % (MAPE) against this law's {mine:.3g} %: {timed.target} = "
                    f"{export.rounded_text(other)}; {verdict}", theirs < mine)


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
