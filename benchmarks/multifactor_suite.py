"""The synthetic multi-factor suite: laws of the kinds distributed training and HPC codes follow,
the small grids they are measured on, and how a found law is judged against the truth (the form it
has, its error at 4x and 8x the largest measured values). ``multifactor.py`` runs it; other
benchmarks (random laws, calibration, per-step, symbolic regression) measure and judge the same way."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
import sympy

from exprsearch import grammar


@dataclass(frozen=True)
class Case:
    """A law with known truth, the grid it is measured on and the factors it is scaled along."""

    name: str
    truth: str
    grid: dict[str, list[float]]
    scale: tuple[str, ...]
    form: str  # the true form in grammar syntax (c: coefficients, k: fitted exponents)


P = [1, 2, 4, 8, 16]
CASES = [
    Case("Amdahl + linear communication", "2 + 0.01*n/p + 0.15*p", {"p": P, "n": [1e3, 4e3, 16e3]}, ("p", "n"),
         "c + c*n/p + c*p"),
    Case("Amdahl + log communication", "1 + 0.01*n/p + 0.5*log2(p)", {"p": P, "n": [1e3, 4e3, 16e3]}, ("p", "n"),
         "c + c*n/p + c*log2(p)"),
    Case("fitted communication power", "1 + 0.01*n/p + 0.05*p**1.4", {"p": P + [32], "n": [1e3, 4e3, 16e3]},
         ("p", "n"),
         "c + c*n/p + c*p**k"),
    Case("per-layer compute and communication", "0.5 + 2e-4*L*n/p + 0.05*L*log2(p)",
         {"L": [2, 4, 8, 16], "n": [1e3, 4e3, 16e3], "p": [1, 2, 4, 8]}, ("p", "n"),
         "c + c*L*n/p + c*L*log2(p)"),
    Case("per-layer compute only", "0.3 + 1e-4*L*n/p", {"L": [2, 4, 8, 16], "n": [1e3, 4e3, 16e3], "p": [1, 2, 4, 8]},
         ("p", "n", "L"), "c + c*L*n/p"),
    Case("parameters x samples / workers", "1 + 1e-6*w*s/p", {"w": [1e5, 1e6, 1e7], "s": [100, 400, 1600],
                                                              "p": [1, 2, 4, 8]}, ("p", "s"), "c + c*w*s/p"),
    Case("per-step overhead over batch and workers", "0.2 + 0.05*n/(p*b) + 2e-3*n/p",
         {"n": [1e3, 4e3, 16e3], "p": [1, 2, 4, 8], "b": [16, 32, 64, 128]}, ("p", "n"), "c + c*n/(p*b) + c*n/p"),
    Case("generic model term n^a/p^b", "2 + 0.003*n**1.3/p**0.8", {"n": [1e3, 2e3, 4e3, 8e3], "p": P}, ("p", "n"),
         "c + c*n**k*p**k"),
    Case("generic model term L^a n / p^b", "0.5 + 2e-4*L**1.2*n/p**0.9",
         {"L": [2, 4, 8, 16], "n": [1e3, 4e3, 16e3], "p": [1, 2, 4, 8]}, ("p", "n"), "c + c*L**k*n*p**k"),
    Case("parameter server (traffic ~ params x workers)", "0.5 + 0.002*n/p + 2e-8*w*p",
         {"n": [1e3, 4e3, 16e3], "p": P, "w": [1e6, 4e6, 16e6]}, ("p", "n"), "c + c*n/p + c*w*p"),
    Case("tree all-reduce (params x log2 p)", "0.5 + 0.002*n/p + 1e-7*w*log2(p)",
         {"n": [1e3, 4e3, 16e3], "p": P, "w": [1e6, 4e6, 16e6]}, ("p", "n"), "c + c*n/p + c*w*log2(p)"),
    Case("all-reduce with latency", "0.3 + 0.002*n/p + 0.02*log2(p) + 3e-8*w",
         {"n": [1e3, 4e3, 16e3], "p": P, "w": [1e6, 4e6, 16e6]}, ("p", "n"), "c + c*n/p + c*log2(p) + c*w"),
    Case("quadratic work over workers", "1 + 1e-6*n**2/p", {"n": [1e3, 2e3, 4e3, 8e3], "p": P}, ("p", "n"),
         "c + c*n**2/p"),
    Case("n log n work over workers + log comm", "0.5 + 2e-5*n*log2(n)/p + 0.1*log2(p)",
         {"n": [1e3, 4e3, 16e3, 64e3], "p": P}, ("p", "n"), "c + c*n*log2(n)/p + c*log2(p)"),
    Case("weak scaling with sqrt communication", "1 + 0.001*n + 0.2*sqrt(p)", {"n": [1e3, 2e3, 4e3], "p": P},
         ("p",), "c + c*n + c*sqrt(p)"),
    Case("bottleneck growing as p^2", "1 + 0.01*n/p + 0.004*p**2", {"n": [1e3, 4e3, 16e3], "p": P}, ("p", "n"),
         "c + c*n/p + c*p**2"),
    Case("layers over pipeline devices", "0.2 + 0.5*L/p + 0.05*p", {"L": [8, 16, 32, 64], "p": [1, 2, 4, 8]},
         ("L", "p"), "c + c*L/p + c*p"),
    Case("per-layer params over workers + per-layer log comm", "0.3 + 1e-7*L*w/p + 0.02*L*log2(p)",
         {"L": [2, 4, 8, 16], "w": [1e5, 1e6, 1e7], "p": [1, 2, 4, 8]}, ("p", "L"), "c + c*L*w/p + c*L*log2(p)"),
    Case("Extra-P text example s^1.5 p", "1 + 0.05*s**1.5*p", {"s": [2, 4, 6, 8, 10], "p": [1, 2, 3, 4, 5]},
         ("s", "p"), "c + c*s**(3/2)*p"),
    Case("Extra-P x^2 log y + x y^2 z", "1 + 0.2*x**2*log2(y) + 0.1*x*y**2*z",
         {"x": [2, 4, 6, 8, 10], "y": [2, 4, 6, 8, 10], "z": [2, 4, 6, 8, 10]}, ("x", "y", "z"),
         "c + c*x**2*log2(y) + c*x*y**2*z"),
    Case("Extra-P product x^2 y^(1/2)", "200 + 10*x**2*sqrt(y)", {"x": [2, 4, 8, 16, 32], "y": [2, 4, 8, 16, 32]},
         ("x", "y"), "c + c*x**2*sqrt(y)"),
    Case("Extra-P sum x log x + y^(3/2)", "200 + 10*x*log2(x) + 20*y**1.5",
         {"x": [2, 4, 8, 16, 32], "y": [2, 4, 8, 16, 32]}, ("x", "y"), "c + c*x*log2(x) + c*y**(3/2)"),
    Case("Extra-P product of three", "200 + 10*x*y*log2(z)", {"x": [2, 4, 8, 16], "y": [2, 4, 8, 16],
                                                               "z": [2, 4, 8, 16]}, ("x", "y", "z"),
         "c + c*x*y*log2(z)"),
    Case("strong + weak scaling mix", "1 + 40/p + 0.002*n", {"n": [1e3, 2e3, 4e3], "p": P}, ("p", "n"),
         "c + c/p + c*n"),
    Case("work n^1.5 over workers", "0.5 + 1e-5*n**1.5/p", {"n": [1e3, 2e3, 4e3, 8e3], "p": P}, ("p", "n"),
         "c + c*n**(3/2)/p"),
    Case("model parallel: params / devices + activations x log", "0.2 + 1e-6*w/p + 1e-3*b*log2(p)",
         {"w": [1e5, 1e6, 1e7], "b": [16, 64, 256], "p": [1, 2, 4, 8]}, ("p", "w"),
         "c + c*w/p + c*b*log2(p)"),
    Case("data x model with fitted power on params", "0.4 + 3e-5*n*w**0.8/p", {"n": [1e3, 4e3, 16e3],
                                                                           "w": [1e4, 1e5, 1e6], "p": [1, 2, 4, 8]},
         ("p", "n"), "c + c*n*w**k/p"),
    Case("CNTK-style: init overhead + compute + p log p", "5 + 0.02*n/p + 0.01*p*log2(p)",
         {"n": [1e3, 4e3, 16e3], "p": P}, ("p", "n"), "c + c*n/p + c*p*log2(p)"),
    # three single-factor terms beside each other (added 2026-11-25: the screening's greedy beam
    # preferred products such as log2(p)/b and missed them)
    Case("samples / workers + log comm + per-batch overhead", "2 + 0.01*s/p + 0.3*log2(p) + 50/b",
         {"s": [1e3, 4e3, 16e3], "p": P, "b": [16, 32, 64]}, ("p", "s"), "c + c*s/p + c*log2(p) + c/b"),
    Case("samples / workers + linear comm + per-batch overhead", "1 + 2e-3*s/p + 0.05*p + 20/b",
         {"s": [1e3, 4e3, 16e3], "p": P, "b": [16, 32, 64]}, ("p", "s"), "c + c*s/p + c*p + c/b"),
]


def factor_symbols(names) -> dict[str, sympy.Symbol]:
    return {name: sympy.Symbol(name, positive=True) for name in names}


def measure(case: Case, seed: int, repetitions: int = 3, noise: float = 0.02) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = list(case.grid)
    rows = np.array(list(itertools.product(*case.grid.values())), dtype=float)
    rows = np.repeat(rows, repetitions, axis=0)
    truth = evaluate(case.truth, names, rows)
    frame = pd.DataFrame(rows, columns=names)
    frame["time"] = truth * (1 + noise * rng.standard_normal(len(rows)))
    return frame


def evaluate(expression: str, names: list[str], rows: np.ndarray) -> np.ndarray:
    symbols = factor_symbols(names)
    expr = sympy.sympify(expression, locals={"log2": lambda v: sympy.log(v, 2), **symbols})
    function = sympy.lambdify([list(symbols.values())], expr, "numpy")
    return np.broadcast_to(function([rows[:, i] for i in range(rows.shape[1])]), len(rows)).astype(float)


def test_points(case: Case, factors: tuple[str, ...] | None = None, multiples=(4.0, 8.0)) -> np.ndarray:
    """Each scaling factor at 4× and 8× its largest measured value, the others at their smallest
    and largest: every combination."""
    axes = []
    for name, values in case.grid.items():
        if name in (factors or case.scale):
            axes.append([max(values) * m for m in multiples])
        else:
            axes.append(sorted({min(values), max(values)}))
    return np.array(list(itertools.product(*axes)), dtype=float)


def signature(expr: sympy.Expr, names: list[str]) -> frozenset:
    """The law's terms as sets of (factor or log2 factor, exponent), coefficients dropped."""
    symbols = factor_symbols(names)
    out = set()
    for term in sympy.Add.make_args(sympy.expand(expr.rewrite(sympy.log))):
        parts = []
        for base, power in term.as_powers_dict().items():
            if base in symbols.values():
                parts.append((str(base), round(float(power), 6)))
            elif isinstance(base, sympy.log) and base.args[0] in symbols.values():
                parts.append((f"log2({base.args[0]})", round(float(power), 6)))
        out.add(tuple(sorted(parts)))
    return frozenset(out)


