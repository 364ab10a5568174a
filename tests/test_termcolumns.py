"""The measurements as the screening sees them: the noise floor and the misfit test on it."""

import numpy as np
import pytest

from exprsearch import data as _data
from exprsearch.compile import Compiler
from exprsearch.rank import f_survival
from exprsearch.termcolumns import MISFIT_P, TermColumns
from tests.conftest import measurements


def columns(frame) -> TermColumns:
    dataset = _data.from_frame(frame, "time", None)
    return TermColumns(Compiler(dataset.factors, dataset.X), dataset.y, {})


def test_a_sum_misses_by_the_f_test_of_its_residual_against_the_repetitions():
    """The threshold is the F-test's, so it follows the configurations and the repetitions' degrees
    of freedom: on 45 configurations measured three times a sum of three terms misses at 1.45 times
    the floor (p ≈ 0.03), where a fixed ratio of 1.5 let it pass (random law 27 of seed 24)."""
    screen = columns(measurements(lambda p, n, b: 1 + 0.01 * n / p + 20 / b,
                                  {"p": (1, 2, 4, 8, 16), "n": (1e3, 4e3, 16e3), "b": (16, 32, 64)}))
    configurations, floor = len(screen.configs), screen.floor
    assert configurations == 45 and screen.noise[1] == 90
    free = configurations - 4  # three terms and the constant

    def p_value(sse: float) -> float:
        return f_survival(free, 90, (sse / free) / (floor / configurations))

    assert screen.misses(1.45 * floor, 3) and p_value(1.45 * floor) < MISFIT_P
    assert not screen.misses(1.2 * floor, 3) and p_value(1.2 * floor) > MISFIT_P
    assert screen.misses(np.inf, 3)  # as the fixed ratio had it: inf > 1.5 × floor


@pytest.mark.parametrize("repeats, noise", [(1, 0.02), (3, 0.0)])
def test_without_repetitions_nothing_misses_and_without_noise_any_residual_does(repeats, noise):
    screen = columns(measurements(lambda p, n: 1 + 0.01 * n / p, {"p": (1, 2, 4, 8), "n": (1e3, 4e3)},
                                  noise=noise, repeats=repeats))
    if repeats == 1:
        assert screen.floor is None and not screen.misses(1e6, 2)
    else:
        assert screen.floor == 0 and screen.misses(1e-12, 2) and not screen.misses(0.0, 2)
    # no sum that can be a law (the beam's best is infinite) misses wherever the noise is known
    assert screen.misses(np.inf, 2) == (repeats > 1)
