"""The planning arithmetic of suggest (exprsearch/design.py): the gain of one run, the repeats
the bootstrap cannot see, and the budget plan."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exprsearch.design import gain, next_run, plan, repeated


def test_a_run_at_the_target_itself_removes_its_variance_but_the_noise():
    """One member whose deviation is the same at a configuration and the target: a run there
    removes var / (var + noise) of the target's variance."""
    features = np.array([[1.0, 1.0]])
    assert gain(features, np.eye(1), 0.01, 0) == pytest.approx(1 / 1.01)
    assert gain(np.array([[0.0, 1.0]]), np.eye(1), 0.01, 0) == 0.0  # a run that tells nothing of the target


def test_runs_beyond_a_configurations_first_condition_the_ensemble():
    """Three runs at a configuration count as two measured besides the one the bootstrap saw; one
    run, or none, adds nothing."""
    features = np.array([[2.0, 1.0, 1.0]])
    assert repeated(features, np.array([3.0, 0.0]), 0.5)[0, 0] == pytest.approx(1 + 2 * 4 / 0.5)
    assert repeated(features, np.array([1.0, 0.0]), 0.5)[0, 0] == pytest.approx(1.0)


def test_the_plan_spends_on_the_cheaper_of_two_equal_runs():
    """Two configurations that tell the same about the target: all the budget goes to the
    cheaper one."""
    features = np.array([[1.0, 1.0, 1.0]])  # one member; columns: config a, config b, target
    spend = plan(features, np.eye(1), 0.01, np.array([1.0, 2.0]), 10.0, np.array([True, True]))
    assert spend[0] == pytest.approx(10.0) and spend[1] == pytest.approx(0.0, abs=1e-9)



def test_the_plan_splits_the_budget_between_runs_that_inform_different_parts():
    """The target is the sum of two independent parts, each seen by one configuration alone:
    the least variance after the budget needs both, in equal shares when they cost the same
    (a greedy step per run would take one of them only, first)."""
    features = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    spend = plan(features, np.eye(2), 0.01, np.array([1.0, 1.0]), 10.0, np.array([True, True]))
    assert spend.sum() == pytest.approx(10.0) and spend[0] == pytest.approx(5.0, rel=0.05)
    closed = plan(features, np.eye(2), 0.01, np.array([1.0, 1.0]), 10.0, np.array([True, False]))
    assert closed[1] == 0 and closed[0] == pytest.approx(10.0)



def test_the_next_run_tells_most_per_cost_among_those_the_plan_gives_a_whole_run():
    """Columns: a dear run that tells all of the target, a cheap one that tells half, one the
    plan gives a fraction of a run, an unpriced one; the target. The plan funds the first two:
    the cheap one comes first, though the dear one takes more of the budget; without any whole
    run, the configuration the plan spends most on."""
    features = np.array([[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 1.0, 1.0, 1.0]])  # two members
    cost, unmeasured = np.array([60.0, 10.0, 1.0, np.nan]), np.zeros(4, bool)
    assert gain(features, np.eye(2), 0.01, 1) == pytest.approx(0.5, rel=0.02)
    assert next_run(np.array([60.0, 40.0, 0.5, 0.0]), cost, unmeasured, features, np.eye(2), 0.01) == 1
    assert next_run(np.array([60.0, 5.0, 0.5, 0.0]), cost, unmeasured, features, np.eye(2), 0.01) == 0  # half a run
    assert next_run(np.array([30.0, 5.0, 0.5, 0.0]), cost, unmeasured, features, np.eye(2), 0.01) == 0  # no whole run


def _variance_after(features, spend, cost, noise):
    runs = spend / cost
    system = np.eye(len(features)) + (features[:, :-1] * runs) @ features[:, :-1].T / noise
    return float(features[:, -1] @ np.linalg.solve(system, features[:, -1]))



@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), members=st.integers(1, 6), configs=st.integers(1, 8),
       budget=st.floats(0.5, 50.0))
def test_the_plan_spends_the_budget_and_beats_any_single_configuration(seed, members, configs, budget):
    """Whatever the ensemble: the plan spends exactly the budget, nothing on closed
    configurations, and leaves no more variance at the target than spending it all on the best
    single configuration would (it is the optimum over mixtures of those)."""
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(members, configs + 1))
    cost = rng.uniform(0.5, 5.0, configs)
    open_ = rng.random(configs) < 0.8
    open_[rng.integers(configs)] = True
    spend = plan(features, np.eye(members), 0.01, cost, budget, open_)
    assert np.all(spend >= 0) and np.all(spend[~open_] == 0) and spend.sum() == pytest.approx(budget)
    single = min(_variance_after(features, np.where(np.arange(configs) == j, budget, 0.0), cost, 0.01)
                 for j in np.flatnonzero(open_))
    assert _variance_after(features, spend, cost, 0.01) <= single * (1 + 1e-3) + 1e-12

