"""Speed and memory of `exprsearch run`, end to end, on synthetic laws with known truth.

Each case writes a CSV, then times `exprsearch run` in a fresh process from start to written
law.json (median of --repeats runs), and reports candidates fitted per second, the peak memory
of the process and the law's error against the truth at 4x the largest measured p. With
--compare-extrap it also times Extra-P's command line on the same data (Extra-P installed from
PyPI into its own venv, as benchmarks/accuracy.py does).

    python benchmarks/speed.py [--repeats 5] [--rows 1000,10000,100000] [--compare-extrap]
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

import numpy as np
import pandas as pd


def law(p, n):
    return 2 + 0.01 * n / p + 0.15 * p


def table(rows: int, seed: int = 0) -> pd.DataFrame:
    """``rows`` measurements of the law over 6 worker counts × n values, 2 % noise."""
    rng = np.random.default_rng(seed)
    p = np.array([1, 2, 4, 8, 16, 32], dtype=float)
    n_values = np.geomspace(1000, 64000, max(4, rows // 18))
    grid = np.array([(a, b) for a in p for b in n_values])
    picks = grid[np.arange(rows) % len(grid)]
    time_ = law(picks[:, 0], picks[:, 1]) * (1 + 0.02 * rng.standard_normal(rows))
    return pd.DataFrame({"p": picks[:, 0], "n": picks[:, 1], "time": time_})


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MiB, by GNU time) of one run in a fresh process."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 1024


def run_case(name: str, frame: pd.DataFrame, grammar: str, repeats: int, folder: Path) -> dict:
    data = folder / f"{name}.csv"
    frame.to_csv(data, index=False)
    walls, peaks = [], []
    for i in range(repeats):
        out = folder / f"{name}-{i}"
        seconds, peak = timed([sys.executable, "-m", "exprsearch.cli", "run", str(data), "-t", "time", "-g", grammar,
                               "--out", str(out), "--bootstrap", "0", "--json"])
        walls.append(seconds)
        peaks.append(peak)
    record = json.loads((folder / f"{name}-0" / "law.json").read_text())
    from exprsearch import load

    fitted = load(folder / f"{name}-0" / "law.json")
    probe = {"p": np.full(3, 128.0), "n": np.array([1000.0, 8000.0, 64000.0])}
    error = float(np.max(np.abs(fitted.predict(probe) / law(**probe) - 1)))
    candidates = _candidates(grammar)
    return {"case": name, "rows": len(frame), "grammar": grammar, "wall_s_median": statistics.median(walls),
            "candidates": candidates, "candidates_per_s": candidates / statistics.median(walls),
            "peak_mib": max(peaks), "error_at_4x_pct": 100 * error, "law": record["template"]}


def _candidates(grammar: str) -> int:
    from exprsearch import candidates as c
    from exprsearch import grammar as g

    return len(c.generate(g.bind(g.load(grammar), ("p", "n"))))


def extrap_case(frame: pd.DataFrame, folder: Path, repeats: int) -> float:
    sys.path.insert(0, str(Path(__file__).parent))
    from accuracy import extrap_ready

    python = extrap_ready()
    path = folder / "extrap.txt"
    grouped = frame.groupby(["p", "n"])["time"].apply(list)
    lines = ["PARAMETER p", "PARAMETER n", "POINTS " + " ".join(f"( {p:g} {n:g} )" for p, n in grouped.index), "",
             "REGION r", "METRIC time"] + ["DATA " + " ".join(f"{v:.10g}" for v in values) for values in grouped]
    path.write_text("\n".join(lines) + "\n")
    cli = str(Path(python).parent / "extrap")
    command = [cli, "--text", str(path), "--modeler", "multi-parameter", "--options", "#spm=Basic",
               "#spo=allow_negative_exponents=True"]
    return statistics.median(timed(command)[0] for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", default="1000,10000,100000")
    parser.add_argument("--compare-extrap", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        small = table(72)
        for grammar in ("data-parallel", "default"):
            rows.append(run_case(f"small-{grammar}", small, grammar, args.repeats, folder))
        if args.compare_extrap:
            rows[-1]["extrap_wall_s_median"] = extrap_case(small, folder, args.repeats)
            rows[-1]["ratio_to_extrap"] = rows[-1]["wall_s_median"] / rows[-1]["extrap_wall_s_median"]
        for size in [int(r) for r in args.rows.split(",") if r]:
            rows.append(run_case(f"rows-{size}", table(size), "data-parallel", max(1, args.repeats // 2), folder))
        for row in rows:
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
