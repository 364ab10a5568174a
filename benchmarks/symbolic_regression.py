"""Against general symbolic regression: gplearn and Operon beside exprsearch on the same data.

Each law of the synthetic multi-factor suite (benchmarks/multifactor.py) and, with --random N,
the first N random laws of benchmarks/random_laws.py (seed 1), measured as there (2 % noise,
3 repetitions, small grids), is fitted by

- exprsearch: `search` with the default grammar, in-process;
- gplearn 0.4 (`SymbolicRegressor`): its defaults (population 1000, 20 generations, parsimony
  0.001) with log and sqrt added to its functions, as the default grammar has them;
- Operon (pyoperon's `SymbolicRegressor`): its defaults (population 1000, up to 10⁶
  evaluations, length ≤ 50, one thread) with log and sqrt added likewise;

both seeded (random_state 0) and run in a venv of their own, made on first use
($TMPDIR/exprsearch-sr-venv: `pip install gplearn pyoperon`). Each answer is judged as
multifactor.py judges: the largest relative error against the noise-free law at 4× and 8× the
largest measured values of the scaling factors. With --public, multifactor.py's public
multi-factor series too, fitted on the smaller worker counts and judged by the mean error on the
largest third (exprsearch's answer as multifactor.py takes it). Beside each: the answer's size
(nodes of its expression tree; for exprsearch, of the sympy expression) and the seconds of the
fit alone.

    python benchmarks/symbolic_regression.py [--random 20] [--no-suite] [--public] [--tools gplearn,operon]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import sympy

sys.path.insert(0, str(Path(__file__).resolve().parent))
import multifactor_suite as mf  # noqa: E402
import public_tables  # noqa: E402
import random_laws  # noqa: E402

from exprsearch import search  # noqa: E402

VENV = Path(tempfile.gettempdir()) / "exprsearch-sr-venv"
TOOLS = ("gplearn", "operon")

WORKER = r"""
import json, sys, time
import numpy as np
tool, cases = sys.argv[1], json.load(sys.stdin)
for number, case in enumerate(cases):
    X, y, test = np.array(case["X"]), np.array(case["y"]), np.array(case["test"])
    started = time.perf_counter()
    if tool == "gplearn":
        from gplearn.genetic import SymbolicRegressor
        model = SymbolicRegressor(function_set=("add", "sub", "mul", "div", "log", "sqrt"), random_state=0)
        model.fit(X, y)
        text, size = str(model._program), int(model._program.length_)
    else:
        from pyoperon.sklearn import SymbolicRegressor
        model = SymbolicRegressor(allowed_symbols="add,sub,mul,div,log,sqrt,constant,variable", random_state=0)
        model.fit(X, y)
        text, size = model.get_model_string(model.model_, 4), int(model.model_.Length)
    seconds = time.perf_counter() - started
    with np.errstate(all="ignore"):
        predicted = np.asarray(model.predict(test), dtype=float)
    print(json.dumps({"predicted": [p if np.isfinite(p) else None for p in predicted.tolist()],
                      "model": text, "size": size, "seconds": seconds}), flush=True)
    print(f"  {tool}: {number + 1}/{len(cases)} in {seconds:.1f} s", file=sys.stderr, flush=True)
"""


def ready() -> Path:
    """The venv's python, with gplearn and pyoperon, made on first use."""
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "gplearn", "pyoperon"], check=True)
    return python


@dataclass(frozen=True)
class Job:
    """One data set for every tool: the training rows, the rows to predict, how a prediction is
    judged (an error in %) and exprsearch's answer (error %, size, seconds, law)."""

    group: str
    name: str
    train: pd.DataFrame  # factor columns and "time"
    test: pd.DataFrame  # factor columns
    judge: Callable[[np.ndarray], float]
    ours: Callable[[], tuple[float, int, float, str]]


def synthetic_jobs(random: int) -> list[Job]:
    """The suite's laws, then the first ``random`` random laws of seed 1 (random_laws.py's draws,
    each judged here on its prediction whether or not the data can identify its form), judged by
    the largest error at 4× and 8× against the noise-free law."""
    rng = np.random.default_rng(1)
    drawn = [random_laws.random_law(rng) for _ in range(random)]
    chosen = list(mf.CASES) + [mf.Case(f"random law {i}", truth, random_laws.GRID, ("p", "n"), form)
                               for i, (truth, form) in enumerate(drawn)]
    jobs = []
    for number, case in enumerate(chosen):
        frame, names = mf.measure(case, seed=100 + number), list(case.grid)
        test = pd.DataFrame(mf.test_points(case), columns=names)
        truth = mf.evaluate(case.truth, names, test.to_numpy())

        def judge(predicted, truth=truth):
            return largest_error(predicted, truth)

        def ours(frame=frame, test=test, truth=truth):
            started = time.perf_counter()
            law = search(frame, "time", jobs=1, resamples=0).law
            seconds = time.perf_counter() - started
            return largest_error(law.predict(test), truth), size(law.expression), seconds, str(law.template)

        jobs.append(Job("suite" if number < len(mf.CASES) else "random", case.name, frame, test, judge, ours))
    return jobs


