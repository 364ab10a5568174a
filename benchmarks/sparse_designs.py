"""One-factor laws measured on a few irregular worker counts, predicted far beyond them.

Users (and `suggest` over ``--vary p=1..64``) do not always measure doubling grids: the seven
one-factor laws of ``benchmarks/suggest.py`` are measured once each (2 % noise) at p = 1, 2, 4
and three to five more counts drawn from 5…64 (12 designs, the same for every law), and each law
found by ``exprsearch.search`` is judged at p = 512. Printed: the median error, the geometric
mean, and how many of the 84 predictions are more than 10 %, 50 % and 100 % off; beside it the
same laws measured on the doubling grid 1…64 (as many noise draws).

    python benchmarks/sparse_designs.py [--designs 12]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from suggest import CASES

from exprsearch import search

TARGET = 512.0


def designs(count: int, seed: int = 7) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        extra = rng.choice(np.arange(5, 65), size=rng.integers(3, 6), replace=False)
        out.append(sorted({1, 2, 4, *map(int, extra)}))
    return out


def errors(layouts: list[list[int]]) -> np.ndarray:
    found = []
    for case in (c for c in CASES if not c.two):
        for number, ps in enumerate(layouts):
            rng = np.random.default_rng(1000 + number)
            frame = pd.DataFrame({"p": ps, "time": [case.law(p, 0) * (1 + 0.02 * rng.standard_normal()) for p in ps]})
            law = search(frame, "time", resamples=0).law
            found.append(100 * abs(law.predict({"p": [TARGET]})[0] / case.law(TARGET, 0) - 1))
    return np.array(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", type=int, default=12)
    args = parser.parse_args()
    print("| design | predictions | median error at p = 512 % | geometric mean % | > 10 % | > 50 % | > 100 % |")
    print("|---|---|---|---|---|---|---|")
    for name, layouts in (("irregular (1, 2, 4 + 3-5 of 5..64)", designs(args.designs)),
                          ("doubling grid 1..64", [[1, 2, 4, 8, 16, 32, 64]] * args.designs)):
        e = errors(layouts)
        print(f"| {name} | {len(e)} | {np.median(e):.1f} | {np.exp(np.mean(np.log(e + 0.01))):.1f} | "
              f"{(e > 10).sum()} | {(e > 50).sum()} | {(e > 100).sum()} |")


if __name__ == "__main__":
    main()
