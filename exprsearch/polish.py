"""Refining nonlinear constants (fitted exponents) from a start near their minimum.

A lone exponent starts from the best value of its batched grid profile (:mod:`exprsearch.batch`)
and is polished by Newton steps on a quadratic stencil, one vectorised cost call per round;
several exponents from the screening's guesses by a projected BFGS that costs a whole line
search per round; both run many candidates in lockstep (:mod:`exprsearch.lockstep`). A DE
search's best, and robust fits, are polished by L-BFGS-B.
Each function takes the cost of a population (``(q, S)`` values → ``(S,)`` costs).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Generator

import numpy as np

Steps = Generator[np.ndarray, np.ndarray, np.ndarray]  # yields populations (q, S), is sent their costs


def polish_stencil(energy, start: np.ndarray, low: np.ndarray, high: np.ndarray, step: np.ndarray,
                  rounds: int = 12) -> np.ndarray:
    """Refine nonlinear constants from a start near their minimum by Newton steps on a quadratic
    fitted to a 3×…×3 stencil, one call of the population ``energy`` per round (a quasi-Newton
    run costs more calls and several times as much overhead here); see :func:`stencil`."""
    return drive(stencil(start, low, high, step, rounds), energy)


def drive(steps: Steps, energy) -> np.ndarray:
    """Run one search of :func:`stencil`'s kind, answering each population it asks for."""
    return lockstep([steps], lambda _, populations: [energy(populations[0])])[0]


def lockstep(searches: list[Steps], energies) -> list[np.ndarray]:
    """Run many searches together: each round, ``energies`` receives the indices of the searches
    still running and the populations they ask for (``(q, S)`` arrays) and returns their costs in
    one call, so that the small linear algebra of many candidates is done in a few large batches."""
    results: list[np.ndarray | None] = [None] * len(searches)
    asked: dict[int, np.ndarray] = {}
    for i, steps in enumerate(searches):
        try:
            asked[i] = next(steps)
        except StopIteration as stop:
            results[i] = stop.value
    while asked:
        running = list(asked)
        costs = energies(running, [asked[i] for i in running])
        asked = {}
        for i, cost in zip(running, costs):
            try:
                asked[i] = searches[i].send(cost)
            except StopIteration as stop:
                results[i] = stop.value
    return results  # type: ignore[return-value]


def stencil(start: np.ndarray, low: np.ndarray, high: np.ndarray, step: np.ndarray, rounds: int = 12) -> Steps:
    """The stencil polish as a search that yields each population ``(q, S)`` it needs costed and
    is sent their costs ``(S,)``; it returns the best point evaluated.
    The stencil starts at half a grid ``step``; while the lowest cost lies on its edge it moves
    there and doubles, and once the model is convex with its minimum near, it jumps there and
    shrinks.
    Used for a lone exponent, whose start is the best of its batched grid profile: over 745 such
    polishes (synthetic and public tables) it ended within 0.1 % of L-BFGS-B's cost in all but
    4 and lower in 115. From the screening's guesses of two exponents it ended more than 0.1 %
    above L-BFGS-B in 469 of 1,056, so those have :func:`quasi_newton`."""
    q = len(start)
    offsets = _stencil(q)[0]
    middle = len(offsets) // 2
    center, width = start.astype(float), step / 2
    best, best_cost, evaluated = center, np.inf, True
    for _ in range(rounds):
        points = np.clip(center + offsets * width, low, high)
        costs = yield points.T
        k = int(np.argmin(costs))
        if costs[k] < best_cost:
            best, best_cost = points[k], float(costs[k])
        move = _newton_step(costs, q) if k == middle and np.isfinite(costs).all() else None
        if move is None:
            if k == middle or np.array_equal(points[k], center):
                break  # no model and nowhere better to go (at a bound, or undefined around it)
            center, width, evaluated = points[k], width * 2, True  # walk towards the minimum
            continue
        target = np.clip(center + move * width, low, high)
        if np.all(np.abs(target - center) < 1e-3 * step):
            break
        center, width, evaluated = target, width / 4, False
    if not evaluated and float((yield center[:, None])[0]) < best_cost:
        best = center
    return np.asarray(best, dtype=float)


LOOSE = 1e-5  # see quasi_newton
LINE = np.array([4.0, 2.0, 1.0, 0.5, 0.25, 0.1])  # step lengths tried at once along each direction


