import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from exprsearch.lines import line_scores, lines, ranked


def _grid(ps, ns):
    return np.array(list(itertools.product(ps, ns)), dtype=float)


def test_a_line_is_the_set_of_configurations_where_only_one_factor_varies():
    configs = _grid((1, 2, 4, 8), (10, 20, 40))
    line, usable = lines(configs, [0])
    assert usable.all()
    for g in np.unique(line):  # one value of n per line, every p on it
        assert len(np.unique(configs[line == g, 1])) == 1 and len(configs[line == g]) == 4
    assert len(np.unique(line)) == 3


def test_a_factor_at_two_values_has_no_line_to_judge_a_shape_on():
    configs = _grid((1, 2), (10, 20, 40))
    line, usable = lines(configs, [0])
    assert usable.all() and (line == 0).all()  # all one line, used whole


def test_the_true_shape_scores_best_along_its_lines():
    configs = _grid((1, 2, 4, 8, 16), (10, 20, 40))
    p, n = configs.T
    y = 2 + 3 * p + 0.5 * np.log2(n)  # a straight line in p on every line of constant n
    line, usable = lines(configs, [0])
    columns = np.column_stack([shape / y for shape in (np.log2(p), p**2, p, np.sqrt(p))])
    scores = line_scores(columns, np.arange(4), 5, 1 / y, np.ones_like(y), line)
    assert scores[2] < min(*scores[:2], scores[3])
    assert scores[4] == np.inf  # a transform without a column


def test_on_noise_free_data_the_exact_shape_alone_beats_every_pair_that_holds_it():
    """Noise-free, the true shape fits each line exactly, and so does every other shape beside it
    at a slope of 0: their errors are rounding (4e-16 alone, -2e-13 paired, by cancellation), which
    had ranked x**(5/4)·log2(x)² below 40 other shapes of x, so that pmnf never formed the law's
    product. Errors within rounding of the variation are now equal, and the shape that needs no
    partner wins by the pair's extra slopes."""
    configs = _grid((4, 8, 16, 32, 64), (4, 8, 16, 32, 64))
    x, z = configs.T
    y = 1 + 0.5 * x**1.25 * np.log2(x) ** 2 * z**3 * np.log2(z)
    line, _ = lines(configs, [0])
    shapes = [x**1.25 * np.log2(x) ** 2, x ** (2 / 3), x**1.25, x ** (5 / 3) * np.log2(x), x**2, np.log2(x) ** 2]
    columns = np.column_stack([shape / y for shape in shapes])
    scores = line_scores(columns, np.arange(len(shapes)), len(shapes), 1 / y, np.ones_like(y), line)
    assert scores[0] < min(scores[1:]) - 2  # beyond the screening's tie of shapes (SHAPE_TIE)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([-83.1, -81.9, 0.0, 12.5, np.inf]), min_size=1, max_size=8),
       st.randoms(use_true_random=False))
def test_scores_that_differ_only_in_their_last_bits_rank_by_their_keys(levels, rnd):
    keys = [(i,) for i in range(len(levels))]
    nudged = [s if not np.isfinite(s) else s * (1 + 1e-13 * rnd.uniform(-1, 1)) for s in levels]
    order = ranked(nudged, keys)
    assert order == ranked(levels, keys)
    assert [levels[i] for i in order] == sorted(levels)  # ties aside, lowest first


def test_a_factor_that_does_nothing_does_not_show_in_a_random_table():
    """At random configurations each level of a factor repeats; a factor the time does not
    depend on then differs between its levels no more than within them."""
    from exprsearch.lines import shows

    rng = np.random.default_rng(3)
    x = rng.choice([1.0, 2, 4, 8, 16], size=(3, 300))
    mean = (2 + 40 / x[0]) * (1 + 0.02 * rng.standard_normal(300))  # x1 and x2 do nothing
    one_line, count = np.zeros(300, dtype=int), np.ones(300)
    assert shows(x[0][:, None], one_line, mean, count, 2.0)
    assert not shows(x[1][:, None], one_line, mean, count, 2.0)
    assert not shows(x[2][:, None], one_line, mean, count, 2.0)


def test_a_factor_whose_levels_are_one_configuration_each_counts_as_shown():
    """On a grid every level of a line is one configuration: nothing there says the factor does
    nothing, even where its times are all alike."""
    from exprsearch.lines import shows

    p = np.array([1.0, 2, 4, 8] * 3)
    line = np.repeat(np.arange(3), 4)
    assert shows(p[:, None], line, np.ones(12), np.full(12, 3.0), 2.0)


def test_with_repetitions_a_grid_tells_a_factor_that_does_nothing():
    """On a grid each level of a line is one configuration, but where the configurations are
    repeated their noise says how much the levels' means may differ by chance: a factor whose
    levels differ by no more does not show, one whose levels differ by a few percent does."""
    from exprsearch.lines import shows

    rng = np.random.default_rng(5)
    p, x = (a.ravel() for a in np.meshgrid([1.0, 2, 4, 8, 16], [16.0, 32, 64], indexing="ij"))
    count, sd = np.full(15, 5.0), 0.02  # five runs of each configuration, 2 % noise
    by_x, by_p = np.unique(p, return_inverse=True)[1], np.unique(x, return_inverse=True)[1]
    mean = (1 + 8 / p) * (1 + sd / np.sqrt(count) * rng.standard_normal(15))  # x does nothing
    assert not shows(x[:, None], by_x, mean, count, 2.0, (sd**2, 60))
    assert shows(p[:, None], by_p, mean, count, 2.0, (sd**2, 60))
    assert shows(x[:, None], by_x, mean * (1 + 0.03 * np.log2(x / 16)), count, 2.0, (sd**2, 60))
    assert shows(x[:, None], by_x, mean, count, 2.0)  # without the noise nothing tells


def test_a_shape_flat_along_the_lines_has_no_slope_there_whatever_its_rounding():
    """The constant shape (x^0 of a fitted exponent's grid) is the intercept along every line, but
    for rounding; its variation there, ~1e-33, took a slope of 1e16 that fitted the noise beside
    another shape, as the last bits fell (a nudge of 1e-12 to the times changed the shapes the
    screening kept, and suggest's advice). It scores as a column of zeros does."""
    configs = _grid((1, 2, 4, 8, 16), (1000, 4000, 16000))
    p, n = configs.T
    rng = np.random.default_rng(3)
    y = (2 + 300 * n / p) * (1 + 0.02 * rng.standard_normal(len(p)))
    line, _ = lines(configs, [1])
    unit = 1 / y
    flats = [np.exp(np.log(unit)) * (1 + 1e-16 * rng.standard_normal(len(p))) for _ in range(20)]
    shapes = [np.sqrt(n) / y, np.log2(n) / y, n / y]
    for flat in flats:
        with_flat = line_scores(np.column_stack([*shapes, flat]), np.arange(4), 4, unit, np.ones_like(y), line)
        with_zeros = line_scores(np.column_stack([*shapes, np.zeros_like(y)]), np.arange(4), 4, unit,
                                 np.ones_like(y), line)
        assert with_flat.tolist() == with_zeros.tolist()
