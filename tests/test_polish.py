import numpy as np
import pytest
from scipy.optimize import minimize

from exprsearch.fit import INVALID_COST
from exprsearch.polish import drive, polish_stencil, quasi_newton


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


def _valley(theta):
    """A curved, badly scaled valley (Rosenbrock's, shifted) of ``(2, S)`` points; minimum at (0.6, 0.36)."""
    x, y = theta[0], theta[1]
    return 1.0 + (0.6 - x) ** 2 + 20.0 * (y - x**2) ** 2


@pytest.mark.parametrize("start", [[0.9, 0.5], [0.2, 0.1], [0.65, 0.3]])
def test_the_quasi_newton_polish_finds_the_minimum_of_a_curved_valley(start):
    low, high = np.full(2, -3.0), np.full(2, 3.0)
    rounds = []

    def energy(theta):
        rounds.append(theta.shape[1])
        return _valley(theta)

    found = drive(quasi_newton(np.array(start), low, high, (high - low) / 64), energy)
    assert np.max(np.abs(found - [0.6, 0.36])) < 1e-3
    assert len(rounds) <= 15  # one population per iteration: it converges, not just creeps


def test_the_quasi_newton_polish_stays_in_bounds_and_never_returns_worse_than_its_start():
    low, high = np.array([-3.0, -3.0]), np.array([3.0, 0.2])  # the valley's minimum lies past y = 0.2
    found = drive(quasi_newton(np.array([0.3, 0.1]), low, high, (high - low) / 64), _valley)
    exact = minimize(lambda t: _valley(t), np.array([0.3, 0.1]), method="L-BFGS-B", bounds=list(zip(low, high))).x
    assert found[1] == 0.2 and abs(found[0] - exact[0]) < 1e-3
    start = np.array([1.0, 1.0])
    undefined = drive(quasi_newton(start, low - 1, high + 1, np.ones(2)),
                      lambda t: np.where((t[0] == 1.0) & (t[1] == 1.0), 2.0, INVALID_COST))
    assert undefined.tolist() == [1.0, 1.0]


def test_the_quasi_newton_polish_stops_once_its_model_says_little_is_left():
    """A bowl above a floor of noise (the cost of a good law): rounds that would only confirm the
    minimum are not run, and the minimum is still found."""
    def bowl(theta):
        x, y = theta[0] - 0.31, theta[1] + 0.27
        return 1e-3 + 0.05 * x**2 + 0.02 * y**2 + 0.01 * x * y + 0.003 * x**4

    for start in ([0.5, 0.1], [0.35, -0.2]):
        rounds = []

        def energy(theta, rounds=rounds):
            rounds.append(theta.shape[1])
            return bowl(theta)

        found = drive(quasi_newton(np.array(start), np.full(2, -3.0), np.full(2, 3.0), np.full(2, 6 / 64)), energy)
        assert np.max(np.abs(found - [0.31, -0.27])) < 1e-3
        assert len(rounds) <= 7  # 8 with the first criterion alone
