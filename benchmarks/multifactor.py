"""Multi-factor laws: recovery and extrapolation, beside Extra-P on the same inputs.

Three parts, each printed as a Markdown table (docs/accuracy.md holds a run):

1. **Synthetic suite**: multi-factor laws of the kinds distributed training and HPC codes follow
   (per-layer costs, three-factor products, products of fitted powers, parameter-server and
   all-reduce terms, Extra-P-style multi-parameter forms), measured on small grids with 2 %
   multiplicative noise and 3 repetitions, and judged at 4× and 8× the largest measured value of
   their scaling factors against the noise-free law. A law is *recovered* when the chosen law
   has the true form (the same terms; a fitted exponent within 0.1 of the true one) and its
   largest error there is below 3 %. Beside it: the true form refitted to the same data, and
   Extra-P 4.2.5's multi-parameter modeler (Basic single-parameter modeler, negative exponents
   allowed) on the same measurements.
2. **Extra-P-format inputs with known laws** (../shared/extrap-format, and two files this script
   writes in Extra-P's text format): largest error at 2× the largest measured value.
3. **Public multi-factor tables** (../shared/datasets): fitted on the smaller worker counts,
   judged on the larger ones; against Extra-P and a per-level Amdahl fit a + b/p. Where the
   other factor describes the model (FLOPs, parameters) it is searched as intrinsic, and the
   held-out rows are predicted as ``exprsearch run --intrinsic`` advises: by the law with its
   coefficients per value of that factor where those explain the training rows better.
4. **Agreement**: the screened search against the exhaustive one, on the suite's two-factor laws
   and a grammar whose whole space can be enumerated.

Wall times are of the command lines from process start (``exprsearch run`` with its defaults,
``extrap --text``), medians of --repeats.

    python benchmarks/multifactor.py [--repeats 1] [--no-extrap] [--no-cli] [--grammar default]
                                     [--measure all] [--only synthetic,extrap,public,agreement]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import sympy

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from speed import compile_ours, extrap_model, extrap_predict, timed  # noqa: E402

from exprsearch import grammar, search  # noqa: E402
from exprsearch.levels import check_levels  # noqa: E402

SHARED = HERE.parents[1] / "shared"
EXTRAP = Path(tempfile.gettempdir()) / "extrap-venv" / "bin" / "python"


@dataclass(frozen=True)
class Case:
    """A law with known truth, the grid it is measured on and the factors it is scaled along."""

    name: str
    truth: str
    grid: dict[str, list[float]]
    scale: tuple[str, ...]
    form: str  # the true form in grammar syntax (c: coefficients, k: fitted exponents)


P = [1, 2, 4, 8, 16]
CASES = [
    Case("Amdahl + linear communication", "2 + 0.01*n/p + 0.15*p", {"p": P, "n": [1e3, 4e3, 16e3]}, ("p", "n"),
         "c + c*n/p + c*p"),
    Case("Amdahl + log communication", "1 + 0.01*n/p + 0.5*log2(p)", {"p": P, "n": [1e3, 4e3, 16e3]}, ("p", "n"),
         "c + c*n/p + c*log2(p)"),
    Case("fitted communication power", "1 + 0.01*n/p + 0.05*p**1.4", {"p": P + [32], "n": [1e3, 4e3, 16e3]},
         ("p", "n"),
         "c + c*n/p + c*p**k"),
    Case("per-layer compute and communication", "0.5 + 2e-4*L*n/p + 0.05*L*log2(p)",
         {"L": [2, 4, 8, 16], "n": [1e3, 4e3, 16e3], "p": [1, 2, 4, 8]}, ("p", "n"),
         "c + c*L*n/p + c*L*log2(p)"),
    Case("per-layer compute only", "0.3 + 1e-4*L*n/p", {"L": [2, 4, 8, 16], "n": [1e3, 4e3, 16e3], "p": [1, 2, 4, 8]},
         ("p", "n", "L"), "c + c*L*n/p"),
    Case("parameters x samples / workers", "1 + 1e-6*w*s/p", {"w": [1e5, 1e6, 1e7], "s": [100, 400, 1600],
                                                              "p": [1, 2, 4, 8]}, ("p", "s"), "c + c*w*s/p"),
    Case("per-step overhead over batch and workers", "0.2 + 0.05*n/(p*b) + 2e-3*n/p",
         {"n": [1e3, 4e3, 16e3], "p": [1, 2, 4, 8], "b": [16, 32, 64, 128]}, ("p", "n"), "c + c*n/(p*b) + c*n/p"),
    Case("generic model term n^a/p^b", "2 + 0.003*n**1.3/p**0.8", {"n": [1e3, 2e3, 4e3, 8e3], "p": P}, ("p", "n"),
         "c + c*n**k*p**k"),
    Case("generic model term L^a n / p^b", "0.5 + 2e-4*L**1.2*n/p**0.9",
         {"L": [2, 4, 8, 16], "n": [1e3, 4e3, 16e3], "p": [1, 2, 4, 8]}, ("p", "n"), "c + c*L**k*n*p**k"),
    Case("parameter server (traffic ~ params x workers)", "0.5 + 0.002*n/p + 2e-8*w*p",
         {"n": [1e3, 4e3, 16e3], "p": P, "w": [1e6, 4e6, 16e6]}, ("p", "n"), "c + c*n/p + c*w*p"),
    Case("tree all-reduce (params x log2 p)", "0.5 + 0.002*n/p + 1e-7*w*log2(p)",
         {"n": [1e3, 4e3, 16e3], "p": P, "w": [1e6, 4e6, 16e6]}, ("p", "n"), "c + c*n/p + c*w*log2(p)"),
    Case("all-reduce with latency", "0.3 + 0.002*n/p + 0.02*log2(p) + 3e-8*w",
         {"n": [1e3, 4e3, 16e3], "p": P, "w": [1e6, 4e6, 16e6]}, ("p", "n"), "c + c*n/p + c*log2(p) + c*w"),
    Case("quadratic work over workers", "1 + 1e-6*n**2/p", {"n": [1e3, 2e3, 4e3, 8e3], "p": P}, ("p", "n"),
         "c + c*n**2/p"),
    Case("n log n work over workers + log comm", "0.5 + 2e-5*n*log2(n)/p + 0.1*log2(p)",
         {"n": [1e3, 4e3, 16e3, 64e3], "p": P}, ("p", "n"), "c + c*n*log2(n)/p + c*log2(p)"),
    Case("weak scaling with sqrt communication", "1 + 0.001*n + 0.2*sqrt(p)", {"n": [1e3, 2e3, 4e3], "p": P},
         ("p",), "c + c*n + c*sqrt(p)"),
    Case("bottleneck growing as p^2", "1 + 0.01*n/p + 0.004*p**2", {"n": [1e3, 4e3, 16e3], "p": P}, ("p", "n"),
         "c + c*n/p + c*p**2"),
    Case("layers over pipeline devices", "0.2 + 0.5*L/p + 0.05*p", {"L": [8, 16, 32, 64], "p": [1, 2, 4, 8]},
         ("L", "p"), "c + c*L/p + c*p"),
    Case("per-layer params over workers + per-layer log comm", "0.3 + 1e-7*L*w/p + 0.02*L*log2(p)",
         {"L": [2, 4, 8, 16], "w": [1e5, 1e6, 1e7], "p": [1, 2, 4, 8]}, ("p", "L"), "c + c*L*w/p + c*L*log2(p)"),
    Case("Extra-P text example s^1.5 p", "1 + 0.05*s**1.5*p", {"s": [2, 4, 6, 8, 10], "p": [1, 2, 3, 4, 5]},
         ("s", "p"), "c + c*s**(3/2)*p"),
    Case("Extra-P x^2 log y + x y^2 z", "1 + 0.2*x**2*log2(y) + 0.1*x*y**2*z",
         {"x": [2, 4, 6, 8, 10], "y": [2, 4, 6, 8, 10], "z": [2, 4, 6, 8, 10]}, ("x", "y", "z"),
         "c + c*x**2*log2(y) + c*x*y**2*z"),
    Case("Extra-P product x^2 y^(1/2)", "200 + 10*x**2*sqrt(y)", {"x": [2, 4, 8, 16, 32], "y": [2, 4, 8, 16, 32]},
         ("x", "y"), "c + c*x**2*sqrt(y)"),
    Case("Extra-P sum x log x + y^(3/2)", "200 + 10*x*log2(x) + 20*y**1.5",
         {"x": [2, 4, 8, 16, 32], "y": [2, 4, 8, 16, 32]}, ("x", "y"), "c + c*x*log2(x) + c*y**(3/2)"),
    Case("Extra-P product of three", "200 + 10*x*y*log2(z)", {"x": [2, 4, 8, 16], "y": [2, 4, 8, 16],
                                                               "z": [2, 4, 8, 16]}, ("x", "y", "z"),
         "c + c*x*y*log2(z)"),
    Case("strong + weak scaling mix", "1 + 40/p + 0.002*n", {"n": [1e3, 2e3, 4e3], "p": P}, ("p", "n"),
         "c + c/p + c*n"),
    Case("work n^1.5 over workers", "0.5 + 1e-5*n**1.5/p", {"n": [1e3, 2e3, 4e3, 8e3], "p": P}, ("p", "n"),
         "c + c*n**(3/2)/p"),
    Case("model parallel: params / devices + activations x log", "0.2 + 1e-6*w/p + 1e-3*b*log2(p)",
         {"w": [1e5, 1e6, 1e7], "b": [16, 64, 256], "p": [1, 2, 4, 8]}, ("p", "w"),
         "c + c*w/p + c*b*log2(p)"),
    Case("data x model with fitted power on params", "0.4 + 3e-5*n*w**0.8/p", {"n": [1e3, 4e3, 16e3],
                                                                           "w": [1e4, 1e5, 1e6], "p": [1, 2, 4, 8]},
         ("p", "n"), "c + c*n*w**k/p"),
    Case("CNTK-style: init overhead + compute + p log p", "5 + 0.02*n/p + 0.01*p*log2(p)",
         {"n": [1e3, 4e3, 16e3], "p": P}, ("p", "n"), "c + c*n/p + c*p*log2(p)"),
    # three single-factor terms beside each other (added 2026-11-25: the screening's greedy beam
    # preferred products such as log2(p)/b and missed them)
    Case("samples / workers + log comm + per-batch overhead", "2 + 0.01*s/p + 0.3*log2(p) + 50/b",
         {"s": [1e3, 4e3, 16e3], "p": P, "b": [16, 32, 64]}, ("p", "s"), "c + c*s/p + c*log2(p) + c/b"),
    Case("samples / workers + linear comm + per-batch overhead", "1 + 2e-3*s/p + 0.05*p + 20/b",
         {"s": [1e3, 4e3, 16e3], "p": P, "b": [16, 32, 64]}, ("p", "s"), "c + c*s/p + c*p + c/b"),
]


def factor_symbols(names) -> dict[str, sympy.Symbol]:
    return {name: sympy.Symbol(name, positive=True) for name in names}


def measure(case: Case, seed: int, repetitions: int = 3, noise: float = 0.02) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = list(case.grid)
    rows = np.array(list(itertools.product(*case.grid.values())), dtype=float)
    rows = np.repeat(rows, repetitions, axis=0)
    truth = evaluate(case.truth, names, rows)
    frame = pd.DataFrame(rows, columns=names)
    frame["time"] = truth * (1 + noise * rng.standard_normal(len(rows)))
    return frame


def evaluate(expression: str, names: list[str], rows: np.ndarray) -> np.ndarray:
    symbols = factor_symbols(names)
    expr = sympy.sympify(expression, locals={"log2": lambda v: sympy.log(v, 2), **symbols})
    function = sympy.lambdify([list(symbols.values())], expr, "numpy")
    return np.broadcast_to(function([rows[:, i] for i in range(rows.shape[1])]), len(rows)).astype(float)


def test_points(case: Case, factors: tuple[str, ...] | None = None, multiples=(4.0, 8.0)) -> np.ndarray:
    """Each scaling factor at 4× and 8× its largest measured value, the others at their smallest
    and largest: every combination."""
    axes = []
    for name, values in case.grid.items():
        if name in (factors or case.scale):
            axes.append([max(values) * m for m in multiples])
        else:
            axes.append(sorted({min(values), max(values)}))
    return np.array(list(itertools.product(*axes)), dtype=float)


def signature(expr: sympy.Expr, names: list[str]) -> frozenset:
    """The law's terms as sets of (factor or log2 factor, exponent), coefficients dropped."""
    symbols = factor_symbols(names)
    out = set()
    for term in sympy.Add.make_args(sympy.expand(expr.rewrite(sympy.log))):
        parts = []
        for base, power in term.as_powers_dict().items():
            if base in symbols.values():
                parts.append((str(base), round(float(power), 6)))
            elif isinstance(base, sympy.log) and base.args[0] in symbols.values():
                parts.append((f"log2({base.args[0]})", round(float(power), 6)))
        out.add(tuple(sorted(parts)))
    return frozenset(out)


