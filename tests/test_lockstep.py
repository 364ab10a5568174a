from dataclasses import replace

import numpy as np

from exprsearch.batch import fit_separable
from exprsearch.compile import Compiler
from exprsearch.fit import FitSettings, fit
from exprsearch.lockstep import _costs, polish_together
from exprsearch.polish import drive, lockstep, stencil
from tests.test_fit import candidate, table

FORMS = ["c + c*n**k/p", "c + c*p + c*n**k/p", "c + c*log2(p) + c*n/p**k", "c*p**k + c*n/p", "c + c*n**k"]
TWO = ["c + c*n**k/p**k", "c + c*log2(p) + c*n**k*p**k", "c*p**k + c*n**k/p"]  # two exponents each


def started(forms):
    """Each form compiled on noisy data, with the batched grid fit it is polished from."""
    X, y = table(lambda p, n: 1 + 1e-4 * n**1.4 / p + 0.05 * p, noise=0.02)
    compiler = Compiler(("p", "n"), X)
    cands = [candidate(f) for f in forms]
    starts = fit_separable(cands, compiler, y).fits
    return [compiler.compile(c) for c in cands], y, list(starts)


def test_polishing_together_gives_each_candidate_what_polishing_it_alone_gives():
    compiled, y, starts = started(FORMS)
    together = polish_together(compiled, y, FitSettings(), starts)
    for k, (c, s) in enumerate(zip(compiled, starts)):
        (alone,) = polish_together([c], y, FitSettings(), [s])
        # bit for bit: a candidate's costs do not depend on the candidates beside it, so the law
        # does not depend on how the jobs were split between processes
        assert together[k].values == alone.values and together[k].cost == alone.cost
        one_by_one = fit(c, y, FitSettings(), start=s, local=True)
        assert together[k].ok and one_by_one.ok
        assert abs(together[k].cost / one_by_one.cost - 1) < 1e-6
        assert together[k].cost <= s.cost * (1 + 1e-9)  # never worse than the grid's best


def test_stacked_costs_equal_each_candidate_own_energy():
    from exprsearch.fit import _Problem

    compiled, y, _ = started(FORMS)
    problems = [_Problem(c, y, 1e-6) for c in compiled]
    thetas = [np.linspace(0.3, 2.9, 3 + k)[None, :] for k in range(len(problems))]
    problems += [_Problem(c, y, 1e-6, np.arange(k, len(y), 2)) for k, c in enumerate(compiled)]  # resamples
    thetas += thetas
    for mine, theirs in zip(_costs(problems, thetas, 1e-6), (p.energy(t) for p, t in zip(problems, thetas))):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9)


def test_resamples_of_one_candidate_evaluated_together_cost_what_each_alone_does():
    """A bootstrap's resamples share their candidate's compiled terms: evaluated in one call for
    all of them, each resample's costs are still its own, to the bit."""
    from exprsearch.fit import _Problem

    compiled, y, _ = started(FORMS)
    rng = np.random.default_rng(3)
    problems = [_Problem(compiled[0], y, 1e-6, rng.integers(0, len(y), len(y))) for _ in range(5)]
    thetas = [np.linspace(0.3, 2.9, 4 + k)[None, :] for k in range(len(problems))]
    together = _costs(problems, thetas, 1e-6)
    for k, (problem, theta) in enumerate(zip(problems, thetas)):
        (alone,) = _costs([problem], [theta], 1e-6)
        assert together[k].tolist() == alone.tolist()
        np.testing.assert_allclose(alone, problem.energy(theta), rtol=1e-9)


def test_stacks_cut_to_bound_memory_give_the_costs_of_one_stack(monkeypatch):
    """Polishing on 100,000 rows stacked every population's design at once (2.3 GiB); cut into
    stacks of bounded size, the costs are the same to the bit."""
    import exprsearch.lockstep as lockstep_module
    from exprsearch.fit import _Problem

    compiled, y, _ = started(FORMS)
    problems = [_Problem(c, y, 1e-6) for c in compiled]
    thetas = [np.linspace(0.3, 2.9, 3 + k)[None, :] for k in range(len(problems))]
    whole = _costs(problems, thetas, 1e-6)
    monkeypatch.setattr(lockstep_module, "STACK_VALUES", 2 * len(y) * 3)  # a member or two a stack
    assert lockstep_module._chunks([0, 1, 2], [len(y) * 3] * 3) == [[0, 1], [2]]
    for cut, one in zip(_costs(problems, thetas, 1e-6), whole):
        assert np.array_equal(cut, one)


def test_past_the_stack_rows_each_candidate_is_polished_alone(monkeypatch):
    import exprsearch.lockstep as lockstep_module

    compiled, y, starts = started(FORMS)
    monkeypatch.setattr(lockstep_module, "STACK_ROWS", len(y) - 1)
    for c, s, f in zip(compiled, starts, lockstep_module.polish(compiled, y, FitSettings(), starts)):
        alone = fit(c, y, FitSettings(), start=s, local=True)
        assert f.values == alone.values and f.cost == alone.cost


def test_lockstep_runs_searches_of_different_lengths_to_the_end_of_each():
    def bowl(target):
        return lambda theta: (theta[0] - target) ** 2

    targets = [0.37, -1.2, 2.95, 0.0]  # 2.95: the minimum lies past the bound of 2.9
    low, high, step = np.array([-3.0]), np.array([2.9]), np.array([0.1])
    asked = []

    def energies(running, populations):
        asked.append(list(running))
        return [bowl(targets[i])(p) for i, p in zip(running, populations)]

    found = lockstep([stencil(np.array([t + 0.07]), low, high, step) for t in targets], energies)
    alone = [drive(stencil(np.array([t + 0.07]), low, high, step), bowl(t)) for t in targets]
    assert [f.tolist() for f in found] == [a.tolist() for a in alone]
    assert abs(found[0][0] - 0.37) < 1e-6 and found[2][0] == 2.9
    assert len(asked[0]) == 4 and len(asked[-1]) < 4  # some finished before others


def test_two_exponents_are_polished_together_as_alone_and_at_least_as_well_as_by_lbfgsb():
    X, y = table(lambda p, n: 1 + 1e-4 * n**1.4 / p**0.9 + 0.05 * p, noise=0.02)
    compiler = Compiler(("p", "n"), X)
    compiled = [compiler.compile(candidate(f)) for f in TWO]
    starts, bests = [], [fit(c, y, FitSettings()) for c in compiled]
    for best in bests:  # starts near each minimum, as the screening's refined grid leaves them
        starts.append(replace(best, values={k: v + (0.05 if k == "k0" else 0.04) if k.startswith("k") else v
                                            for k, v in best.values.items()}))
    together = polish_together(compiled, y, FitSettings(), starts)
    for k, (c, s) in enumerate(zip(compiled, starts)):
        (alone,) = polish_together([c], y, FitSettings(), [s])
        assert together[k].values == alone.values and together[k].cost == alone.cost
        by_lbfgsb = fit(c, y, FitSettings(), start=s, local=True)
        assert together[k].ok and together[k].cost <= by_lbfgsb.cost * (1 + 1e-6)
        assert together[k].cost <= bests[k].cost * (1 + 1e-6)  # where a full DE search ends
