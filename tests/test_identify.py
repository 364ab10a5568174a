import functools

import numpy as np
import pandas as pd
import pytest
import sympy

from exprsearch import candidates, grammar
from exprsearch.compile import Compiler
from exprsearch.identify import ShapeRule
from exprsearch.search import search

RULES = """[constants]
c = { min = 0, max = inf }
k = { min = -3, max = 3 }
[rules]
start = "c + <term>{1,2}"
term = "c * <t>*{1,2}"
t = ["<factor>", "1/<factor>", "log2(<factor>)", "<factor>**2", "<factor>**4", "<factor>**k"]
"""


@functools.cache
def _rules_candidates() -> dict:
    """The grammar's candidates by their text; they do not depend on the data, and printing
    thousands of them took most of this file's time when every test made its own."""
    found = candidates.generate(grammar.bind(grammar.parse_text(RULES), ("p", "n")))
    return {str(c): c for c in found.candidates}


def rule_for(levels_n: list[float]):
    p, n = np.meshgrid([1.0, 2, 4, 8, 16], levels_n)
    X = np.column_stack([p.ravel(), n.ravel()])
    found = _rules_candidates()
    rule = ShapeRule(Compiler(("p", "n"), X))
    rule.prepare(t for c in found.values() for t in c.terms)
    return rule, found


def test_a_factor_at_two_values_keeps_only_its_simplest_rising_and_falling_shapes():
    rule, found = rule_for([1000, 8000])
    assert rule.reason(found["c0 + c1*n/p"].terms) is None
    assert rule.reason(found["c0 + c1/n"].terms) is None
    assert "simplest" in rule.reason(found["c0 + c1*n**4"].terms)  # fits like n, extrapolates wildly
    assert "simplest" in rule.reason(found["c0 + c1*log2(n)"].terms)
    assert "two values" in rule.reason(found["c0 + c1*n**4"].terms)
    # two shapes of n, or a fitted exponent on it, are more than two values can tell apart
    assert "more shapes of 'n'" in rule.reason(found["c0 + c1*n + c2/n"].terms)
    assert "more shapes of 'n'" in rule.reason(found["c0 + c1*n**k0"].terms)


def test_k_values_support_k_minus_one_shape_constants():
    rule, found = rule_for([1000, 2000, 4000])
    assert rule.reason(found["c0 + c1*n + c2*n**2"].terms) is None  # two shapes, three values
    assert rule.reason(found["c0 + c1*n**4"].terms) is None
    assert "more shapes of 'n' than its 3" in rule.reason(found["c0 + c1*n + c2*n**k0"].terms)
    # p has five values: four shape constants
    assert rule.reason(found["c0 + c1*p**2 + c2*p**k0"].terms) is None


def test_each_term_that_fits_an_exponent_on_a_factor_uses_a_shape_and_an_exponent_of_it():
    """n**k0 beside n**k1·p are two shapes of n with two exponents, not one shape counted once:
    at three values of n the law could otherwise write 1/n and n² as n**k0 and n**k1."""
    rule, found = rule_for([1000, 2000, 4000])
    assert "more shapes of 'n' than its 3" in rule.reason(found["c0 + c1*n**k0 + c2*n**k1*p"].terms)
    assert rule.reason(found["c0 + c1*n**k0 + c2*p**k1"].terms) is None  # one exponent on each factor
    rule, found = rule_for([1000, 2000, 4000, 8000, 16000])
    assert rule.reason(found["c0 + c1*n**k0 + c2*n**k1*p"].terms) is None  # four shape constants


def test_search_with_a_factor_at_two_values_extrapolates_along_the_others():
    rng = np.random.default_rng(3)
    p, n = np.meshgrid([1.0, 2, 4, 8, 16], [1000.0, 8000.0])
    p, n = np.repeat(p.ravel(), 3), np.repeat(n.ravel(), 3)
    import pandas as pd

    y = (1 + 0.01 * n / p + 0.2 * p) * (1 + 0.02 * rng.standard_normal(p.size))
    result = search(pd.DataFrame({"p": p, "n": n, "time": y}), "time", resamples=0)
    assert str(result.law.template) == "c0 + c1*p + c2*n/p"
    assert result.law.predict({"p": [64], "n": [8000]})[0] == pytest.approx(1 + 0.01 * 8000 / 64 + 0.2 * 64, rel=0.03)



