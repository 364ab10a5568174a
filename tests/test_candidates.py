
import pytest
import sympy

from exprsearch import candidates, counting, grammar, shared
from exprsearch import expand as expansion
from tests.conftest import grammar_head

BASE = "\n" + grammar_head(-2, 2)


def expand(rules: str, columns=("p", "n"), limits: str = "") -> candidates.CandidateSet:
    g = grammar.parse_text(BASE + rules + "\n" + limits, "test.toml")
    return candidates.generate(grammar.bind(g, columns))


def test_sums_in_either_order_are_one_candidate():
    found = expand('start = ["c*p + c*n", "c*n + c*p"]')
    assert [str(c) for c in found.candidates] == ["c0*n + c1*p"]
    assert found.generated == 2


def test_repeated_terms_merge_into_one_coefficient():
    found = expand('start = ["c*p + c*p", "c*p"]')
    assert [str(c) for c in found.candidates] == ["c0*p"]


def test_every_occurrence_becomes_its_own_constant():
    found = expand('start = "c + c*p**k + c*n**k"')
    (only,) = found.candidates
    assert {s.name for s in only.linear} == {"c0", "c1", "c2"}
    assert {s.name for s in only.nonlinear} == {"k0", "k1"}
    assert only.template == sympy.sympify(str(only.template), locals={s.name: s for s in only.template.free_symbols})


def test_exponents_on_an_end_of_their_range_are_at_limits():
    """Only the nonlinear constants count: a coefficient at its bound 0 is the loose warning's."""
    (only,) = expand('start = "c + c*p**k + c*n**k"').candidates
    assert only.at_limits({"c0": 0.0, "c1": 1.0, "c2": 2.0, "k0": -2.0, "k1": 1.5}) == {"k0": (-2.0, 2.0)}
    assert only.at_limits({"c0": 0.0, "c1": 0.0, "c2": 2.0, "k0": 1.9999, "k1": 2 - 1e-9}) == {"k1": (-2.0, 2.0)}


def test_separable_structure():
    (only,) = expand('start = "c + c*n/p + c*p**k"').candidates
    assert len(only.basis) == 3 and only.offset == 0
    rebuilt = sum(c * b for c, b in zip(only.linear, only.basis))
    assert sympy.simplify(rebuilt - only.template) == 0


def test_repetition_sums_distinct_expansions_and_limits_apply():
    found = expand('start = "c + <t>{1,2}"\nt = ["c*<factor>", "c*log2(<factor>)", "c*<factor>**k"]',
                   limits="[limits]\nmax_nonlinear = 1\n")
    texts = [str(c) for c in found.candidates]
    assert "c0 + c1*p" in texts and "c0 + c1*p + c2*log2(n)" in texts
    assert all(len(c.nonlinear) <= 1 for c in found.candidates)
    assert len(texts) == len(set(texts))
    # 6 single terms, C(6,2) pairs minus the 1 pair with two exponents
    assert len(found) == 6 + 15 - 1


def test_order_is_deterministic_and_simplest_first():
    rules = 'start = "c + <t>{1,3}"\nt = ["c*<factor>", "c/<factor>", "c*log2(<factor>)"]'
    first = [str(c) for c in expand(rules).candidates]
    assert first == [str(c) for c in expand(rules).candidates]
    sizes = [c.complexity for c in expand(rules).candidates]
    assert sizes == sorted(sizes)


def test_max_candidates_keeps_the_simplest():
    rules = 'start = "c + <t>{1,3}"\nt = ["c*<factor>", "c/<factor>", "c*log2(<factor>)"]'
    found = expand(rules, limits="[limits]\nmax_candidates = 5\n")
    assert len(found) == 5
    assert any("max_candidates" in reason for reason in found.dropped)
    assert max(c.complexity for c in found.candidates) <= min(
        c.complexity for c in expand(rules).candidates[5:]
    )


@pytest.mark.slow
def test_builtin_grammars_expand():
    for name in grammar.builtin_names():
        g = grammar.load(name)
        columns = tuple(dict.fromkeys(("p", "n", "L", *(f.name for f in g.factors))))  # its own factors too
        found = candidates.generate(grammar.bind(g, columns, intrinsic=("L",)))
        assert len(found) > 2, name


def test_two_exponents_in_one_term_are_two_constants():
    found = expand('start = "c + c*p**k*n**k"')
    (only,) = found.candidates
    assert {s.name for s in only.nonlinear} == {"k0", "k1"}
    assert only.n_nonlinear == 2


