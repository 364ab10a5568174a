"""The laws the data cannot tell from the chosen one: fits of the search (the front's and its
lowest-BIC alternatives) whose error is within what the noise allows. ``suggest`` plans runs to
tell them apart; law.json keeps the first of them so that ``predict`` can say where they part."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .fit import Fit
from .law import inlined
from .rank import Ranking, bic
from .vocabulary import to_text

ERROR = 1.5  # laws fitting within 1.5x the best law's error (or twice the noise) are plausible
NOISE_FLOOR = 0.005  # relative noise assumed at least this large (a measurement is never exact)


def plausible(chosen: Fit, pool: Sequence[Fit], n_rows: int, noise: float, count: int) -> list[Fit]:
    """``chosen`` first, then up to ``count`` other laws of ``pool``, lowest BIC first, whose
    relative RMS error is within twice the ``noise`` (at least NOISE_FLOOR) or within ERROR×
    the best one's: the data cannot tell them apart, so they count alike. One fit per form."""
    best = min(math.sqrt(f.mse) for f in pool)
    threshold = max(ERROR * best, 2 * max(noise, NOISE_FLOOR))
    seen, keep = {chosen.candidate.template}, [chosen]
    for f in sorted(pool, key=lambda f: bic(f, n_rows)):
        if len(keep) > count:
            break
        if math.sqrt(f.mse) <= threshold and f.candidate.template not in seen:  # sympy's structural equality
            seen.add(f.candidate.template)
            keep.append(f)
    return keep


SHOWN = 5  # the plausible laws law.json keeps beside the chosen one, for predict (5 print in about 2 ms)


def record(ranking: Ranking, alternatives: Sequence[Fit], n_rows: int) -> dict[str, list[str]]:
    """law.json's ``search.plausible``: up to SHOWN laws the data cannot tell from the chosen one,
    with their constants inlined, lowest BIC first (none where there are none)."""
    chosen = ranking.law.fit
    noise = ranking.noise.relative_sd or math.sqrt(chosen.mse)
    others = plausible(chosen, [s.fit for s in ranking.front] + list(alternatives), n_rows, noise, SHOWN)[1:]
    texts = [to_text(inlined(f.candidate.template, f.values)) for f in others]
    return {"plausible": texts} if texts else {}
