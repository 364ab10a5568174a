"""Per-step logs: a law fitted to the runs (each the median of its steps) against one fitted to every step.

    python benchmarks/per_step.py [--laws 20] [--seed 1] [--scenarios offsets,stalls,single,unlabelled,steady] [--no-extrap]

Training logs record every step, and a configuration's runs differ by more than its steps do: a
run lands on other nodes, with other neighbours and another placement, and keeps that offset for
all its steps. Each scenario draws random laws (benchmarks/random_laws.py: p 1–16, n 1e3–16e3,
b 16–64) and logs their steps:

- ``offsets``: 3 runs per configuration of 100 steps; each run off the law by 3 % (sd), each step by 5 %.
- ``stalls``: as offsets at 2 %, the first 3 steps of a run 3× slower (warm-up), 2 % of steps 4× (stalls).
- ``single``: one run per configuration of 200 steps, no run column; runs off by 2 %, steps by 5 %.
- ``unlabelled``: as offsets, without the run column: each configuration's runs written one after
  another, told apart where the step falls back.
- ``steady``: 3 runs of 100 steps with no offset between runs (steps independent, 5 %): the case
  where every step is an independent measurement, and fitting them all is right.

``runs`` is exprsearch on the log as written (its step column makes each run one row);
``every step`` is exprsearch on the same rows without the step and run columns, as it read such
logs before; Extra-P 4.2.5 gets every step as its repetitions (it models their median per
point). Judged as random_laws.py judges: the true form found and within 3 % at 4–8× the largest p
and n.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import multifactor_suite as mf  # noqa: E402
from random_laws import GRID, random_law  # noqa: E402
from speed import EXTRAP, extrap_model, extrap_predict  # noqa: E402

from exprsearch import search  # noqa: E402

SCENARIOS = {  # runs per configuration, steps per run, run offset sd, step sd, warm-up and stalls
    "offsets": (3, 100, 0.03, 0.05, False),
    "stalls": (3, 100, 0.02, 0.05, True),
    "single": (1, 200, 0.02, 0.05, False),
    "unlabelled": (3, 100, 0.03, 0.05, False),
    "steady": (3, 100, 0.0, 0.05, False),
}


def logged(truth: str, scenario: str, seed: int) -> pd.DataFrame:
    """The per-step log of ``truth`` over GRID in ``scenario``."""
    runs, steps, run_sd, step_sd, stalls = SCENARIOS[scenario]
    rng = np.random.default_rng(seed)
    names = list(GRID)
    configurations = np.array(list(itertools.product(*GRID.values())), dtype=float)
    law = mf.evaluate(truth, names, configurations)
    parts = []
    for setting, value in zip(configurations, law):
        for run in range(runs):
            times = value * (1 + run_sd * rng.standard_normal()) * (1 + step_sd * rng.standard_normal(steps))
            if stalls:
                times[:3] *= 3
                times[rng.random(steps) < 0.02] *= 4
            part = pd.DataFrame({**{n: np.full(steps, v) for n, v in zip(names, setting)},
                                 "run": run, "step": np.arange(steps), "time": times})
            parts.append(part)
    frame = pd.concat(parts, ignore_index=True)
    return frame.drop(columns="run") if runs == 1 or scenario == "unlabelled" else frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--laws", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--no-extrap", dest="extrap", action="store_false")
    args = parser.parse_args()
    scenarios = args.scenarios.split(",")
    unknown = [s for s in scenarios if s not in SCENARIOS]
    if unknown or args.laws < 1:
        parser.error(f"--scenarios takes {', '.join(SCENARIOS)}; --laws at least 1")
    extrap = args.extrap and EXTRAP.exists()
    names = list(GRID)
    folder = Path(tempfile.mkdtemp())
    summary = []
    for scenario in scenarios:
        rng = np.random.default_rng(args.seed)
        judged = {"runs": [], "every step": [], **({"Extra-P": []} if extrap else {})}
        seconds = {"runs": [], "every step": []}
        for number in range(args.laws):
            truth, _ = random_law(rng)
            case = mf.Case(f"{scenario} {number}", truth, GRID, ("p", "n"), "")
            frame = logged(truth, scenario, seed=1000 * args.seed + number)
            points = mf.test_points(case)
            for label, table in (("runs", frame), ("every step", frame[[*names, "time"]])):
                start = time.perf_counter()
                found = search(table, "time", "default", resamples=0)
                seconds[label].append(time.perf_counter() - start)
                error = mf.error_at(found.law.predict, case, points)
                judged[label].append((mf.same_form(found.law.expression, truth, names) and error < 3, error))
            if extrap:
                model, _ = extrap_model(EXTRAP, frame, names, folder / f"{scenario}{number}.txt", 1)
                predicted = extrap_predict(model, {n: points[:, i] for i, n in enumerate(names)})
                truth_at = mf.evaluate(truth, names, points)
                judged["Extra-P"].append((None, float(100 * np.max(np.abs(predicted / truth_at - 1)))))
            print(f"{scenario} {number}: " + ", ".join(f"{k} {v[-1][1]:.2f} %" for k, v in judged.items()), flush=True)
        for label, rows in judged.items():
            recovered = "" if label == "Extra-P" else f"{sum(r for r, _ in rows)}/{len(rows)}"
            summary.append((scenario, label, recovered, sum(e < 3 for _, e in rows), len(rows),
                            statistics.median(e for _, e in rows),
                            statistics.median(seconds[label]) if label in seconds else None))
    print("\n| scenario | fitted to | recovered | within 3 % | median error % (4-8x) | median s |")
    print("|---|---|---|---|---|---|")
    for scenario, label, recovered, within, count, error, spent in summary:
        shown = "" if spent is None else f"{spent:.2f}"
        print(f"| {scenario} | {label} | {recovered} | {within}/{count} | {error:.2f} | {shown} |")


if __name__ == "__main__":
    main()
