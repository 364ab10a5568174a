"""Least-squares arithmetic of the screening: the exact scan of pairs against brute force."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from exprsearch.subsets import anchored_triples, best_pairs, exchanged_terms, first_best


def _brute_force(design, residual, owner):
    """Every pair of columns of two items fitted by least squares, those whose coefficients are
    both non-negative, best first."""
    fits = []
    for i, j in itertools.combinations(range(design.shape[1]), 2):
        if owner[i] == owner[j]:
            continue
        coefficients, *_ = np.linalg.lstsq(design[:, [i, j]], residual, rcond=None)
        if (coefficients >= 0).all():
            rest = residual - design[:, [i, j]] @ coefficients
            fits.append((float(rest @ rest), (i, j)))
    return sorted(fits)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.integers(4, 30), columns=st.integers(2, 40))
def test_the_best_pair_is_the_one_brute_force_finds(seed, rows, columns):
    rng = np.random.default_rng(seed)
    design = rng.standard_normal((rows, columns))
    design /= np.linalg.norm(design, axis=0)
    residual = rng.standard_normal(rows)
    owner = np.arange(columns)
    found = best_pairs(design, residual, owner, np.zeros(columns, dtype=int), 0, np.arange(columns), 1)
    expected = _brute_force(design, residual, owner)
    if not expected:
        assert found == []
        return
    assert found, "brute force found a pair with non-negative coefficients"
    # closed form against lstsq: equal to rounding, so a tie may name the other pair
    sse, (i, j) = found[0]
    exact = next(e for e, pair in expected if pair == (i, j))
    assert exact <= expected[0][0] + 1e-6 * float(residual @ residual)
    assert abs(sse - exact) <= 1e-6 * float(residual @ residual)


def test_a_pair_that_fits_only_together_is_found_and_no_term_crowds_the_others_out():
    """a and b each fit the target worse than the decoys, which each carry a share of both; the
    pair fits exactly. No item takes part in more than ``share`` of the pairs returned, and the
    column -(a + b), which fits exactly only with a negative coefficient, fits nothing here."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(30), rng.standard_normal(30)
    target = a + b
    decoys = [target + 0.4 * rng.standard_normal(30) for _ in range(6)]
    design = np.column_stack([a, b, *decoys, -target])
    design /= np.linalg.norm(design, axis=0)
    alone = np.abs(design.T @ target)
    assert alone[0] < alone[2:8].min() and alone[1] < alone[2:8].min()
    owner = np.arange(design.shape[1])
    pairs = best_pairs(design, target, owner, np.zeros(len(owner), dtype=int), 0, owner, 8, share=2)
    assert pairs[0][1] == (0, 1) and pairs[0][0] < 1e-6
    used = [i for _, pair in pairs for i in pair]
    assert len(pairs) > 4 and max(used.count(i) for i in set(used)) <= 2
    assert [sse for sse, _ in pairs] == sorted(sse for sse, _ in pairs)
    assert all(sse > 1e-3 for sse, pair in pairs if 8 in pair)


def test_pairs_respect_the_room_for_fitted_exponents():
    """With no room left for a fitted exponent, no pair is offered, as forward selection offers
    no term; with room for one, never a pair of two terms that each fit an exponent."""
    rng = np.random.default_rng(3)
    design = rng.standard_normal((12, 6))
    design /= np.linalg.norm(design, axis=0)
    residual = design[:, 0] + design[:, 1]
    owner, columns = np.arange(6), np.arange(6)
    assert best_pairs(design, residual, owner, np.zeros(6, dtype=int), -1, columns, 5) == []
    nonlinear = np.array([1, 1, 0, 0, 0, 0])
    pairs = best_pairs(design, residual, owner, nonlinear, 1, columns, 15)
    assert pairs and all(nonlinear[list(pair)].sum() <= 1 for _, pair in pairs)


def test_the_scan_of_pairs_keeps_the_columns_that_fit_best_alone_and_says_how_many_there_were(monkeypatch):
    """Beyond PAIR_COLUMNS, the columns that fit the residual best alone are scanned, and the count
    before the cap is returned so that the screening can say what it left out."""
    from exprsearch import subsets

    monkeypatch.setattr(subsets, "PAIR_COLUMNS", 3)
    design = np.eye(6)[:, [0, 1, 2, 3, 4, 5, 5]]  # the last column a copy of the one before
    residual = np.array([0.1, 5.0, 0.2, 4.0, 3.0, 0.3])
    wanted = np.array([True, True, True, True, False, True, True])
    kept, found = subsets.first_columns(subsets.column_ids(design), design, residual, wanted)
    assert found == 5 and kept.tolist() == [1, 3, 5]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.integers(5, 30), columns=st.integers(3, 25))
