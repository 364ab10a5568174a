"""Speed, memory and extrapolation of `exprsearch run`, end to end, on a fixed suite.

Every case writes its input, then times `exprsearch run` (default settings: all cores, 200
bootstrap resamples) in a fresh process from start to written law.json, median of --repeats
runs, and reports the candidates considered (unique candidates of the grammar), fitted and
refined (polished from a grid start or searched by differential evolution), candidates per
second, the peak memory of the process (GNU time) and the extrapolation error. exprsearch runs with
its modules' bytecode written beforehand, as an installed package does:

- synthetic laws with known truth (default grammar, 6 worker counts × 4 sizes × 3 repetitions,
  2 % noise): largest relative error against the noise-free law at p = 128, 4× the largest p;
- the bundled dataset and one series per public table in ../shared/datasets (when present):
  fitted without the largest value of the scaling factor, mean relative error there;
- 1k, 10k and 100k rows of the first synthetic law (many distinct sizes): the error at p = 128;
- per-step logs: its 24 configurations each measured 1,000 and 4,000 times (24k and 96k rows, a
  log of every training step), the error at p = 128; and the same of the third law (a fitted
  power, whose bootstrap refits its exponent; `steps-N-power`);
- and, in-process, batched fits per second of the default grammar's candidates that have only
  linear coefficients, and the seconds of each stage (generation, compiling the distinct
  terms, batched fits, differential evolution).

With --compare-extrap, Extra-P (PyPI `extrap`, its own venv, `--modeler multi-parameter
--options '#spm=Basic' '#spo=allow_negative_exponents=True'`, or `--modeler basic --options
allow_negative_exponents=True` for one factor) runs on the same training data of
the synthetic and public cases; its model line is evaluated for its error, and the time and
error ratios are printed beside ours.

    python benchmarks/speed.py [--repeats 5] [--rows 1000,10000,100000] [--steps 1000,4000] [--compare-extrap]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "datasets"
# the Python of a venv holding Extra-P 4.2.5, which the benchmarks compare with (each says how to make it)
EXTRAP = Path(tempfile.gettempdir()) / "extrap-venv" / "bin" / "python"
WORKERS = np.array([1, 2, 4, 8, 16, 32], dtype=float)

LAWS = {
    "linear-communication": lambda p, n: 2 + 0.01 * n / p + 0.15 * p,
    "log-communication": lambda p, n: 1 + 0.01 * n / p + 0.5 * np.log2(p),
    "power-communication": lambda p, n: 1 + 0.01 * n / p + 0.05 * p**1.4,
}


def table(law, rows: int, seed: int = 0) -> pd.DataFrame:
    """``rows`` measurements of ``law`` over the worker counts × sizes, 2 % noise."""
    rng = np.random.default_rng(seed)
    n_values = np.geomspace(1000, 64000, max(4, rows // 18))
    grid = np.array([(a, b) for a in WORKERS for b in n_values])
    picks = grid[np.arange(rows) % len(grid)]
    y = law(picks[:, 0], picks[:, 1]) * (1 + 0.02 * rng.standard_normal(rows))
    return pd.DataFrame({"p": picks[:, 0], "n": picks[:, 1], "time": y})


def step_log(law, steps: int, seed: int = 0) -> pd.DataFrame:
    """Each of the worker counts × 4 sizes measured ``steps`` times (a per-step log), 2 % noise."""
    rng = np.random.default_rng(seed)
    grid = np.array([(a, b) for a in WORKERS for b in np.geomspace(1000, 64000, 4)])
    picks = np.repeat(grid, steps, axis=0)
    y = law(picks[:, 0], picks[:, 1]) * (1 + 0.02 * rng.standard_normal(len(picks)))
    return pd.DataFrame({"p": picks[:, 0], "n": picks[:, 1], "time": y})


# Both tools run as installed packages do: with their modules' bytecode, which pip writes when it
# installs them. A source checkout under PYTHONDONTWRITEBYTECODE (set on these machines) compiled
# every exprsearch module in every timed run, about 0.08 s of 0.85 s, which Extra-P's did not.
ENVIRONMENT = {**os.environ, "COLUMNS": "250"}


def compile_ours() -> None:
    """Write exprsearch's bytecode to its ``__pycache__`` folders (which git ignores), where Python
    looks for it, before any run is timed; the timed runs may write bytecode too."""
    import exprsearch

    ENVIRONMENT.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(exprsearch.__file__).parent)], check=True,
                   env=ENVIRONMENT)


def timed(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak resident memory (MiB) and stdout of one run in a fresh process."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], check=True, capture_output=True, text=True,
                          env=ENVIRONMENT)
    seconds = time.perf_counter() - start
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 1024, done.stdout


def run_ours(name: str, train: pd.DataFrame, target: str, options: list[str], repeats: int, folder: Path) -> dict:
    data = folder / f"{name}.csv"
    train.to_csv(data, index=False)
    walls, peaks = [], []
    for i in range(repeats):
        seconds, peak, stdout = timed([sys.executable, "-m", "exprsearch.cli", "run", str(data), "-t", target,
                                       "--out", str(folder / f"{name}-{i}"), *options])
        walls.append(seconds)
        peaks.append(peak)
    counts = re.search(r"(\d+) unique candidates, (\d+) fitted, (\d+) refined", stdout)
    considered, fitted, refined = (int(g) for g in counts.groups())
    wall = statistics.median(walls)
    return {"case": name, "rows": len(train), "wall_s": round(wall, 3), "considered": considered, "fitted": fitted,
            "refined": refined, "candidates_per_s": round(considered / wall), "peak_mib": round(max(peaks)),
            "law_file": str(folder / f"{name}-0" / "law.json")}


def load_law(path: str):
    from exprsearch import load

    return load(path)


def synthetic_case(name: str, law, rows: int | pd.DataFrame, repeats: int, folder: Path, extrap: Path | None) -> dict:
    frame = table(law, rows) if isinstance(rows, int) else rows
    record = run_ours(name, frame, "time", [], repeats, folder)
    probe = {"p": np.full(3, 128.0), "n": np.array([1000.0, 8000.0, 64000.0])}
    fitted = load_law(record["law_file"])
    record["error_pct"] = 100 * float(np.max(np.abs(fitted.predict(probe) / law(**probe) - 1)))
    record["law"] = str(fitted.template)
    if extrap is not None:
        model, seconds = extrap_model(extrap, frame, ["p", "n"], folder / f"{name}.txt", repeats)
        predicted = extrap_predict(model, probe)
        record.update(extrap_case(record, seconds, 100 * float(np.max(np.abs(predicted / law(**probe) - 1))), model))
    return record


def held_out_case(name: str, frame: pd.DataFrame, target: str, factor: str, options: list[str], repeats: int,
                  folder: Path, extrap: Path | None) -> dict:
    """Fit without the largest value of ``factor``; the error is on those rows."""
    test = frame[frame[factor] == frame[factor].max()]
    train = frame[frame[factor] < frame[factor].max()]
    record = run_ours(name, train, target, options, repeats, folder)
    fitted = load_law(record["law_file"])
    columns = {f: test[f].to_numpy(float) for f in fitted.factors}
    actual = test[target].to_numpy(float)
    record["error_pct"] = 100 * float(np.mean(np.abs(fitted.predict(columns) / actual - 1)))
    record["law"] = str(fitted.template)
    if extrap is not None and len(fitted.factors) == 1:
        model, seconds = extrap_model(extrap, train, list(fitted.factors), folder / f"{name}.txt", repeats, target)
        error = 100 * float(np.mean(np.abs(extrap_predict(model, columns) / actual - 1)))
        record.update(extrap_case(record, seconds, error, model))
    return record


def public_cases() -> list[tuple[str, pd.DataFrame]]:
    """The series with the most rows of each public table (as benchmarks/accuracy.py reads them)."""
    if not SHARED.is_dir():
        return []
    sys.path.insert(0, str(HERE))
    from accuracy import SPECS, series

    cases = []
    for spec in SPECS:
        found = [(len(train) + len(test), key, pd.concat([train, test])) for key, train, test in series(spec, SHARED)]
        if found:
            _, key, frame = max(found, key=lambda item: item[0])
            cases.append((spec.file.split("_")[0] + ": " + " / ".join(map(str, np.atleast_1d(key))), frame))
    return cases


def extrap_model(python: Path, train: pd.DataFrame, factors: list[str], path: Path, repeats: int,
                 target: str = "time") -> tuple[str, float]:
    """Extra-P's model line for ``train`` and the median wall time of its command line."""
    grouped = train.groupby(factors)[target].apply(list)
    points = [np.atleast_1d(k) for k in grouped.index]
    lines = [f"PARAMETER {f}" for f in factors]
    lines += ["POINTS " + " ".join("( " + " ".join(f"{v:g}" for v in point) + " )" for point in points), "",
              "REGION r", "METRIC time"] + ["DATA " + " ".join(f"{v:.10g}" for v in values) for values in grouped]
    path.write_text("\n".join(lines) + "\n")
    # Its best setting: Basic with negative exponents (single-parameter data has no multi-parameter modeler).
    options = (["--modeler", "multi-parameter", "--options", "#spm=Basic", "#spo=allow_negative_exponents=True"]
               if len(factors) > 1 else ["--modeler", "basic", "--options", "allow_negative_exponents=True"])
    command = [str(python.parent / "extrap"), "--text", str(path), *options]
    walls, model = [], ""
    for _ in range(repeats):
        seconds, _, stdout = timed(command)
        walls.append(seconds)
        model = next(line.split("Model:", 1)[1].strip() for line in stdout.splitlines() if "Model:" in line)
    return model, statistics.median(walls)


