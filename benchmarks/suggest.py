"""Simulated measurement campaigns: following ``exprsearch suggest`` against a full factorial grid
and random designs of the same cost.

Each synthetic law is "measured" with 2 % multiplicative noise; every run costs devices × time
(devices = p). The k-th run at a configuration has the same noise in every design (common random
numbers), so the designs differ in where they measure, not in their luck. The budget is the cost
of the full factorial grid (p = 1, 2, 4, …, 64; n = 1000, 4000, 16000, 64000; each configuration
once). A campaign starts from a minimal design (the three smallest p; for two factors at the
smallest and largest n), asks ``suggest`` for one configuration at a time, telling it the budget
left (``--cost-budget``), and measures it, until nothing more fits in the budget. ``suggest`` and the
random designs may measure any p in ``--space``: every integer 1…64 (as ``--vary p=1..64``), or
only the grid's doubling levels. Judged: the error of the final law at the target (p = 512, 8x
the largest p in the space), against the noise-free law. Partial budgets (``--shares``) run their
own campaigns, since suggest plans for the budget it is given. With ``--overhead S`` every run takes
S seconds more than its law's time on each of its devices, in every design and the budget alike,
and ``suggest`` is told so (``--run-overhead``).

    python benchmarks/suggest.py [--only NAME[,NAME]] [--factors 1|2] [--random 3] [--space integers|doubling] [--overhead 0]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import extrap_advisor
import numpy as np
import pandas as pd

from exprsearch.errors import ExprsearchError, FewConfigurations
from exprsearch.executor import executor
from exprsearch.search import SearchSettings, search
from exprsearch.suggest import advise

PS = [1, 2, 4, 8, 16, 32, 64]
NS = [1000, 4000, 16000, 64000]
SPACES = {"integers": list(range(1, 65)), "doubling": PS}  # the p that suggest and random designs may measure
CHOICES = SPACES["integers"]
OVERHEAD = 0.0  # seconds each run takes beyond the law's time, on each of its devices (--overhead)


@dataclass(frozen=True)
class Case:
    name: str
    law: object  # (p, n) -> time
    two: bool  # varies n too

    @property
    def levels(self) -> dict[str, np.ndarray]:
        """The full factorial grid's levels: p doubling, n quadrupling."""
        return {"p": np.array(PS, float), **({"n": np.array(NS, float)} if self.two else {})}

    @property
    def space(self) -> dict[str, np.ndarray]:
        """What suggest and the random designs may measure (``--space``)."""
        return {**self.levels, "p": np.array(CHOICES, float)}

    @property
    def at(self) -> dict[str, float]:
        return {"p": 512.0, **({"n": 64000.0} if self.two else {})}


CASES = [
    Case("Amdahl 2 + 40/p", lambda p, n: 2 + 40 / p, False),
    Case("Amdahl + linear communication", lambda p, n: 1 + 50 / p + 0.05 * p, False),
    Case("Amdahl + log communication", lambda p, n: 1 + 30 / p + 0.3 * np.log2(p), False),
    Case("fitted power 0.5 + 20/p^0.8", lambda p, n: 0.5 + 20 / p**0.8, False),
    Case("sqrt communication", lambda p, n: 1 + 30 / p + 0.2 * np.sqrt(p), False),
    Case("bottleneck growing as p^2", lambda p, n: 2 + 40 / p + 0.002 * p**2, False),
    Case("weak scaling log2 p", lambda p, n: 2 + 0.5 * np.log2(p), False),
    Case("two factors: n/p", lambda p, n: 2 + 0.001 * n / p, True),
    Case("two factors: n/p + linear", lambda p, n: 1 + 0.001 * n / p + 0.05 * p, True),
    Case("two factors: n/p + log", lambda p, n: 1 + 0.001 * n / p + 0.2 * np.log2(p), True),
    Case("two factors: n log n / p", lambda p, n: 1 + 1e-4 * n * np.log2(n) / p, True),
    Case("two factors: n/p + sqrt(n) log p", lambda p, n: 0.5 + 0.002 * n / p + 5e-4 * np.sqrt(n) * np.log2(p), True),
    Case("two factors: n^2/p", lambda p, n: 1 + 1e-7 * n**2 / p, True),
    Case("two factors: fitted powers n^0.8/p^0.9", lambda p, n: 2 + 0.01 * n**0.8 / p**0.9, True),
    Case("two factors: n/p + p log p", lambda p, n: 1 + 0.001 * n / p + 0.01 * p * np.log2(p), True),
    Case("two factors: serial part grows with n", lambda p, n: 3 + 5e-4 * n / p + 1e-5 * n, True),
]


