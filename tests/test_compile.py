import numpy as np
import sympy

from exprsearch import candidates, grammar
from exprsearch.compile import Compiler, factor_symbol, to_function
from exprsearch.vocabulary import parse

p, n = factor_symbol("p"), factor_symbol("n")
k0, c0, c1 = sympy.symbols("k0 c0 c1", real=True)


def test_to_function_matches_sympy_evaluation():
    expr = parse("3.1 + 0.002*n/p + 0.5*log2(p) + sqrt(n)", {"p": p, "n": n})
    f = to_function(expr, ["p", "n"])
    columns = [np.array([1.0, 8.0, 64.0]), np.array([100.0, 1000.0, 5.0])]
    expected = [float(expr.subs({p: a, n: b})) for a, b in zip(*columns)]
    np.testing.assert_allclose(f(columns), expected, rtol=1e-12)


def test_compiling_imports_none_of_numpys_unused_submodules():
    """``from numpy import *`` (lambdify's modules="numpy") imports numpy.f2py, numpy.testing and
    more, ~40 ms of every run's start; the compiled functions need only numpy's namespace."""
    import subprocess
    import sys

    code = ("import sys; from exprsearch.compile import to_function, factor_symbol; import sympy; "
            "p = factor_symbol('p'); f = to_function(sympy.log(p, 2) + sympy.sqrt(p) + p**2, ['p']); "
            "import numpy; print(f([numpy.array([4.0])])[0], "
            "[m for m in ('numpy.f2py', 'numpy.testing', 'numpy.polynomial') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["20.0", "[]"]


def test_population_is_evaluated_in_one_call():
    f = to_function(p**k0, ["p"], [k0])
    out = f([np.array([1.0, 2.0, 4.0])], [np.array([[0.0], [1.0], [2.0]])])
    np.testing.assert_allclose(out, [[1, 1, 1], [1, 2, 4], [1, 4, 16]])


def candidate(rules: str, columns=("p",)):
    g = grammar.parse_text("[factors]\np = \"extrinsic\"\n[constants]\nc = { min = 0, max = inf }\nk = { min = -1, max = 1 }\n[rules]\n" + rules,
                           "test.toml")
    (only,) = candidates.generate(grammar.bind(g, columns)).candidates
    return only


def test_design_and_shared_terms():
    X = np.array([[1.0], [2.0], [4.0]])
    compiler = Compiler(["p"], X)
    basis, offset = compiler.compile(candidate('start = "c + c*p**k"')).design(np.array([[1.0, -1.0]]))
    np.testing.assert_allclose(basis[:, :, 0], 1.0)
    np.testing.assert_allclose(basis[:, :, 1], [[1, 2, 4], [1, 0.5, 0.25]])
    assert offset.shape == (2, 3) and not offset.any()
    compiler.compile(candidate('start = "c*p**k"'))
    assert len(compiler._functions) == 1  # p**k compiled once for both candidates


def test_terms_without_a_coefficient_are_the_offset():
    compiled = Compiler(["p"], np.array([[1.0], [2.0]])).compile(candidate('start = "p**2 + c*p"'))
    basis, offset = compiled.design(np.zeros((0, 1)))
    np.testing.assert_allclose(basis[0, :, 0], [1, 2])
    np.testing.assert_allclose(offset[0], [1, 4])


def test_a_column_is_evaluated_for_many_values_of_its_constant():
    compiler = Compiler(["p"], np.array([[1.0], [2.0], [4.0]]))
    key = candidate('start = "c*p**k"').terms[0].key
    np.testing.assert_allclose(compiler.values(key, np.array([0.0, 1.0])), [[1, 1, 1], [1, 2, 4]])


def test_term_columns_are_shared_only_by_compilers_of_the_same_factor_values():
    """A profile's series share the columns computed on their common grid; a search on other
    values of the factors must compute its own (and a pickled compiler finds the table again)."""
    import pickle

    import sympy

    from exprsearch import shared

    shared.clear()
    p = sympy.Symbol("p", positive=True)
    first = Compiler(["p"], np.array([[1.0], [2.0], [4.0]]))
    np.testing.assert_allclose(first.value(p**2), [1, 4, 16])
    same = Compiler(["p"], np.array([[1.0], [2.0], [4.0]]))
    assert p**2 in same._values
    other = Compiler(["p"], np.array([[1.0], [3.0], [4.0]]))
    np.testing.assert_allclose(other.value(p**2), [1, 9, 16])
    np.testing.assert_allclose(first.value(p**2), [1, 4, 16])
    assert p**2 in pickle.loads(pickle.dumps(first))._values
    shared.clear()
