import numpy as np
import sympy

from exprsearch.candidates import Candidate
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


def test_population_is_evaluated_in_one_call():
    f = to_function(p**k0, ["p"], [k0])
    out = f([np.array([1.0, 2.0, 4.0])], [np.array([[0.0], [1.0], [2.0]])])
    np.testing.assert_allclose(out, [[1, 1, 1], [1, 2, 4], [1, 4, 16]])


def test_design_and_shared_terms():
    candidate = Candidate(c0 + c1 * p**k0, (c0, c1), (sympy.Integer(1), p**k0), sympy.Integer(0),
                          (k0,), {"c0": (0, np.inf), "c1": (0, np.inf), "k0": (-1, 1)}, 7)
    X = np.array([[1.0], [2.0], [4.0]])
    compiler = Compiler(["p"], X)
    basis, offset = compiler.compile(candidate).design(np.array([[1.0, -1.0]]))
    np.testing.assert_allclose(basis[:, :, 0], 1.0)
    np.testing.assert_allclose(basis[:, :, 1], [[1, 2, 4], [1, 0.5, 0.25]])
    assert offset.shape == (2, 3) and not offset.any()
    other = Candidate(c0 * p**k0, (c0,), (p**k0,), sympy.Integer(0), (k0,), {}, 5)
    compiler.compile(other)
    assert len(compiler._functions) == 1  # p**k0 compiled once for both candidates
