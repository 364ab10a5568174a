"""Does the law hang on the last bits of the data? The data sets: every synthetic law of the
multi-factor suite (benchmarks/multifactor.py); every law of the suggest suite
(benchmarks/suggest.py) on its full grid; its one-factor laws on the 12 irregular designs of
benchmarks/sparse_designs.py; and its two-factor laws on 5 campaign-like designs each (12 to 30
runs drawn from the grid, repeats allowed), the kind of data a ``suggest`` campaign holds. Each
is searched as measured, and again with its times multiplied by
1 + 1e-12·z (z standard normal; two draws). That is less than any measurement can tell and about
what another machine's or library's rounding changes, so the law must not change (the project's
determinism rule: the same data, grammar and seed give the same law, whatever runs it).

    python benchmarks/determinism.py [--nudge 1e-12] [--draws 2]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import multifactor  # noqa: E402
import sparse_designs  # noqa: E402
import suggest  # noqa: E402

from exprsearch import search  # noqa: E402


def datasets() -> list[tuple[str, pd.DataFrame]]:
    """The two suites' data, as their benchmarks measure them."""
    out = [(f"multi-factor: {case.name}", multifactor.measure(case, seed=100 + number))
           for number, case in enumerate(multifactor.CASES)]
    for number, case in enumerate(suggest.CASES):
        world = suggest.World(case, 100 + number)
        out.append((f"suggest grid: {case.name}", world.measure(suggest.grid(case))))
    for number, ps in enumerate(sparse_designs.designs(12)):
        for case in (c for c in suggest.CASES if not c.two):
            rng = np.random.default_rng(1000 + number)
            times = [case.law(p, 0) * (1 + 0.02 * rng.standard_normal()) for p in ps]
            out.append((f"irregular design {number}: {case.name}", pd.DataFrame({"p": ps, "time": times})))
    for number, case in enumerate(suggest.CASES):
        if not case.two:
            continue
        full = suggest.grid(case)
        for draw in range(5):
            rng = np.random.default_rng([number, draw])
            picked = [full[i] for i in rng.integers(0, len(full), size=int(rng.integers(12, 31)))]
            world = suggest.World(case, 100 + number + 1000 * draw)
            out.append((f"campaign-like design {draw}: {case.name}", world.measure(picked)))
    return out


def law_of(frame: pd.DataFrame) -> str:
    return str(search(frame, "time", resamples=0).law.template)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nudge", type=float, default=1e-12, help="relative size of the change to the times")
    parser.add_argument("--draws", type=int, default=2, help="nudged copies per data set")
    args = parser.parse_args()
    started = time.perf_counter()
    changed = []
    data = datasets()
    for name, frame in data:
        law = law_of(frame)
        others = []
        for draw in range(args.draws):
            z = np.random.default_rng([7, draw]).standard_normal(len(frame))
            others.append(law_of(frame.assign(time=frame["time"] * (1 + args.nudge * z))))
        moved = sorted(set(others) - {law})
        print(f"  {name}: {'changed to ' + '; '.join(moved) if moved else 'same'}", file=sys.stderr)
        if moved:
            changed.append((name, law, moved))
    print(f"\nThe law changed under a {args.nudge:g} relative nudge of the times on {len(changed)}/{len(data)} "
          f"data sets ({args.draws} draws each; {time.perf_counter() - started:.0f} s).")
    for name, law, moved in itertools.islice(changed, 20):
        print(f"- {name}: `{law}` -> {', '.join(f'`{m}`' for m in moved)}")


if __name__ == "__main__":
    main()
