"""The public multi-factor tables of ../shared/datasets (workers x model size, gpus x batch, ...):
each series fitted on its smaller worker counts and judged on the largest third, beside Amdahl
fitted per level of the other factor and Extra-P 4.2.5 (``multifactor.py --only public``)."""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from speed import EXTRAP, extrap_model, extrap_predict

from exprsearch import search
from exprsearch.levels import check_levels

SHARED = Path(__file__).resolve().parents[2] / "shared"


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
