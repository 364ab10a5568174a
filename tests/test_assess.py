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


def test_a_law_whose_refit_leaves_its_exponents_free_fails_the_check():
    """Held out p >= 16, four configurations remain: five constants with an exponent fit them
    exactly along a range of exponents, so the polish keeps the full fit's, which the held-out
    rows chose; four constants are still checked."""
    y = (2 + 40 / P**0.8 + 0.01 * P**1.5) * (1 + 0.01 * np.cos(7 * P))
    configurations = np.unique(P, return_inverse=True)[1]
    laws = [compiled(text) for text in ("c + c/p**k + c*p + c*p**2", "c + c/p**k + c*p")]
    fits = [fit(law, y) for law in laws]
    top = P >= 16
    five, four = holdouts(laws, y, fits, [top], configurations=configurations)
    assert math.isinf(five) and math.isfinite(four)
    (unsaid,) = holdouts(laws[:1], y, fits[:1], [top])  # without the configurations, as before
    assert math.isfinite(unsaid)


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


def test_repeated_runs_do_not_pin_down_a_term_against_a_misfit_they_share():
    """Where a law misses its configurations by more than their runs' noise, copying every run
    ten times had made its t-values √10 larger, as though each copy were new evidence against
    the misfit; against the configurations' misfit they stay those of the configurations."""
    from exprsearch.assess import t_values

    grid = np.column_stack([P[:6], np.full(6, 1000.0)])
    truth = 2 + 40 / grid[:, 0] + 0.4 * np.log2(grid[:, 0]) ** 2  # the law below leaves out the log term
    rng = np.random.default_rng(0)
    copies = 10
    X = np.repeat(grid, copies, axis=0)
    y = np.repeat(truth, copies) * (1 + 0.001 * rng.standard_normal(6 * copies))
    law = Compiler(("p", "n"), X).compile(candidate("c + c/p"))
    fitted = fit(law, y)
    configurations = np.repeat(np.arange(6), copies)
    once = Compiler(("p", "n"), grid).compile(candidate("c + c/p"))
    alone = t_values(once, y[::copies], fit(once, y[::copies]))
    pooled = t_values(law, y, fitted)
    against = t_values(law, y, fitted, configurations=configurations)
    assert pooled == pytest.approx(alone * math.sqrt((6 * copies - 2) / 4), rel=0.05)  # the copies' inflation
    assert against == pytest.approx(alone, rel=0.05)
