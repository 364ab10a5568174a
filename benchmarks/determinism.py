"""Does the law hang on the last bits of the data? The data sets: every synthetic law of the
multi-factor suite (benchmarks/multifactor.py); every law of the suggest suite
(benchmarks/suggest.py) on its full grid; its one-factor laws on the 12 irregular designs of
benchmarks/sparse_designs.py; and its two-factor laws on 5 campaign-like designs each (12 to 30
runs drawn from the grid, repeats allowed), the kind of data a ``suggest`` campaign holds. Each
is searched as measured, and again with its times multiplied by
1 + 1e-12·z (z standard normal; two draws). That is less than any measurement can tell and about
what another machine's or library's rounding changes, so the law must not change (the project's
determinism rule: the same data, grammar and seed give the same law, whatever runs it).

With ``--advice``, the same for ``suggest``: on the data sets a campaign holds (the irregular
and campaign-like designs), the three runs it suggests next must not change either.

    python benchmarks/determinism.py [--nudge 1e-12] [--draws 2] [--advice]
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
import multifactor_suite  # noqa: E402
import sparse_designs  # noqa: E402
import suggest  # noqa: E402

from exprsearch import search  # noqa: E402
from exprsearch.search import SearchSettings  # noqa: E402
from exprsearch.suggest import advise  # noqa: E402


def datasets() -> list[tuple[str, pd.DataFrame]]:
    """The two suites' data, as their benchmarks measure them."""
    out = [(f"multi-factor: {case.name}", multifactor_suite.measure(case, seed=100 + number))
           for number, case in enumerate(multifactor_suite.CASES)]
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


CASES = {case.name: case for case in suggest.CASES}


def advice_of(name: str, frame: pd.DataFrame) -> str:
    """The law and the three runs ``suggest`` gives next on a data set of a campaign's kind, as
    benchmarks/suggest.py asks for them (its case's space and target, the cost p x time)."""
    case = CASES[name.split(": ", 1)[1]]
    result = search(frame, "time", settings=SearchSettings(resamples=50, near_front=False))
    advice = advise(result, case.space, case.at, count=3, devices="p", tolerance=0.05)
    runs = "; ".join(",".join(f"{k}={v:g}" for k, v in s.config.items()) for s in advice.suggestions)
    return f"{result.law.template} -> {runs or 'none'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nudge", type=float, default=1e-12, help="relative size of the change to the times")
    parser.add_argument("--draws", type=int, default=2, help="nudged copies per data set")
    parser.add_argument("--advice", action="store_true", help="the runs suggest gives next, not the law")
    args = parser.parse_args()
    started = time.perf_counter()
    changed = []
    data = datasets()
    if args.advice:
        data = [(name, frame) for name, frame in data if name.startswith(("irregular", "campaign-like"))]
    answer = advice_of if args.advice else (lambda name, frame: law_of(frame))
    for name, frame in data:
        law = answer(name, frame)
        others = []
        for draw in range(args.draws):
            z = np.random.default_rng([7, draw]).standard_normal(len(frame))
            others.append(answer(name, frame.assign(time=frame["time"] * (1 + args.nudge * z))))
        moved = sorted(set(others) - {law})
        print(f"  {name}: {'changed to ' + '; '.join(moved) if moved else 'same'}", file=sys.stderr)
        if moved:
            changed.append((name, law, moved))
    what = "The law and the runs suggest gives next" if args.advice else "The law"
    print(f"\n{what} changed under a {args.nudge:g} relative nudge of the times on {len(changed)}/{len(data)} "
          f"data sets ({args.draws} draws each; {time.perf_counter() - started:.0f} s).")
    for name, law, moved in itertools.islice(changed, 20):
        print(f"- {name}: `{law}` -> {', '.join(f'`{m}`' for m in moved)}")


if __name__ == "__main__":
    main()
