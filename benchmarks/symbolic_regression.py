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
largest measured values of the scaling factors. Beside it: the answer's size (nodes of its
expression tree; for exprsearch, of the sympy expression) and the seconds of the fit alone.

    python benchmarks/symbolic_regression.py [--random 20] [--tools gplearn,operon]
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
import sympy

sys.path.insert(0, str(Path(__file__).resolve().parent))
import multifactor as mf  # noqa: E402
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


def cases(random: int) -> list[mf.Case]:
    """The suite's laws, then the first ``random`` random laws of seed 1 (random_laws.py's draws,
    each judged here on its prediction whether or not the data can identify its form)."""
    rng = np.random.default_rng(1)
    drawn = [random_laws.random_law(rng) for _ in range(random)]
    return list(mf.CASES) + [mf.Case(f"random law {i}", truth, random_laws.GRID, ("p", "n"), form)
                             for i, (truth, form) in enumerate(drawn)]


def size(expression: sympy.Expr) -> int:
    """Nodes of the expression tree, as the other tools count theirs."""
    return sum(1 for _ in sympy.preorder_traversal(expression))


def error(predicted, case: mf.Case, points: np.ndarray) -> float:
    truth = mf.evaluate(case.truth, list(case.grid), points)
    values = np.array([np.nan if p is None else p for p in predicted], dtype=float)
    if not np.all(np.isfinite(values)):
        return float("inf")
    return float(100 * np.max(np.abs(values / truth - 1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=0, help="also the first N random laws of random_laws.py")
    parser.add_argument("--tools", default=",".join(TOOLS))
    args = parser.parse_args()
    tools = [t for t in args.tools.split(",") if t]
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        parser.error(f"--tools: unknown {', '.join(unknown)}; choose from {', '.join(TOOLS)}")
    chosen = cases(args.random)
    measured = [mf.measure(case, seed=100 + number) for number, case in enumerate(chosen)]
    points = [mf.test_points(case) for case in chosen]
    payload = json.dumps([{"X": frame[list(case.grid)].to_numpy().tolist(), "y": frame["time"].tolist(),
                           "test": p.tolist()} for case, frame, p in zip(chosen, measured, points)])
    rows = []
    for case, frame, p in zip(chosen, measured, points):  # one process, alone on the machine
        started = time.perf_counter()
        law = search(frame, "time", jobs=1, resamples=0).law
        seconds = time.perf_counter() - started
        predicted = law.predict({n: p[:, i] for i, n in enumerate(case.grid)})
        rows.append({"case": case.name, "exprsearch": (error(predicted.tolist(), case, p),
                                                       size(law.expression), seconds, str(law.template))})
        print(f"  exprsearch {case.name}: {rows[-1]['exprsearch'][0]:.2f} %", file=sys.stderr, flush=True)
    python = ready() if tools else None
    with tempfile.TemporaryDirectory() as folder:
        running = {}
        for tool in tools:  # then the tools side by side, one process (and core) each
            answers = open(Path(folder) / f"{tool}.jsonl", "w+")
            process = subprocess.Popen([str(python), "-c", WORKER, tool], stdin=subprocess.PIPE, stdout=answers,
                                       text=True)
            process.stdin.write(payload)
            process.stdin.close()
            running[tool] = (process, answers)
        for tool, (process, answers) in running.items():
            if process.wait() != 0:
                sys.exit(f"{tool} stopped with exit code {process.returncode}")
            answers.seek(0)
            for row, case, p, line in zip(rows, chosen, points, answers):
                answer = json.loads(line)
                row[tool] = (error(answer["predicted"], case, p), answer["size"], answer["seconds"], answer["model"])
            answers.close()
    report(rows, ["exprsearch", *tools])


def report(rows: list[dict], tools: list[str]) -> None:
    header = ["law"] + [f"{t} error % (4-8x)" for t in tools] + [f"{t} size" for t in tools]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        cells = [r["case"]] + [f"{r[t][0]:.2f}" for t in tools] + [str(r[t][1]) for t in tools]
        print("| " + " | ".join(cells) + " |")
    print()
    print("| tool | within 3 % | within 10 % | median error % | median size | median seconds |")
    print("|---|---|---|---|---|---|")
    for t in tools:
        errors = [r[t][0] for r in rows]
        print(f"| {t} | {sum(e < 3 for e in errors)}/{len(rows)} | {sum(e < 10 for e in errors)}/{len(rows)} | "
              f"{statistics.median(errors):.2f} | {statistics.median(r[t][1] for r in rows):.0f} | "
              f"{statistics.median(r[t][2] for r in rows):.2f} |")
    for t in tools[1:]:
        better = sum(r["exprsearch"][0] < r[t][0] for r in rows)
        print(f"\nexprsearch more accurate than {t} on {better}/{len(rows)} laws.", end="")
    print()


if __name__ == "__main__":
    main()