def test_a_factor_at_two_values_keeps_the_same_shapes_whatever_its_column_is_called():
    """Among the falling shapes 1/x, 1/x² and 1/√x, all as large, the simplest was once taken by
    their text, so a factor named x or y (after "sqrt") kept 1/√x and one named n kept 1/n: in a
    product with another factor the two are different laws. 1/servers halves a term from one
    server to two, as here; 1/√servers cannot."""
    rng = np.random.default_rng(5)
    workers, servers = np.meshgrid([2.0, 3, 4, 5, 6], [1.0, 2.0])
    workers, servers = np.repeat(workers.ravel(), 3), np.repeat(servers.ravel(), 3)
    y = (4000 / workers**1.5 + 180 * np.log2(workers) / servers + 740 / servers) * \
        (1 + 0.02 * rng.standard_normal(workers.size))
    laws = {}
    for name in ("n", "x", "y"):
        frame = pd.DataFrame({"p": workers, name: servers, "time": y})
        law = search(frame, "time", resamples=0).law
        laws[name] = law.predict({"p": [8.0, 16.0], name: [1.0, 2.0]})
        assert "sqrt" not in str(law.template), (name, law.template)
    assert laws["x"] == pytest.approx(laws["n"], rel=1e-9)
    assert laws["y"] == pytest.approx(laws["n"], rel=1e-9)

def test_factor_parts_are_the_products_sympy_would_make():
    """factor_parts keeps a canonical product's own factors in their order instead of multiplying
    them anew; the result is the same expression."""
    from exprsearch.identify import factor_parts

    bound = grammar.bind(grammar.load("default"), ("p", "n", "w"))
    terms = {t for c in candidates.generate(bound).candidates for t in c.terms}
    for factor in (sympy.Symbol(f, positive=True) for f in ("p", "n", "w")):
        for term in terms:
            made = factor_parts(term, factor)
            assert made == sympy.Mul(*(a for a in sympy.Mul.make_args(term.key) if factor in a.free_symbols))


@pytest.mark.parametrize("levels_n", [[1000, 4000, 16000], [1000, 2000, 4000, 8000, 16000]])
def test_the_shortcut_for_laws_of_few_shapes_gives_the_rule_s_own_answer(levels_n):
    """Laws whose terms use fewer shapes in all than any factor has values less one are passed
    without looking at their shapes: on every candidate that answer is the full rule's."""
    rule, found = rule_for(levels_n)
    assert rule._fewest == 3 if len(levels_n) == 3 else rule._fewest == 5
    for candidate in found.values():
        assert rule.reason(candidate.terms) == rule._reason(candidate.terms), candidate


def test_a_factor_at_two_values_one_negative_has_no_direction_where_a_shape_is_complex():
    """√x and log2 x at x = -1 are complex: such a shape rises or falls nowhere, and the search
    goes on (it had stopped with sympy's 'Cannot convert complex to float', found by fuzzing)."""
    rows = [(x, p, 3 + 8 / p + 0.5 * x) for x in (-1.0, 2.0) for p in (1, 2, 4, 8, 16)]
    frame = pd.DataFrame(rows, columns=["x", "p", "time"])
    result = search(frame, "time", resamples=0)
    assert result.law.metrics["mape_pct"] < 1


def test_shapes_as_many_as_the_values_tell_apart_are_unpinned_where_other_shapes_fit_alike():
    """On three values of n, a constant and any two shapes of n fit every curve, so n + n² could
    as well be 1/n + log2 n: the law's course in n outside them is not measured. Not so where the
    shapes' terms differ in the rest of their product or the law lacks that rest alone."""
    rule, found = rule_for([1000, 2000, 4000])
    assert rule.unpinned(found["c0 + c1*n + c2*n**2"].terms) == {"n": (n := sympy.Symbol("n", positive=True), n**2)}
    assert set(rule.unpinned(found["c0 + c1*n**k0"].terms)) == {"n"}  # a shape and its exponent
    assert rule.unpinned(found["c0 + c1*n"].terms) == {}  # one shape: the third value tests it
    assert rule.unpinned(found["c0 + c1*n + c2*n**2*p"].terms) == {}  # n and n²·p: not one family
    assert rule.unpinned(found["c0 + c1*n*p + c2*n**2*p"].terms) == {}  # p alone is not in the law
    assert rule.unpinned(found["c0 + c1*n + c2*p"].terms) == {}
    rule, found = rule_for([1000, 8000])
    assert set(rule.unpinned(found["c0 + c1*n/p"].terms)) == set()  # n/p: the rest, 1/p, is not alone
    assert set(rule.unpinned(found["c0 + c1*n"].terms)) == {"n"}  # two values: any rising shape


