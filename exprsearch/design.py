"""The planning arithmetic of ``exprsearch suggest``: an ensemble of log-predictions over the
candidate configurations and the target, taken as a Bayesian linear model whose features are the
members' deviations, and the budget spread over the configurations so that the target's variance
after them is least (a c-optimal design with costs). Measuring at x, with noise variance
``noise``, removes cov(x, target)² / (var(x) + noise) of the target's variance."""

from __future__ import annotations

import numpy as np

PLAN_STEPS = 300  # Frank-Wolfe iterations of the budget plan


def features(logs: np.ndarray, weights: np.ndarray, within: np.ndarray) -> np.ndarray:
    """Deviations of the ensemble's members, scaled so that ``F.T @ F`` is the covariance of the
    log-predictions over the columns: the laws' (weighted) plus ``within``, the chosen law's
    constants' (rows whose ``F.T @ F`` is their covariance)."""
    finite_logs = np.where(np.isfinite(logs), logs, 0.0)
    between = (finite_logs - weights @ finite_logs) * np.sqrt(weights)[:, None]
    return np.vstack([between, within])


def bootstrap_spread(boot: np.ndarray) -> np.ndarray:
    """The bootstrap curves' (log-predictions) deviations from their mean, scaled so that
    ``F.T @ F`` is their sample covariance."""
    finite_boot = np.where(np.isfinite(boot), boot, 0.0)
    return (finite_boot - finite_boot.mean(axis=0)) / np.sqrt(max(len(boot) - 1, 1))


def gain(features: np.ndarray, precision: np.ndarray, noise: float, column: int) -> float:
    """The share of the target's (last column's) variance that one run at ``column`` removes:
    cov(x, target)² / ((var(x) + noise) · var(target)), ``noise`` a variance, the covariance never formed whole."""
    x, target = np.linalg.solve(precision, features[:, [column, -1]]).T
    total = float(features[:, -1] @ target)
    if not total > 0:
        return 0.0
    return float((features[:, column] @ target) ** 2 / (features[:, column] @ x + noise) / total)


def plan(features: np.ndarray, precision: np.ndarray, noise: float, cost: np.ndarray, budget: float,
         open_: np.ndarray) -> np.ndarray:
    """Cost to spend on each configuration (0 where not ``open_``) so that the target's (last
    column's) variance after measuring them all is least within ``budget``: the posterior variance
    is convex in the number of runs per configuration, so Frank-Wolfe steps towards the single
    configuration whose runs would lower it fastest per unit of cost; where spending it all on one
    configuration leaves less variance than the steps reached, that is the plan."""
    where = np.flatnonzero(open_)
    design, target, price = features[:, where], features[:, -1], cost[where]
    most = budget / price  # runs if all the budget went to one configuration
    runs = np.zeros(len(where))
    for step in range(PLAN_STEPS):
        used = np.flatnonzero(runs)
        system = precision + (design[:, used] * runs[used]) @ design[:, used].T / noise
        rate = (design.T @ np.linalg.solve(system, target)) ** 2 / price
        vertex = int(np.argmax(rate))
        move = 2.0 / (step + 2)
        runs *= 1 - move
        runs[vertex] += move * most[vertex]
    # Frank-Wolfe's steps converge slowly to an optimum at a single configuration: keep the best
    # such allocation where it beats the mixture (its variances in closed form, Sherman-Morrison)
    used = np.flatnonzero(runs)
    planned = float(target @ np.linalg.solve(precision + (design[:, used] * runs[used]) @ design[:, used].T / noise,
                                             target))
    solved = np.linalg.solve(precision, np.column_stack([target, design]))
    alone = float(target @ solved[:, 0]) - most * (design.T @ solved[:, 0]) ** 2 / (
        noise + most * np.einsum("ij,ij->j", design, solved[:, 1:]))
    if alone.min() < planned:
        runs = np.where(np.arange(len(runs)) == int(np.argmin(alone)), most, 0.0)
    spend = np.zeros(len(cost))
    spend[where] = runs * price
    return spend


def next_run(spend: np.ndarray, cost: np.ndarray, measured: np.ndarray, features: np.ndarray,
             precision: np.ndarray, noise: float) -> int:
    """Of the configurations a plan (``spend``, from :func:`plan`) gives a whole run or more, the
    one whose run removes most of the target's variance now per unit of cost (:func:`gain`); of
    equal rates, one not ``measured`` yet, which also tests the law's form where a repeat cannot.
    Any order of a plan's runs spends its budget alike, but the plan is made again after each run:
    the one that tells most per cost first. Where the plan gives no configuration a whole run, the
    one it spends most on."""
    runs = np.divide(spend, cost, out=np.zeros(len(spend)), where=np.nan_to_num(cost) > 0)
    whole = np.flatnonzero(runs >= 1 - 1e-9)
    if not len(whole):
        return _most(spend, measured)
    rate = np.array([gain(features, precision, noise, int(i)) / cost[i] for i in whole])
    return int(whole[_most(rate, measured[whole])])


def _most(score: np.ndarray, measured: np.ndarray) -> int:
    """The index of the highest ``score``, scores alike to 6 digits of the highest tying; of those,
    one not ``measured`` yet."""
    return int(np.lexsort((measured, -np.round(score / max(score.max(), 1e-300), 6)))[0])


def repeated(features: np.ndarray, runs: np.ndarray, noise: float) -> np.ndarray:
    """The ensemble's precision conditioned on the repeats the bootstrap cannot see: it draws a
    configuration with all its runs, so its spread at one measured ten times is as wide as at one
    measured once, and a planner on it asks for the same run again and again. Each configuration's
    runs beyond its first are taken as measured here (``runs``: per candidate configuration)."""
    extra = np.maximum(runs - 1, 0)
    return np.eye(len(features)) + (features[:, :-1] * extra) @ features[:, :-1].T / noise
