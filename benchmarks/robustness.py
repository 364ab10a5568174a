"""Robustness: random inputs through every command, counting how each ended. A run that ends
other than with a law (exit 0) or one sentence (exit 2), or that raises, is a crash; the script
prints each crash's traceback and its input, kept under --keep.

Three kinds of input, each for --seconds:
- grids: random tables (1-3 factors at 1-5 values, partial grids, repeats, noise or none, a
  time or a rate; some with the spread and count of each row's runs, --spread) through run (some
  with --where), then predict (--at, and --data the table, some with --where), explain,
  optimize, suggest and plot on what run wrote;
- groups: random grouped tables (kernels x metrics, empty or non-positive cells) through
  run --by and profile, some with --where, and a group's law through predict --data the table;
- mangled: the bundled table and Extra-P's inputs (../shared) with bytes flipped, lines cut,
  repeated or re-separated, and non-ASCII inserted, through run, and half the laws it writes
  through predict --data the file before it was mangled.

    python benchmarks/robustness.py [--seconds 120] [--seed 1] [--kinds grids,groups,mangled]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from exprsearch.cli import app

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "extrap-format" / "extrap-tests-data" / "input"
BUNDLED = HERE.parent / "datasets" / "numpy_mlp_epochs.csv"


class Runner:
    """Invokes commands in-process and tallies how they ended."""

    def __init__(self, keep: Path) -> None:
        self.cli, self.keep = CliRunner(), keep
        self.tally: Counter = Counter()
        self.crashes = 0

    def __call__(self, args: list[str], source: Path | None = None):
        result = self.cli.invoke(app, [str(a) for a in args])
        self.tally[(args[0], result.exit_code)] += 1
        raised = result.exception is not None and not isinstance(result.exception, SystemExit)
        if result.exit_code not in (0, 2) or raised or (result.exit_code == 2 and "error" not in result.output.lower()):
            self.crashes += 1
            self.keep.mkdir(parents=True, exist_ok=True)  # made only when there is something to keep
            kept = self.keep / f"crash{self.crashes}{source.suffix if source else ''}"
            if source is not None:
                shutil.copy(source, kept)
            print(f"CRASH: exprsearch {' '.join(map(str, args))} (input kept as {kept})", file=sys.stderr)
            if result.exc_info:
                traceback.print_exception(*result.exc_info)
            print(result.output[-1500:], file=sys.stderr)
        return result


def grids(rng: np.random.Generator, run: Runner, folder: Path, n: int) -> None:
    k, repeats = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    levels = [sorted(set(rng.choice([1, 2, 3, 4, 8, 16, 32, 100, 1000], size=int(rng.integers(1, 6))).tolist()))
              for _ in range(k)]
    grid = np.array(np.meshgrid(*levels)).reshape(k, -1).T
    if rng.random() < 0.4:
        grid = grid[rng.random(len(grid)) < rng.uniform(0.3, 1)]
    grid = np.repeat(grid, repeats, axis=0)
    if len(grid) == 0:
        return
    names = ["p", "n", "b"][:k]
    frame = pd.DataFrame(grid, columns=names)
    law = 1 + sum(rng.uniform(0, 2) * frame[c] ** rng.choice([-1, 0.5, 1, 2]) for c in names)
    noisy = rng.random() < 0.7
    target = ["time", "samples_per_sec"][int(rng.integers(0, 2))]
    asked = f"1/{target}" if rng.random() < 0.2 else target  # now and then its reciprocal (--target 1/COLUMN)
    frame[target] = (np.asarray(law * (1 + 0.05 * rng.standard_normal(len(frame))), float) if noisy
                     else np.exp(rng.standard_normal(len(frame))))
    spread = []
    if rng.random() < 0.2:  # rows that each summarise runs: their spread and count, now and then wrong
        count = str(rng.choice(["runs", "count"]))
        frame["sd"] = frame[target].abs() * rng.uniform(0, 0.1, len(frame)) * (-1 if rng.random() < 0.05 else 1)
        frame[count] = rng.choice([1, 2, 3, 5, 10], len(frame)).astype(float)
        if rng.random() < 0.2:
            frame.loc[int(rng.integers(0, len(frame))), count] = rng.choice([0, 2.5, np.nan, -3])
        spread = ["--spread", f"sd,{count}"]
    data = folder / f"grid{n}.csv"
    frame.to_csv(data, index=False)
    grammar = ["default", "pmnf", "generic-dl", "data-parallel"][int(rng.integers(0, 4))]
    out = folder / f"grid{n}"
    measure = ["--measure", str(rng.choice(["mean", "median", "min", "max"]))] if rng.random() < 0.2 else []
    measure += ["--where", f"{rng.choice(names)}{rng.choice(['<=', '<', '>=', '!=', '='])}{rng.choice([1, 4, 16, 1000])}"] \
        if rng.random() < 0.2 else []
    if run(["run", data, "-t", asked, "-g", grammar, "--bootstrap", "20", "--out", out, *measure, *spread],
           data).exit_code:
        return
    at = ",".join(f"{c}={rng.choice([0, -1, 0.5, 1, 3, 1e6, 1e12, float(frame[c].max()) * 8]):g}" for c in names)
    run(["predict", out, "--at", at], data)
    run(["predict", out, "--at", at, "--json"], data)
    picked = ["--where", f"{rng.choice([*names, target, 'nope'])}{rng.choice(['>', '<=', '=', '!='])}"
              f"{rng.choice([1, 4, 16, 1000])}"] if rng.random() < 0.5 else []
    run(["predict", out, "--data", data, *picked, *(["--json"] if rng.random() < 0.3 else [])], data)
    follow = names[int(rng.integers(0, k))]
    fixed = ",".join(f"{c}={float(frame[c].max()):g}" for c in names if c != follow)
    run(["explain", out, "--vary", follow, *(["--fix", fixed] if fixed else [])], data)
    run(["optimize", out, *(["--price", "2", "--devices", "p"] if rng.random() < 0.5 else [])], data)
    target_at = ",".join(f"{c}={float(frame[c].max()) * 4:g}" for c in names)
    run(["suggest", data, "-t", asked, "-g", grammar, "--at", target_at, "--vary",
         f"p=1..{int(max(2, frame['p'].max() * 2))}", "--bootstrap", "20", "--count", "2", "--devices", "p"], data)
    if rng.random() < 0.1:
        run(["plot", out, data, "--out", folder / f"plots{n}"], data)


def groups(rng: np.random.Generator, run: Runner, folder: Path, n: int) -> None:
    rows, k = [], int(rng.integers(1, 3))
    for g in range(int(rng.integers(1, 6))):
        levels = [sorted(set(rng.choice([1, 2, 4, 8, 16, 32], size=int(rng.integers(1, 6))).tolist()))
                  for _ in range(k)]
        grid = np.repeat(np.array(np.meshgrid(*levels)).reshape(k, -1).T, int(rng.integers(1, 4)), axis=0)
        scale = rng.uniform(0.5, 3)
        for row in grid:
            value = scale * (1 + sum(rng.uniform(0, 2) * v ** rng.choice([-1, 0.5, 1]) for v in row))
            rows.append({"kernel": f"k{g}" if rng.random() > 0.02 else "", "metric": rng.choice(["time", "bytes"]),
                         **dict(zip(["p", "n"], row)), "value": value * (1 + 0.03 * rng.standard_normal())})
    frame = pd.DataFrame(rows)
    if rng.random() < 0.1:
        frame.loc[frame.index[int(rng.integers(0, len(frame)))], "value"] = rng.choice([np.nan, 0.0, -1.0])
    data = folder / f"groups{n}.csv"
    frame.to_csv(data, index=False)
    grammar = ["default", "pmnf", "data-parallel"][int(rng.integers(0, 3))]
    drop = ["--drop-missing"] if rng.random() < 0.5 else []
    measure = ["--measure", str(rng.choice(["median", "min"]))] if rng.random() < 0.2 else []
    split = ["--segments", str(rng.choice(["p", "n"]))] if rng.random() < 0.2 else []
    drop += ["--where", str(rng.choice(["metric=time", "kernel!=k0", "p<=8", "n>2", "kernel=k1,k3", "value<5",
                                        "metric=Time"]))] if rng.random() < 0.3 else []
    run(["profile", data, "-g", grammar, "--out", folder / f"profile{n}", "--jobs", "1", *drop, *measure, *split],
        data)
    if run(["run", data, "-t", "value", "--by", "kernel,metric", "-g", grammar, "--bootstrap", "0",
            "--out", folder / f"by{n}", *drop], data).exit_code:
        return
    laws = sorted((folder / f"by{n}").glob("**/law.json"))
    if laws:  # one group's law on the whole table, at times with its group's column picked otherwise
        picked = ["--where", str(rng.choice(["kernel=k1", "metric=bytes", "p>4", "kernel=nope"]))] \
            if rng.random() < 0.5 else []
        run(["predict", laws[int(rng.integers(0, len(laws)))], "--data", data, *picked], data)


def mangled(rng: np.random.Generator, run: Runner, folder: Path, n: int) -> None:
    sources = [BUNDLED] + sorted(SHARED.glob("*.txt"))[:12] + sorted(SHARED.glob("*.jsonl"))[:3] \
        + sorted(SHARED.glob("*.json"))[:3]
    source = sources[int(rng.integers(0, len(sources)))]
    text = bytearray(source.read_bytes())
    pick = random.Random(int(rng.integers(0, 2**31)))
    for _ in range(pick.randint(1, 4)):
        op, i = pick.randrange(8), pick.randrange(max(1, len(text)))
        if op == 0 and text:
            text[i] = pick.randrange(256)
        elif op == 1:
            text = text[:i]
        elif op == 2:
            text[i:i] = pick.choice([b",", b"\n", b'"', b";", b"\t", b"nan", b"-1", b"1e400", b"\xef\xbb\xbf",
                                     b"\r\n", b" ", b"0", b"{", b"]"])
        elif op == 3 and text:
            del text[i:i + pick.randint(1, 20)]
        elif op == 4:
            text = text.replace(b",", b";") if pick.random() < 0.5 else text.replace(b"\n", b"\r\n")
        elif op == 5:
            lines = text.split(b"\n")
            lines.insert(pick.randrange(len(lines)), lines[pick.randrange(len(lines))])
            text = bytearray(b"\n".join(lines))
        elif op == 6:
            text = bytearray(bytes(text).upper())
        else:
            text[i:i] = "µ€\u00a0".encode()
    data = folder / f"mangled{n}{source.suffix}"
    data.write_bytes(bytes(text))
    target = ["--target", pick.choice(["epoch_s", "EPOCH_S"])] if source == BUNDLED else []
    if run(["run", data, "--bootstrap", "0", "--out", folder / f"mangled{n}", *target], data).exit_code:
        return
    laws = sorted((folder / f"mangled{n}").glob("**/law.json"))
    if laws and pick.random() < 0.5:  # a law of the mangled file predicting the file it came from
        run(["predict", laws[pick.randrange(len(laws))], "--data", source], data)


def segmented(rng: np.random.Generator, run: Runner, folder: Path, n: int) -> None:
    """A series along p (4-12 values, some with a change of regime), and a second factor at times,
    through run --segments and the commands that read a segment's law."""
    ps = np.sort(rng.choice(np.arange(1, 65), size=int(rng.integers(4, 13)), replace=False)).astype(float)
    frame = pd.DataFrame({"p": np.repeat(ps, int(rng.integers(1, 4)))})
    if rng.random() < 0.3:
        frame = pd.concat([frame.assign(n=v) for v in rng.choice([100, 1000, 4000], size=2, replace=False)])
    change = float(rng.choice(ps))
    below = rng.uniform(0.5, 3) + rng.uniform(1, 50) / frame["p"]
    above = rng.uniform(0.5, 30) + rng.uniform(0, 1) * frame["p"] ** rng.choice([0.5, 1, 2])
    law = np.where(frame["p"] <= change, below, above) if rng.random() < 0.6 else below
    frame["time"] = np.asarray(law, float) * (1 + 0.03 * rng.standard_normal(len(frame))) * frame.get("n", 1) ** 0.5
    data = folder / f"segmented{n}.csv"
    frame.to_csv(data, index=False)
    factor = str(rng.choice(["p", "p", "p", "n", "nope"]))
    out = folder / f"segmented{n}"
    if run(["run", data, "-t", "time", "--segments", factor, "--bootstrap", "20", "--out", out], data).exit_code:
        return
    laws = sorted(out.glob("**/law.json"))
    law = laws[int(rng.integers(0, len(laws)))]
    at = ",".join(f"{c}={float(frame[c].max()) * 2:g}" for c in frame.columns if c != "time")
    run(["predict", law, "--at", at], data)
    # the folder of all segments: each configuration by its segment's law (or a sentence naming the folders)
    points = [",".join(f"{c}={float(rng.choice(frame[c].unique())) * float(rng.choice([0.5, 1, 1.5, 3])):g}"
                       for c in frame.columns if c != "time") for _ in range(int(rng.integers(1, 5)))]
    run(["predict", out, *[a for point in points for a in ("--at", point)], *(["--json"] if rng.random() < 0.3 else [])],
        data)
    run(["explain", law, "--vary", "p", *(["--fix", f"n={float(frame['n'].max()):g}"] if "n" in frame else [])],
        data)
    if rng.random() < 0.2:
        run(["plot", law, data, "--out", folder / f"segplots{n}"], data)
    if rng.random() < 0.2:  # the folder of all segments: both laws along the factor
        run(["plot", out, "--out", folder / f"segfolder{n}"], data)
    if rng.random() < 0.3:  # and each law explained over its side of the change
        run(["explain", out, *(["--fix", f"n={float(frame['n'].max()):g}"] if "n" in frame else []),
             *(["--json"] if rng.random() < 0.3 else [])], data)


