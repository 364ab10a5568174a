"""Series whose times change regime: ``--segments p`` beside Extra-P 4.2.5's segmented modeler.

1. Extra-P's own segmented test inputs (``extrap-tests-data/text/one_parameter_segmented_*.txt``
   in ../shared, noise-free): whether each tool splits a series, where, and the largest relative
   error of its model(s) on the measured means.
2. Synthetic series at p = 1..16 (3 repetitions, 2 % noise, five noise draws each): eight laws that
   change regime at a known p and eight that do not. Judged: whether a change is found (and where),
   and the error at p = 32 (2x the largest p) of the model of the last segment, against the true law.

    python benchmarks/segments.py [--shared ../shared] [--draws 5] [--no-extrap]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import sympy

from exprsearch import search, segments
from exprsearch.data import Dataset, from_columns
from exprsearch.readers import load_series
from exprsearch.search import SearchSettings

EXTRAP = Path(tempfile.gettempdir()) / "extrap-venv" / "bin" / "extrap"
PS = np.arange(1, 17, dtype=float)
AT = 32.0

CHANGES = {  # name: (law, the last p of the first regime)
    "compute, then a floor (parameter server)": (lambda p: 1 + np.maximum(40 / p, 6), 6),
    "p^2, then p + 56": (lambda p: np.where(p <= 8, p**2, p + 56), 8),
    "log2 p, then linear": (lambda p: np.where(p <= 6, 1 + 3 * np.log2(p), 0.5 * p + 5.75), 6),
    "Amdahl, then a jump and a log2 p term (a node boundary)":
        (lambda p: np.where(p <= 8, 2 + 40 / p, 6 + 40 / p + 0.5 * np.log2(p)), 8),
    "strong scaling, then communication-bound": (lambda p: np.where(p <= 8, 2 + 60 / p, 0.3 * p + 7.1), 8),
    "falls as 1/p, then flat": (lambda p: np.where(p <= 5, 1 + 100 / p, 21.0), 5),
    # regimes that start at a knee: their lines have negative constants (added 2026-11-26)
    "flat, then a line from a knee (a saturated resource)": (lambda p: np.where(p <= 6, 10.0, 2 * p - 2), 6),
    "a line, then a steeper one": (lambda p: np.where(p <= 8, 1 + 0.5 * p, 2 * p - 11), 8),
}
LATER = ("flat, then a line from a knee (a saturated resource)", "a line, then a steeper one")  # added 2026-11-26
STEADY = {
    "Amdahl 2 + 40/p": lambda p: 2 + 40 / p,
    "Amdahl + linear": lambda p: 1 + 50 / p + 0.05 * p,
    "Amdahl + log2 p": lambda p: 1 + 30 / p + 0.3 * np.log2(p),
    "fitted power 0.5 + 20/p^0.8": lambda p: 0.5 + 20 / p**0.8,
    "weak scaling 2 + 0.5 log2 p": lambda p: 2 + 0.5 * np.log2(p),
    "p log2 p": lambda p: 1 + 0.1 * p * np.log2(p),
    "quadratic 3 + 0.02 p^2": lambda p: 3 + 0.02 * p**2,
    "Amdahl + sqrt p": lambda p: 1 + 30 / p + 0.2 * np.sqrt(p),
}


def fit(dataset: Dataset):
    return search(dataset, settings=SearchSettings(resamples=0)).law


def ours(dataset: Dataset) -> tuple[segments.Split, list]:
    """The split search and the law of each segment (one law where no split is chosen), as ``run
    --segments p`` searches them (the law above a change in segments.grammar_for's grammar)."""
    searcher = segments.Searcher()
    split = segments.find(dataset, "p", searcher)
    pieces = segments.parts(dataset, split) if split.chosen else (dataset,)
    return split, [((searcher if split.chosen else fit)(piece), piece.column("p").min(), piece.column("p").max())
                   for piece in pieces]


def predict(laws: list, p: np.ndarray) -> np.ndarray:
    """The segmented model at ``p``: each segment's law from its start, the first's below it."""
    out = laws[0][0].predict({"p": p})
    for law, low, _ in laws[1:]:
        out = np.where(p >= low, law.predict({"p": p}), out)
    return out


def extrap_models(path: Path) -> dict[str, list[tuple[sympy.Expr, float | None]]]:
    """Extra-P's segmented modeler on a text file: per callpath, its model(s), each with the p
    from which it holds (None for the first)."""
    printed = subprocess.run([str(EXTRAP), "--text", "--modeler", "segmented", "--print", "all", str(path)],
                             capture_output=True, text=True, check=True).stdout
    p = sympy.Symbol("p", positive=True)
    models: dict[str, list] = {}
    callpath = None
    for line in printed.splitlines():
        if line.startswith("Callpath: "):
            callpath = line.split(": ", 1)[1].strip()
            models[callpath] = []
        match = re.match(r"\s*Model(?: \d)?: (.*?)(?: for p(<=|>=)([\d.eE+-]+))?$", line)
        if match and callpath is not None:
            text, side, value = match.groups()
            expression = sympy.sympify(text.replace("^", "**"), locals={"p": p, "log2": lambda x: sympy.log(x, 2)})
            models[callpath].append((expression, float(value) if side == ">=" else None))
    return models


def extrap_predict(models: list, p: np.ndarray) -> np.ndarray:
    symbol = sympy.Symbol("p", positive=True)
    out = np.full(len(p), np.nan)
    for expression, start in models:
        values = np.broadcast_to(sympy.lambdify(symbol, expression, "numpy")(p), p.shape).astype(float)
        out = values if start is None else np.where(p >= start, values, out)
    return out


def extrap_inputs(shared: Path, use_extrap: bool) -> None:
    folder = shared / "extrap-format" / "extrap-tests-data" / "text"
    files = sorted(folder.glob("one_parameter_segmented_*.txt"))
    if not files:
        print(f"(no Extra-P segmented inputs under {folder})")
        return
    print("### Extra-P's segmented test inputs (noise-free; largest error on the measured means)\n")
    print("| input | series | exprsearch: split | largest error % | Extra-P: split | largest error % |")
    print("|---|---|---|---|---|---|")
    for path in files:
        theirs = extrap_models(path) if use_extrap else {}
        for name, dataset in load_series(path, "extrap-text").items():
            configs = np.unique(dataset.column("p"))
            means = np.array([dataset.y[dataset.column("p") == c].mean() for c in configs])
            split, laws = ours(dataset)
            said = f"{split.last:g} / {split.first:g}" if split.chosen else "none"
            error = 100 * np.max(np.abs(predict(laws, configs) / means - 1))
            callpath = name.split(":")[0]
            models = theirs.get(callpath, [])
            their_split = next((f"from {start:g}" for _, start in models if start is not None), "none") if models else "—"
            their_error = (f"{100 * np.max(np.abs(extrap_predict(models, configs) / means - 1)):.2f}" if models else "—")
            print(f"| {path.name} | {name} | {said} | {error:.2f} | {their_split} | {their_error} |")
    print()


def write_text(path: Path, series: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """An Extra-P text file: one region per series, three repetitions per point."""
    lines = ["PARAMETER p", "POINTS " + " ".join(f"( {p:g} )" for p in PS), ""]
    for name, (_, y) in series.items():
        lines += [f"REGION {name}", "METRIC time"]
        lines += ["DATA " + " ".join(f"{v:.8g}" for v in y.reshape(len(PS), 3)[i]) for i in range(len(PS))]
        lines.append("")
    path.write_text("\n".join(lines))


def synthetic(draws: int, use_extrap: bool) -> None:
    laws = {**{k: v[0] for k, v in CHANGES.items()}, **STEADY}
    # each law's noise seed is its place among the laws as they were added, so that adding one
    # leaves the others' draws as they were
    added = [*(name for name in CHANGES if name not in LATER), *STEADY, *LATER]
    series = {}
    for name, law in laws.items():
        k = added.index(name)
        for draw in range(draws):
            p = np.repeat(PS, 3)
            noise = np.random.default_rng([k, draw]).standard_normal(len(p))
            series[f"s{k}d{draw}"] = (name, law(p) * (1 + 0.02 * noise))
    theirs = {}
    if use_extrap:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "series.txt"
            write_text(path, series)
            started = time.perf_counter()
            theirs = extrap_models(path)
            print(f"Extra-P's segmented modeler: {time.perf_counter() - started:.1f} s for {len(series)} series")
    rows: dict[str, list] = {name: [] for name in laws}
    started = time.perf_counter()
    for key, (name, y) in series.items():
        dataset = from_columns({"p": np.repeat(PS, 3), "time": y}, "time")
        split, fitted = ours(dataset)
        truth = laws[name](np.array([AT]))[0]
        ours_error = 100 * abs(predict(fitted, np.array([AT]))[0] / truth - 1)
        models = theirs.get(key, [])
        their_error = 100 * abs(extrap_predict(models, np.array([AT]))[0] / truth - 1) if models else None
        their_split = any(start is not None for _, start in models)
        rows[name].append((split, ours_error, their_split, their_error))
    print(f"exprsearch --segments: {time.perf_counter() - started:.1f} s for {len(series)} series (in process)\n")
    print(f"### Synthetic series, p = 1..16, 2 % noise, {draws} draws each: error % at p = {AT:g}\n")
    print("| law | true change after p | exprsearch: split found (exactly there; within one value) | median error % | "
          "Extra-P: split found | median error % |")
    print("|---|---|---|---|---|---|")
    totals = {"change": [0, 0, 0, 0], "steady": [0, 0]}
    for name, found in rows.items():
        last = CHANGES[name][1] if name in CHANGES else None
        splits = sum(s.chosen for s, *_ in found)
        placed = sum(s.chosen and s.last == last for s, *_ in found) if last else 0
        near = sum(s.chosen and abs(s.last - last) <= 1 for s, *_ in found) if last else 0
        median = statistics.median(e for _, e, _, _ in found)
        theirs_found = sum(t for *_, t, _ in found)
        their = [e for *_, e in found if e is not None]
        their_median = f"{statistics.median(their):.2f}" if their else "—"
        print(f"| {name} | {last if last else '—'} | {splits}/{len(found)}{f' ({placed}; {near})' if last else ''} | "
              f"{median:.2f} | {theirs_found if their else '—'}/{len(found)} | {their_median} |")
        if last:
            totals["change"][0] += splits
            totals["change"][1] += placed
            totals["change"][2] += len(found)
            totals["change"][3] += near
        else:
            totals["steady"][0] += splits
            totals["steady"][1] += len(found)
    change, steady = totals["change"], totals["steady"]
    print(f"\nChanges found: {change[0]}/{change[2]} ({change[1]} exactly there, {change[3]} within one value); "
          f"series without a change split: {steady[0]}/{steady[1]}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parent.parent.parent / "shared")
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--no-extrap", action="store_true", help="leave Extra-P out")
    args = parser.parse_args()
    use_extrap = not args.no_extrap and EXTRAP.exists()
    if not args.no_extrap and not EXTRAP.exists():
        print(f"(Extra-P not found at {EXTRAP}: python3 -m venv {EXTRAP.parent.parent} && "
              f"{EXTRAP.parent}/pip install extrap==4.2.5)", file=sys.stderr)
    extrap_inputs(args.shared, use_extrap)
    synthetic(args.draws, use_extrap)


if __name__ == "__main__":
    main()
