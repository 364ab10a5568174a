import pytest
import sympy

from exprsearch.vocabulary import (
    ExpressionSyntaxError,
    law_name,
    parse,
    to_latex,
    to_numpy_code,
    to_readable,
    to_text,
)

p, n = sympy.symbols("p n", positive=True)
SYMBOLS = {"p": p, "n": n}


def test_parse_builds_the_expression():
    assert parse("2 + n/p + log2(p)**2", SYMBOLS) == 2 + n / p + parse("log2(p)", SYMBOLS) ** 2


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("foo(p)", "unknown function 'foo'"),
        ("lg2(p)", "did you mean 'log2'"),
        ("q + p", "unknown name 'q'"),
        ("__import__('os')", "unknown function '__import__'"),
        ("p.real", "is not allowed"),
        ("p +", "not a valid expression"),
    ],
)
def test_parse_rejects_what_is_not_vocabulary(text, fragment):
    with pytest.raises(ExpressionSyntaxError, match=fragment.replace("(", r"\(")):
        parse(text, SYMBOLS)


def test_printers_are_round_trippable():
    expr = parse("0.1 + 0.002*n/p + 0.5*log2(p)", SYMBOLS)
    assert parse(to_text(expr), SYMBOLS) == expr
    assert "numpy.log2(p)" in to_numpy_code(expr)
    assert r"\log_{2}{\left(p \right)}" in to_latex(expr)


@pytest.mark.parametrize("value, digits, shown", [
    (300, 2, "300"), (120, 2, "120"), (1234.5, 3, "1230"), (-350, 2, "-350"),
    (0.00061, 2, "0.00061"), (1.84e-6, 3, "1.84e-6"), (1.2e7, 2, "1.2e+7"), (12.5, 3, "12.5"),
    (85.85, 2, "86"), (100.7, 3, "101"), (-1.0, 2, "-1.0"),
])
def test_readable_numbers_keep_hundreds_and_thousands_plain(value, digits, shown):
    """A rounded 300 read '3.0e+2' in laws such as '1.2e+2*log2(gpu_count)**2 + 3.0e+2'."""
    assert to_readable(sympy.Float(value, digits)) == shown


def test_whole_numbers_inside_a_law_read_as_the_digits_they_have():
    """A grouped run's table showed 86.0/gpu_count**3.0 + 59.0*log2(gpu_count)**2 + 101.0 beside
    120*log2(gpu_count)**2 + 300: constants rounded to 2 or 3 digits written with a point that
    claims one more."""
    x = sympy.Symbol("x", positive=True)
    law = sympy.Float(85.85, 2) * x ** sympy.Float(-3.0, 4) + sympy.Float(58.7, 2) * x + sympy.Float(100.7, 3)
    assert to_readable(law) == "86/x**3.0 + 59*x + 101"
    assert to_latex(law) == r"\frac{86}{x^{3.0}} + 59 \cdot x + 101"
    assert to_text(law) == "86.0/x**3.0 + 59.0*x + 101.0"  # the files' text: floats that read back as floats


def test_latex_keeps_hundreds_plain_too():
    p = sympy.Symbol("p", positive=True)
    assert to_latex(sympy.Float(300, 2) * p + sympy.Float(1.2e7, 2)) == r"300 \cdot p + 1.2 \cdot 10^{7}"


@pytest.mark.parametrize("column, name", [("p", "p"), ("batch size", "batch_size"), ("time (s)", "time_s"),
                                          ("num-gpus", "num_gpus"), ("min", "min_"), ("lambda", "lambda_"),
                                          ("2nd", "x_2nd"), ("((", "x"), ("params.batch_size", "batch_size"),
                                          ("config/gpus", "gpus"), ("hparams.lr", "lr"), ("params.", "params"),
                                          ("batch.size", "batch_size"), ("metrics.step_s", "metrics_step_s"),
                                          ("t\u00b5", "t\u03bc"), ("\ufb01le", "file")])
def test_a_column_has_a_name_a_law_can_use(column, name):
    assert law_name(column) == name and law_name(name) == name  # and that name is its own


def test_a_name_with_the_micro_sign_parses_back():
    """Python reads the micro sign µ in a name as the Greek μ, so a factor named with it (a column
    'yµ' of an Extra-P file) was not found in the law's own text, and the run ended in a traceback."""
    y = sympy.Symbol("y\u00b5", positive=True)
    assert parse("2*y\u00b5 + 1", {"y\u00b5": y}) == 2 * y + 1


def test_a_name_in_words_is_escaped_for_latex():
    from exprsearch.vocabulary import latex_name

    assert latex_name("batch_size") == r"\mathit{batch\_size}"
    assert latex_name("Time (s)") == r"\mathit{Time\ (s)}"
    assert latex_name("a{b}\\c") == r"\mathit{a\{b\}\backslash{}c}"  # braces and a backslash cannot end it
    assert latex_name("mfu_%") == r"\mathit{mfu\_\%}"


def test_a_setting_and_a_column_of_the_same_name_are_told_apart(tmp_path):
    """MLflow's params.gpus beside a column gpus would be one factor: the reader refuses it."""
    from exprsearch.data import load_table
    from exprsearch.errors import DataError

    (tmp_path / "t.csv").write_text("params.gpus,gpus,time\n1,1,3\n2,2,2\n4,4,1.5\n")
    with pytest.raises(DataError, match="columns 'params.gpus' and 'gpus' would both be the factor gpus"):
        load_table(tmp_path / "t.csv", "time", factors=["params.gpus", "gpus"])


def test_a_rounded_constant_is_written_with_its_own_digits_and_reads_back():
    """A constant rounded to 6 digits holds a binary value with more (1708.80322265625): the text
    writes the digits it was rounded to; a full-precision constant keeps its shortest exact repr."""
    x = sympy.Symbol("x", positive=True)
    rounded = sympy.Float(1708.803222, 6) + sympy.Float(4424.150390625, 6) / x
    assert to_text(rounded) == "1708.8 + 4424.15/x"
    assert parse(to_text(rounded), {"x": x}) == sympy.Float("1708.8") + sympy.Float("4424.15") / x
    exact = sympy.Float(1 / 3, 17) * x
    assert to_text(exact) == "0.3333333333333333*x" and float(parse(to_text(exact), {"x": x}).subs(x, 1)) == 1 / 3