def extrap_predict(model: str, columns: dict[str, np.ndarray]) -> np.ndarray:
    """Evaluate an Extra-P model line such as '2.0 + 0.01 * p^(-1) * n^(1) * log2(p)^(1)'."""
    expression = model.replace("^", "**")
    names = {"log2": np.log2, **{k: np.asarray(v, dtype=float) for k, v in columns.items()}}
    return np.broadcast_to(eval(expression, {"__builtins__": {}}, names), len(next(iter(columns.values()))))  # noqa: S307


def extrap_case(record: dict, seconds: float, error: float, model: str) -> dict:
    return {"extrap_wall_s": round(seconds, 3), "extrap_error_pct": error, "extrap_model": model,
            "time_ratio": round(record["wall_s"] / seconds, 2),
            "error_ratio": round(record["error_pct"] / error, 3) if error > 0 else None}


def linear_fit_rate(repeats: int) -> dict:
    """Batched fits per second of the default grammar's candidates without a nonlinear constant,
    in this one process (one core), on the first synthetic table: median of ``repeats``."""
    from exprsearch import candidates, grammar
    from exprsearch.batch import fit_separable
    from exprsearch.compile import Compiler

    frame = table(LAWS["linear-communication"], 72)
    found = candidates.generate(grammar.bind(grammar.load("default"), ("p", "n"))).candidates
    linear = [c for c in found if not c.nonlinear]
    rates = []
    for _ in range(repeats):
        compiler = Compiler(("p", "n"), frame[["p", "n"]].to_numpy(float))  # columns evaluated anew each time
        start = time.perf_counter()
        fit_separable(linear, compiler, frame["time"].to_numpy(float))
        rates.append(len(linear) / (time.perf_counter() - start))
    return {"case": "linear fits per second, one core", "candidates": len(linear), "fits_per_s": round(statistics.median(rates))}