def same_form(found: sympy.Expr, truth: str, names: list[str], tolerance: float = 0.1) -> bool:
    symbols = factor_symbols(names)
    expected = signature(sympy.sympify(truth, locals={"log2": lambda v: sympy.log(v, 2), **symbols}), names)
    got = signature(found, names)
    if len(got) != len(expected):
        return False
    unmatched = list(expected)
    for term in got:
        match = next((e for e in unmatched if [b for b, _ in e] == [b for b, _ in term] and
                      all(abs(x - y) <= tolerance for (_, x), (_, y) in zip(e, term))), None)
        if match is None:
            return False
        unmatched.remove(match)
    return True


def form_grammar(form: str, factors, exponent: str = "k = { min = -3, max = 3 }",
                 max_nonlinear: int = 3) -> grammar.Grammar:
    """A grammar holding only ``form`` over ``factors`` (with ``exponent``'s constant): the true
    form, refitted on the same data as a yardstick for the search."""
    text = f"""name = "true-form"
[factors]
{chr(10).join(f'{n} = "extrinsic"' for n in factors)}
[constants]
c = {{ min = 0, max = inf }}
{exponent}
[rules]
start = "{form}"
[limits]
max_nonlinear = {max_nonlinear}
"""
    return grammar.parse_text(text, "true-form.toml")


