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

The suite's laws and how they are measured and judged are in ``multifactor_suite.py``, the public
tables in ``public_tables.py``; this script runs the four parts.

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
from pathlib import Path

import numpy as np
import pandas as pd
import sympy

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from multifactor_suite import CASES, error_at, evaluate, form_grammar, measure, same_form, test_points  # noqa: E402
from public_tables import SHARED, public, report_public  # noqa: E402
from speed import EXTRAP, compile_ours, extrap_model, extrap_predict, timed  # noqa: E402

from exprsearch import grammar, search  # noqa: E402


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
