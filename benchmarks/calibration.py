"""Do `predict`'s intervals and warnings hold beyond the measurements?

For every series of the other benchmarks that is fitted on small configurations and judged on
larger ones — the synthetic multi-factor suite (judged at 4× and 8× the largest measured scaling
factors, against the noise-free law), the public single-factor series of ``accuracy.py`` and the
public multi-factor series of ``multifactor.py --only public`` (judged on the held-out runs) —
the law is searched as ``run`` searches it (with its bootstrap), written as law.json and asked
about the judged configurations by ``exprsearch predict --data … --json``, as a user would. Per
suite it prints how many judged values fall inside the 95 % prediction interval, inside that
interval or the range of the plausible laws ``predict`` shows beside it, the interval's median
half-width, and, of the series predicted more than 10 % off, how many ``predict`` warned about:
with a sign of doubt (an interval wider than half the prediction, or plausible laws that part
from it) or with any warning (extrapolating included); and, of the others, how many got a sign of
doubt all the same.

    python benchmarks/calibration.py [--only synthetic,single,multi] [--resamples 200] [--series]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from accuracy import SPECS
from accuracy import series as single_series
from multifactor_suite import CASES, evaluate, measure, test_points
from public_tables import SHARED, TABLES, public_series
from typer.testing import CliRunner

from exprsearch.cli import app
from exprsearch.search import search

DOUBT = ("wider than half the prediction", "laws that fit the measurements about as well as this one")
OFF = 10.0  # a series predicted more than this % off (its mean over the judged values) should be warned about


def judged(train: pd.DataFrame, test: pd.DataFrame, names: list[str], resamples: int, folder: Path,
           intrinsic: tuple[str, ...] = ()) -> dict:
    """The law searched on ``train``, and what ``predict`` says at ``test``'s configurations
    beside the values judged there (``test['time']``)."""
    law = search(train, "time", "default", resamples=resamples, intrinsic=intrinsic).law
    (folder / "law.json").write_text(law.to_json())
    test[names].to_csv(folder / "at.csv", index=False)
    result = CliRunner().invoke(app, ["predict", str(folder / "law.json"), "--data", str(folder / "at.csv"), "--json"])
    if result.exit_code != 0:
        raise RuntimeError(result.output)
    answer = json.loads(result.stdout)
    frame = pd.DataFrame(answer["predictions"])
    actual = test["time"].to_numpy()
    center = frame["time"].to_numpy()
    low, high = frame["low_95"].to_numpy(), frame["high_95"].to_numpy()
    wide_low = np.fmin(low, frame.get("plausible_low", pd.Series(low)).to_numpy())
    wide_high = np.fmax(high, frame.get("plausible_high", pd.Series(high)).to_numpy())
    return {"law": str(law.template), "values": len(actual), "inside": int(np.sum((low <= actual) & (actual <= high))),
            "inside_plausible": int(np.sum((wide_low <= actual) & (actual <= wide_high))),
            "half_widths": list(100 * (high - low) / (2 * center)), "error": float(100 * np.mean(np.abs(center / actual - 1))),
            "doubt": any(d in w for w in answer["warnings"] for d in DOUBT), "warned": bool(answer["warnings"])}


def synthetic(resamples: int, folder: Path):
    for number, case in enumerate(CASES):
        names = list(case.grid)
        points = test_points(case)
        test = pd.DataFrame(points, columns=names).assign(time=evaluate(case.truth, names, points))
        yield case.name, judged(measure(case, seed=100 + number), test, names, resamples, folder)


def single(resamples: int, folder: Path):
    for spec in SPECS:
        if not (SHARED / "datasets" / spec.file).exists():
            continue
        for key, train, test in single_series(spec, SHARED / "datasets"):
            yield f"{spec.name.split(' (')[0]}: {' / '.join(map(str, np.atleast_1d(key)))}", \
                judged(train, test.reset_index(drop=True), ["p"], resamples, folder)


def multi(resamples: int, folder: Path):
    for table in TABLES:
        if not (SHARED / table.file).exists():
            continue
        for name, train, test in public_series(table):
            yield f"{table.name.split(' ')[0]}: {name}", judged(train, test.reset_index(drop=True), ["p", "x"], resamples,
                                                               folder, ("x",) if table.intrinsic else ())


SUITES = {"synthetic": ("synthetic multi-factor suite, at 4-8x against the noise-free law", synthetic),
          "single": ("public single-factor series, held-out runs", single),
          "multi": ("public multi-factor series, held-out runs", multi)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SUITES), help="suites to run, comma-separated")
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples, as run --bootstrap (200)")
    parser.add_argument("--series", action="store_true", help="print every series' figures to stderr")
    args = parser.parse_args()
    unknown = [key for key in args.only.split(",") if key not in SUITES]
    if unknown:
        parser.error(f"--only: no suite '{unknown[0]}'; the suites are {', '.join(SUITES)}")
    started = time.perf_counter()
    print("| suite | series | judged values | inside the 95 % interval | inside it or the plausible laws' range "
          "| median half-width % | median error % | series > 10 % off | of those, warned with doubt "
          "| of those, warned at all | others with a sign of doubt |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key in args.only.split(","):
        title, suite = SUITES[key]
        with tempfile.TemporaryDirectory() as folder:
            rows = []
            for name, row in suite(args.resamples, Path(folder)):
                rows.append(row)
                if args.series:
                    print(f"  {name}: {row['error']:.1f} % off, {row['inside']}/{row['values']} inside, "
                          f"{row['inside_plausible']}/{row['values']} with the plausible laws, doubt {row['doubt']}, "
                          f"warned {row['warned']}: {row['law']}", file=sys.stderr)
        values = sum(r["values"] for r in rows)
        if not values:
            print(f"| {title} | none: its data are not in {SHARED} | | | | | | | | | |")
            continue
        off = [r for r in rows if r["error"] > OFF]
        near = [r for r in rows if r["error"] <= OFF]
        print(f"| {title} | {len(rows)} | {values} | {sum(r['inside'] for r in rows)} "
              f"({100 * sum(r['inside'] for r in rows) / values:.0f} %) | {sum(r['inside_plausible'] for r in rows)} "
              f"({100 * sum(r['inside_plausible'] for r in rows) / values:.0f} %) "
              f"| {statistics.median(w for r in rows for w in r['half_widths']):.1f} "
              f"| {statistics.median(r['error'] for r in rows):.1f} | {len(off)} | {sum(r['doubt'] for r in off)} "
              f"| {sum(r['warned'] for r in off)} | {sum(r['doubt'] for r in near)}/{len(near)} |", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s; --resamples {args.resamples}")


if __name__ == "__main__":
    main()