class World:
    """The measurements a design can draw: the k-th run at a configuration gets the same noise
    whichever design asks for it (common random numbers), so designs differ only in where they
    measure, not in their luck."""

    def __init__(self, case: Case, seed: int) -> None:
        self.case, self.seed, self.runs = case, seed, {}

    def measure(self, configs: list[tuple[float, ...]]) -> pd.DataFrame:
        rows = []
        for config in configs:
            k = self.runs.get(config, 0)
            self.runs[config] = k + 1
            noise = np.random.default_rng([self.seed, *(int(v) for v in config), k]).standard_normal()
            p, n = config[0], (config[1] if self.case.two else 1000.0)
            rows.append({"p": p, **({"n": n} if self.case.two else {}),
                         "time": self.case.law(p, n) * (1 + 0.02 * noise)})
        return pd.DataFrame(rows)


def lower(ours: float, theirs: float) -> bool:
    """A lower error by more than rounding: a campaign that measured the grid's own runs in another
    order fits the same law up to the last digits, which is a tie, not a win."""
    return ours < theirs * (1 - 1e-6)


def cost_of(case: Case, config: tuple[float, ...]) -> float:
    return config[0] * (case.law(config[0], config[1] if case.two else 1000.0) + OVERHEAD)


def error(case: Case, frame: pd.DataFrame, resamples: int = 0, rules="default"):
    settings = SearchSettings(resamples=resamples, near_front=False)  # as the CLI
    try:
        result = search(frame, "time", rules, settings=settings)
    except FewConfigurations:  # a known form (suggest_known_form.py) with as many constants as the first runs
        result = search(frame, "time", settings=settings)
    predicted = float(result.law.predict({k: [v] for k, v in case.at.items()})[0])
    truth = case.law(case.at["p"], case.at.get("n", 1000.0))
    return 100 * abs(predicted / truth - 1), result


def grid(case: Case) -> list[tuple[float, ...]]:
    """The full factorial grid."""
    return list(itertools.product(*(case.levels[k] for k in case.levels)))


def initial(case: Case) -> list[tuple[float, ...]]:
    return [(p, n) for p in PS[:3] for n in (NS[0], NS[-1])] if case.two else [(p,) for p in PS[:3]]


def factorial(case: Case, budget: float, stride: bool) -> list[tuple[float, ...]]:
    """The costliest full factorial grid within ``budget`` whose levels of each factor are its
    smallest ones (``stride`` False: what users measure first, "a few small configurations") or
    every k-th level from the smallest, so the grid spans the range (``stride`` True); [] if none
    with three or more levels of p fits."""
    names = list(case.levels)
    options = []
    for name in names:
        levels = list(case.levels[name])
        if stride:
            options.append([levels[::k] for k in range(1, len(levels))])
        else:
            options.append([levels[:m] for m in range(2 if name != "p" else 3, len(levels) + 1)])
    best, best_cost = [], -1.0
    for choice in itertools.product(*options):
        configs = list(itertools.product(*choice))
        cost = sum(cost_of(case, c) for c in configs)
        if len(choice[0]) >= 3 and cost <= budget and cost > best_cost:
            best, best_cost = configs, cost
    return best


