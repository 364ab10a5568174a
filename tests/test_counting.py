import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from exprsearch import counting, grammar


class _Alike:
    """What sum_count reads of a term: its nonlinear constants, complexity and constant kinds."""

    def __init__(self, nonlinear: int, size: int, constants: int) -> None:
        self.n_nonlinear, self.complexity, self.kinds = nonlinear, size, ("c",) * constants


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 9), st.integers(1, 3)), max_size=9),
       st.integers(0, 2), st.integers(1, 3), st.integers(1, 3), st.integers(0, 3), st.integers(5, 30))
def test_sum_count_counts_what_enumerating_the_sums_finds(signatures, low, high, terms, nonlinear, size):
    """Items alike are counted together by binomials; the count must be the enumeration's, also
    when many items share a signature."""
    items = [(_Alike(*s),) for s in signatures]
    limits = grammar.Limits(max_terms=terms, max_nonlinear=nonlinear, max_complexity=size)
    fixed = (_Alike(0, 1, 1),)
    total, by_constants = counting.sum_count(items, grammar.Reference("t", low, max(low, high)), limits, fixed)
    expected, by = 0, {}
    for count in range(low, max(low, high) + 1):
        if count + 1 > terms:
            continue
        for combo in itertools.combinations(items, count):
            parts = [t for item in combo for t in item]
            shape = 1 + sum(t.complexity for t in parts) + (1 if count >= 1 else 0)
            if sum(t.n_nonlinear for t in parts) <= nonlinear and shape <= size:
                expected += 1
                k = 1 + sum(len(t.kinds) for t in parts)
                by[k] = by.get(k, 0) + 1
    assert total == expected and dict(by_constants) == by


def test_the_budget_a_quiet_factor_frees_goes_to_those_that_show():
    choices = counting.disjoint_choices([frozenset({i}) for i in range(4)], 1, 2)
    uniform = counting.allocated(choices, [10] * 4, [True] * 4, 3, 70)
    assert uniform == [3, 3, 3, 3] and counting.product_count(choices, uniform) <= 70  # as the cut always was
    sizes = counting.allocated(choices, [10] * 4, [True, True, False, False], 3, 70)
    assert sizes == [5, 5, 1, 1] and counting.product_count(choices, sizes) <= 70


def test_products_of_two_factors_stay_whole_where_they_take_at_most_half_the_budget():
    """Three factors of 14 shapes: the 588 products of two fit in half of 1,500, so only the 2,744
    products of three are cut, to the 870 the budget leaves them (9 shapes each); where the pairs
    alone pass half the budget, every product of several factors is cut alike, as before."""
    choices = counting.disjoint_choices([frozenset("p"), frozenset("n"), frozenset("b")], 1, 3)
    cut, counted, keep, budget = counting.cut_products(choices, [14, 14, 14], 1500)
    assert cut == counted == [c for c in choices if len(c) == 3]
    assert budget == 1500 - 42 - 588 and keep == 9 and counting.product_count(cut, [9, 9, 9]) <= budget
    cut, counted, keep, budget = counting.cut_products(choices, [14, 14, 14], 1000)
    assert cut == [c for c in choices if len(c) > 1] and counted == choices and budget == 1000
    assert counting.product_count(choices, [keep] * 3) <= 1000 < counting.product_count(choices, [keep + 1] * 3)
    pairs_only = counting.disjoint_choices([frozenset("p"), frozenset("n"), frozenset("b")], 1, 2)
    assert counting.cut_products(pairs_only, [14, 14, 14], 500)[0] == [c for c in pairs_only if len(c) == 2]
