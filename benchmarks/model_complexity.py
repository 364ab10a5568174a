"""Intrinsic factors on public data: a new model's step time from its FLOPs and parameters.

The generic performance model writes time through intrinsic factors (FLOPs, parameters) beside
the extrinsic ones. CM-DARE's one-GPU measurements (../shared/datasets/cmdare_model_complexity.csv:
16 CNNs × K80 and P100, 13 speed samples each) ask the question its authors asked: from the
models measured, predict the step time of one that was not. Each model in turn is left out; the
other 15 are fitted and the left-out model's step time is predicted on each GPU (mean relative
error over its samples). Fitted by

- exprsearch, every GPU at once: `search` with the default grammar over gpu_tflops, model_flops
  and params, the last two intrinsic (as `exprsearch run --intrinsic model_flops,params`);
- exprsearch per GPU over model_flops alone (what the two below are given);
- a roofline per GPU, a + b·FLOPs (relative least squares);
- Extra-P 4.2.5 per GPU over model_flops (Basic modeler, negative exponents allowed), with the
  samples as its repetitions, where its venv is there ($TMPDIR/extrap-venv, as speed.py uses).

    python benchmarks/model_complexity.py [--no-extrap]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from speed import EXTRAP, extrap_model, extrap_predict  # noqa: E402

from exprsearch import search  # noqa: E402

DATA = HERE.parents[1] / "shared" / "datasets" / "cmdare_model_complexity.csv"


def error(predicted: np.ndarray, actual: np.ndarray) -> float:
    predicted = np.asarray(predicted, dtype=float)
    return float(100 * np.mean(np.abs(predicted / actual - 1))) if np.all(np.isfinite(predicted)) else float("inf")


def roofline(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """a + b·FLOPs fitted by relative least squares."""
    design = np.column_stack([np.ones(len(train)), train["model_flops"]]) / train["step_time_s"].to_numpy()[:, None]
    a, b = np.linalg.lstsq(design, np.ones(len(train)), rcond=None)[0]
    return a + b * test["model_flops"].to_numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-extrap", dest="extrap", action="store_false")
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"{DATA} is not there: this benchmark reads ../shared/datasets beside the project")
    extrap = args.extrap and EXTRAP.exists()
    if args.extrap and not extrap:
        print(f"Extra-P left out: {EXTRAP} is not there (python -m venv {EXTRAP.parent.parent} && "
              f"{EXTRAP.parent}/pip install extrap==4.2.5, or pass --no-extrap)", file=sys.stderr)
    frame = pd.read_csv(DATA)
    factors = ["gpu_tflops", "model_flops", "params"]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for model in sorted(frame["model"].unique()):
            train, test = frame[frame["model"] != model], frame[frame["model"] == model]
            actual = test["step_time_s"].to_numpy()
            law = search(train[[*factors, "step_time_s"]], "step_time_s", intrinsic=("model_flops", "params"),
                         resamples=0).law
            row = {"model": model, "flops": float(test["model_flops"].iloc[0]), "together": error(law.predict(test), actual),
                   "law": str(law.template)}
            alone, lines, extrap_p = np.empty(len(test)), np.empty(len(test)), np.empty(len(test))
            for gpu, rows_gpu in test.groupby("gpu"):
                at = test.index.get_indexer(rows_gpu.index)
                fitted = train[train["gpu"] == gpu]
                own = search(fitted[["model_flops", "step_time_s"]], "step_time_s", intrinsic=("model_flops",),
                             resamples=0).law
                alone[at] = own.predict(rows_gpu)
                lines[at] = roofline(fitted, rows_gpu)
                if extrap:
                    line, _ = extrap_model(EXTRAP, fitted.rename(columns={"model_flops": "x"}), ["x"],
                                           Path(folder) / f"{model}-{gpu}.txt", 1, target="step_time_s")
                    extrap_p[at] = extrap_predict(line, {"x": rows_gpu["model_flops"].to_numpy()})
            row.update(alone=error(alone, actual), roofline=error(lines, actual))
            if extrap:
                row["extrap"] = error(extrap_p, actual)
            rows.append(row)
            print(f"  {model}: exprsearch {row['together']:.1f} %, per GPU {row['alone']:.1f} %, "
                  f"roofline {row['roofline']:.1f} %", file=sys.stderr, flush=True)
    report(rows, extrap)


def report(rows: list[dict], extrap: bool) -> None:
    columns = ["together", "alone", "roofline"] + (["extrap"] if extrap else [])
    names = {"together": "exprsearch, both GPUs", "alone": "exprsearch per GPU, FLOPs", "roofline": "roofline per GPU",
             "extrap": "Extra-P per GPU, FLOPs"}
    print("| model left out | GFLOPs | " + " | ".join(f"{names[c]} %" for c in columns) + " | law (both GPUs) |")
    print("|---|---|" + "---|" * len(columns) + "---|")
    for r in sorted(rows, key=lambda r: r["flops"]):
        print(f"| {r['model']} | {r['flops'] / 1e9:.2f} | " + " | ".join(f"{r[c]:.1f}" for c in columns)
              + f" | `{r['law']}` |")
    print("\n| fitted by | median error % | mean error % | within 10 % | best of the four |")
    print("|---|---|---|---|---|")
    for c in columns:
        errors = [r[c] for r in rows]
        best = sum(min(columns, key=lambda k, r=r: r[k]) == c for r in rows)
        print(f"| {names[c]} | {statistics.median(errors):.1f} | {statistics.fmean(errors):.1f} | "
              f"{sum(e < 10 for e in errors)}/{len(rows)} | {best} |")


if __name__ == "__main__":
    main()
