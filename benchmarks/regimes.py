"""Regime laws: does the `overlap` grammar recover laws with a max (both regimes measured, 2 %
noise), where does `explain` place the change against the true crossing, and does the spread of
the law's 200 bootstrap refits (the interval `explain` prints) hold the true crossing?

    python benchmarks/regimes.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import re
import statistics

import numpy as np
import pandas as pd
import sympy
from multifactor_suite import form_grammar
from scipy.optimize import brentq

from exprsearch import search
from exprsearch.explain import explain
from exprsearch.vocabulary import to_text

PS, NS = (1, 2, 4, 8, 16, 32, 64), (1000, 4000, 16000)
CASES = {  # name: (true law, hidden communication, ratio, the true form in grammar notation)
    "overlap with log2 p all-reduce": (lambda p, n: 1 + 0.01 * max(n / p, 40 * np.log2(p)), np.log2, 40,
                                       "c + c*max(n/p, 2**r*log2(p))"),
    "overlap with sqrt p": (lambda p, n: 0.5 + 0.002 * max(n / p, 300 * np.sqrt(p)), np.sqrt, 300,
                            "c + c*max(n/p, 2**r*sqrt(p))"),
    "overlap with linear p": (lambda p, n: 2 + 0.001 * max(n / p, 3 * p), lambda p: p, 3, "c + c*max(n/p, 2**r*p)"),
    "saturated parameter server (floor)": (lambda p, n: 1 + 0.01 * max(n / p, 200.0), lambda p: 1.0, 200,
                                           "c + c*max(n/p, 2**r)"),
    "overlap + exposed log2 p": (lambda p, n: 1 + 0.01 * max(n / p, 40 * np.log2(p)) + 0.05 * np.log2(p),
                                 np.log2, 40, "c + c*log2(p) + c*max(n/p, 2**r*log2(p))"),
    "overlap with log2 p, small overhead": (lambda p, n: 0.1 + 0.02 * max(n / p, 60 * np.log2(p)), np.log2, 60,
                                            "c + c*max(n/p, 2**r*log2(p))"),
}


def canonical(law: str) -> sympy.Expr:
    """A law in grammar notation with every coefficient named c and every ratio r, so that two
    laws of the same form compare equal whatever their constants are numbered."""
    names = {name: sympy.Symbol(name) for name in ("c", "r", "p", "n")}
    text = re.sub(r"\br\d*\b", "r", re.sub(r"\bc\d*\b", "c", law))
    return sympy.sympify(text, locals={"max": sympy.Max, "log2": lambda v: sympy.log(v, 2), **names})


def placed(law, truth: float) -> tuple[float, float, tuple | None]:
    """Where `explain` places the change along p at n = 4000, its error % and the refits' spread."""
    e = explain(law, "p", np.geomspace(1, 512, 400), {"n": 4000})
    if not e.regimes:
        return float("nan"), float("inf"), None
    value = e.regimes[0].value
    return value, 100 * abs(value / truth - 1), e.regimes[0].interval


def run(name: str, seed: int) -> dict:
    law, hidden, ratio, form = CASES[name]
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame([{"p": p, "n": n, "time": law(p, n) * (1 + 0.02 * rng.standard_normal())}
                          for p in PS for n in NS for _ in range(3)])
    found = search(frame, "time", "overlap", resamples=200).law
    truth = brentq(lambda p: 4000 / p - ratio * hidden(p), 1.001, 1e6)
    value, error, interval = placed(found, truth)
    # the true form alone, refitted on the same data: where it misses too, the measurements do
    alone = form_grammar(form, ("p", "n"), "r = { min = -30, max = 30 }", max_nonlinear=1)
    _, oracle, _ = placed(search(frame, "time", alone, resamples=0).law, truth)
    return {"law": to_text(found.template), "regime": "max(" in to_text(found.template),
            "form": canonical(to_text(found.template)) == canonical(form),
            "error": error, "truth": truth, "placed": value, "oracle": oracle,
            "covered": interval is not None and interval[0] <= truth <= interval[1],
            "width": 100 * (interval[1] - interval[0]) / value if interval else float("inf")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print("| law | runs with a max | regime change: true p | placed (median) | error % (largest) "
          "| true form refitted: error % (largest) | refits' 95 % holds the truth | its width, % of the change (median) "
          "| the true form found | law found (first run) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    within = total = covered = oracle = found = 0
    for name in CASES:
        runs = [run(name, seed) for seed in range(args.seeds)]
        total += len(runs)
        within += sum(r["regime"] and r["error"] < 10 for r in runs)
        covered += sum(r["covered"] for r in runs)
        oracle += sum(r["oracle"] < 10 for r in runs)
        print(f"| {name} | {sum(r['regime'] for r in runs)}/{len(runs)} | {runs[0]['truth']:.4g} | "
              f"{statistics.median(r['placed'] for r in runs):.4g} | {max(r['error'] for r in runs):.2g} | "
              f"{max(r['oracle'] for r in runs):.2g} | "
              f"{sum(r['covered'] for r in runs)}/{len(runs)} | {statistics.median(r['width'] for r in runs):.2g} | "
              f"{sum(r['form'] for r in runs)}/{len(runs)} | `{runs[0]['law']}` |")
        found += sum(r["form"] for r in runs)
    print(f"\nRegime recovered and its change placed within 10 %: {within}/{total} runs.")
    print(f"The true form refitted to the same data places it within 10 %: {oracle}/{total} runs.")
    print(f"The true form found (the hidden term's shape, and the exposed term where there is one): {found}/{total} runs.")
    print(f"The true change inside the 95 % spread of the bootstrap refits: {covered}/{total} runs.")


if __name__ == "__main__":
    main()