def stages(repeats: int) -> dict:
    """In-process seconds of each stage on the first synthetic table (default grammar), median
    of ``repeats``: generation with the data's screening, compiling and evaluating the distinct
    term columns, the batched fits, and the refinement of the contenders (DE, or a local polish
    of screened exponents), as exprsearch.search runs them."""
    from exprsearch import candidates, grammar, rank
    from exprsearch.batch import batchable, fit_separable
    from exprsearch.compile import Compiler
    from exprsearch.fit import FitSettings, fit
    from exprsearch.identify import ShapeRule
    from exprsearch.screen import DataScreen

    frame = table(LAWS["linear-communication"], 72)
    X, y = frame[["p", "n"]].to_numpy(float), frame["time"].to_numpy(float)
    times: dict[str, list[float]] = {"generate_and_screen": [], "compile": [], "batched_fits": [], "refinement": []}
    for _ in range(repeats):
        compiler = Compiler(("p", "n"), X)
        bound = grammar.bind(grammar.load("default"), ("p", "n"))
        start = time.perf_counter()
        kinds = {c.name: (c.min, c.max) for c in bound.constants}
        found = candidates.generate(bound, DataScreen(compiler, y, kinds, shapes=ShapeRule(compiler)))
        times["generate_and_screen"].append(time.perf_counter() - start)
        usable = [c for c in found.candidates if batchable(c, found.guesses)]
        start = time.perf_counter()
        for term in {t for c in usable for t in c.terms}:
            if term.n_nonlinear == 1:
                compiler.values(term.key, np.linspace(-3, 3, FitSettings().grid))
            elif not term.n_nonlinear:
                compiler.value(term.key)
        times["compile"].append(time.perf_counter() - start)
        start = time.perf_counter()
        screened = fit_separable(usable, compiler, y, FitSettings(), found.guesses)
        times["batched_fits"].append(time.perf_counter() - start)
        start = time.perf_counter()
        for i in rank.contenders(screened.fits, screened.potential, FitSettings().prune_margin):
            if usable[i].nonlinear:
                fit(compiler.compile(usable[i]), y, start=screened.fits[i], local=usable[i].n_nonlinear > 1)
        times["refinement"].append(time.perf_counter() - start)
    return {"case": "stages in one process, default grammar, 72 rows", "space": found.size,
            "candidates": len(found), **{f"{k}_s": round(statistics.median(v), 3) for k, v in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", default="1000,10000,100000")
    parser.add_argument("--steps", default="1000,4000", help="steps per configuration of the per-step logs")
    parser.add_argument("--compare-extrap", action="store_true")
    args = parser.parse_args()
    extrap = None
    if args.compare_extrap:
        sys.path.insert(0, str(HERE))
        from accuracy import extrap_ready

        extrap = extrap_ready()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        compile_ours()
        records = [synthetic_case(law_name, law, 72, args.repeats, folder, extrap) for law_name, law in LAWS.items()]
        bundled = pd.read_csv(HERE.parent / "datasets" / "numpy_mlp_epochs.csv")
        records.append(held_out_case("bundled-numpy-mlp", bundled, "epoch_s", "batch", ["--intrinsic", "layers,width"],
                                     args.repeats, folder, extrap))
        for i, (label, frame) in enumerate(public_cases()):
            record = held_out_case(f"public-{i}", frame, "time", "p", [], args.repeats, folder, extrap)
            records.append({**record, "case": label})
        for size in [int(r) for r in args.rows.split(",") if r]:
            law_name = "linear-communication"
            records.append(synthetic_case(f"rows-{size}", LAWS[law_name], size, max(1, args.repeats // 2), folder, None))
        for steps in [int(r) for r in args.steps.split(",") if r]:
            for law_name, label in (("linear-communication", ""), ("power-communication", "-power")):
                records.append(synthetic_case(f"steps-{steps}{label}", LAWS[law_name], step_log(LAWS[law_name], steps),
                                              max(1, args.repeats // 2), folder, None))
        records.append(linear_fit_rate(args.repeats))
        records.append(stages(args.repeats))
        for record in records:
            record.pop("law_file", None)
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
