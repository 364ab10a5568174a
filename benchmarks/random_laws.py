"""Random multi-factor laws: does the default grammar find laws nobody wrote the suite for?

    python benchmarks/random_laws.py [--laws 30] [--seed 1]

Each law is a constant plus two or three terms, each term a product of one or two factor shapes
(x, 1/x, log2 x, sqrt x, x², x·log2 x) over workers p (1–16), samples n (1e3–16e3) and batch b
(16–64), with coefficients that give every term a share of 1–3 at the grid's centre. Measured
with 2 % noise and 3 repetitions (benchmarks/multifactor_suite.py's `measure`), searched with the
default grammar, and judged at 4× and 8× the largest p and n (its `test_points`).
Beside it the true form refitted to the same data. A law whose true form the data cannot
identify (more shapes of a factor than its values) is passed over, and said so.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import sympy

sys.path.insert(0, str(Path(__file__).resolve().parent))
import multifactor_suite as mf  # noqa: E402

from exprsearch import search  # noqa: E402
from exprsearch.errors import ExprsearchError  # noqa: E402

GRID = {"p": [1, 2, 4, 8, 16], "n": [1e3, 4e3, 16e3], "b": [16, 32, 64]}
SHAPES = {"x": "{f}", "1/x": "1/{f}", "log": "log2({f})", "sqrt": "sqrt({f})", "sq": "{f}**2", "xlog": "{f}*log2({f})"}


def random_law(rng: np.random.Generator) -> tuple[str, str]:
    """(the law, its form in grammar syntax)."""
    terms: list[str] = []
    size = int(rng.integers(2, 4))
    while len(terms) < size:
        parts = []
        for f in rng.choice(list(GRID), int(rng.integers(1, 3)), replace=False):
            shape = str(rng.choice(list(SHAPES)))
            if f == "p" and shape in ("x", "sq", "xlog") and rng.random() < 0.5:
                shape = "1/x"  # strong scaling: work spread over the workers
            parts.append(SHAPES[shape].format(f=f))
        term = "*".join(parts)
        if term not in terms:
            terms.append(term)
    symbols = mf.factor_symbols(list(GRID))
    centre = {symbols[k]: float(np.exp(np.mean(np.log(v)))) for k, v in GRID.items()}
    coefficients = []
    for term in terms:
        value = float(sympy.sympify(term, locals={**symbols, "log2": lambda x: sympy.log(x, 2)}).subs(centre))
        coefficients.append(float(rng.uniform(1, 3)) / value)
    truth = "1 + " + " + ".join(f"{c:.6g}*{t}" for c, t in zip(coefficients, terms))
    return truth, "c + " + " + ".join(f"c*{t}" for t in terms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--laws", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.laws < 1:
        parser.error("--laws must be at least 1")
    rng = np.random.default_rng(args.seed)
    names = list(GRID)
    rows, passed, start = [], 0, time.perf_counter()
    print("| # | law | recovered | error % (4-8x) | true form refitted % | MAPE % (found / true form) |")
    print("|---|---|---|---|---|---|")
    for number in range(args.laws):
        truth, form = random_law(rng)
        case = mf.Case(f"random {number}", truth, GRID, ("p", "n"), form)
        frame = mf.measure(case, seed=number)
        try:
            reference = search(frame, "time", mf.form_grammar(form, names), resamples=0)
        except ExprsearchError:  # the true form uses more shapes of a factor than its values tell apart
            passed += 1
            print(f"| {number} | `{truth}` | passed over: the data cannot identify its form | | | |")
            continue
        found = search(frame, "time", "default", resamples=0)
        points = mf.test_points(case)
        error = mf.error_at(found.law.predict, case, points)
        true_error = mf.error_at(reference.law.predict, case, points)
        recovered = mf.same_form(found.law.expression, truth, names) and error < 3
        rows.append((recovered, error, true_error))
        print(f"| {number} | `{truth}` | {'yes' if recovered else 'no'} | {error:.2f} | {true_error:.2f} | "
              f"{found.law.metrics['mape_pct']:.2f} / {reference.law.metrics['mape_pct']:.2f} |", flush=True)
    judged = len(rows)
    if not judged:
        print("\nno law could be judged")
        return
    serious = sum(1 for r, e, t in rows if not r and e >= 3 and t < 3)
    print(f"\nRecovered {sum(r for r, _, _ in rows)}/{judged} (true form, within 3 % at 4-8x); "
          f"{sum(e < 3 for _, e, _ in rows)}/{judged} within 3 %; {serious} more than 3 % off where the true form "
          f"refitted is within it; median error {statistics.median(e for _, e, _ in rows):.2f} % against "
          f"{statistics.median(t for _, _, t in rows):.2f} % for the true form; {passed} passed over; "
          f"{time.perf_counter() - start:.0f} s.")


if __name__ == "__main__":
    main()
