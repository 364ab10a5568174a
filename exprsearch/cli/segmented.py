"""``run --segments``: each series split where its times change regime along a factor, and the
notes that point to it, or to another grammar, where a law misses its measurements by more than
their noise."""

from dataclasses import replace

import numpy as np

from .. import segments
from ..executor import executor
from ..search import Result, SearchSettings
from .common import Heartbeat, _note, _progress


def split(datasets: dict, factor: str, rules, mapping: dict, intrinsic: tuple, settings: SearchSettings,
          quiet: bool) -> dict:
    """Each series split where its times change regime along ``factor``, said in a note (one that
    cannot be split keeps one law). The sides are searched on --jobs processes (or the
    --scheduler), each search in one."""
    searcher = segments.Searcher(rules, mapping, intrinsic, replace(settings, jobs=1, scheduler=None))
    pool = executor(settings.jobs, settings.scheduler, size=2)
    try:
        with _progress(quiet) as bar:
            task = bar.add_task(f"splitting along {factor}", total=None)
            beats: dict[str, Heartbeat] = {}  # one per series: its searches are counted afresh

            def told(name: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)
                if name not in beats:
                    beats[name] = Heartbeat(f"splitting {name or 'the series'} along {factor}", "searches", quiet)
                beats[name](done, total)

            parts, notes = segments.split_all(datasets, factor, searcher, told, pool)
    finally:
        pool.close()
    for note in notes:
        _note(note)
    return parts


def say_regime(result: Result, said: set[str] | None = None) -> None:
    """Point to --segments where the law misses the measurements by more than their noise along a
    factor measured at enough values to split (a change of regime no sum of terms follows), and,
    where it misses them by far more, to Extra-P's form, whose constant may be negative: times that
    fall towards zero within reach (a − b·log2 p) are no sum of non-negative terms. The second is
    said whole once per run (``said`` holds what was), then by reference."""
    metrics = result.law.metrics
    misfit, noise, error = metrics.get("lack_of_fit_p"), metrics.get("noise_sd_pct"), metrics["mape_pct"]
    if noise is None and misfit is None:
        say_unrepeated(result)
        return
    if noise == 0:  # identical repeats: any error fails the test, so ask for 1 %
        if error <= 1:
            return
    elif misfit is None or misfit >= 0.01:
        return
    if result.dataset.spread is not None:  # the noise is the columns', which may not be between runs
        _note(f"the law misses the noise read from --spread {','.join(result.dataset.spread)} (MAPE {error:.3g} % "
              f"against {noise:.3g} %): the rows differ by more than their runs do, through a setting the factors "
              "leave out (a batch size that grows with the workers) or a change the law does not follow; or, if that "
              "is a standard deviation over the steps of a run, not between runs, it is narrower than how runs differ "
              "and no law fits within it (docs/method.md)")
    factors = [f for f in result.dataset.factors if len(np.unique(result.dataset.column(f))) >= 2 * segments.MIN_VALUES]
    if factors:
        named = factors[0] if len(factors) == 1 else "FACTOR"
        _note(f"the law misses the measurements by more than their noise: if the times change regime along "
              f"{' or '.join(factors)} (a cache, memory or node boundary), --segments {named} fits a law on each "
              "side of the change")
    # where the grammar does not reach a factor of the data the run said so, and that comes first
    if error < max(GROSS, 5 * (noise or 0)) or result.grammar.name == "pmnf" or result.law.search.get("unreached"):
        return
    said = set() if said is None else said
    cut = bool(result.law.search.get("not_searched"))  # the remedy is then to search the rest
    why = ("of the laws searched, none follows them; the notes above say what was not searched, which the "
           "default --strategy auto, or a grammar's larger [limits], reaches" if cut else
           "no sum of the grammar's shapes follows them; where the times fall towards zero within reach (a − b·log2 p), "
           "a law needs a negative constant beside a falling term, as -g pmnf (Extra-P's form) allows, or a grammar "
           "file (docs/grammar.md)")
    kind = "cut" if cut else "gross"
    _note(f"the law misses the measurements by far more than their noise (MAPE {error:.3g} % against {noise:.3g} %): "
          + (f"{why.split(';')[0]} (see the note above)" if kind in said else why))
    said.add(kind)


def say_unrepeated(result: Result) -> None:
    """Say where a law misses measurements of which no configuration was repeated by GROSS or more:
    nothing measured the noise, so no test could tell the user the law does not follow them, and
    where the grammar's laws that might were left out for having a constant per configuration (a
    grammar of fitted exponents on three configurations), say so and what to do."""
    law, data = result.law, result.dataset
    error = law.metrics["mape_pct"]
    if error < GROSS or law.search.get("unreached") or law.search.get("unaffordable"):
        return  # a factor the grammar does not reach, or the data cannot afford, was said already
    r2 = law.metrics.get("r2")
    worse = f" and explains less of them than their mean does (R² {r2:.2g})" if r2 is not None and r2 < 0 else ""
    sentence = (f"the law misses the measurements by {error:.3g} % (MAPE){worse}; no configuration was measured "
                "twice, so nothing tells how much of that is noise")
    left = sum(n for reason, n in (law.search.get("rejected") or {}).items() if "as many constants" in reason)
    if left and 2 * left >= law.search.get("candidates", 0):  # most of the grammar, not its largest sums alone
        configurations = len(np.unique(data.X, axis=0))
        other = "" if result.grammar.name == "default" else ", or use a grammar of fixed shapes (-g default)"
        sentence += (f"; {left} of the grammar's {law.search['candidates']} laws were not fitted, having as many "
                     f"constants as the {configurations} configurations measured: measure more configurations "
                     f"(exprsearch suggest says which){other}")
    else:
        other = "a grammar file: docs/grammar.md" if result.grammar.name == "pmnf" else \
            "-g pmnf, whose constant may be negative, or a grammar file: docs/grammar.md"
        sentence += (f"; repeat a few runs to measure it: where it is smaller, no sum of the grammar's shapes "
                     f"follows them ({other})")
    _note(sentence)


GROSS = 10.0  # MAPE %, where a misfit is too large to be the grammar's detail


FIGURE = ("segments_along.png",)


def figures(results: list, whole: dict) -> list:
    """``segments_along.png`` in the folder of each series that --segments split (``results``: run's
    (name, folder, result); ``whole``: each series before the split), and their paths: both laws
    along the factor, beside the series' measurements, as ``plot`` draws a segments' folder."""
    from .. import plot as plots
    from ..segmented import Segmented

    split: dict = {}
    paths = []
    for name, folder, result in results:
        segment = result.dataset.segment
        if segment is not None:
            split.setdefault((folder.parent, segments.base(name, segment)), []).append(result.law)
    for (folder, base), laws in split.items():
        if len(laws) < 2:  # a side the search could not fit: nothing to draw beside it
            continue
        paths.append(plots.segments_along(Segmented.of(laws), folder / FIGURE[0], whole.get(base)))
    return paths
