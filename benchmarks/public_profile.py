"""The public series of docs/accuracy.md modelled in one command: ``exprsearch profile --by series``.

Every scaling series that ``benchmarks/accuracy.py`` fits (its training rows: all but the largest
third of the worker counts) goes into one long table (series, p, time). The command runs from
process start with one process, with two, and on a local Dask cluster of two workers; the three
summaries (laws.csv) are compared byte for byte, and each series' law with the one
``exprsearch.search`` finds in process on the same rows.

    python benchmarks/public_profile.py [--shared ../shared/datasets] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from accuracy import SPECS, series

from exprsearch import search
from exprsearch.data import from_frame
from exprsearch.export import rounded_text


def long_table(shared: Path) -> pd.DataFrame:
    """The training rows of every public series, one ``series`` name each."""
    parts = []
    for spec in SPECS:
        if not (shared / spec.file).exists():
            continue
        for key, train, _ in series(spec, shared):
            name = f"{spec.name} | " + " / ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
            parts.append(train.assign(series=name)[["series", "p", "time"]])
    return pd.concat(parts, ignore_index=True)


def profile(path: Path, out: Path, options: list[str]) -> float:
    command = [sys.executable, "-m", "exprsearch.cli", "profile", str(path), "-t", "time", "--by", "series",
               "--out", str(out), "--force", *options]
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, text=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    table = long_table(args.shared)
    count = table["series"].nunique()
    modes = {"1 process": ["--jobs", "1"], "2 processes": ["--jobs", "2"], "Dask local:2": ["--scheduler", "local:2"]}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "public.csv"
        table.to_csv(path, index=False)
        walls, summaries = {}, {}
        for mode, options in modes.items():
            out = Path(folder) / mode.replace(" ", "-").replace(":", "")
            walls[mode] = [profile(path, out, options) for _ in range(args.repeats)]
            summaries[mode] = (out / "laws.csv").read_bytes()
            print(f"  {mode}: {statistics.median(walls[mode]):.1f} s", file=sys.stderr)
        laws = {r["series"]: r["law"] for r in json.loads((out / "laws.json").read_text())["series"]}
    same_law = 0
    for name, rows in table.groupby("series", sort=False):
        law = search(from_frame(rows[["p", "time"]].reset_index(drop=True), "time"), resamples=0).law
        same_law += f"time = {rounded_text(law)}" == laws.get(f"series={name}")
    print(f"\n### {count} public series in one command (`profile --by series`, {len(table)} rows)\n")
    print("| run | wall s (median) | range s | laws.csv identical to 1 process |")
    print("|---|---|---|---|")
    for mode in modes:
        print(f"| {mode} | {statistics.median(walls[mode]):.1f} | {min(walls[mode]):.1f}–{max(walls[mode]):.1f} | "
              f"{'yes' if summaries[mode] == summaries['1 process'] else 'NO'} |")
    one, two = statistics.median(walls["1 process"]), statistics.median(walls["2 processes"])
    print(f"\nSpeed-up of 2 processes over 1: {one / two:.2f}x; of a local Dask cluster of 2 workers: "
          f"{one / statistics.median(walls['Dask local:2']):.2f}x. Each series' law equals the one "
          f"`exprsearch.search` finds in process on the same rows for {same_law}/{count} series.")


if __name__ == "__main__":
    main()