def same_form(found: sympy.Expr, truth: str, names: list[str], tolerance: float = 0.1) -> bool:
    symbols = factor_symbols(names)
    expected = signature(sympy.sympify(truth, locals={"log2": lambda v: sympy.log(v, 2), **symbols}), names)
    got = signature(found, names)
    if len(got) != len(expected):
        return False
    unmatched = list(expected)
    for term in got:
        match = next((e for e in unmatched if [b for b, _ in e] == [b for b, _ in term] and
                      all(abs(x - y) <= tolerance for (_, x), (_, y) in zip(e, term))), None)
        if match is None:
            return False
        unmatched.remove(match)
    return True


def form_grammar(form: str, factors, exponent: str = "k = { min = -3, max = 3 }",
                 max_nonlinear: int = 3) -> grammar.Grammar:
    """A grammar holding only ``form`` over ``factors`` (with ``exponent``'s constant): the true
    form, refitted on the same data as a yardstick for the search."""
    text = f"""name = "true-form"
[factors]
{chr(10).join(f'{n} = "extrinsic"' for n in factors)}
[constants]
c = {{ min = 0, max = inf }}
{exponent}
[rules]
start = "{form}"
[limits]
max_nonlinear = {max_nonlinear}
"""
    return grammar.parse_text(text, "true-form.toml")


def error_at(law_predict, case: Case, points: np.ndarray) -> float:
    names = list(case.grid)
    truth = evaluate(case.truth, names, points)
    predicted = law_predict({n: points[:, i] for i, n in enumerate(names)})
    return float(100 * np.max(np.abs(predicted / truth - 1)))