def error_at(law_predict, case: Case, points: np.ndarray) -> float:
    names = list(case.grid)
    truth = evaluate(case.truth, names, points)
    predicted = law_predict({n: points[:, i] for i, n in enumerate(names)})
    return float(100 * np.max(np.abs(predicted / truth - 1)))


def run_cli(frame: pd.DataFrame, folder: Path, name: str, repeats: int, options=()) -> tuple[float, Path]:
    data = folder / f"{name}.csv"
    frame.to_csv(data, index=False)
    walls = []
    for i in range(repeats):
        out = folder / f"{name}-out{i}"
        seconds, _, _ = timed([sys.executable, "-m", "exprsearch.cli", "run", str(data), "-t", "time",
                               "--out", str(out), *options])
        walls.append(seconds)
    return statistics.median(walls), folder / f"{name}-out0" / "law.json"


def synthetic(args, folder: Path) -> list[dict]:
    from exprsearch import load
    from exprsearch.data import as_dataset, from_frame
    from exprsearch.repeats import summarised

    rows = []
    for number, case in enumerate(CASES):
        frame = measure(case, seed=100 + number)
        names = list(case.grid)
        points = test_points(case)
        options = ["--grammar", args.grammar, "--measure", args.measure]
        if args.measure == "spread":  # a report: each configuration's mean, deviation and count of runs
            frame = frame.groupby(names).time.agg(["mean", "std", "count"]).reset_index().rename(
                columns={"mean": "time", "std": "time_std", "count": "runs"})
            data = as_dataset(frame, "time", names, spread=("time_std", "runs"))
            options = ["--grammar", args.grammar, "--spread", "time_std,runs"]
        else:
            data = summarised(from_frame(frame, "time", names), args.measure)
        started = time.perf_counter()
        ours = search(data, "time", args.grammar, resamples=0).law
        in_process = time.perf_counter() - started
        truth_fit = search(data, "time", form_grammar(case.form, case.grid), resamples=0).law
        row = {"case": case.name, "factors": len(names), "rows": len(frame),
               "error": error_at(ours.predict, case, points), "true_form_error": error_at(truth_fit.predict, case, points),
               "form": same_form(ours.expression, case.truth, names), "law": str(ours.template),
               "search_s": in_process}
        row["recovered"] = row["form"] and row["error"] < 3
        if args.cli:
            wall, law_file = run_cli(frame, folder, f"case{number}", args.repeats, options)
            row["wall_s"] = wall
            row["cli_same_law"] = str(load(law_file).template) == row["law"]
        if args.extrap:
            model, seconds = extrap_model(EXTRAP, frame, names, folder / f"case{number}.txt", args.repeats)
            predicted = extrap_predict(model, {n: points[:, i] for i, n in enumerate(names)})
            truth = evaluate(case.truth, names, points)
            row.update(extrap_error=float(100 * np.max(np.abs(predicted / truth - 1))), extrap_s=seconds,
                       extrap_model=model)
        rows.append(row)
        print(f"  {case.name}: {row['error']:.2f} % (true form {row['true_form_error']:.2f} %), "
              f"{'recovered' if row['recovered'] else 'NOT recovered'}: {row['law']}", file=sys.stderr)
    return rows