def campaign(case: Case, budget: float, seed: int, rules="default") -> dict:
    """Follow suggest from the minimal design until the budget is spent, noting when it first
    said the target was settled (5 %): the cost, runs and error then. ``rules``: the grammar."""
    world = World(case, seed)
    configs = initial(case)
    frame = world.measure(configs)
    spent = sum(cost_of(case, c) for c in configs)
    history, settled = [], None
    while True:
        err, result = error(case, frame, resamples=50, rules=rules)
        history.append((spent, err))
        try:
            advice = advise(result, case.space, case.at, count=1, devices="p", tolerance=0.05, budget=budget - spent,
                            overhead=OVERHEAD)
        except ExprsearchError:
            break
        if advice.settled and settled is None:
            settled = (spent, len(frame), err)
        if not advice.suggestions:
            break
        config = tuple(advice.suggestions[0].config[k] for k in case.space)
        if spent + cost_of(case, config) > budget:
            break
        frame = pd.concat([frame, world.measure([config])], ignore_index=True)
        spent += cost_of(case, config)
    reach = next((c for c, e in history if e < 5), None)
    return {"error": history[-1][1], "spent": spent, "runs": len(frame), "reach5": reach, "settled": settled,
            "history": history}


def extrap_campaign(case: Case, budget: float, seed: int, folder: Path) -> float | None:
    """Follow Extra-P 4.2.5's measurement point advisor (:mod:`extrap_advisor`) from the same
    minimal design, measured twice as the advisor needs repetitions, taking the repetitions it
    asks for, until the budget is spent; the final data are fitted by exprsearch, so only the
    design differs. None without Extra-P."""
    if not extrap_advisor.available():
        return None
    world = World(case, seed)
    configs = [c for c in initial(case) for _ in range(2)]
    frame = world.measure(configs)
    spent = sum(cost_of(case, c) for c in configs)
    while (asked := extrap_advisor.next_point(frame, case.space, budget - spent, folder)) is not None:
        config, reps = asked
        if spent + reps * cost_of(case, config) > budget:
            break
        frame = pd.concat([frame, world.measure([config] * reps)], ignore_index=True)
        spent += reps * cost_of(case, config)
    return error(case, frame)[0]


def random_design(case: Case, budget: float, seed: int, world_seed: int) -> float:
    rng = np.random.default_rng(seed)
    configs = initial(case)
    spent = sum(cost_of(case, c) for c in configs)
    pool = [c for c in itertools.product(*(case.space[k] for k in case.space)) if c not in configs]
    for i in rng.permutation(len(pool)):
        if spent + cost_of(case, pool[i]) <= budget:
            configs.append(pool[i])
            spent += cost_of(case, pool[i])
    return error(case, World(case, world_seed).measure(configs))[0]


def timing(repeats: int = 3) -> None:
    """Wall time of ``exprsearch suggest`` from process start on a 30-point two-factor dataset."""
    case = CASES[8]
    configs = [(p, n) for p in PS[:5] for n in NS[:3]] * 2  # 15 configurations, 2 runs each
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.csv"
        World(case, 0).measure(configs).to_csv(path, index=False)
        command = [sys.executable, "-m", "exprsearch.cli", "suggest", str(path), "-t", "time", "--vary", "p=1..64:x2",
                   "--vary", "n=1000,4000,16000,64000", "--at", "p=512,n=64000", "--devices", "p"]
        walls = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            walls.append(time.perf_counter() - start)
    print(f"exprsearch suggest on 30 points (15 configurations x 2), from process start: median "
          f"{statistics.median(walls):.2f} s of {repeats} (range {min(walls):.2f}-{max(walls):.2f} s)")


