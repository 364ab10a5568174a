"""Time real hybrid-parallel training steps of a numpy network, with processes as devices.

A network of ``L`` width×width ReLU layers is split layer-wise into ``s`` pipeline stages, each a
process holding ``L/s`` layers; ``d`` such pipelines are data-parallel replicas. One training step
pushes ``m`` micro-batches of ``b`` samples through each pipeline (all forward passes, GPipe-style,
then all backward passes in reverse, each stage passing activations or gradients to its
neighbour through a pipe as soon as it has them), then every stage all-reduces its layers'
gradients with the same stage of the other replicas (through pipes, summed) and updates them.
The step's wall time is measured from the start signal to the last stage's report. Every
configuration is repeated, in a shuffled order so that drift of the machine does not line up with
one factor. On this 2-core machine d·s is at most 2, so that every device is a core.

    python benchmarks/measure_pipeline.py --out datasets/numpy_pipeline_steps.csv
"""

from __future__ import annotations

import argparse
import csv
import itertools
import multiprocessing as mp
import os
import platform
import time

import numpy as np

WIDTH = 256


def stage(rank: tuple[int, int], layers: int, m: int, b: int, links: dict, steps: int) -> None:
    """One stage of one replica: its layers, forward and backward over m micro-batches, then the
    all-reduce of its gradients with the same stage of the other replicas."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")  # one device, one core
    replica, position = rank
    rng = np.random.default_rng(1000 * replica + position)
    weights = [rng.standard_normal((WIDTH, WIDTH)) * np.sqrt(2 / WIDTH) for _ in range(layers)]
    previous, following, start, done = links["prev"], links["next"], links["start"], links["done"]
    peers = links["peers"]
    for _ in range(steps):
        start.recv()
        saved = []
        for _ in range(m):  # forward: all micro-batches
            x = rng.standard_normal((b, WIDTH)) if previous is None else previous.recv()
            inputs = []
            for w in weights:
                inputs.append(x)
                x = np.maximum(x @ w, 0.0)
            saved.append((inputs, x))
            if following is not None:
                following.send(x)
        grads = [np.zeros_like(w) for w in weights]
        for inputs, out in reversed(saved):  # backward, last micro-batch first
            g = np.ones_like(out) / b if following is None else following.recv()
            for i in reversed(range(len(weights))):
                g = g * (inputs[i + 1] > 0) if i + 1 < len(inputs) else g * (out > 0)
                grads[i] += inputs[i].T @ g
                g = g @ weights[i].T
            if previous is not None:
                previous.send(g)
        mine = grads
        for other, peer in peers:  # all-reduce with the same stage of every other replica, pairwise
            if replica < other:  # one side sends first, the other receives first: no deadlock
                peer.send(mine)
                theirs = peer.recv()
            else:
                theirs = peer.recv()
                peer.send(mine)
            grads = [a + c for a, c in zip(grads, theirs)]
        for w, g in zip(weights, grads):
            w -= 1e-3 * g / (len(peers) + 1)
        done.send(True)


def step_seconds(d: int, s: int, m: int, layers: int, b: int, steps: int) -> list[float]:
    """Wall time of ``steps`` training steps of a d × s device grid (after one warm-up step)."""
    per_stage = layers // s
    chain = {(r, k): mp.Pipe() for r in range(d) for k in range(s - 1)}  # stage k -> k + 1 of replica r
    across = {(k, r, q): mp.Pipe() for k in range(s) for r in range(d) for q in range(r + 1, d)}
    control = {(r, k): (mp.Pipe(), mp.Pipe()) for r in range(d) for k in range(s)}
    workers = []
    for r, k in itertools.product(range(d), range(s)):
        peers = [(q, across[(k, min(r, q), max(r, q))][0 if r < q else 1]) for q in range(d) if q != r]
        links = {"prev": chain[(r, k - 1)][1] if k > 0 else None, "next": chain[(r, k)][0] if k < s - 1 else None,
                 "start": control[(r, k)][0][1], "done": control[(r, k)][1][0], "peers": peers}
        process = mp.Process(target=stage, args=((r, k), per_stage, m, b, links, steps + 1))
        process.start()
        workers.append(process)
    times = []
    for i in range(steps + 1):
        begin = time.perf_counter()
        for (start, _), _done in control.values():
            start.send(True)
        for _, (_, done) in control.values():
            done.recv()
        if i:  # the first step warms up
            times.append(time.perf_counter() - begin)
    for process in workers:
        process.join()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64, help="samples per micro-batch")
    args = parser.parse_args()
    grid = [(d, s, m, L) for (d, s) in ((1, 1), (1, 2), (2, 1)) for m in (1, 2, 4, 8) for L in (4, 8, 16)]
    order = [c for c in grid for _ in range(args.repeats)]
    np.random.default_rng(0).shuffle(order)
    rows = []
    for d, s, m, L in order:
        seconds = float(np.median(step_seconds(d, s, m, L, args.batch, steps=3)))
        rows.append({"d": d, "s": s, "m": m, "L": L, "b": args.batch, "step_s": round(seconds, 6)})
        print(f"d={d} s={s} m={m} L={L}: {seconds:.4f} s", flush=True)
    with open(args.out, "w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(sorted(rows, key=lambda r: (r["d"], r["s"], r["m"], r["L"])))
    print(f"wrote {len(rows)} rows to {args.out} ({platform.machine()}, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