def test_products_multiply_transforms_of_different_factors_only():
    found = expand('start = "c + <term>"\nterm = "c * <t>*{1,2}"\nt = ["<factor>", "1/<factor>", "log2(<factor>)"]',
                   columns=("p", "n", "L"))
    texts = {str(c) for c in found.candidates}
    # 3 factors × 3 transforms alone, 3 pairs of factors × 3 × 3 products
    assert len(found) == 9 + 27
    assert "L*c1/p + c0" in texts and "c0 + c1*log2(L)*log2(n)" in texts and "L*c1*n + c0" in texts
    assert not any("p**2" in t or "log2(p)/p" in t for t in texts)  # never two transforms of one factor


def test_an_optional_sum_includes_the_bare_constant():
    found = expand('start = "c + <t>{0,1}"\nt = ["c*<factor>"]')
    assert sorted(str(c) for c in found.candidates) == ["c0", "c0 + c1*n", "c0 + c1*p"]


@pytest.mark.parametrize("limits", ["", "[limits]\nmax_nonlinear = 1\nmax_complexity = 14\n",
                                    "[limits]\nmax_terms = 3\n"])
def test_the_counted_space_is_the_enumerated_space(limits):
    rules = ('start = "c + <term>{1,3}"\nterm = "c * <t>*{1,2}"\n'
             't = ["<factor>", "1/<factor>", "log2(<factor>)", "<factor>**k"]')
    found = expand(rules, limits=limits)
    assert not found.screened and not any("max_candidates" in r for r in found.dropped)
    g = grammar.bind(grammar.parse_text(BASE + rules + "\n" + limits, "t.toml"), ("p", "n"))
    expander = expansion.Expander(g)
    items = expander.expand("term", g.limits.max_depth)
    fixed = expander.decompose(sympy.Symbol("c", real=True))
    ref = g.rules["start"][0].references[0]
    total, by_constants = counting.sum_count(items, ref, g.limits, fixed)
    assert total == len(found)
    assert dict(by_constants) == found.space


@pytest.mark.parametrize("low", [0, 1])
def test_exhaustive_expansion_of_a_huge_sum_keeps_the_simplest_and_counts_the_rest(low):
    rules = (f'start = "c + <term>{{{low},3}}"\nterm = "c * <t>*{{1,2}}"\n'
             't = ["<factor>", "1/<factor>", "log2(<factor>)", "sqrt(<factor>)", "<factor>**2", "<factor>**3"]')
    found = expand(rules, columns=("p", "n", "L"), limits="[limits]\nmax_candidates = 1000\n")
    assert len(found) == 1000
    assert (str(found.candidates[0]) == "c0") == (low == 0)
    # one reason: the bare constant takes a place among the sums, not one more cut at the end
    (reason, count), = [(r, n) for r, n in found.dropped.items() if "max_candidates" in r]
    assert len(found) + count == sum(found.space.values()) or count > 100_000


def _described(found: candidates.CandidateSet) -> list:
    return [(c.complexity, [(t.generic, t.pattern, t.kinds, t.coefficient, t.key, t.complexity, t.merge)
                            for t in c.terms]) for c in found.candidates]


ODD_TRANSFORMS = BASE + """
start = "c + <term>{1,2}"
term = ["c * <transform>*{1,2}", "k * <transform>*{1,2}"]
transform = ["c*<factor>", "<factor>**2", "<factor>**k", "2*<factor>", "c**2*<factor>", "<factor> + c"]
"""


@pytest.mark.parametrize("which", [pytest.param("default", marks=pytest.mark.slow), "odd"])  # default: 2.3 s
def test_terms_made_directly_are_the_terms_analyse_makes(monkeypatch, which):
    """Products of transforms and ``c·<transform>*{1,3}`` terms are built from their parts
    (Expander._multiplied, Expander._scaled); the default grammar over three factors gives the
    same candidates, term for term, as the general path."""
    chosen = grammar.load("default") if which == "default" else grammar.parse_text(ODD_TRANSFORMS, "odd.toml")
    bound = grammar.bind(chosen, ("p", "n", "w") if which == "default" else ("p", "n"))
    made: list[int] = []
    direct = expansion.Expander._scaled

    def counted(self, kind, expansion_):
        out = direct(self, kind, expansion_)
        made.append(out is not None)
        return out

    monkeypatch.setattr(expansion.Expander, "_scaled", counted)
    fast = _described(candidates.generate(bound))
    monkeypatch.setattr(expansion.Expander, "_scaled", lambda self, kind, e: None)
    monkeypatch.setattr(expansion.Expander, "_multiplied", lambda self, combo: None)
    assert sum(made) > (500 if which == "default" else 5)
    shared.clear()  # else the general path would find the fast path's terms and expansions kept
    assert fast == _described(candidates.generate(bound))