def quasi_newton(start: np.ndarray, low: np.ndarray, high: np.ndarray, step: np.ndarray,
                 rounds: int = 40, rtol: float = 1e-7) -> Steps:
    """Projected BFGS inside the bounds as a search of :func:`stencil`'s kind, one population per
    iteration: each round costs several step lengths along the direction together with a
    forward-difference gradient at each, so the next direction is known whichever length wins.
    Used for several exponents started near their minimum (the screening's refined grid), where
    it needs 5-10 rounds; L-BFGS-B asks for one point at a time and cannot be run in lockstep.
    It stops when a round lowers the cost by less than ``rtol`` of it, or by less than
    :data:`LOOSE` of it where its curvature model also says less than that is left to gain (the
    rounds that only confirm a minimum: 11 and 19 % of the rounds on two of the suite's tables, the same
    laws); returns the best point."""
    q = len(start)
    x = np.clip(start.astype(float), low, high)
    inverse = None  # the BFGS inverse Hessian; None until a step has measured a curvature
    direction = np.zeros(q)
    lengths = np.array([0.0])
    best, best_cost, gradient = x, np.inf, np.zeros(q)
    for _ in range(rounds):
        points = np.clip(x + lengths[:, None] * direction, low, high)
        difference = 1e-7 * np.maximum(1.0, np.abs(points))
        difference = np.where(points + difference > high, -difference, difference)
        population = np.concatenate([points[:, None, :], points[:, None, :] + difference[:, None, :] * np.eye(q)],
                                    axis=1)  # (lengths, 1 + q, q): each point, then its q neighbours
        costs = (yield population.reshape(-1, q).T).reshape(len(points), 1 + q)
        k = int(np.argmin(costs[:, 0]))
        cost = float(costs[k, 0])
        if not cost < best_cost or not np.isfinite(costs[k]).all():
            if inverse is not None:
                inverse = None  # the curvature model misled: start again along the gradient
            elif np.all(step * LINE[-1] < 1e-9 * (high - low)):
                break  # nothing lower even at the shortest steps: a minimum, or a corner
            else:
                step = step / 20
        else:
            new_gradient = (costs[k, 1:] - cost) / difference[k]
            if np.isfinite(best_cost):  # a step from an accepted point: its curvature can be measured
                s, change = points[k] - x, new_gradient - gradient
                curvature = float(s @ change)
                if curvature > 1e-12 * float(np.linalg.norm(s) * np.linalg.norm(change)):
                    if inverse is None:
                        inverse = np.eye(q) * curvature / float(change @ change)
                    rho = 1.0 / curvature
                    left = np.eye(q) - rho * np.outer(s, change)
                    inverse = left @ inverse @ left.T + rho * np.outer(s, s)
            settled = best_cost - cost <= rtol * abs(cost)
            if not settled and inverse is not None and best_cost - cost <= LOOSE * abs(cost):
                # the quadratic model's decrease still to come, along the directions not held by a bound
                held = ((points[k] <= low) & (new_gradient > 0)) | ((points[k] >= high) & (new_gradient < 0))
                g = np.where(held, 0.0, new_gradient)
                settled = 0.5 * float(g @ inverse @ g) <= LOOSE * abs(cost)
            x, gradient, best, best_cost = points[k], new_gradient, points[k], cost
            if settled:
                break
        free = ~(((x <= low) & (gradient > 0)) | ((x >= high) & (gradient < 0)))
        if not free.any():
            break
        if inverse is None:
            norm = float(np.linalg.norm(gradient[free]))
            if norm == 0.0:
                break
            direction = np.where(free, -gradient / norm, 0.0) * step
        else:
            direction = np.zeros(q)
            direction[free] = -inverse[np.ix_(free, free)] @ gradient[free]
        lengths = LINE
    return np.asarray(best, dtype=float)


def _newton_step(costs: np.ndarray, q: int) -> np.ndarray | None:
    """The minimiser, in stencil units, of the quadratic least-squares fit to ``costs``; None
    where the fit is not convex or its minimum lies outside the stencil."""
    coef = _stencil(q)[1] @ costs
    gradient, hessian = coef[1:1 + q], np.zeros((q, q))
    pairs = [(i, j) for i in range(q) for j in range(i, q)]
    for position, (i, j) in enumerate(pairs):
        value = coef[1 + q + position]
        hessian[i, j] += value if i != j else 2 * value
        if i != j:
            hessian[j, i] += value
    if q == 1:
        move = -gradient / hessian[0] if hessian[0, 0] > 0 else None
    else:
        try:
            move = np.linalg.solve(hessian, -gradient) if np.all(np.linalg.eigvalsh(hessian) > 0) else None
        except np.linalg.LinAlgError:
            move = None
    return move if move is not None and np.all(np.abs(move) <= 1.0) else None


@functools.cache
def _stencil(q: int) -> tuple[np.ndarray, np.ndarray]:
    """The 3^q stencil's offsets ``(3^q, q)``, centre in the middle, and the least-squares fit of
    a quadratic to its costs as one matrix."""
    offsets = np.array(list(itertools.product((-1.0, 0.0, 1.0), repeat=q)))
    quadratic = np.column_stack([np.ones(len(offsets)), offsets] +
                                [offsets[:, i] * offsets[:, j] for i in range(q) for j in range(i, q)])
    return offsets, np.linalg.pinv(quadratic)


def polish_lbfgsb(scalar, start: np.ndarray, bounds, energy=None) -> np.ndarray:
    """Refine the best DE member with L-BFGS-B inside the bounds; keep it if not improved.
    With ``energy`` (a population cost, ``(q, S)`` → ``(S,)``) each step's value and
    forward-difference gradient come from one call instead of q + 1."""
    if len(start) == 0:
        return start
    from scipy.optimize import minimize  # imported where it runs: most searches never need it

    if energy is None:
        result = minimize(scalar, start, method="L-BFGS-B", bounds=bounds)
    else:
        low, high = np.array(bounds, dtype=float).T

        def value_and_gradient(theta: np.ndarray) -> tuple[float, np.ndarray]:
            step = 1e-7 * np.maximum(1.0, np.abs(theta))
            step = np.where(theta + step > high, -step, step)  # stay inside the bounds
            values = energy(np.column_stack([theta, theta[:, None] + np.diag(step)]))
            return float(values[0]), (values[1:] - values[0]) / step

        result = minimize(value_and_gradient, start, jac=True, method="L-BFGS-B", bounds=bounds)
    return result.x if result.fun <= scalar(start) else start