def report_synthetic(rows: list[dict]) -> None:
    print("\n### Synthetic multi-factor suite\n")
    extrap = "extrap_error" in rows[0]
    cli = "wall_s" in rows[0]
    header = ["law", "factors", "recovered", "error % (4-8x)", "true form refitted %"]
    header += ["Extra-P %"] if extrap else []
    header += ["wall s", "Extra-P s"] if cli and extrap else ["wall s"] if cli else []
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        cells = [r["case"], str(r["factors"]), "yes" if r["recovered"] else "no", f"{r['error']:.2f}",
                 f"{r['true_form_error']:.2f}"]
        cells += [f"{r['extrap_error']:.1f}"] if extrap else []
        cells += [f"{r['wall_s']:.2f}"] if cli else []
        cells += [f"{r['extrap_s']:.2f}"] if cli and extrap else []
        print("| " + " | ".join(cells) + " |")
    recovered = sum(r["recovered"] for r in rows)
    ours = statistics.median(r["error"] for r in rows)
    truth = statistics.median(r["true_form_error"] for r in rows)
    forms = sum(r["form"] for r in rows)
    print(f"\nRecovered {recovered}/{len(rows)} ({100 * recovered / len(rows):.0f} %; the true form on {forms}); "
          f"median error {ours:.2f} % "
          f"vs {truth:.2f} % for the true form refitted (ratio {ours / truth:.2f}); median search "
          f"{statistics.median(r['search_s'] for r in rows):.2f} s in-process.")
    if extrap:
        print(f"Extra-P: median error {statistics.median(r['extrap_error'] for r in rows):.1f} %, "
              f"{sum(r['extrap_error'] < 3 for r in rows)}/{len(rows)} below 3 %.")
    if cli:
        line = f"Wall time from process start, median: {statistics.median(r['wall_s'] for r in rows):.2f} s"
        if extrap:
            ratios = [r["wall_s"] / r["extrap_s"] for r in rows]
            line += (f"; Extra-P {statistics.median(r['extrap_s'] for r in rows):.2f} s; ratio median "
                     f"{statistics.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
        print(line + ".")


KNOWN = [  # Extra-P-format inputs whose laws are known (../shared/README.md), and two written here
    ("extrap-format/one_parameter_1.txt", "compute:time", "1 + 0.2*x**2"),
    ("extrap-format/one_parameter_6.txt", "met1", "4 + 0*p"),
    ("extrap-format/one_parameter_6.txt", "met2", "1e-6*p**2"),
    ("extrap-format/one_parameter_6.txt", "met3", "1e-6*p**2 + log2(p/1000) + 1"),
    ("extrap-format/one_parameter_6.txt", "met4", "p**2"),
    ("extrap-format/input1.json", "sweep:time", "1.5 + 0.5*x"),
    ("written: noise-free, Extra-P text", "r:time", "1 + 0.05*s**1.5*p"),
    ("written: 2 % noise, 5 repetitions", "r:time", "1 + 0.2*x**2*log2(y) + 0.1*x*y**2*z"),
]


def write_extrap_text(path: Path, truth: str, grid: dict[str, list[float]], noise: float, repetitions: int,
                      seed: int = 7) -> None:
    """A file in Extra-P's text format (PARAMETER / POINTS / REGION / METRIC / DATA) of ``truth``."""
    rng = np.random.default_rng(seed)
    names = list(grid)
    points = np.array(list(itertools.product(*grid.values())), dtype=float)
    values = evaluate(truth, names, points)
    lines = [f"PARAMETER {n}" for n in names]
    lines.append("POINTS " + " ".join("( " + " ".join(f"{v:g}" for v in point) + " )" for point in points))
    lines += ["", "REGION r", "METRIC time"]
    for v in values:
        reps = v * (1 + noise * rng.standard_normal(repetitions))
        lines.append("DATA " + " ".join(f"{r:.12g}" for r in reps))
    path.write_text("\n".join(lines) + "\n")


def extrap_models(path: Path, parameters: int) -> list[str]:
    """Extra-P's model of every series of a file, in file order."""
    flag = "--json" if path.suffix == ".json" else "--text"
    options = (["--modeler", "multi-parameter", "--options", "#spm=Basic", "#spo=allow_negative_exponents=True"]
               if parameters > 1 else ["--modeler", "basic", "--options", "allow_negative_exponents=True"])
    _, _, stdout = timed([str(EXTRAP.parent / "extrap"), flag, str(path), *options])
    return [line.split("Model:", 1)[1].strip() for line in stdout.splitlines() if "Model:" in line]


def extrap_inputs(args, folder: Path) -> list[dict]:
    from exprsearch.readers import load_series

    written = {
        "written: noise-free, Extra-P text": ({"s": [2, 4, 6, 8, 10], "p": [1, 2, 3, 4, 5]}, 0.0, 1),
        "written: 2 % noise, 5 repetitions": ({"x": [2, 4, 6, 8, 10], "y": [2, 4, 6, 8, 10], "z": [2, 4, 6, 8, 10]},
                                               0.02, 5),
    }
    rows, models = [], {}
    for source, series, truth in KNOWN:
        if source in written:
            path = folder / f"written{list(written).index(source)}.txt"
            write_extrap_text(path, truth, *written[source])
        else:
            path = SHARED / source
            if not path.exists():
                continue
        datasets = load_series(path)
        data = datasets[series]
        names = list(data.factors)
        top = {n: data.column(n).max() for n in names}
        points = np.array([[2 * top[m] if (m == n or n == "all") else top[m] for m in names]
                           for n in names + ["all"]], dtype=float)
        columns = {n: points[:, i] for i, n in enumerate(names)}
        actual = evaluate(truth, names, points)
        row = {"input": f"{source} {series}", "truth": truth}
        for name in args.grammars:
            law = search(data, grammar=name, resamples=0).law
            row[name] = float(100 * np.max(np.abs(law.predict(columns) / actual - 1)))
            row[f"{name}_law"] = str(law.expression.xreplace({f: sympy.Float(f, 4) for f in
                                                              law.expression.atoms(sympy.Float)}))
        if args.extrap:
            if path not in models:
                models[path] = extrap_models(path, len(names))
            model = models[path][list(datasets).index(series)]
            row["extrap"] = float(100 * np.max(np.abs(extrap_predict(model, columns) / actual - 1)))
            row["extrap_law"] = model
        rows.append(row)
        print(f"  {row['input']}: " + ", ".join(f"{g} {row[g]:.2f} %" for g in args.grammars), file=sys.stderr)
    return rows


def report_extrap(rows: list[dict], grammars: list[str]) -> None:
    print("\n### Extra-P-format inputs with known laws (largest error at 2x the largest measured values)\n")
    extrap = rows and "extrap" in rows[0]
    header = ["input", "true law"] + [f"exprsearch {g} %" for g in grammars] + (["Extra-P %"] if extrap else [])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        cells = [r["input"], f"`{r['truth']}`"] + [f"{r[g]:.2f}" for g in grammars]
        cells += [f"{r['extrap']:.2f}"] if extrap else []
        print("| " + " | ".join(cells) + " |")
    for g in grammars:
        print(f"\n{g}: {sum(r[g] < 2 for r in rows)}/{len(rows)} within 2 %.", end="")
    if extrap:
        print(f" Extra-P: {sum(r['extrap'] < 2 for r in rows)}/{len(rows)} within 2 %.", end="")
    print()


@dataclass(frozen=True)
class Table:
    """A public table: series (one per group), a worker factor, one more factor, a time."""

    name: str
    file: str
    groups: tuple[str, ...]
    workers: str
    other: str
    throughput: str
    amount: float | None  # time = amount / throughput; None where the column is the time itself
    intrinsic: bool  # the other factor describes the model (FLOPs, parameters): exprsearch run --intrinsic x


TABLES = [
    Table("CM-DARE workers x model FLOPs", "datasets/cmdare_cluster_scaling.csv", ("gpu", "num_ps"), "workers",
          "model_flops", "images_per_sec_mean", 1e5, True),
    Table("DLPerf gpus x batch per device", "datasets/dlperf_throughput.csv", ("framework", "model", "precision", "xla"),
          "gpus", "batch_size_per_device", "throughput_samples_per_s", 1e5, False),
    Table("LLM Foundry gpus x parameters", "datasets/mpt_llmfoundry_throughput.csv", ("gpu", "seq_len", "precision",
          "table"), "gpus", "num_params", "throughput_tokens_per_s", 1e9, True),
    # time to train 64K steps on one or two parameter servers; the other experiments of the file
    # vary one factor only, so public_series passes them over
    Table("Transient workers x parameter servers", "datasets/transient_dl_training_time.csv", ("experiment", "gpu"),
          "workers", "num_ps", "duration_s", None, False),
]


def public_series(table: Table):
    """(name, training rows, held-out rows): the largest third of the worker counts held out, on
    the levels of the other factor that training has; series with fewer than three training
    worker counts or two levels are passed over."""
    frame = pd.read_csv(SHARED / table.file)
    frame = frame[frame[table.throughput] > 0]
    for key, group in frame.groupby(list(table.groups), sort=True):
        measured = group[table.throughput].astype(float)
        data = pd.DataFrame({"p": group[table.workers].astype(float), "x": group[table.other].astype(float),
                             "time": measured if table.amount is None else table.amount / measured})
        counts = np.sort(data["p"].unique())
        held = counts[len(counts) - max(1, len(counts) // 3):]
        train, test = data[~data["p"].isin(held)], data[data["p"].isin(held)]
        test = test[test["x"].isin(train["x"].unique())]
        if train["p"].nunique() < 3 or train["x"].nunique() < 2 or test.empty or len(train) < 6:
            continue
        yield " / ".join(map(str, np.atleast_1d(key))), train, test


def amdahl_per_level(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """a + b/p fitted on each level of the other factor (relative least squares)."""
    predicted = np.empty(len(test))
    for level, rows in test.groupby("x"):
        fit_rows = train[train["x"] == level]
        design = np.column_stack([np.ones(len(fit_rows)), 1 / fit_rows["p"]]) / fit_rows["time"].to_numpy()[:, None]
        coef = np.linalg.lstsq(design, np.ones(len(fit_rows)), rcond=None)[0]
        predicted[test.index.get_indexer(rows.index)] = coef[0] + coef[1] / rows["p"].to_numpy()
    return predicted


def public_errors(table: Table, train: pd.DataFrame, test: pd.DataFrame) -> dict:
    """exprsearch's mean error % on the held-out rows: of the law alone (``law``), and as
    ``exprsearch run --intrinsic x`` advises (``ours``): where the law's coefficients fitted per
    value of x explain the training rows better (``levels``), each held-out row by its value's law."""
    actual = test["time"].to_numpy()
    found = search(train, "time", "default", resamples=0, intrinsic=("x",) if table.intrinsic else ())
    levels = check_levels(found, "x") if table.intrinsic else None
    preferred = bool(levels is not None and levels.preferred)
    predicted = levels.predict(test) if preferred else found.law.predict(test)
    return {"law": float(100 * np.mean(np.abs(found.law.predict(test) / actual - 1))), "levels": preferred,
            "ours": float(100 * np.mean(np.abs(predicted / actual - 1))), "expression": found.law.expression}


def public(args, folder: Path) -> list[dict]:
    rows = []
    for table in TABLES:
        if not (SHARED / table.file).exists():
            continue
        for number, (name, train, test) in enumerate(public_series(table)):
            test = test.reset_index(drop=True)
            actual = test["time"].to_numpy()
            row = {"table": table.name, "series": name, **public_errors(table, train, test)}
            row["amdahl"] = float(100 * np.mean(np.abs(amdahl_per_level(train, test) / actual - 1)))
            if args.extrap:
                try:
                    model, _ = extrap_model(EXTRAP, train, ["p", "x"], folder / f"public{number}.txt", 1)
                    row["extrap"] = float(100 * np.mean(np.abs(extrap_predict(model, {"p": test["p"], "x": test["x"]})
                                                               / actual - 1)))
                except Exception as exc:  # Extra-P refuses some series (too few points per parameter)
                    row["extrap"] = float("nan")
                    print(f"  Extra-P gave no model for {name}: {str(exc).splitlines()[0][:80]}", file=sys.stderr)
            rows.append(row)
            print(f"  {table.name} {name}: ours {row['ours']:.1f} %, Amdahl {row['amdahl']:.1f} %", file=sys.stderr)
    return rows


def report_public(rows: list[dict]) -> None:
    print("\n### Public multi-factor series (fitted on the smaller worker counts, judged on the largest third)\n")
    extrap = rows and "extrap" in rows[0]
    header = ["table", "series", "median error exprsearch %", "law alone %", "x as levels", "median Amdahl per level %"]
    header += ["median Extra-P %", "Extra-P gave no model"] if extrap else []
    header += ["exprsearch better than Amdahl"] + (["than Extra-P"] if extrap else [])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for table in TABLES:
        mine = [r for r in rows if r["table"] == table.name]
        if not mine:
            continue
        cells = [table.name, str(len(mine)), f"{statistics.median(r['ours'] for r in mine):.1f}",
                 f"{statistics.median(r['law'] for r in mine):.1f}",
                 f"{sum(r['levels'] for r in mine)}/{len(mine)}" if table.intrinsic else "not intrinsic",
                 f"{statistics.median(r['amdahl'] for r in mine):.1f}"]
        if extrap:
            modelled = [r for r in mine if np.isfinite(r["extrap"])]
            cells += [f"{statistics.median(r['extrap'] for r in modelled):.1f}" if modelled else "—",
                      str(len(mine) - len(modelled))]
        cells.append(f"{sum(r['ours'] < r['amdahl'] for r in mine)}/{len(mine)}")
        if extrap:
            cells.append(f"{sum(r['ours'] < r['extrap'] for r in mine if np.isfinite(r['extrap']))}/"
                         f"{sum(np.isfinite(r['extrap']) for r in mine)}")
        print("| " + " | ".join(cells) + " |")


AGREEMENT_GRAMMAR = """name = "enumerable"
[constants]
c = { min = 0, max = inf }
k = { min = -3, max = 3 }
[rules]
start = "c + <term>{1,3}"
term = "c * <t>*{1,2}"
t = ["<factor>", "1/<factor>", "log2(<factor>)", "sqrt(<factor>)", "<factor>**2", "<factor> * log2(<factor>)", "<factor>**k"]
[limits]
max_nonlinear = 1
max_candidates = %d
"""


def agreement(args, folder: Path) -> list[dict]:
    """The screened search against the exhaustive one on the suite's two-factor laws, over a
    grammar whose whole space (40,586 laws for two factors) can be enumerated."""
    rows = []
    for number, case in enumerate(CASES):
        if len(case.grid) != 2:
            continue
        frame = measure(case, seed=100 + number)
        started = time.perf_counter()
        everything = search(frame, "time", grammar.parse_text(AGREEMENT_GRAMMAR % 100_000, "e.toml"), resamples=0,
                            strategy="exhaustive")
        exhaustive_s = time.perf_counter() - started
        started = time.perf_counter()
        screened = search(frame, "time", grammar.parse_text(AGREEMENT_GRAMMAR % 1000, "e.toml"), resamples=0)
        screened_s = time.perf_counter() - started
        rows.append({"case": case.name, "same": str(everything.law.template) == str(screened.law.template),
                     "exhaustive": str(everything.law.template), "screened": str(screened.law.template),
                     "fitted": len(screened.candidates), "space": everything.candidates.size,
                     "exhaustive_s": exhaustive_s, "screened_s": screened_s})
        print(f"  {case.name}: {'same' if rows[-1]['same'] else 'DIFFERENT'}", file=sys.stderr)
    return rows


def report_agreement(rows: list[dict]) -> None:
    print("\n### Screened search against the exhaustive search (two-factor laws, enumerable grammar)\n")
    same = sum(r["same"] for r in rows)
    print(f"The same law on {same}/{len(rows)} ({100 * same / len(rows):.0f} %) of the laws; the screened search "
          f"fitted a median {statistics.median(r['fitted'] for r in rows):.0f} of the {rows[0]['space']:,} laws, "
          f"in {statistics.median(r['screened_s'] for r in rows):.2f} s against "
          f"{statistics.median(r['exhaustive_s'] for r in rows):.2f} s (medians, in-process).")
    for r in rows:
        if not r["same"]:
            print(f"- {r['case']}: exhaustive `{r['exhaustive']}`, screened `{r['screened']}`")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-extrap", dest="extrap", action="store_false")
    parser.add_argument("--no-cli", dest="cli", action="store_false", help="skip the command-line timings")
    parser.add_argument("--only", default="synthetic,extrap,public,agreement")
    parser.add_argument("--grammar", default="default", help="the grammar of the synthetic suite (default: default)")
    parser.add_argument("--measure", default="all", help="the synthetic suite fitted to each configuration's mean, "
                        "median, min or max of its runs (exprsearch's --measure; default: all runs), or to a report "
                        "of their mean, standard deviation and count (spread: exprsearch's --spread)")
    args = parser.parse_args()
    if args.extrap and not EXTRAP.exists():
        sys.exit(f"Extra-P is not installed at {EXTRAP}: python3 -m venv {EXTRAP.parents[1]} && "
                 f"{EXTRAP.parent}/pip install extrap==4.2.5 (or pass --no-extrap)")
    parts = args.only.split(",")
    args.grammars = ["default", "pmnf"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.cli:  # timed as an installed package runs, with its bytecode (speed.py)
            compile_ours()
        if "synthetic" in parts:
            report_synthetic(synthetic(args, folder))
        if "extrap" in parts:
            report_extrap(extrap_inputs(args, folder), args.grammars)
        if "public" in parts:
            report_public(public(args, folder))
        if "agreement" in parts:
            report_agreement(agreement(args, folder))


if __name__ == "__main__":
    main()
