import math

import numpy as np
import pytest

from exprsearch.assess import holdouts, predictions
from exprsearch.compile import Compiler
from exprsearch.fit import fit
from tests.test_fit import candidate

P = np.array([1, 2, 4, 8, 16, 32, 1, 2, 4, 8, 16, 32], dtype=float)


def compiled(text: str):
    """A law over p alone, compiled on ``P`` (test_fit's grammar: n fixed, exponents 0.25-3)."""
    return Compiler(("p", "n"), np.column_stack([P, np.full(len(P), 1000.0)])).compile(candidate(text))


def test_held_out_rows_have_no_say_in_the_exponents():
    # the largest p runs 30 % slow: fitted with it, the exponent bends towards it
    y = (2 + 40 / P**0.8) * np.where(P == 32, 1.3, 1.0) * (1 + 0.01 * np.cos(7 * P))
    law = compiled("c + c/p**k")
    full = fit(law, y)
    top = P == 32
    (held,) = holdouts([law], y, [full], [top])
    others = fit(law, y, rows=np.flatnonzero(~top), start=full, local=True)  # one by one, not in lockstep
    assert held == pytest.approx(np.mean(np.abs(predictions(law, others)[top] / y[top] - 1)), rel=1e-4)
    kept = fit(law, y, rows=np.flatnonzero(~top), start=full, refine=False)  # exponent from all rows
    assert others.values["k0"] != pytest.approx(full.values["k0"], abs=0.01)
    assert held > np.mean(np.abs(predictions(law, kept)[top] / y[top] - 1))


def test_a_term_that_only_the_held_out_rows_support_fails_the_check():
    # below p = 32 the times bend down (a p³ term would be negative, so the refit drops it);
    # at p = 32 they jump, which the full fit explains with c·p³
    y = np.where(P == 32, 3.0, 1 + 10 / P - 1e-4 * P**3)
    law = compiled("c + c/p + c*p**3")
    full = fit(law, y)
    assert full.ok and full.values["c2"] > 0
    simpler = compiled("c + c/p")
    held, plain = holdouts([law, simpler], y, [full, fit(simpler, y)], [P == 32])
    assert math.isinf(held) and math.isfinite(plain)


def test_without_rows_to_hold_out_there_is_no_check():
    law = compiled("c + c/p")
    y = 2 + 40 / P
    assert holdouts([law], y, [fit(law, y)], []) == [None]


def test_held_out_refits_on_pooled_repeats_are_those_on_every_row():
    """Given the compiler, the rows kept are pooled per configuration for the polish
    (exprsearch.pooled): the same refits, so the same held-out errors, as on every row."""
    rng = np.random.default_rng(4)
    p = np.repeat(np.array([1, 2, 4, 8, 16, 32], dtype=float), [1, 6, 2, 5, 3, 4])  # repeats differ
    y = (2 + 40 / p**0.8) * (1 + 0.05 * rng.standard_normal(len(p)))
    compiler = Compiler(("p", "n"), np.column_stack([p, np.full(len(p), 1000.0)]))
    law = compiler.compile(candidate("c + c/p**k"))
    full = fit(law, y)
    tops = [p == 32]
    (plain,) = holdouts([law], y, [full], tops)
    (pooled,) = holdouts([law], y, [full], tops, compiler=compiler)
    assert pooled == pytest.approx(plain, rel=1e-4)
