"""The functions a grammar or a law may use, a safe parser for expressions, and the printers.

Expressions are parsed by walking Python's ``ast`` (never ``eval``), so a grammar or law file
can only name numbers, known symbols and the functions in :data:`FUNCTIONS`.
"""

from __future__ import annotations

import ast
import keyword
import re
import unicodedata
import warnings
from collections.abc import Callable, Mapping

import mpmath
import sympy
from sympy.codegen.cfunctions import log2
from sympy.printing.latex import LatexPrinter
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.str import StrPrinter

from .errors import did_you_mean

FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    "log2": log2,
    "log": sympy.log,
    "exp": sympy.exp,
    "sqrt": sympy.sqrt,
    "max": sympy.Max,  # regimes: the larger of two costs (overlapped compute and communication)
    "min": sympy.Min,  # or the smaller (a cap, a bottleneck that takes over)
}
REGIMES = ("max", "min")  # the functions of two or more arguments

MAX_EXPONENT = 64  # the largest power a literal number may be raised to in an expression
MAX_LENGTH = 10_000  # characters in one expression (a law's template is a few hundred)


class ExpressionSyntaxError(ValueError):
    """Raised by :func:`parse` with a message that names the offending token."""


# where a logger keeps a run's settings: W&B's config, MLflow's params, Lightning's hparams, argparse's args
_SETTINGS_NAMESPACE = re.compile(r"^(?:config|configs|params|param|hparams|hyperparameters|args)[./](?=.)",
                                 re.IGNORECASE)


def law_name(column: str) -> str:
    """The name a table's column has in a law: the column's own where a law can use it, else its
    words joined by _ ('batch size' → batch_size, 'time (s)' → time_s), after x_ where it would
    start with a digit and before _ where it is a keyword or a function (min → min_). A logger's
    namespace for settings goes ('params.batch_size' → batch_size, 'config/gpus' → gpus). Written
    as Python reads names (NFKC: the micro sign µ is the Greek μ), so a law's text parses back."""
    column = unicodedata.normalize("NFKC", _SETTINGS_NAMESPACE.sub("", column.strip()))
    if column.isidentifier() and not keyword.iskeyword(column) and column not in FUNCTIONS:
        return column
    name = re.sub(r"\W+", "_", column).strip("_") or "x"
    if name[0].isdigit():
        name = "x_" + name
    return name + "_" if keyword.iskeyword(name) or name in FUNCTIONS else name


def parse(text: str, symbols: Mapping[str, sympy.Symbol]) -> sympy.Expr:
    """Parse ``text`` into a sympy expression using only ``symbols``, numbers and FUNCTIONS."""
    if not isinstance(text, str):
        raise ExpressionSyntaxError(f"an expression must be text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionSyntaxError(f"an expression of {len(text):,} characters is longer than {MAX_LENGTH:,}: "
                                    f"'{text[:40]}…'")
    try:
        with warnings.catch_warnings():  # malformed input is refused below, not warned about
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(text.strip(), mode="eval")
        # Python reads names in NFKC form: a symbol named with the micro sign is found as μ
        symbols = {unicodedata.normalize("NFKC", k): v for k, v in symbols.items()}
        return _convert(tree.body, symbols, text)
    except SyntaxError as exc:
        raise ExpressionSyntaxError(f"'{text}' is not a valid expression ({exc.msg})") from None
    except RecursionError:
        raise ExpressionSyntaxError(f"'{text[:40]}…' is nested too deeply to read") from None


_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}


