"""Time real training of a small numpy network on this machine, for datasets/.

Trains a fully connected ReLU network (an input layer to ``width`` units, then ``layers``
width×width layers, then a 10-class output) by
mini-batch SGD for one epoch of ``samples`` random samples with batch size ``batch``, and records
the wall time of each epoch. Every configuration is repeated, in a shuffled order so that drift
of the machine does not line up with one factor.

    python benchmarks/measure_training.py --out datasets/numpy_mlp_epochs.csv
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import platform
import time

import numpy as np


def epoch_seconds(layers: int, width: int, batch: int, samples: int, rng: np.random.Generator) -> float:
    """Wall time of one SGD epoch (forward, backward, update) over ``samples`` samples."""
    features, classes = 32, 10
    sizes = [features, width] + [width] * layers + [classes]
    weights = [rng.standard_normal((a, b)) * np.sqrt(2 / a) for a, b in zip(sizes, sizes[1:])]
    x = rng.standard_normal((samples, features))
    y = rng.integers(0, classes, samples)
    start = time.perf_counter()
    for first in range(0, samples, batch):
        xb, yb = x[first:first + batch], y[first:first + batch]
        activations = [xb]
        for w in weights[:-1]:
            activations.append(np.maximum(activations[-1] @ w, 0))
        logits = activations[-1] @ weights[-1]
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        probs[np.arange(len(yb)), yb] -= 1
        grad = probs / len(yb)
        for i in range(len(weights) - 1, -1, -1):
            step = activations[i].T @ grad
            if i:
                grad = (grad @ weights[i].T) * (activations[i] > 0)
            weights[i] -= 0.01 * step
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    grid = list(itertools.product([1, 2, 4, 8], [64, 128, 256], [16, 32, 64, 128, 256], [16384]))
    runs = [config for config in grid for _ in range(args.repeats)]
    rng = np.random.default_rng(args.seed)
    rng.shuffle(runs)
    epoch_seconds(2, 64, 32, 1024, rng)  # warm-up, not recorded
    with open(args.out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["layers", "width", "batch", "samples", "epoch_s"])
        for layers, width, batch, samples in runs:
            seconds = epoch_seconds(layers, width, batch, samples, rng)
            writer.writerow([layers, width, batch, samples, f"{seconds:.6f}"])
    print(f"wrote {len(runs)} runs to {args.out} on {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, numpy {np.__version__}")


if __name__ == "__main__":
    main()
