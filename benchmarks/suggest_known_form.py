"""Following ``suggest`` when the law's form is known: what the form's uncertainty costs a campaign.

``benchmarks/suggest.py`` counts the laws on which following ``suggest`` gives a lower error at
the target than the full grid of the same cost; ``suggest_ceiling.py`` shows what a planner that
knows the law, coefficients included, could do. This script sits between them. Each campaign,
the full grid and the random designs are searched with a grammar holding only the law's true form
(its coefficients and exponents still fitted), as a user who knows the form would write it
(docs/grammar.md): ``suggest`` then plans for the form's constants alone, with no other law to
tell apart. The same laws, budgets, starts and noise draws (common random numbers) as
``suggest.py``; beside each law its default-grammar figures are those of ``suggest.py``.

    python benchmarks/suggest_known_form.py [--worlds 5] [--space integers|doubling] [--jobs 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import suggest as suite
from multifactor_suite import form_grammar

from exprsearch.executor import executor

FORMS = {  # each law of suggest.py in grammar syntax (c: coefficients, k: fitted exponents)
    "Amdahl 2 + 40/p": "c + c/p",
    "Amdahl + linear communication": "c + c/p + c*p",
    "Amdahl + log communication": "c + c/p + c*log2(p)",
    "fitted power 0.5 + 20/p^0.8": "c + c*p**k",
    "sqrt communication": "c + c/p + c*sqrt(p)",
    "bottleneck growing as p^2": "c + c/p + c*p**2",
    "weak scaling log2 p": "c + c*log2(p)",
    "two factors: n/p": "c + c*n/p",
    "two factors: n/p + linear": "c + c*n/p + c*p",
    "two factors: n/p + log": "c + c*n/p + c*log2(p)",
    "two factors: n log n / p": "c + c*n*log2(n)/p",
    "two factors: n/p + sqrt(n) log p": "c + c*n/p + c*sqrt(n)*log2(p)",
    "two factors: n^2/p": "c + c*n**2/p",
    "two factors: fitted powers n^0.8/p^0.9": "c + c*n**k*p**k",
    "two factors: n/p + p log p": "c + c*n/p + c*p*log2(p)",
    "two factors: serial part grows with n": "c + c*n/p + c*n",
}


def law_row(item: tuple) -> dict:
    """The grid's and the campaign's errors on each noise draw of the suite's ``number``-th law,
    both searched with its true form only; a pure function of its item."""
    number, space, worlds = item
    suite.CHOICES = suite.SPACES[space]
    case = suite.CASES[number]
    rules = form_grammar(FORMS[case.name], list(case.levels))
    full = suite.grid(case)
    budget = sum(suite.cost_of(case, c) for c in full)
    pairs = []
    for seed in (100 + number + 1000 * w for w in range(worlds)):  # suggest.py's draws
        grid_error = suite.error(case, suite.World(case, seed).measure(full), rules=rules)[0]
        pairs.append((suite.campaign(case, budget, seed, rules=rules)["error"], grid_error))
    return {"law": case.name, "pairs": pairs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=5, help="noise draws per law")
    parser.add_argument("--space", choices=sorted(suite.SPACES), default="integers")
    parser.add_argument("--jobs", type=int, default=1, help="laws run at once in local processes (0: one per core)")
    args = parser.parse_args()
    if args.worlds < 1 or args.jobs < 0:
        parser.error("--worlds takes 1 or more, --jobs 0 (one process per core) or more")
    items = [(n, args.space, args.worlds) for n in range(len(suite.CASES))]
    rows = [None] * len(items)
    pool = executor(args.jobs, size=len(items))
    try:
        for i, row in pool.run(law_row, items):
            rows[i] = row
            print(f"  {row['law']}: " + ", ".join(f"{o:.2f} vs {g:.2f}" for o, g in row["pairs"]), file=sys.stderr)
    finally:
        pool.close()
    print(f"### Following suggest with the true form known, against the same-cost full grid ({args.space} p, "
          f"{args.worlds} noise draws)\n")
    print("| law | suggest vs grid, error % per draw | draws lower |")
    print("|---|---|---|")
    wins, most = 0, 0
    for r in rows:
        lower = sum(suite.lower(o, g) for o, g in r["pairs"])
        wins += lower
        most += lower > len(r["pairs"]) / 2
        print(f"| {r['law']} | {', '.join(f'{o:.2f} vs {g:.2f}' for o, g in r['pairs'])} | {lower}/{len(r['pairs'])} |")
    ours = [o for r in rows for o, _ in r["pairs"]]
    grids = [g for r in rows for _, g in r["pairs"]]
    print(f"\nWith the form known, following suggest gave a lower error at the target than the full grid in "
          f"{wins}/{len(ours)} campaigns, in most draws on {most}/{len(rows)} laws; median error "
          f"{statistics.median(ours):.2f} % against the grid's {statistics.median(grids):.2f} %.")


if __name__ == "__main__":
    main()