RECURSIVE = BASE + """
start = "c + <term>{1,2}"
term = ["c * <t>", "c * <t> * <term>"]
t = ["<factor>", "log2(<factor>)"]
[limits]
max_depth = 5
max_candidates = 50
"""


@pytest.mark.parametrize("which", [pytest.param("default", marks=pytest.mark.slow), pytest.param("pmnf", marks=pytest.mark.slow),
                                   "generic-dl", "recursive"])  # default and pmnf: 2 s each
def test_a_second_expansion_of_a_grammar_is_the_first(which):
    """Expansions no choice or cut went into are kept for the next search of the same grammar (a
    profile's series); replayed, they give the same candidates, counts and producers, also where
    a rule refers to itself or the sums are cut to the simplest."""
    chosen = grammar.parse_text(RECURSIVE, "r.toml") if which == "recursive" else grammar.load(which)
    bound = grammar.bind(chosen, ("p", "n", "L"), intrinsic=("L",))

    def everything(found: candidates.CandidateSet) -> tuple:
        return (_described(found), found.generated, found.dropped, found.space, found.screened,
                {str(g): rule for g, rule in found.producers.items()})

    shared.clear()
    cold = everything(candidates.generate(bound))
    assert shared._TABLES[next(k for k in shared._TABLES if k[0] == "expansions")][0]  # something was kept
    assert everything(candidates.generate(bound)) == cold


@pytest.mark.slow
def test_searches_share_term_analyses_without_changing_any_law():
    """Term analyses, term shapes and their slopes, identifiability verdicts, term columns on the factors' values
    and the grid's lines are kept per process for the next search over the same constants, factors and grid —
    a profile's series — and must not change what any search finds, whichever searches ran
    before."""
    import numpy as np
    import pandas as pd

    from exprsearch.search import search

    def table(law, seed):
        rng = np.random.default_rng(seed)
        return pd.DataFrame([{"p": p, "n": n, "time": law(p, n) * (1 + 0.02 * rng.standard_normal())}
                             for p in (1, 2, 4, 8, 16) for n in (10, 20, 40, 80) for _ in range(2)])

    first, second = table(lambda p, n: 2 + 0.5 * n / p, 1), table(lambda p, n: 1 + 0.1 * n * np.log2(p + 1), 2)

    def record(frame):
        law = search(frame, "time", "pmnf", resamples=0).law
        return str(law.template), law.constants, law.search

    shared.clear()
    cold = record(second)
    record(first)  # warms the shared analyses with another series' terms
    assert record(second) == cold
    assert {kind for kind, _ in shared._TABLES} == {"terms", "expansions", "shapes", "reasons", "values",
                                                          "lines", "slopes"}


def test_a_term_two_rules_make_is_labelled_by_the_first_in_the_grammar():
    found = expand('start = "c + <later>{0,1}"\nfirst = ["c*p", "c*n"]\nlater = ["c*p", "<first>"]')
    c, p, n = sympy.Symbol("c", real=True), sympy.Symbol("p", positive=True), sympy.Symbol("n", positive=True)
    assert found.producers[c * p] == "first" and found.producers[c * n] == "first"
    assert set(found.producers) == {c * p, c * n}


def test_a_term_varies_only_where_its_column_holds_a_factor():
    c, k, p = sympy.Symbol("c", real=True), sympy.Symbol("k", real=True), sympy.Symbol("p", positive=True)
    kinds = {c: "c", k: "k"}
    assert candidates.analyse(c * p**k, kinds).varies
    assert not candidates.analyse(c, kinds).varies
    assert not candidates.analyse(c * 2**k, kinds).varies  # a fitted constant, but no factor


def test_canonical_drops_numbers_and_powers_of_a_lone_constant():
    """2·c·p and c²·p are c·p (one constant either way); c·p**k keeps its exponent constant."""
    from exprsearch.candidates import canonical

    c, k, p = sympy.symbols("c k p")
    kinds = frozenset({c, k})
    assert canonical(2 * c * p, kinds) == c * p and canonical(c**2 * p, kinds) == c * p
    assert canonical(c * p**k, kinds) == c * p**k and canonical(3 * p, kinds) == 3 * p
