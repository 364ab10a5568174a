"""Extrapolation accuracy on public measurements of distributed training.

For every scaling series in the tables of ../shared/datasets (or --shared DIR), fit a law on the
smaller configurations (all but the largest third of the distinct worker counts, at least three
kept) and predict the larger ones. Compared: exprsearch (a grammar, default `default`), a plain
Amdahl fit a + b/p (least squares on relative errors) and, with --extrap, Extra-P (PyPI `extrap`
in its own venv, its Basic single-parameter modeler with negative exponents allowed: every
series here has one factor). Prints a Markdown
table of the median held-out error per data set; docs/accuracy.md holds a run of it.

    python benchmarks/accuracy.py [--shared ../shared/datasets] [--extrap] [--grammar default]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from exprsearch import search
from exprsearch.data import from_frame


@dataclass(frozen=True)
class Spec:
    name: str
    file: str
    keys: tuple[str, ...]
    factor: str
    target: str  # a column, or 'per:COLUMN:AMOUNT' for AMOUNT / throughput
    unit: str
    query: str | None = None


SPECS = (
    Spec("CM-DARE cluster scaling (ICDCS 2020)", "cmdare_cluster_scaling.csv", ("model", "gpu", "num_ps"),
         "workers", "per:images_per_sec_mean:1e5", "s per 100k images"),
    Spec("TensorFlow CNN benchmarks 2017", "tf_cnn_benchmarks_2017.csv",
         ("platform", "gpu", "setting", "table", "data", "model", "batch_size_per_gpu"), "gpus",
         "per:images_per_sec:1e5", "s per 100k images"),
    Spec("OneFlow DLPerf", "dlperf_throughput.csv", ("framework", "model", "precision", "xla", "batch_size_per_device"),
         "gpus", "per:throughput_samples_per_s:1e5", "s per 100k samples"),
    Spec("MosaicML LLM Foundry", "mpt_llmfoundry_throughput.csv", ("model", "seq_len", "gpu", "precision", "table"),
         "gpus", "per:throughput_tokens_per_s:1e9", "s per 1e9 tokens"),
    Spec("MLPerf Training v0.6-v5.1", "mlperf_training_summary.csv", ("version", "submitter", "benchmark", "accelerator"),
         "accelerators", "ttt_min_median", "minutes to train", "series_n_sizes >= 3"),
    Spec("MLPerf HPC v0.7-v3.0", "mlperf_hpc_summary.csv", ("version", "submitter", "benchmark", "scaling", "accelerator"),
         "accelerators", "ttt_min_median", "minutes to train"),
    # decentralised training (Hivemind) over one cloud region or several; the single-GPU
    # baselines, plain PyTorch without Hivemind, have no target batch size and are left out
    Spec("Hivemind multi-cloud (PVLDB 2024)", "hivemind_multicloud_throughput.csv", ("experiment", "model", "location", "TBS"),
         "gpu_count", "per:samples_per_sec_median:1e5", "s per 100k samples"),
)


def series(spec: Spec, shared: Path):
    frame = pd.read_csv(shared / spec.file)
    if spec.query:
        frame = frame.query(spec.query)
    if spec.target.startswith("per:"):
        _, column, amount = spec.target.split(":")
        frame = frame.assign(time=float(amount) / frame[column])
    else:
        frame = frame.assign(time=frame[spec.target])
    frame = frame[[*spec.keys, spec.factor, "time"]].dropna()
    frame = frame[(frame["time"] > 0) & (frame[spec.factor] > 0)]
    for key, group in frame.groupby(list(spec.keys), dropna=False, sort=True):
        sizes = np.sort(group[spec.factor].unique())
        if len(sizes) < 4:
            continue
        held = max(1, round(len(sizes) / 3))
        limit = sizes[-held - 1]
        data = group[[spec.factor, "time"]].rename(columns={spec.factor: "p"})
        yield key, data[data["p"] <= limit], data[data["p"] > limit]


def mape(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(100 * np.mean(np.abs(predicted / actual - 1)))


def amdahl(train: pd.DataFrame, test: pd.DataFrame) -> float:
    y = train["time"].to_numpy()
    design = np.column_stack([np.ones(len(y)), 1 / train["p"].to_numpy()]) / y[:, None]
    a, b = np.linalg.lstsq(design, np.ones(len(y)), rcond=None)[0]
    return mape(a + b / test["p"].to_numpy(), test["time"].to_numpy())


def exprsearch_error(train: pd.DataFrame, test: pd.DataFrame, grammar: str) -> tuple[float, str]:
    law = search(from_frame(train, "time"), grammar=grammar, resamples=0).law
    return mape(law.predict({"p": test["p"].to_numpy()}), test["time"].to_numpy()), str(law.template)


EXTRAP_VENV = Path(tempfile.gettempdir()) / "exprsearch-extrap-venv"


def extrap_ready() -> Path:
    """A venv with Extra-P from PyPI, made on first use."""
    python = EXTRAP_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(EXTRAP_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "extrap"], check=True)
    return python


EXTRAP_SCRIPT = r"""
import sys, json
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator
from extrap.modelers.single_parameter.basic import SingleParameterModeler
experiment = TextFileReader().read_experiment(sys.argv[1])
modeler = SingleParameterModeler()  # the one-parameter series here; Basic, as '#spm=Basic'
modeler.allow_negative_exponents = True
generator = ModelGenerator(experiment, modeler=modeler)
generator.model_all()
model = next(iter(generator.models.values()))
points = json.loads(sys.argv[2])
import numpy as np
print(json.dumps([float(model.hypothesis.function.evaluate(np.array([p]))) for p in points]))
"""


def extrap_error(python: Path, train: pd.DataFrame, test: pd.DataFrame) -> float:
    import json

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "series.txt"
        grouped = train.groupby("p")["time"].apply(list)
        lines = ["PARAMETER p", "POINTS " + " ".join(f"( {p:g} )" for p in grouped.index), "", "REGION r", "METRIC time"]
        lines += ["DATA " + " ".join(f"{v:.10g}" for v in values) for values in grouped]
        path.write_text("\n".join(lines) + "\n")
        done = subprocess.run([str(python), "-c", EXTRAP_SCRIPT, str(path), json.dumps(test["p"].tolist())],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "extrap failed")
        predicted = np.array(json.loads(done.stdout.strip().splitlines()[-1]))
    return mape(predicted, test["time"].to_numpy())


def rates(shared: Path, grammar: str) -> None:
    """On the throughput tables: the law fitted to the rate itself against the law fitted to its
    time (amount / rate), both judged on the held-out rates (what `run --target-kind rate` fits
    against a column 1 / rate)."""
    from exprsearch.cli.beside import misses_as_rate
    from exprsearch.cli.segmented import GROSS

    print("| data set | series | median error fitting the rate % | fitting the time % | the time better | "
          "the rate's law misses, run fits the time to compare | of those, the lower MAPE in the fitted rows "
          "also lower on the held-out |")
    print("|---|---|---|---|---|---|---|")
    for spec in SPECS:
        if not spec.target.startswith("per:"):
            continue
        direct, timed, compared, agreed = [], [], 0, 0
        for _, train, test in series(spec, shared):
            actual = 1 / test["time"].to_numpy()
            rate = search(from_frame(train.assign(rate=1 / train["time"])[["p", "rate"]], "rate"), grammar=grammar,
                          resamples=0).law
            direct.append(mape(rate.predict({"p": test["p"].to_numpy()}), actual))
            law = search(from_frame(train, "time"), grammar=grammar, resamples=0).law
            timed.append(mape(1 / law.predict({"p": test["p"].to_numpy()}), actual))
            if misses_as_rate(rate, GROSS):  # where `run` fits the time too and says which fits the rows closer
                compared += 1
                agreed += (law.metrics["mape_pct"] < rate.metrics["mape_pct"]) == (timed[-1] < direct[-1])
        print(f"| {spec.name} | {len(direct)} | {np.median(direct):.1f} | {np.median(timed):.1f} | "
              f"{sum(t < d for t, d in zip(timed, direct))}/{len(direct)} | {compared} | {agreed}/{compared} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets")
    parser.add_argument("--grammar", default="default")
    parser.add_argument("--extrap", action="store_true", help="also run Extra-P (installs it in its own venv)")
    parser.add_argument("--details", type=Path, help="write every series' errors to this CSV")
    parser.add_argument("--rates", action="store_true", help="compare fitting the throughput with fitting its time")
    args = parser.parse_args()
    if not args.shared.is_dir():
        sys.exit(f"no data sets at {args.shared}; pass --shared DIR")
    if args.rates:
        return rates(args.shared, args.grammar)
    python = extrap_ready() if args.extrap else None
    rows = []
    for spec in SPECS:
        start = time.perf_counter()
        for key, train, test in series(spec, args.shared):
            ours, form = exprsearch_error(train, test, args.grammar)
            row = {"dataset": spec.name, "series": " / ".join(map(str, np.atleast_1d(key))), "exprsearch": ours,
                   "amdahl": amdahl(train, test), "law": form, "fit_max_p": train["p"].max(), "test_max_p": test["p"].max()}
            if python is not None:
                try:
                    row["extrap"] = extrap_error(python, train, test)
                except Exception as exc:  # a failed Extra-P run is reported, not hidden
                    row["extrap"] = np.nan
                    row["extrap_error"] = str(exc)[:200]
            rows.append(row)
        print(f"{spec.name}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    if args.details:
        table.to_csv(args.details, index=False)
    methods = ["exprsearch", "amdahl"] + (["extrap"] if python is not None else [])
    header = "| data set | series | " + " | ".join(f"median error {m} %" for m in methods) + " | exprsearch better than Amdahl |"
    if python is not None:
        header += " exprsearch better than Extra-P |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name, group in table.groupby("dataset", sort=False):
        cells = [f"{group[m].median():.1f}" for m in methods]
        wins = f"{(group['exprsearch'] < group['amdahl']).sum()}/{len(group)}"
        line = f"| {name} | {len(group)} | " + " | ".join(cells) + f" | {wins} |"
        if python is not None:
            valid = group.dropna(subset=["extrap"])
            line += f" {(valid['exprsearch'] < valid['extrap']).sum()}/{len(valid)} |"
        print(line)


if __name__ == "__main__":
    main()
