"""Extra-P's own input files, read by Extra-P 4.2.5 and by exprsearch: which each reads, and
whether both find the same series with the same points and mean values.

    python benchmarks/readers.py [--folder ../shared/extrap-format/extrap-tests-data]

Extra-P runs in its own venv ($TMPDIR/extrap-venv, as benchmarks/speed.py expects); without it
only exprsearch's column is printed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from speed import EXTRAP  # noqa: E402

DATA = HERE.parents[1] / "shared" / "extrap-format" / "extrap-tests-data"
FOLDERS = {"text": "extrap-text", "json": "extrap-json", "jsonlines": "extrap-jsonl", "talpas": "talpas",
           "input": None, "experiments": "extrap-experiment"}

# Reads each file with the Extra-P reader for its folder and prints, per file, the series'
# points and mean values (or the error).
EXTRAP_SCRIPT = r"""
import json, sys
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.fileio.file_reader.json_file_reader import JsonFileReader
from extrap.fileio.file_reader.talpas_file_reader import TalpasFileReader
from extrap.fileio.experiment_io import read_experiment
from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2
from extrap.fileio.file_reader.extrap3_experiment_reader import Extrap3ExperimentFileReader
readers = {"cube": CubeFileReader2().read_experiment,"extrap-text": TextFileReader().read_experiment, "extrap-json": JsonFileReader().read_experiment,
           "extrap-jsonl": JsonFileReader().read_experiment, "talpas": TalpasFileReader().read_experiment,
           "extrap-experiment": read_experiment, "extrap3": Extrap3ExperimentFileReader().read_experiment}
out = {}
for path, fmt in json.loads(sys.stdin.read()):
    try:
        e = readers[fmt](path)
        series = {}
        for (callpath, metric), ms in e.measurements.items():
            name = f"{callpath.name}:{metric.name}" if metric.name else callpath.name  # as exprsearch names it
            series[name] = sorted((list(m.coordinate), m.mean) for m in ms)
        out[path] = series
    except Exception as exc:
        out[path] = "error: " + (str(exc).splitlines() or [type(exc).__name__])[0][:90]
print(json.dumps(out))
"""


def files(folder: Path) -> list[tuple[Path, str]]:
    found = []
    for sub, fmt in FOLDERS.items():
        for path in sorted((folder / sub).rglob("*")) if (folder / sub).is_dir() else []:
            if path.is_file() and path.suffix.lower() in (".txt", ".json", ".jsonl", ".extra-p", ""):
                guess = fmt or {".jsonl": "extrap-jsonl", ".extra-p": "extrap-experiment", "": "extrap3",
                                ".txt": "extrap-text", ".json": "extrap-json"}[path.suffix.lower()]
                found.append((path, guess))
    cubes = folder / "cubeset"
    found += [(d, "cube") for d in sorted(cubes.iterdir()) if d.is_dir()] if cubes.is_dir() else []
    return found


def ours(path: Path, fmt: str) -> dict | str:
    from exprsearch.errors import ExprsearchError
    from exprsearch.readers import read_profile

    try:
        profile = read_profile(path, fmt)
    except ExprsearchError as exc:
        return "error: " + str(exc)[:90]
    return {name: sorted((list(point), float(np.mean(values))) for point, values in rows)
            for name, rows in profile.series.items()}


def same(a: dict, b: dict) -> bool:
    if set(a) != set(b):
        return False
    for name in a:
        if len(a[name]) != len(b[name]):
            return False
        for (pa, va), (pb, vb) in zip(a[name], b[name]):
            if not np.allclose(pa, pb) or not np.isclose(va, vb, rtol=1e-9):
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=DATA)
    args = parser.parse_args()
    todo = files(args.folder)
    theirs = {}
    if EXTRAP.exists():
        run = subprocess.run([str(EXTRAP), "-c", EXTRAP_SCRIPT], input=json.dumps([(str(p), f) for p, f in todo]),
                             capture_output=True, text=True, check=True)
        theirs = json.loads(run.stdout)
    print("| file | format | Extra-P | exprsearch | same series, points and means |")
    print("|---|---|---|---|---|")
    counts = {"extrap": 0, "ours": 0, "same": 0, "both": 0}
    for path, fmt in todo:
        mine, other = ours(path, fmt), theirs.get(str(path), "not run")
        read_mine, read_other = isinstance(mine, dict), isinstance(other, dict)
        counts["ours"] += read_mine
        counts["extrap"] += read_other
        agree = ""
        if read_mine and read_other:
            counts["both"] += 1
            agree = "yes" if same(mine, other) else "no"
            counts["same"] += agree == "yes"
        cell = lambda r: f"{len(r)} series" if isinstance(r, dict) else r.replace("|", "/")  # noqa: E731
        print(f"| {path.relative_to(args.folder)} | {fmt} | {cell(other)} | {cell(mine)} | {agree} |")
    print(f"\n{len(todo)} files: Extra-P reads {counts['extrap']}, exprsearch {counts['ours']}; of the "
          f"{counts['both']} both read, the same series, points and means in {counts['same']}.")


if __name__ == "__main__":
    sys.exit(main())
