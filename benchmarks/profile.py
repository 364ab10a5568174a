"""A whole profile: one law per region of an Extra-P text file, exprsearch beside Extra-P 4.2.5.

The file has ``--regions`` regions × ``--metrics`` metrics over two parameters (p ∈ 1..16,
n ∈ 10..160: 25 points, 5 repetitions, 2 % noise), each series following a law of Extra-P's
kind, ``c0 + c1·p^a·log2(n)^b + c2·n^d/p`` with random exponents. Both tools model every series
from process start; the laws are judged at twice the largest measured p and n against the
noise-free law, and by their form (the same terms as the true law's, whatever the coefficients).
Issue 11's profile is ``--regions 1000 --metrics 2``.

    python benchmarks/profile.py [--regions 200] [--metrics 1] [--jobs 0] [--grammar default,pmnf]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import sympy

HERE = Path(__file__).resolve().parent
EXTRAP = Path(tempfile.gettempdir()) / "extrap-venv" / "bin" / "extrap"
PS, NS = (1, 2, 4, 8, 16), (10, 20, 40, 80, 160)
AT = {"p": 32.0, "n": 320.0}


METRICS = ("time", "bytes", "visits", "flops")


def laws(count: int, seed: int = 1, metrics: int = 1) -> dict[tuple[str, str], tuple]:
    """The true law of each (region, metric); the first metric's laws do not depend on how many
    metrics there are, so ``--metrics 1`` is the profile measured before the option existed."""
    rng = np.random.default_rng(seed)
    exponents = (0, 0.5, 1, 1.5, 2)
    return {(f"kernel{r}", metric): (rng.uniform(1, 10), rng.uniform(0.01, 1), rng.uniform(0.01, 1),
                                     exponents[rng.integers(5)], int(rng.integers(2)), exponents[rng.integers(5)])
            for metric in METRICS[:metrics] for r in range(count)}


def truth(law: tuple, p: float, n: float) -> float:
    c0, c1, c2, a, b, d = law
    return c0 + c1 * p**a * np.log2(n) ** b + c2 * n**d / p


def form(text: str) -> frozenset:
    """The law's terms that vary, each as the exponents of p, n, log2 p and log2 n it multiplies
    (coefficients and the constant term left out): two laws have the same form when these agree."""
    p, n = sympy.Symbol("p", positive=True), sympy.Symbol("n", positive=True)
    expression = sympy.sympify(text.split("=", 1)[-1].replace("^", "**"),
                               locals={"p": p, "n": n, "log2": lambda x: sympy.log(x, 2)})
    terms = set()
    for term in sympy.Add.make_args(sympy.expand(expression)):
        powers = term.as_powers_dict()
        signature = tuple(sympy.nsimplify(powers.get(b, 0)) for b in (p, n, sympy.log(p), sympy.log(n)))
        if any(signature):
            terms.add(signature)
    return frozenset(terms)


def true_form(law: tuple) -> frozenset:
    c0, c1, c2, a, b, d = law
    return form(f"{c0} + {c1}*p**({sympy.nsimplify(a)})*log2(n)**{b} + {c2}*n**({sympy.nsimplify(d)})/p")


def write(path: Path, regions: dict[tuple[str, str], tuple], seed: int = 2) -> None:
    rng = np.random.default_rng(seed)
    points = list(itertools.product(PS, NS))
    lines = ["PARAMETER p n", "POINTS " + " ".join(f"( {p} {n} )" for p, n in points)]
    metric = None
    for (name, of), law in regions.items():
        if of != metric:  # a METRIC line holds for the regions after it, in both tools
            lines.append(f"METRIC {of}")
            metric = of
        lines.append(f"REGION {name}")
        for p, n in points:
            values = truth(law, p, n) * (1 + 0.02 * rng.standard_normal(5))
            lines.append("DATA " + " ".join(f"{v:.8g}" for v in values))
    path.write_text("\n".join(lines) + "\n")


def extrap(path: Path) -> tuple[float, dict[tuple[str, str], float], dict[tuple[str, str], frozenset]]:
    """Wall time of Extra-P's command line on the whole file, and each series' value at AT and form."""
    command = [str(EXTRAP), "--text", str(path), "--modeler", "multi-parameter", "--options", "#spm=Basic",
               "#spo=allow_negative_exponents=True"]
    start = time.perf_counter()
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    seconds = time.perf_counter() - start
    values, forms, region, metric = {}, {}, None, None
    for line in output.splitlines():
        if line.startswith("Callpath:"):
            region = line.split(":", 1)[1].strip()
        elif line.strip().startswith("Metric:"):
            metric = line.split(":", 1)[1].strip()
        elif "Model:" in line and region is not None and metric is not None:
            model = line.split("Model:", 1)[1].strip().replace("^", "**")
            values[(region, metric)] = float(eval(model, {"__builtins__": {}}, {"log2": np.log2, **AT}))  # noqa: S307
            forms[(region, metric)] = form(model)
    return seconds, values, forms


def ours(path: Path, grammar: str, jobs: int,
         folder: Path) -> tuple[float, dict[tuple[str, str], float], dict[tuple[str, str], frozenset]]:
    """Wall time of ``exprsearch profile`` from process start, and each series' value at AT and form."""
    out = folder / f"out-{grammar}"
    command = [sys.executable, "-m", "exprsearch.cli", "profile", str(path), "--grammar", grammar, "--jobs",
               str(jobs), "--at", ",".join(f"{k}={v:g}" for k, v in AT.items()), "--out", str(out), "--force"]
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    rows = json.loads((out / "laws.json").read_text())["series"]
    modelled = [r for r in rows if r["predicted_at"] is not None]
    return (seconds, {tuple(r["series"].split(":", 1)): r["predicted_at"] for r in modelled},
            {tuple(r["series"].split(":", 1)): form(r["law"]) for r in modelled})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regions", type=int, default=200)
    parser.add_argument("--metrics", type=int, default=1, choices=range(1, len(METRICS) + 1))
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--grammar", default="default,pmnf")
    args = parser.parse_args()
    regions = laws(args.regions, metrics=args.metrics)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "profile.txt"
        write(path, regions)
        results = {f"exprsearch ({g})": ours(path, g, args.jobs, Path(folder)) for g in args.grammar.split(",")}
        if EXTRAP.exists():
            results["Extra-P 4.2.5"] = extrap(path)
    count = len(regions)
    print(f"\n### A profile of {args.regions} regions × {args.metrics} metric(s) (2 parameters, 25 points × 5 "
          "repetitions, 2 % noise)\n")
    print("| tool | wall s | ms per series | series modelled | median error at 2× % | within 5 % at 2× "
          "| true form | true form and within 5 % |")
    print("|---|---|---|---|---|---|---|---|")
    for tool, (seconds, values, forms) in results.items():
        modelled = [r for r in regions if r in values]
        errors = {r: 100 * abs(values[r] / truth(regions[r], **AT) - 1) for r in modelled}
        right = {r for r in modelled if forms[r] == true_form(regions[r])}
        print(f"| {tool} | {seconds:.1f} | {1000 * seconds / count:.0f} | {len(errors)}/{count} | "
              f"{statistics.median(errors.values()):.2f} | {sum(e < 5 for e in errors.values())}/{len(errors)} | "
              f"{len(right)}/{len(errors)} | {sum(errors[r] < 5 for r in right)}/{len(errors)} |")


if __name__ == "__main__":
    main()
