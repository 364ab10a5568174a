import math
import re

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from exprsearch import grammar
from exprsearch.errors import BindingError, GrammarError

GOOD = """
[factors]
p = { role = "extrinsic", about = "workers" }
n = { role = "extrinsic", about = "samples" }

[constants]
c = { min = 0, max = inf }
k = { min = 0.25, max = 3 }

[rules]
start = ["c + <terms>"]
terms = ["<term>", "<term> + <terms>"]
term  = ["c * <work>", "c * <comm>"]
work  = ["n/p", "n**k/p"]
comm  = ["log2(p)", "p", "sqrt(p)"]

[limits]
max_terms = 3
"""


def test_builtin_grammars_load():
    assert {"default", "pmnf", "generic-dl", "data-parallel"} <= set(grammar.builtin_names())
    for name in grammar.builtin_names():
        g = grammar.load(name)
        assert "start" in g.rules and g.description


def test_parses_factors_constants_rules_and_limits():
    g = grammar.parse_text(GOOD, "good.toml")
    assert [f.name for f in g.factors] == ["p", "n"]
    assert g.constant("k").min == 0.25
    assert len(g.rules["comm"]) == 3 and g.limits.max_terms == 3


@pytest.mark.parametrize(
    "edit, fragment",
    [
        (("[rules]", "[rules"), "TOML syntax error"),
        (('work  = ["n/p"', 'work  = ["n/q"'), "line 14: rule 'work': unknown name 'q'"),
        (('comm  = ["log2(p)"', 'comm  = ["lg(p)"'), "line 15: rule 'comm': unknown function 'lg'"),
        (('term  = ["c * <work>"', 'term  = ["c * <wrk>"'), "line 13: rule 'term' refers to unknown rule '<wrk>' (did you mean 'work'?)"),
        (('terms = ["<term>", ', 'terms = ['), "rule 'terms' can never finish"),
        (("[limits]", "[limit]"), "unknown section or key 'limit' (did you mean 'limits'?)"),
        (("max_terms = 3", "max_terms = 0"), "limit 'max_terms' must be a whole number >= 1"),
        (('role = "extrinsic", about = "workers"', 'role = "extrinsik"'), "role 'extrinsik' (did you mean 'extrinsic'?)"),
        (("k = { min = 0.25, max = 3 }", "k = { min = 3, max = 1 }"), "constant 'k' needs numbers min < max"),
        (('start = ["c + <terms>"]', 'begin = ["c + <terms>"]'), "needs a 'start' rule"),
        (("c = { min = 0, max = inf }", "c = { min = 0, max = inf, negative_if_growing = 1 }"),
         "line 7: constant 'c': negative_if_growing must be true or false, got 1"),
        (("k = { min = 0.25, max = 3 }", "k = { min = 0.25, max = 3, negative_if_growing = true }"),
         "line 8: constant 'k': negative_if_growing frees a constant bounded below by 0; this one has min = 0.25"),
        (("c = { min = 0, max = inf }", "c = { min = 0, max = inf, negative = true }"),
         "constant 'c' has unknown key 'negative'; use min, max, about, negative_if_growing"),
    ],
)
def test_broken_grammars_are_rejected_with_file_and_line(edit, fragment):
    broken = GOOD.replace(*edit)
    assert broken != GOOD
    with pytest.raises(GrammarError) as info:
        grammar.parse_text(broken, "mine.toml")
    assert str(info.value).startswith("mine.toml")
    assert fragment in str(info.value)


def test_toml_syntax_error_names_the_line():
    with pytest.raises(GrammarError, match=r"line 3"):
        grammar.parse_text('[rules]\nstart = "c"\nthis is not toml\n', "bad.toml")


def test_unknown_builtin_and_missing_file(tmp_path):
    with pytest.raises(GrammarError, match="did you mean 'default'"):
        grammar.load("defualt")
    with pytest.raises(GrammarError, match="does not exist"):
        grammar.load(tmp_path / "nope.toml")


def test_bind_maps_names_and_adds_free_factors():
    g = grammar.parse_text(GOOD, "good.toml")
    bound = grammar.bind(g, ("gpus", "n", "L"), mapping={"p": "gpus"}, intrinsic=("L",))
    assert [(f.name, f.column, f.role) for f in bound.factors] == [
        ("p", "gpus", "extrinsic"), ("n", "n", "extrinsic"), ("L", "L", "intrinsic"),
    ]
    assert [a.text for a in bound.rules["intrinsic"]] == ["L"]
    assert [a.text for a in bound.rules["other"]] == ["L"]


def test_bind_rejects_missing_factor_and_bad_map():
    g = grammar.parse_text(GOOD, "good.toml")
    with pytest.raises(BindingError, match="needs factor 'p' .*pass --map p=gpus$"):  # the one column left
        grammar.bind(g, ("gpus", "n"))
    parallel = grammar.load("data-parallel")  # p: "workers (processes, GPUs or nodes)"
    with pytest.raises(BindingError, match="pass --map p=GPU_count$"):  # of two columns, the one it describes
        grammar.bind(parallel, ("GPU_count", "batch_size"))
    with pytest.raises(BindingError, match="pass --map p=COLUMN$"):  # neither is described: no guess
        grammar.bind(parallel, ("a", "b"))
    with pytest.raises(BindingError, match="'q' is not a factor of grammar"):
        grammar.bind(g, ("p", "n"), mapping={"q": "p"})
    with pytest.raises(BindingError, match="--intrinsic names 'L'"):
        grammar.bind(g, ("p", "n"), intrinsic=("L",))