def test_the_best_triple_beside_an_anchor_is_the_one_brute_force_finds(seed, rows, columns):
    """The pair that fits best beside the anchor (non-negative coefficients on the pair) is
    returned with the anchor and its exact squared error where the anchor's coefficient is
    non-negative too, and nothing is returned where it is negative."""
    rng = np.random.default_rng(seed)
    design = rng.standard_normal((rows, columns))
    design /= np.linalg.norm(design, axis=0)
    residual = rng.standard_normal(rows)
    owner, anchor = np.arange(columns), 0
    found = anchored_triples(design, residual, owner, np.zeros(columns, dtype=int), 0, owner, [anchor], 1)
    fits = []
    for i, j in itertools.combinations(range(1, columns), 2):
        x = design[:, [anchor, i, j]]
        z, *_ = np.linalg.lstsq(x, residual, rcond=None)
        if (z[1:] >= 0).all() and np.linalg.matrix_rank(x) == 3:
            rest = residual - x @ z
            fits.append((float(rest @ rest), z[0] >= 0, (anchor, i, j)))
    if not fits:
        assert found == []
        return
    sse, anchor_positive, triple = min(fits)
    if not anchor_positive:
        assert found == []
        return
    total = float(residual @ residual)
    assert len(found) == 1 and abs(found[0][0] - sse) <= 1e-6 * total
    assert found[0][0] <= min(f[0] for f in fits) + 1e-6 * total


def test_three_terms_of_which_no_two_fit_together_are_found_beside_any_one_of_them():
    """a + b + c, where every pair of them fits worse than pairs of decoys that each carry a
    share of all three: beside a, the scan finds b and c."""
    rng = np.random.default_rng(2)
    a, b, c = rng.standard_normal((3, 40))
    target = a + b + c
    decoys = [target + 0.5 * rng.standard_normal(40) for _ in range(8)]
    design = np.column_stack([a, b, c, *decoys])
    design /= np.linalg.norm(design, axis=0)
    owner = np.arange(design.shape[1])
    pairs = best_pairs(design, target, owner, np.zeros(len(owner), dtype=int), 0, owner, 10)
    assert not any(set(pair) <= {0, 1, 2} for _, pair in pairs[:5])
    triples = anchored_triples(design, target, owner, np.zeros(len(owner), dtype=int), 0, owner, [0], 2)
    assert triples[0][1] == (0, 1, 2) and triples[0][0] < 1e-9


def test_beside_each_anchor_only_the_columns_that_fit_best_there_are_paired():
    """With room for two columns beside the anchor, the pair is sought among the two that fit
    best there: b and c, which fit worse beside a than the decoys, are not found."""
    rng = np.random.default_rng(2)
    a, b, c = rng.standard_normal((3, 40))
    target = a + b + c
    decoys = [b + c + 0.6 * rng.standard_normal(40) for _ in range(4)]
    design = np.column_stack([a, b, c, *decoys])
    design /= np.linalg.norm(design, axis=0)
    owner, none = np.arange(design.shape[1]), np.zeros(design.shape[1], dtype=int)
    assert anchored_triples(design, target, owner, none, 0, owner, [0], 1)[0][1] == (0, 1, 2)
    kept = anchored_triples(design, target, owner, none, 0, owner, [0], 1, limit=2)
    assert kept and not {1, 2} <= set(kept[0][1])


def test_of_columns_that_fit_alike_the_exchange_takes_the_first_whatever_the_last_bits():
    """Two columns alike but for rounding (a term and another of the same content here) gain
    alike: the exchange must take the first, not the one the last bits favour, or a nudge of
    1e-12 to the data changes the terms the screening hands on."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal((12, 3))
    twin = base[:, 2] * (1 + 1e-14 * rng.standard_normal(12))
    for nudge in (1 + 1e-13, 1 - 1e-13):
        design = np.column_stack([base, twin * nudge])
        design /= np.linalg.norm(design, axis=0)
        residual = design @ np.array([1.0, 0.0, 2.0, 0.0]) + 0.01 * rng.standard_normal(12)
        owner = np.arange(4)
        sse, columns = exchanged_terms(design, residual, (float(residual @ residual), (0, 1)), owner,
                                       np.zeros(4, dtype=int), 0)
        assert set(columns) == {0, 2}
    assert first_best(np.array([1.0, 3.0 - 1e-12, 3.0, 2.0]), 10.0) == 1
    assert first_best(np.array([1.0, 2.9, 3.0, 2.0]), 10.0) == 2


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), chunk=st.sampled_from([1, 7, 64, 128]))
def test_the_pairs_are_the_same_whatever_the_block_of_columns_solved_at_once(seed, chunk):
    """The block size is for speed (blocks that stay in the cache are 3× faster): each block's best
    candidates hold the best of all, so the pairs chosen in one block come first, the same (their
    errors to the last bits of the products, which BLAS rounds by the blocks' shapes). Smaller
    blocks may add pairs after them, where the one block's candidates all shared an item with
    pairs chosen before them."""
    rng = np.random.default_rng(seed)
    design = rng.standard_normal((12, 300))
    design /= np.linalg.norm(design, axis=0)
    residual = rng.standard_normal(12)
    owner = np.sort(rng.integers(0, 120, 300))  # several shapes of one item, as the screening's columns
    nonlinear = rng.integers(0, 2, owner.max() + 1)
    whole = best_pairs(design, residual, owner, nonlinear, 1, np.arange(300), 10, chunk=300)
    blocks = best_pairs(design, residual, owner, nonlinear, 1, np.arange(300), 10, chunk=chunk)
    assert [pair for _, pair in blocks[:len(whole)]] == [pair for _, pair in whole]
    np.testing.assert_allclose([e for e, _ in blocks[:len(whole)]], [e for e, _ in whole], rtol=1e-12)
    assert len(whole) <= len(blocks) <= 10
