import numpy as np
import pytest
from scipy.optimize import minimize

from exprsearch.fit import INVALID_COST
from exprsearch.polish import polish_stencil


@pytest.mark.parametrize("minimum", [[0.37], [1.21, -0.44]])
def test_the_local_polish_reaches_a_minimum_within_a_grid_step(minimum):
    target = np.array(minimum)
    calls = []

    def energy(theta):  # (q, S) → (S,): a tilted, not quite quadratic bowl
        calls.append(theta.shape[1])
        d = theta - target[:, None]
        return 1.0 + np.sum(d**2 * np.arange(1, len(target) + 1)[:, None], axis=0) + 0.3 * d[0]**4 + 0.2 * d[0] * d[-1]

    step = np.full(len(target), 0.1)
    found = polish_stencil(energy, target + 0.7 * step, np.full(len(target), -3.0), np.full(len(target), 3.0), step)
    rounds = len(calls)
    exact = minimize(lambda t: energy(t[:, None])[0], target, method="Nelder-Mead", options={"xatol": 1e-10}).x
    assert np.max(np.abs(found - exact)) < 1e-4 and rounds <= 4


def test_the_local_polish_stays_in_bounds_and_never_returns_worse_than_its_start():
    low, high, step = np.array([-3.0]), np.array([3.0]), np.array([0.1])
    at_bound = polish_stencil(lambda t: (t[0] - 5.0) ** 2, np.array([2.95]), low, high, step)
    assert at_bound.tolist() == [3.0]
    start = np.array([1.0])
    undefined = polish_stencil(lambda t: np.where(t[0] == 1.0, 2.0, INVALID_COST), start, low, high, step)
    assert undefined.tolist() == [1.0]
