"""Extra-P 4.2.5's measurement point advisor (its ``mpa`` package), driven from its Python API in
Extra-P's own venv: given the measurements so far, the next point it suggests and how many
repetitions of it. ``benchmarks/suggest.py`` follows it as it follows ``exprsearch suggest``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
from speed import EXTRAP

ADVISOR = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator
from extrap.mpa.measurement_point_advisor import MeasurementPointAdvisor
path, series, budget = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
reader = TextFileReader()
reader.keep_values = True
experiment = reader.read_experiment(path)
generator = ModelGenerator(experiment)
generator.model_all()
advisor = MeasurementPointAdvisor(budget, 0, experiment, True, series, False, 1, generator)
points, reps = advisor.suggest_points([], experiment.metrics[0])
print(json.dumps({"points": [list(map(float, c)) for c in points], "reps": reps}))
"""


def available() -> bool:
    """Whether Extra-P's venv is where the benchmarks install it (README: Extra-P beside us)."""
    return EXTRAP.exists()


def next_point(frame: pd.DataFrame, space: dict[str, np.ndarray], budget: float,
               folder: Path) -> tuple[tuple[float, ...], int] | None:
    """The configuration the advisor asks for next among ``space`` (the values of each factor, as
    the frame's columns besides ``time``) and its repetitions, within ``budget`` left; None when
    it suggests nothing or fails. The frame is written in Extra-P's text format to ``folder``."""
    names = list(space)
    grouped = frame.groupby(names).time.apply(list)
    lines = ["PARAMETER " + " ".join(names),
             "POINTS " + " ".join("( " + " ".join(f"{v:g}" for v in np.atleast_1d(k)) + " )" for k in grouped.index),
             "REGION r", "METRIC time"] + ["DATA " + " ".join(f"{v:.10g}" for v in values) for values in grouped]
    path = folder / "advisor.txt"
    path.write_text("\n".join(lines) + "\n")
    series = [",".join(f"{v:g}" for v in space[k]) for k in names]
    run = subprocess.run([str(EXTRAP), "-c", ADVISOR, str(path), json.dumps(series), str(budget)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return None
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    if not answer["points"]:
        return None
    return tuple(answer["points"][0]), (max(1, int(answer["reps"][0])) if answer["reps"] else 1)
