"""How far any choice on the search's fronts could go on the public multi-factor tables.

For each series of ``multifactor.py --only public`` (fitted on the smaller worker counts, judged on
the largest third), every law on the front the search found is judged on the held-out rows. The
medians per table are printed for the law exprsearch chose and for other rules of choice on the
same fronts: the front's law with the lowest held-out error in training, the one with the lowest
extended BIC, ``c0 + c1/p`` wherever it is on the front, and the best law of each front picked
with the answer in hand (no rule can do that; it bounds what a rule of choice could reach).
Beside them, Amdahl per level as ``multifactor.py`` fits it. The model factor is not searched as
levels here (the law alone), so CM-DARE's and LLM Foundry's medians are the "law alone" column.

    python benchmarks/public_fronts.py [--tables DLPerf] [--series]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from public_tables import SHARED, TABLES, amdahl_per_level, public_series

from exprsearch.law import Law, inlined
from exprsearch.search import search

RULES = ("chosen", "lowest held-out", "lowest eBIC", "c0 + c1/p", "best on the front (answer known)")


def errors(front, test) -> list[float]:
    """Each front law's mean relative error % on the held-out rows."""
    actual = test["time"].to_numpy()
    laws = [Law("time", ("p", "x"), inlined(s.fit.candidate.template, s.fit.values), {}, 0) for s in front]
    with np.errstate(all="ignore"):
        return [float(100 * np.mean(np.abs(law.predict(test) / actual - 1))) for law in laws]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="", help="only the tables whose name holds one of these (comma-separated)")
    parser.add_argument("--series", action="store_true", help="print every series' front")
    args = parser.parse_args()
    wanted = [w for w in args.tables.split(",") if w]
    print("| table | series | " + " | ".join(RULES) + " | Amdahl per level |")
    print("|---|---|" + "---|" * (len(RULES) + 1))
    for table in TABLES:
        if not (SHARED / table.file).exists() or (wanted and not any(w in table.name for w in wanted)):
            continue
        rows = []
        for name, train, test in public_series(table):
            test = test.reset_index(drop=True)
            found = search(train, "time", "default", resamples=0, intrinsic=("x",) if table.intrinsic else ())
            front, chosen = found.ranking.front, found.ranking.chosen
            judged = errors(front, test)
            held = [s.holdout_mape if s.holdout_mape is not None else np.inf for s in front]
            plain = [e for s, e in zip(front, judged) if str(s.fit.candidate.template) == "c0 + c1/p"]
            rows.append({"chosen": judged[chosen], "lowest held-out": judged[int(np.argmin(held))],
                         "lowest eBIC": judged[int(np.argmin([s.ebic for s in front]))],
                         "c0 + c1/p": plain[0] if plain else np.nan, "best on the front (answer known)": min(judged),
                         "amdahl": float(100 * np.mean(np.abs(amdahl_per_level(train, test) / test["time"].to_numpy() - 1)))})
            if args.series:
                print(f"\n{name}: Amdahl {rows[-1]['amdahl']:.1f} %")
                for k, (s, e) in enumerate(zip(front, judged)):
                    print(f"{'->' if k == chosen else '  '} {e:6.1f} %  training {s.mape:5.2f} %  "
                          f"held-out {held[k]:6.1f} %  eBIC {s.ebic:7.1f}  {s.fit.candidate.template}")
        cells = []
        for rule in RULES:
            values = [r[rule] for r in rows if np.isfinite(r[rule])]
            cells.append("—" if not values else f"{statistics.median(values):.1f}"
                         + (f" ({len(values)} on the front)" if len(values) < len(rows) else ""))
        print(f"| {table.name} | {len(rows)} | " + " | ".join(cells)
              + f" | {statistics.median(r['amdahl'] for r in rows):.1f} |")


if __name__ == "__main__":
    main()
