"""Decisions made with a law: how good is the configuration `optimize` picks, and do its warnings
say when it is not?

The 16 laws of benchmarks/suggest.py are measured once per configuration of the grid p = 1, 2,
4, 8, 16 (n = 1000, 4000, 16000, 64000 for two factors) with 2 % noise, in five noise draws each;
a law is fitted with its bootstrap (50 resamples), and `optimize` (the library call the command
makes) picks

- the fastest p of 1…128 (n = 64000): judged by its regret, how much longer the true law takes
  there than at its own fastest p, and whether `optimize` warned that laws fitting the
  measurements as well choose otherwise (by more than 5 %);
- the cheapest p (cost p × time) whose predicted time is within a budget, the true time at
  p = 32: judged by the chance that a run there overruns the budget (the true time with the
  noise's spread), against the cheapest configuration whose 95 % interval stays within it, where
  `optimize` names one.

    python benchmarks/decisions.py [--worlds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suggest as campaigns  # noqa: E402

from exprsearch import search  # noqa: E402
from exprsearch.cli.choice import RIVAL  # noqa: E402
from exprsearch.cli.ranges import far_outside  # noqa: E402
from exprsearch.configs import ConfigError  # noqa: E402
from exprsearch.optimize import Pricing, optimize  # noqa: E402

FITTED = [1, 2, 4, 8, 16]
SEARCHED = np.arange(1.0, 129.0)
NOISE = 0.02


def fitted(case: campaigns.Case, world: int):
    """The law of one noise draw of the grid p ≤ 16 (n's four values for two factors)."""
    configs = [(p, n) for p in FITTED for n in campaigns.NS] if case.two else [(p,) for p in FITTED]
    frame = campaigns.World(case, 1000 * world + campaigns.CASES.index(case)).measure(configs)
    return search(frame, "time", resamples=50).law


def overrun(case: campaigns.Case, p: float, n: float, budget: float) -> float:
    """The chance that a run at p overruns ``budget``: the true time with 2 % noise."""
    return 1 - NormalDist().cdf((budget / case.law(p, n) - 1) / NOISE)


def decide(case: campaigns.Case, world: int) -> dict:
    law = fitted(case, world)
    n = 64000.0
    fixed = {"n": n} if case.two else {}
    truth = case.law(SEARCHED, n)
    fastest = optimize(law, {"p": SEARCHED}, fixed)
    chosen = fastest.best.config["p"]
    regret = float(case.law(chosen, n) / truth.min() - 1)
    warned = any(extra > RIVAL for _, extra in fastest.rivals)
    # optimize also warns where the choice lies far beyond the measurements (cli/ranges.far_outside)
    far = any(far_outside(law, f, [v]) for f, v in fastest.best.config.items())
    budget = float(case.law(32.0, n))
    try:
        cheapest = optimize(law, {"p": SEARCHED}, fixed, pricing=Pricing(devices="p"), budget=budget)
    except ConfigError:  # the law predicts no p within the budget: nothing chosen, nothing to overrun
        return {"regret": regret, "warned": warned, "far": far, "chosen": chosen, "overrun": None, "flagged": False,
                "safe_overrun": None, "extra_cost": None}
    p = cheapest.best.config["p"]
    flagged = cheapest.best.slowest is not None and cheapest.best.slowest > budget
    safe = cheapest.safe.config["p"] if cheapest.safe is not None else None
    return {"regret": regret, "warned": warned, "far": far, "chosen": chosen, "overrun": overrun(case, p, n, budget),
            "flagged": flagged, "safe_overrun": None if safe is None else overrun(case, safe, n, budget),
            "extra_cost": None if safe is None else float(safe * case.law(safe, n) / (p * case.law(p, n)) - 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", type=int, default=5, help="noise draws per law")
    args = parser.parse_args()
    start, rows = time.perf_counter(), []
    print("| law | fastest p chosen (regret %, warned) | cheapest within the budget: chance of overrun, flagged; "
          "the safe one's |")
    print("|---|---|---|")
    for case in campaigns.CASES:
        found = [decide(case, world) for world in range(args.worlds)]
        rows += found
        first = "; ".join(f"{r['chosen']:.0f} ({100 * r['regret']:.1f} %{', warned' if r['warned'] else ''})"
                          for r in found)
        second = "; ".join("none predicted within" if r["overrun"] is None else
                           f"{100 * r['overrun']:.0f} %{' flagged' if r['flagged'] else ''}"
                           + ("" if r["safe_overrun"] is None else f" → {100 * r['safe_overrun']:.0f} %")
                           for r in found)
        print(f"| {case.name} | {first} | {second} |", flush=True)
    bad = [r for r in rows if r["regret"] > RIVAL]
    good = [r for r in rows if r["regret"] <= RIVAL]
    warned = [r for r in rows if r["warned"]]
    print(f"\nFastest p: {len(bad)} of {len(rows)} choices take more than {100 * RIVAL:g} % longer than the true "
          f"fastest p (median regret {100 * statistics.median(r['regret'] for r in rows):.1f} %); warned on "
          f"{sum(r['warned'] for r in bad)} of those {len(bad)} and on {sum(r['warned'] for r in good)} of the other "
          f"{len(good)}; of the {len(warned)} warned, {sum(r['regret'] > RIVAL for r in warned)} were more than "
          f"{100 * RIVAL:g} % off. With the warning that the choice lies far beyond the measurements, warned on "
          f"{sum(r['warned'] or r['far'] for r in bad)} of the {len(bad)} and on {sum(r['warned'] or r['far'] for r in good)} "
          f"of the {len(good)}.")
    chosen = [r for r in rows if r["overrun"] is not None]
    flagged = [r for r in chosen if r["flagged"]]
    calm = [r for r in chosen if not r["flagged"]]
    safe = [r for r in flagged if r["safe_overrun"] is not None]

    def mean(values) -> float:
        values = list(values)
        return 100 * statistics.mean(values) if values else float("nan")

    print(f"Cheapest within the budget ({len(rows) - len(chosen)} of {len(rows)} laws predicted no p within it): a run "
          f"at the choice overruns it with median chance {100 * statistics.median(r['overrun'] for r in chosen):.0f} % "
          f"(mean {mean(r['overrun'] for r in chosen):.0f} %); flagged {len(flagged)} of {len(chosen)} (their mean "
          f"chance {mean(r['overrun'] for r in flagged):.0f} %, the others' {mean(r['overrun'] for r in calm):.0f} %); "
          + (f"the {len(safe)} safe alternatives named overrun with mean chance "
             f"{100 * statistics.mean(r['safe_overrun'] for r in safe):.0f} % at a median "
             f"{100 * statistics.median(r['extra_cost'] for r in safe):.0f} % more cost" if safe else "no safe alternative named")
          + f" ({time.perf_counter() - start:.0f} s).")


if __name__ == "__main__":
    main()