def test_the_order_of_a_law_is_how_steeply_its_terms_change_at_the_top_of_the_data():
    """|d ln term / d ln n| at the largest n, steepest first: how far the law's course beyond the
    data is from flat, where the data cannot tell its shapes apart."""
    from exprsearch.fit import Fit

    rule, found = rule_for([1000, 4000, 16000])

    def order(text: str, **exponents: float) -> tuple[float, ...]:
        return rule.order(Fit(found[text], exponents))

    assert order("c0 + c1*n + c2/n") == pytest.approx((1, 1), rel=1e-3)
    assert order("c0 + c1*n**2 + c2/n") == pytest.approx((2, 1), rel=1e-3)
    assert order("c0 + c1*n**k0", k0=1.5) == pytest.approx((1.5,), rel=1e-3)
    assert order("c0 + c1*log2(n)") == pytest.approx((1 / np.log(16000),), rel=1e-3)
    assert order("c0 + c1*n + c2/n") < order("c0 + c1*n**k0", k0=1.5) < order("c0 + c1*n**2 + c2/n") \
        < order("c0 + c1*n**4 + c2/n")
    assert order("c0 + c1*n*p") == pytest.approx((1, 1), rel=1e-3)  # a product: a slope in each factor
    huge = ShapeRule(Compiler(("p", "n"), np.array([[1.0, 1e3], [2.0, 1e40], [4.0, 1e90]])))
    assert huge.order(Fit(found["c0 + c1*n**4 + c2/n"], {})) == pytest.approx((np.inf, 1))  # n⁴ beyond floating point: steepest


def test_the_order_of_a_law_without_fitted_exponents_is_its_terms_slopes_found_in_its_template():
    """Such a law's order comes from its terms' slopes, kept per term (a profile's series share
    them); it must be what the law's own template gives, its coefficients 1, for every such law."""
    from exprsearch.fit import Fit
    from exprsearch.identify import log_slope

    rule, found = rule_for([1000, 4000, 16000])
    laws = [c for c in found.values() if not c.n_nonlinear]
    assert len(laws) > 100
    top = {sympy.Symbol("p", positive=True): 16.0, sympy.Symbol("n", positive=True): 16000.0}
    for law in laws:
        template = law.template.xreplace({s: 1.0 for s in law.linear})
        slopes = [log_slope(term, top, f) for term in sympy.Add.make_args(template) for f in set(top) & term.free_symbols]
        assert rule.order(Fit(law, {})) == tuple(sorted(slopes, reverse=True)), str(law)


@pytest.mark.slow  # 1 s: three factors at 135 configurations
def test_a_search_keeps_the_lowest_order_shapes_among_those_its_values_cannot_tell_apart():
    """n + 1/n and n + 1/n² fit three values of n alike; the former is the law (random law 21 of
    benchmarks/random_laws.py, seed 5); before the front kept the lowest order, 1/n² came out
    on each of eight noise draws (the regularisation told them apart)."""
    from tests.conftest import measurements

    law = measurements(lambda p, n, b: 1 + 0.000411923 * n + 0.000578886 * b**2 * np.log2(p) + 11483 / n,
                       {"p": (1, 2, 4, 8, 16), "n": (1e3, 4e3, 16e3), "b": (16, 32, 64)}, seed=1)
    assert str(search(law, "time", resamples=0).law.template) == "b**2*c3*log2(p) + c0 + c1*n + c2/n"


def test_a_search_says_when_the_law_s_shapes_of_a_factor_are_not_measured(tmp_path):
    """The note and law.json's search.unpinned, which predict and explain read to warn beyond
    the measured range."""
    from tests.conftest import measurements

    law = measurements(lambda p, n: 1 + 5000 / n + 0.04 * np.sqrt(n) + 8 / p,
                       {"p": (1, 2, 4, 8, 16), "n": (1e3, 4e3, 16e3)}, seed=2)
    result = search(law, "time", resamples=0)
    unpinned = result.law.search.get("unpinned", {})
    assert set(unpinned) == {"n"} and unpinned["n"]["values"] == 3 and len(unpinned["n"]["shapes"]) == 2
    assert any(note.startswith("the law's shapes of 'n'") and "n = 1000..16000" in note
               and "the one whose terms change least at the top of the data" in note for note in result.notes)
    wider = measurements(lambda p, n: 1 + 5000 / n + 0.04 * np.sqrt(n) + 8 / p,
                         {"p": (1, 2, 4, 8, 16), "n": (1e3, 2e3, 4e3, 8e3, 16e3)}, seed=2)
    assert "unpinned" not in search(wider, "time", resamples=0).law.search