KINDS = {"grids": grids, "groups": groups, "mangled": mangled, "segmented": segmented}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120, help="time for each kind of input")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--keep", type=Path, default=Path("robustness-crashes"), help="folder for crashing inputs")
    args = parser.parse_args()
    run = Runner(args.keep)
    counts = {}
    for kind in args.kinds.split(","):
        rng = np.random.default_rng([args.seed, list(KINDS).index(kind)])
        start, n = time.perf_counter(), 0
        with tempfile.TemporaryDirectory() as folder:
            while time.perf_counter() - start < args.seconds:
                n += 1
                KINDS[kind](rng, run, Path(folder), n)
        counts[kind] = n
        print(f"  {kind}: {n} inputs", file=sys.stderr)
    print("| command | ended with a law or a result (0) | with one sentence (2) | crashed |")
    print("|---|---|---|---|")
    for command in sorted({c for c, _ in run.tally}):
        done, said = run.tally[(command, 0)], run.tally[(command, 2)]
        other = sum(v for (c, code), v in run.tally.items() if c == command and code not in (0, 2))
        print(f"| {command} | {done} | {said} | {other} |")
    inputs = ", ".join(f"{n:,} {kind}" for kind, n in counts.items())
    print(f"\nInputs: {inputs}; crashes: {run.crashes} (seed {args.seed}, {args.seconds:g} s each).")


if __name__ == "__main__":
    main()