def test_products_and_optional_sums_parse_and_bad_counts_are_refused():
    text = """[constants]
c = { min = 0, max = inf }
[rules]
start = "c + <term>{0,2}"
term = "c * <t>*{1,2}"
t = ["<factor>", "1/<factor>"]
"""
    g = grammar.parse_text(text, "mine.toml")
    (ref,) = g.rules["term"][0].references
    assert (ref.rule, ref.low, ref.high, ref.product) == ("t", 1, 2, True)
    assert g.rules["start"][0].references[0].low == 0
    with pytest.raises(GrammarError, match=r"line 5: '<t>\*\{0,2\}' needs 1 <= low <= high"):
        grammar.parse_text(text.replace("<t>*{1,2}", "<t>*{0,2}"), "mine.toml")


def test_columns_named_like_constants_are_searched_under_their_names():
    g = grammar.load("default")
    for columns in (("p", "c1"), ("p", "c"), ("c", "cc0")):  # cc0: the new name must not clash either
        bound = grammar.bind(g, columns)
        kind, other = bound.constants
        assert other == g.constants[1]  # k0, k1 clash with no column
        numbered = re.compile(rf"^{kind.name}\d*$")
        assert kind.written == "c" and not any(numbered.match(c) for c in columns)
        symbols = bound.symbols()
        assert symbols["c"] == sympy.Symbol(kind.name, real=True)  # the rules' c is still the constant
        keys = [f.name for f in bound.factors]
        assert [symbols[k] for k in keys] == [sympy.Symbol(c, positive=True) for c in columns]
        assert [a.text for a in bound.rules["factor"]] == keys
    assert grammar.bind(g, ("p", "cores", "kv")).constants == g.constants  # no clash, no rename
    # a column named like a declared factor that is mapped elsewhere is a factor of its own
    bound = grammar.bind(grammar.load("data-parallel"), ("workers", "p"), {"p": "workers"})
    assert [(f.name, f.column) for f in bound.factors] == [("p", "workers"), ("p_", "p")]


def test_columns_named_like_law_py_names_are_bound():
    """law.py renames its own names around the factors, so binding takes such columns as they are."""
    g = grammar.load("default")
    bound = grammar.bind(g, ("numpy", "predict", "FACTORS", "TARGET"))
    assert [f.column for f in bound.factors] == ["numpy", "predict", "FACTORS", "TARGET"]
    assert grammar.bind(g, ("p", "cores", "kv")).bound  # a kind's letters followed by others are fine
    text = "[constants]\nc1 = { min = 0, max = inf }\n[rules]\nstart = \"c1\"\n"
    with pytest.raises(GrammarError, match="line 2: constant kind 'c1' must be letters only"):
        grammar.parse_text(text, "mine.toml")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["c", "c0", "c12", "cc", "cc1", "ccc", "k", "k1", "kk0", "p", "p_", "c_", "n"]),
                min_size=1, max_size=4, unique=True))
def test_any_columns_bind_with_distinct_names_for_factors_and_constants(columns):
    bound = grammar.bind(grammar.load("default"), tuple(columns))
    keys = [f.name for f in bound.factors]
    assert len(set(keys)) == len(keys) and [f.column for f in bound.factors] == columns
    kinds = [k.name for k in bound.constants]
    assert len(set(kinds)) == len(kinds)
    for kind in kinds:  # no numbered constant reads as a column
        assert not any(re.fullmatch(rf"{kind}\d*", column) for column in columns)
    symbols = bound.symbols()
    assert {symbols[k] for k in keys} == {sympy.Symbol(c, positive=True) for c in columns}
    assert [symbols[k.written or k.name] for k in bound.constants] == [sympy.Symbol(k, real=True) for k in kinds]


def test_a_segment_s_grammar_frees_the_constant_every_law_adds():
    """free_constant: the lone non-negative constant of the start rule becomes a kind of either sign
    (named ``a`` as in pmnf, or another name where ``a`` is taken); coefficients, rule references
    and grammars whose constant is already free are left as they were."""
    freed = grammar.free_constant(grammar.load("default"))
    assert [a.text for a in freed.rules["start"]] == ["a + <term>{0,3}"]
    assert freed.constant("a").min == -math.inf and freed.constant("c").min == 0
    assert freed.rules["term"] == grammar.load("default").rules["term"]
    assert [a.references for a in freed.rules["start"]] == [a.references for a in grammar.load("default").rules["start"]]
    pmnf = grammar.load("pmnf")
    assert grammar.free_constant(pmnf) is pmnf
    text = ('[constants]\nc = { min = 0, max = inf }\na = { min = 1, max = 2 }\n[rules]\n'
            'start = ["c + c*<x>", "c*<x>", "<x> + c + log2(c*<x>)"]\nx = "a*<factor>"\n')
    own = grammar.free_constant(grammar.parse_text(text, "mine.toml"))
    assert [a.text for a in own.rules["start"]] == ["a_ + c*<x>", "c*<x>", "<x> + a_ + log2(c*<x>)"]
    bound = grammar.bind(freed, ("a", "p"))  # a column named like the new kind keeps its name
    assert [f.column for f in bound.factors] == ["a", "p"] and bound.constants[-1].written == "a"