def test_a_factor_no_identifiable_law_can_hold_is_said_left_out_for_want_of_configurations():
    """Two configurations afford no law in p (every one has as many constants as them), so the
    law is the constant: the result says p was left out for that, not because the times are flat,
    and law.json records it; three configurations afford one, and nothing is said."""
    two = search({"p": [8.0, 8, 384, 384], "time": [20.5, 21.0, 1.88, 1.90]}, "time", resamples=0)
    assert not two.law.uses("p") and two.law.search["unaffordable"] == ["p"]
    assert any(n.startswith("the law leaves out 'p' although the data vary it: with 2 distinct configuration(s)")
               for n in two.notes)
    three = search({"p": [8.0, 64, 384], "time": [20.5, 2.9, 1.88]}, "time", resamples=0)
    assert three.law.uses("p") and "unaffordable" not in three.law.search
    assert not any(n.startswith("the law leaves out") for n in three.notes)
    flat = search({"p": [1.0, 2, 4, 8, 16] * 2, "time": [5.0, 5.02, 4.98, 5.01, 4.99] * 2}, "time", resamples=0)
    assert "unaffordable" not in flat.law.search  # a constant chosen on merit is not left out for want of data


def test_factors_the_grammar_does_not_reach_are_said():
    """A grammar whose rules name only p, on data that vary p and n: no law can follow n, and the
    run says so (law.json: search.unreached) instead of leaving n out unsaid."""
    rules = grammar.parse_text('[factors]\np = "extrinsic"\n[constants]\nc = { min = 0, max = inf }\n'
                               '[rules]\nstart = ["c + c/p", "c + c*p"]\n')
    p, n = np.meshgrid([1.0, 2, 4, 8], [1000.0, 4000])
    data = {"p": p.ravel(), "n": n.ravel(), "time": (1 + n / (100 * p)).ravel()}
    result = search(data, "time", rules, resamples=0)
    assert result.law.search["unreached"] == ["n"]
    assert any(note.startswith("grammar '") and "reaches no term in n of the data" in note for note in result.notes)
    assert "unreached" not in search(data, "time", resamples=0).law.search  # the default grammar reaches both


def test_a_law_of_several_constants_on_one_configuration_more_is_said_to_be_barely_tested():
    """Four runs at p = 1, 2, 4, 8: the law chosen from hundreds has three constants, one residual
    tests its form, and the search says its close fit tells little."""
    from exprsearch.identify import barely_tested_notes

    found = search({"p": [1.0, 2, 4, 8], "time": [42.5, 23.0, 14.1, 11.0]}, "time", resamples=0)
    said = [n for n in found.notes if "one residual tests its form" in n]
    assert len(found.law.constants) == 3 and len(said) == 1
    assert "3 constants for 4 measured configurations" in said[0] and "exprsearch suggest" in said[0]
    assert barely_tested_notes(3, 4, 30, "time") and barely_tested_notes(4, 5, 40, "time")
    assert not barely_tested_notes(3, 5, 100, "time")  # two residuals
    assert not barely_tested_notes(2, 3, 100, "time")  # a + b/p on three runs: the front keeps the simplest
    assert not barely_tested_notes(3, 4, 12, "time")  # chosen from a handful of laws the user wrote


def test_too_few_configurations_for_any_law_is_an_error_of_its_own_kind():
    """A grouped run counts the groups that failed for want of configurations by the error's kind
    (it had matched the message's words) to say that --by with fewer columns makes larger groups."""
    from exprsearch.errors import FewConfigurations, SearchError

    frame = pd.DataFrame({"p": [1.0, 2.0, 1.0, 2.0], "time": [3.0, 2.0, 3.1, 2.1]})
    with pytest.raises(FewConfigurations, match="2 distinct configurations") as raised:
        search(frame, target="time", grammar="data-parallel", resamples=0)
    assert isinstance(raised.value, SearchError)  # as before, for whoever catches that