def _convert(node: ast.AST, symbols: Mapping[str, sympy.Symbol], text: str) -> sympy.Expr:
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _convert(node.left, symbols, text)
        right = _convert(node.right, symbols, text)
        if isinstance(node.op, ast.Pow) and left.is_Number and right.is_Number and abs(float(right)) > MAX_EXPONENT:
            # sympy would compute the exact number (9**9**9 has 370 million digits): refuse it
            raise ExpressionSyntaxError(f"'{ast.unparse(node)}' in '{text}' raises a number to a power beyond "
                                        f"±{MAX_EXPONENT}; write the number itself")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _convert(node.operand, symbols, text)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return sympy.Integer(node.value) if isinstance(node.value, int) else sympy.Float(node.value)
    if isinstance(node, ast.Name):
        if node.id in symbols:
            return symbols[node.id]
        raise ExpressionSyntaxError(
            f"unknown name '{node.id}' in '{text}'{did_you_mean(node.id, sorted(symbols))}"
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name = node.func.id
        if name not in FUNCTIONS:
            raise ExpressionSyntaxError(
                f"unknown function '{name}' in '{text}'{did_you_mean(name, sorted(FUNCTIONS))}; "
                f"known functions are {', '.join(sorted(FUNCTIONS))}"
            )
        if name in REGIMES:
            if len(node.args) < 2:
                raise ExpressionSyntaxError(f"{name}() takes two or more arguments in '{text}'")
            return FUNCTIONS[name](*(_convert(a, symbols, text) for a in node.args))
        if len(node.args) != 1:
            raise ExpressionSyntaxError(f"{name}() takes one argument in '{text}'")
        return FUNCTIONS[name](_convert(node.args[0], symbols, text))
    raise ExpressionSyntaxError(
        f"'{ast.unparse(node)}' in '{text}' is not allowed: use numbers, names, + - * / ** "
        f"and {', '.join(sorted(FUNCTIONS))}"
    )


def _plain(text: str) -> str:
    """A number as sympy prints it at its precision, but 120 rather than 1.2e+2 (sympy writes a
    rounded number of hundreds or thousands with an exponent); below a million only."""
    _, _, exponent = text.partition("e+")
    if not exponent or int(exponent) > 5:
        return text
    value = float(text)
    return str(int(value)) if value.is_integer() else repr(value)


def _whole(text: str, expr: sympy.Float) -> str:
    """86 for a Float rounded to 2 digits that sympy writes 86. or 86.0: the digits shown are the
    digits it has (1.0 to 2 digits keeps its point)."""
    whole, point, fraction = text.partition(".")
    if point and not fraction.strip("0") and len(whole.lstrip("-")) >= mpmath.libmp.prec_to_dps(expr._prec):
        return whole
    return text


class _LatexPrinter(LatexPrinter):
    """sympy's LaTeX printer with log2 written as \\log_2, and rounded hundreds as 120, not
    1.2 \\cdot 10^{2}."""

    def _print_Float(self, expr: sympy.Float) -> str:
        text = StrPrinter()._print_Float(expr)
        plain = _whole(_plain(text), expr)
        return plain if plain != text else super()._print_Float(expr)

    def _print_Symbol(self, expr: sympy.Symbol, style: str = "plain") -> str:
        # a factor named in words reads as one word (batch_size, not batch with subscript size);
        # a letter (p) or a constant (c0 as c_{0}) as sympy writes it
        if len(expr.name) == 1 or re.fullmatch(r"[a-zA-Z]\d+", expr.name):
            return super()._print_Symbol(expr, style)
        return latex_name(expr.name)

    def _print_log2(self, expr: sympy.Expr, exp: str | None = None) -> str:
        arg = self._print(expr.args[0])
        head = r"\log_{2}" if exp is None else rf"\log_{{2}}^{{{exp}}}"
        return rf"{head}{{\left({arg} \right)}}"


def latex_name(name: str) -> str:
    """A name in words as LaTeX writes one in math mode, letters upright-italic and together:
    ``\\mathit{batch\\_size}`` (``Time (s)``: ``\\mathit{Time\\ (s)}``)."""
    special = {"\\": r"\backslash{}", "{": r"\{", "}": r"\}", "^": r"\hat{}", "~": r"\sim{}", " ": r"\ "}
    escaped = "".join(special.get(c, "\\" + c if c in "_%#&$" else c) for c in name)
    return rf"\mathit{{{escaped}}}"


def to_latex(expr: sympy.Expr) -> str:
    """LaTeX for ``expr`` (factors keep their names; log2 prints as \\log_2)."""
    return _LatexPrinter({"mul_symbol": "dot"}).doprint(expr)


class _NumPyPrinter(NumPyPrinter):
    """numpy code with max/min as nested numpy.maximum/minimum (sympy's reduce needs functools),
    numpy written as ``module`` (law.py renames it where a factor is called numpy)."""

    def __init__(self, settings: dict, module: str = "numpy") -> None:
        super().__init__(settings)
        self._alias = module

    def _module_format(self, fqn: str, register: bool = True) -> str:
        name = super()._module_format(fqn, register)
        return self._alias + name[len("numpy"):] if name.startswith("numpy.") else name

    def _nested(self, name: str, args) -> str:
        first, *rest = [self._print(a) for a in args]
        for other in rest:
            first = f"{self._module_format('numpy.' + name)}({first}, {other})"
        return first

    def _print_Max(self, expr: sympy.Expr) -> str:
        return self._nested("maximum", expr.args)

    def _print_Min(self, expr: sympy.Expr) -> str:
        return self._nested("minimum", expr.args)


def to_numpy_code(expr: sympy.Expr, module: str = "numpy") -> str:
    """Python source evaluating ``expr`` with numpy's functions, vectorised over arrays; numpy is
    the name ``module``."""
    return _NumPyPrinter({"fully_qualified_modules": True}, module).doprint(expr)


class _ReadablePrinter(StrPrinter):
    """sympy's str printer with max/min in the lower case the parser reads (for people: floats
    as sympy prints them at their precision)."""

    def _print_Max(self, expr: sympy.Expr) -> str:
        return "max(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Min(self, expr: sympy.Expr) -> str:
        return "min(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Float(self, expr: sympy.Float) -> str:
        return _whole(_plain(super()._print_Float(expr)), expr)


def to_readable(expr: sympy.Expr, digits: int | None = None) -> str:
    """``expr`` as people read it: sympy's text, max/min in lower case, its numbers rounded to
    ``digits`` significant digits when given."""
    if digits is not None:
        expr = expr.xreplace({v: sympy.Float(v, digits) for v in expr.atoms(sympy.Float)})
    return _ReadablePrinter().doprint(expr)


class _TextPrinter(_ReadablePrinter):
    """The readable printer with floats written as Python's shortest exact repr, of the Float's
    own significant digits where it has fewer than a double (a constant rounded to 6 digits is
    written 1708.8, not the binary value 1708.80322265625 it holds)."""

    def _print_Float(self, expr: sympy.Float) -> str:
        digits = mpmath.libmp.prec_to_dps(expr._prec)
        value = float(expr)
        return repr(float(f"{value:.{digits}g}") if digits < 15 else value)


def to_text(expr: sympy.Expr) -> str:
    """A plain-text form of ``expr`` that :func:`parse` and ``sympy.sympify`` read back."""
    return _TextPrinter().doprint(expr)
