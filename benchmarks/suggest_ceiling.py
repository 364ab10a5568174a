"""What design alone can win against the same-cost full grid: a planner that knows the true law.

``benchmarks/suggest.py`` counts the laws on which following ``suggest`` gives a lower error at
the target than the full grid of the same cost. That count mixes two things: where the runs are
(the design) and which law the search then chooses (selection). This script isolates the first.
For every law of that suite that is linear in its constants it plans with the law itself known,
coefficients included: from the same start, it adds one run at a time, the one that most reduces
the least-squares variance of the prediction at the target per unit of cost, until nothing more
fits in the budget (greedy c-optimal design; what ``suggest`` does when only the true law is
plausible). Both that design and the grid are then fitted with the true form (relative least
squares), on the same noise draws as ``suggest.py`` (common random numbers) and on as many more
as ``--worlds`` asks. A law on which even this planner rarely beats the grid shows how far the
suite's target can be met by design at all.

    python benchmarks/suggest_ceiling.py [--worlds 400] [--space integers|doubling]
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
import suggest as suite

ONE = np.ones
BASIS = {  # the true form of each law linear in its constants: its columns as functions of (p, n)
    "Amdahl 2 + 40/p": lambda p, n: [ONE(p.shape), 1 / p],
    "Amdahl + linear communication": lambda p, n: [ONE(p.shape), 1 / p, p],
    "Amdahl + log communication": lambda p, n: [ONE(p.shape), 1 / p, np.log2(p)],
    "sqrt communication": lambda p, n: [ONE(p.shape), 1 / p, np.sqrt(p)],
    "bottleneck growing as p^2": lambda p, n: [ONE(p.shape), 1 / p, p**2],
    "weak scaling log2 p": lambda p, n: [ONE(p.shape), np.log2(p)],
    "two factors: n/p": lambda p, n: [ONE(p.shape), n / p],
    "two factors: n/p + linear": lambda p, n: [ONE(p.shape), n / p, p],
    "two factors: n/p + log": lambda p, n: [ONE(p.shape), n / p, np.log2(p)],
    "two factors: n log n / p": lambda p, n: [ONE(p.shape), n * np.log2(n) / p],
    "two factors: n/p + sqrt(n) log p": lambda p, n: [ONE(p.shape), n / p, np.sqrt(n) * np.log2(p)],
    "two factors: n^2/p": lambda p, n: [ONE(p.shape), n**2 / p],
    "two factors: n/p + p log p": lambda p, n: [ONE(p.shape), n / p, p * np.log2(p)],
    "two factors: serial part grows with n": lambda p, n: [ONE(p.shape), n / p, n],
}


def basis(case: suite.Case, configs: list[tuple[float, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """The true form's columns at ``configs``, and the true times there (n = 1000 for a law over p
    alone, as the suite measures it)."""
    p = np.array([c[0] for c in configs], float)
    n = np.array([c[1] if case.two else 1000.0 for c in configs], float)
    return np.column_stack(BASIS[case.name](p, n)), case.law(p, n)


def columns(case: suite.Case, configs: list[tuple[float, ...]]) -> np.ndarray:
    """The true form's design matrix at ``configs``, each row divided by the true time there
    (relative errors, as the noise is multiplicative)."""
    x, times = basis(case, configs)
    return x / times[:, None]


def target(case: suite.Case) -> tuple[float, ...]:
    """The configuration the suite judges at (p = 512, and n = 64000 for two factors)."""
    return tuple(case.at[k] for k in case.space)


def relaxed(info: np.ndarray, rows: np.ndarray, cost: np.ndarray, at: np.ndarray, budget: float,
            steps: int = 3000) -> tuple[np.ndarray, float]:
    """Runs per configuration (real numbers) within ``budget`` that leave the least variance of the
    prediction at ``at`` (its row), given the information ``info`` already measured: the c-optimal
    design with costs, which is convex, solved by Frank-Wolfe (as ``suggest`` plans). Returns the
    runs and a certified lower bound on the least variance: the variance they reach less the
    Frank-Wolfe duality gap, so no design of integer runs within the budget goes below it."""
    most = budget / cost
    runs = np.zeros(len(cost))
    for step in range(steps):
        system = info + (rows.T * runs) @ rows
        rate = (rows @ np.linalg.solve(system, at)) ** 2 / cost
        move, vertex = 2.0 / (step + 2), int(np.argmax(rate))
        runs *= 1 - move
        runs[vertex] += move * most[vertex]
    solved = np.linalg.solve(info + (rows.T * runs) @ rows, at)
    slope = (rows @ solved) ** 2  # minus the variance's derivative in each configuration's runs
    gap = float(np.max(slope / cost) * budget - runs @ slope)
    return runs, max(float(at @ solved) - gap, 0.0)


def plan(case: suite.Case, budget: float) -> tuple[list[tuple[float, ...]], float]:
    """From the suite's start, one run at a time: plan the rest of the budget (:func:`relaxed`) and
    measure the affordable configuration it spends most on, until nothing more fits. Returns the
    design and the first plan's lower bound on the variance (any design from that start has at
    least it)."""
    configs = suite.initial(case)
    spent = sum(suite.cost_of(case, c) for c in configs)
    space = list(itertools.product(*(case.space[k] for k in case.space)))
    rows, cost = columns(case, space), np.array([suite.cost_of(case, c) for c in space])
    at = columns(case, [target(case)])[0]
    design = columns(case, configs)
    bound = None
    while True:
        open_ = spent + cost <= budget
        if not open_.any():
            return configs, bound
        runs, variance = relaxed(design.T @ design, rows[open_], cost[open_], at, budget - spent)
        bound = variance if bound is None else bound
        best = int(np.flatnonzero(open_)[int(np.argmax(runs * cost[open_]))])
        configs.append(space[best])
        design = np.vstack([design, rows[best]])
        spent += cost[best]


def fitted_error(case: suite.Case, configs: list[tuple[float, ...]], seed: int) -> float:
    """Error (%) at the target of the true form fitted by relative least squares to the runs of
    ``configs`` in noise draw ``seed``."""
    y = suite.World(case, seed).measure(configs)["time"].to_numpy()
    coef = np.linalg.lstsq(basis(case, configs)[0] / y[:, None], np.ones(len(y)), rcond=None)[0]
    at, truth = basis(case, [target(case)])
    return 100 * abs(float(at[0] @ coef) / float(truth[0]) - 1)


def most_of_five(q: float) -> float:
    """Probability of winning at least three of five independent draws, each won with ``q``."""
    return sum(math.comb(5, k) * q**k * (1 - q) ** (5 - k) for k in range(3, 6))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=400, help="noise draws per law")
    parser.add_argument("--space", choices=sorted(suite.SPACES), default="integers")
    args = parser.parse_args()
    suite.CHOICES = suite.SPACES[args.space]
    print(f"### A planner that knows the law, against the same-cost full grid ({args.space} p, "
          f"{args.worlds} noise draws)\n")
    print("| law | runs (grid) | distinct p | prediction SD ratio, grid / planner (grid / any design) | lower error than the grid | "
          "tied | median error %, planner vs grid | P(lower in most of 5 draws) |")
    print("|---|---|---|---|---|---|---|---|")
    majority, share, counted = [], [], 0
    for number, case in enumerate(suite.CASES):
        if case.name not in BASIS:
            print(f"| {case.name} | not linear in its constants: not planned |||||||")
            continue
        counted += 1
        full = suite.grid(case)
        budget = sum(suite.cost_of(case, c) for c in full)
        design, bound = plan(case, budget)
        at = columns(case, [target(case)])[0]
        spread = [math.sqrt(at @ np.linalg.pinv(columns(case, d).T @ columns(case, d)) @ at)
                  for d in (full, design)] + [math.sqrt(bound)]
        seeds = [100 + number + 1000 * w for w in range(args.worlds)]  # suite.py's draws come first
        pairs = [(fitted_error(case, design, s), fitted_error(case, full, s)) for s in seeds]
        wins = sum(suite.lower(ours, grid) for ours, grid in pairs)
        ties = sum(not suite.lower(o, g) and not suite.lower(g, o) for o, g in pairs)
        q = wins / len(pairs)
        majority.append(most_of_five(q))
        share.append(q)
        print(f"| {case.name} | {len(design)} ({len(full)}) | {len({c[0] for c in design})} | "
              f"{spread[0] / spread[1]:.2f} ({spread[0] / spread[2]:.2f}) | {100 * q:.0f} % | {ties} | "
              f"{np.median([o for o, _ in pairs]):.2f} vs {np.median([g for _, g in pairs]):.2f} | "
              f"{100 * majority[-1]:.0f} % |")
    print(f"\nOver the {counted} laws linear in their constants, the planner that knows the law gives a lower "
          f"error than the same-cost grid in {100 * np.mean(share):.0f} % of draws; expected laws on which it is "
          f"lower in most of five draws: {sum(majority):.1f}/{counted} ({100 * sum(majority) / counted:.0f} %); "
          f"laws on which it is lower in most draws: {sum(q > 0.5 for q in share)}/{counted}.")


if __name__ == "__main__":
    main()