def law_row(item: tuple) -> dict:
    """Every design's campaign on one law (the suite's ``number``-th), in ``space``; a pure function
    of its item, so the laws can run in separate processes with the same figures."""
    number, space, random, shares, worlds, overhead = item
    global CHOICES, OVERHEAD
    CHOICES, OVERHEAD = SPACES[space], overhead
    case = CASES[number]  # seeds follow the case, whichever cases run
    full = grid(case)
    budget = sum(cost_of(case, c) for c in full)
    started = time.perf_counter()
    world = 100 + number  # the same noise for every design of this law
    grid_error = error(case, World(case, world).measure(full))[0]
    followed = campaign(case, budget, seed=world)
    randoms = [random_design(case, budget, 300 + 10 * number + r, world) for r in range(random)]
    with tempfile.TemporaryDirectory() as folder:
        advisor = extrap_campaign(case, budget, world, Path(folder))
    part = {}
    for share in shares:
        small, spread = (factorial(case, share * budget, stride) for stride in (False, True))
        start = sum(cost_of(case, c) for c in initial(case)) <= share * budget
        part[share] = {
            "suggest": campaign(case, share * budget, seed=world)["error"] if start else None,
            "small": error(case, World(case, world).measure(small))[0] if small else None,
            "spread": error(case, World(case, world).measure(spread))[0] if spread else None,
            "random": statistics.median(random_design(case, share * budget, 300 + 10 * number + r, world)
                                        for r in range(random)) if start else None,
        }
    others = [(error(case, World(case, seed).measure(full))[0], campaign(case, budget, seed=seed)["error"])
              for seed in (world + 1000 * w for w in range(1, worlds))]
    return {"law": case.name, "grid": grid_error, "random": statistics.median(randoms), "advisor": advisor, **followed,
            "budget": budget, "grid_runs": len(full), "seconds": time.perf_counter() - started, "part": part,
            "worlds": [(grid_error, followed["error"]), *others]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose name contains this (several, separated by commas)")
    parser.add_argument("--factors", type=int, choices=(1, 2),
                        help="run only the laws of one factor (p) or of two (p and n); five draws of all 16 take hours")
    parser.add_argument("--random", type=int, default=3, help="random designs per law")
    parser.add_argument("--worlds", type=int, default=1,
                        help="noise draws per law for the comparison with the full grid (the tables show the first)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="laws run at once in local processes (0: one per core); the figures do not depend on it")
    parser.add_argument("--timing", action="store_true", help="only time the command on a 30-point dataset")
    parser.add_argument("--shares", type=lambda text: [float(v) for v in text.split(",") if v.strip()], default=[0.25, 0.5],
                        help="budgets below the full grid's cost, as shares of it, to compare at (same-cost grids)")
    parser.add_argument("--space", choices=sorted(SPACES), default="integers",
                        help="the p that suggest may measure: every integer 1..64, or only the grid's doubling levels")
    parser.add_argument("--overhead", type=float, default=0.0,
                        help="seconds each run takes beyond the law's time (queueing, start-up), paid on each of its "
                             "devices by every design and given to suggest as --run-overhead")
    args = parser.parse_args()
    if args.jobs < 0:
        parser.error("--jobs takes 0 (one process per core) or more")
    if not 0 <= args.overhead < float("inf"):
        parser.error("--overhead takes a time of 0 or more")
    if args.random < 1 or args.worlds < 1:
        parser.error("--random and --worlds take 1 or more (the tables compare with their median and first draw)")
    global CHOICES
    CHOICES = SPACES[args.space]
    if args.timing:
        return timing()
    wanted = [w.strip() for w in (args.only or "").split(",") if w.strip()]
    numbers = [n for n, case in enumerate(CASES)
               if (not wanted or any(w in case.name for w in wanted)) and args.factors in (None, 1 + case.two)]
    if not numbers:
        parser.error("no law matches --only and --factors; the laws are: " + "; ".join(c.name for c in CASES))
    items = [(n, args.space, args.random, tuple(args.shares), args.worlds, args.overhead) for n in numbers]
    rows = [None] * len(items)
    pool = executor(args.jobs, size=len(items))
    try:
        for i, row in pool.run(law_row, items):
            rows[i] = row
            print(f"  {row['law']}: suggest {row['error']:.2f} % ({row['runs']} runs, {100 * row['spent'] / row['budget']:.0f} "
                  f"% of the grid's cost), grid {row['grid']:.2f} %, random {row['random']:.2f} % "
                  f"({row['seconds']:.0f} s)", file=sys.stderr)
    finally:
        pool.close()
    print("\n### Following suggest against a full grid and random designs of the same cost\n")
    print("| law | suggest error % | runs | share of the grid's cost | said settled at (cost share, runs, error) | "
          "cost share to reach 5 % | full grid error % | random (median) error % | Extra-P advisor error % |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        reach = f"{100 * r['reach5'] / r['budget']:.0f} %" if r["reach5"] is not None else "not reached"
        said = (f"{100 * r['settled'][0] / r['budget']:.0f} %, {r['settled'][1]}, {r['settled'][2]:.2f} %"
                if r["settled"] else "no")
        print(f"| {r['law']} | {r['error']:.2f} | {r['runs']} | {100 * r['spent'] / r['budget']:.0f} % | {said} | "
              f"{reach} | {r['grid']:.2f} | {r['random']:.2f} | "
              f"{'—' if r['advisor'] is None else format(r['advisor'], '.2f')} |")
    better = sum(lower(r["error"], r["grid"]) for r in rows)
    shares = [r["reach5"] / r["budget"] if r["reach5"] is not None else float("inf") for r in rows]
    print(f"\nFollowing suggest: lower error at the target than the full grid on {better}/{len(rows)} laws "
          f"({100 * better / len(rows):.0f} %), than random designs on "
          f"{sum(lower(r['error'], r['random']) for r in rows)}/{len(rows)}; median cost to reach 5 % error: "
          f"{100 * statistics.median(shares):.0f} % of the grid's (full grid within 5 % on "
          f"{sum(r['grid'] < 5 for r in rows)}/{len(rows)}).")
    for share in args.shares:
        print(f"\n### At {100 * share:.0f} % of the full grid's cost\n")
        print("| law | suggest error % | grid of the smallest configurations % | grid spanning the range % | "
              "random (median) % |")
        print("|---|---|---|---|---|")
        cells = lambda v: "none fits" if v is None else f"{v:.2f}"  # noqa: E731
        for r in rows:
            q = r["part"][share]
            print(f"| {r['law']} | {cells(q['suggest'])} | {cells(q['small'])} | {cells(q['spread'])} | "
                  f"{cells(q['random'])} |")
        scores = []
        for kind, what in (("small", "the same-cost grid of the smallest configurations"),
                           ("spread", "the same-cost grid spanning the range"), ("random", "random designs (median)")):
            both = [r["part"][share] for r in rows if r["part"][share][kind] is not None
                    and r["part"][share]["suggest"] is not None]
            scores.append(f"than {what} on {sum(lower(q['suggest'], q[kind]) for q in both)}/{len(both)} laws")
        print(f"\nAt {100 * share:.0f} % of the grid's cost, following suggest: lower error " + ", ".join(scores)
              + " (counted where both designs fit the budget).")
    if args.worlds > 1:
        pairs = [pair for r in rows for pair in r["worlds"]]
        below = [sum(lower(ours, grid) for grid, ours in r["worlds"]) for r in rows]  # each law's draws below the grid
        majority = sum(2 * b > len(r["worlds"]) for b, r in zip(below, rows))
        print(f"\nOver {args.worlds} noise draws per law: following suggest gave a lower error at the target than "
              f"the full grid in {sum(lower(ours, grid) for grid, ours in pairs)}/{len(pairs)} campaigns (tied in "
              f"{sum(not lower(o, g) and not lower(g, o) for g, o in pairs)}: the same runs), and in most "
              f"draws on {majority}/{len(rows)} laws; median error {statistics.median(o for _, o in pairs):.2f} % "
              f"against the grid's {statistics.median(g for g, _ in pairs):.2f} %.")
        for r, b in zip(rows, below):
            print(f"- {r['law']} ({b}/{len(r['worlds'])} below): "
                  + ", ".join(f"{o:.2f} vs {g:.2f}" for g, o in r["worlds"]))
    advised = [r for r in rows if r["advisor"] is not None]
    if advised:
        print(f"Against Extra-P's advisor (its designs fitted by exprsearch): lower error on "
              f"{sum(lower(r['error'], r['advisor']) for r in advised)}/{len(advised)} laws; the advisor's designs "
              f"within 5 % on {sum(r['advisor'] < 5 for r in advised)}/{len(advised)}.")


if __name__ == "__main__":
    main()
