import numpy as np

from exprsearch.linear import _bounded_quadratic, least_squares, solve_bounded


def test_bounded_solver_is_exact():
    rng = np.random.default_rng(0)
    size, m = 200, 4
    a = rng.standard_normal((size, 30, m))
    gram = np.einsum("snm,snk->smk", a, a) / 30 + 1e-6 * np.eye(m)
    rhs = rng.standard_normal((size, m))
    low = np.where(rng.random((size, m)) < 0.7, 0.0, -np.inf)
    high = np.where(rng.random((size, m)) < 0.2, 0.3, np.inf)
    fast = solve_bounded(gram, rhs, low, high)
    exact = _bounded_quadratic(gram, rhs, low, high)

    def cost(z):
        return np.einsum("sm,smk,sk->s", z, gram, z) - 2 * np.einsum("sm,sm->s", rhs, z)

    np.testing.assert_allclose(cost(fast), cost(exact), rtol=1e-9, atol=1e-12)
    assert (fast >= low - 1e-12).all() and (fast <= high + 1e-12).all()


def test_least_squares_is_unconstrained_inside_the_bounds_and_bounded_outside():
    gram = np.array([[[2.0, 0.0], [0.0, 1.0]]] * 2)
    rhs = np.array([[2.0, 1.0], [2.0, -1.0]])
    low = np.zeros((2, 2))
    high = np.full((2, 2), np.inf)
    z = least_squares(gram, rhs, low, high)
    np.testing.assert_allclose(z, [[1.0, 1.0], [1.0, 0.0]])