def public_jobs() -> list[Job]:
    """multifactor.py's public multi-factor series, fitted on the smaller worker counts and judged
    by the mean error on the largest third, exprsearch's answer as multifactor.py takes it."""
    jobs = []
    for table in public_tables.TABLES:
        if not (public_tables.SHARED / table.file).exists():
            continue
        for name, train, test in public_tables.public_series(table):
            test = test.reset_index(drop=True)
            actual = test["time"].to_numpy()

            def judge(predicted, actual=actual):
                values = np.asarray(predicted, dtype=float)
                return float(100 * np.mean(np.abs(values / actual - 1))) if np.all(np.isfinite(values)) else math.inf

            def ours(table=table, train=train, test=test):
                started = time.perf_counter()
                errors = public_tables.public_errors(table, train, test)
                return errors["ours"], size(errors["expression"]), time.perf_counter() - started, ""

            jobs.append(Job(table.name, name, train[["p", "x", "time"]], test[["p", "x"]], judge, ours))
    return jobs


def largest_error(predicted, truth: np.ndarray) -> float:
    values = np.asarray(predicted, dtype=float)
    return float(100 * np.max(np.abs(values / truth - 1))) if np.all(np.isfinite(values)) else math.inf


def size(expression: sympy.Expr) -> int:
    """Nodes of the expression tree, as the other tools count theirs."""
    return sum(1 for _ in sympy.preorder_traversal(expression))


def run_tools(jobs: list[Job], tools: list[str]) -> dict[str, list[dict]]:
    """Each tool's answers to every job, the tools side by side, one process (and core) each."""
    payload = json.dumps([{"X": job.train.drop(columns="time").to_numpy().tolist(), "y": job.train["time"].tolist(),
                           "test": job.test.to_numpy().tolist()} for job in jobs])
    python = ready()
    answers = {}
    with tempfile.TemporaryDirectory() as folder:
        running = {}
        for tool in tools:
            out = open(Path(folder) / f"{tool}.jsonl", "w+")
            process = subprocess.Popen([str(python), "-c", WORKER, tool], stdin=subprocess.PIPE, stdout=out, text=True)
            process.stdin.write(payload)
            process.stdin.close()
            running[tool] = (process, out)
        for tool, (process, out) in running.items():
            if process.wait() != 0:
                sys.exit(f"{tool} stopped with exit code {process.returncode}")
            out.seek(0)
            answers[tool] = [json.loads(line) for line in out]
            out.close()
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=0, help="also the first N random laws of random_laws.py")
    parser.add_argument("--suite", action=argparse.BooleanOptionalAction, default=True,
                        help="the synthetic suite (and --random laws)")
    parser.add_argument("--public", action="store_true", help="also the public multi-factor series")
    parser.add_argument("--tools", default=",".join(TOOLS))
    args = parser.parse_args()
    tools = [t for t in args.tools.split(",") if t]
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        parser.error(f"--tools: unknown {', '.join(unknown)}; choose from {', '.join(TOOLS)}")
    jobs = (synthetic_jobs(args.random) if args.suite else []) + (public_jobs() if args.public else [])
    if not jobs:
        parser.error("nothing to run: give --suite, --random N or --public")
    rows = []
    for job in jobs:  # exprsearch first, one process alone on the machine
        rows.append({"group": job.group, "case": job.name, "exprsearch": job.ours()})
        print(f"  exprsearch {job.name}: {rows[-1]['exprsearch'][0]:.2f} %", file=sys.stderr, flush=True)
    for tool, answers in (run_tools(jobs, tools) if tools else {}).items():
        for row, job, answer in zip(rows, jobs, answers):
            predicted = [np.nan if p is None else p for p in answer["predicted"]]
            row[tool] = (job.judge(predicted), answer["size"], answer["seconds"], answer["model"])
    report(rows, ["exprsearch", *tools])


def report(rows: list[dict], tools: list[str]) -> None:
    synthetic = [r for r in rows if r["group"] in ("suite", "random")]
    if synthetic:
        header = ["law"] + [f"{t} error % (4-8x)" for t in tools] + [f"{t} size" for t in tools]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in synthetic:
            print("| " + " | ".join([r["case"]] + [f"{r[t][0]:.2f}" for t in tools] + [str(r[t][1]) for t in tools])
                  + " |")
        print("\n| tool | within 3 % | within 10 % | median error % | median size | median seconds |")
        print("|---|---|---|---|---|---|")
        for t in tools:
            errors = [r[t][0] for r in synthetic]
            print(f"| {t} | {sum(e < 3 for e in errors)}/{len(errors)} | {sum(e < 10 for e in errors)}/{len(errors)} | "
                  f"{statistics.median(errors):.2f} | {statistics.median(r[t][1] for r in synthetic):.0f} | "
                  f"{statistics.median(r[t][2] for r in synthetic):.2f} |")
        for t in tools[1:]:
            print(f"exprsearch more accurate than {t} on {sum(r['exprsearch'][0] < r[t][0] for r in synthetic)}/"
                  f"{len(synthetic)} laws.")
    public = [r for r in rows if r["group"] not in ("suite", "random")]
    if public:
        print("\n### Public multi-factor series (mean error on the held-out larger worker counts)\n")
        header = ["table", "series"] + [f"median {t} %" for t in tools] + \
            [f"exprsearch better than {t}" for t in tools[1:]] + [f"median {t} size" for t in tools]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for table in dict.fromkeys(r["group"] for r in public):
            mine = [r for r in public if r["group"] == table]
            cells = [table, str(len(mine))] + [f"{statistics.median(r[t][0] for r in mine):.1f}" for t in tools]
            cells += [f"{sum(r['exprsearch'][0] < r[t][0] for r in mine)}/{len(mine)}" for t in tools[1:]]
            cells += [f"{statistics.median(r[t][1] for r in mine):.0f}" for t in tools]
            print("| " + " | ".join(cells) + " |")
        for t in tools:
            print(f"{t}: median {statistics.median(r[t][2] for r in public):.2f} s per series.")


if __name__ == "__main__":
    main()
