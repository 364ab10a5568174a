"""Property tests: on any input the readers and parsers return a valid object or raise the
library's own error with a message, never another exception; a law.json round-trips exactly."""

import json
import math
import os

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprsearch import grammar
from exprsearch.errors import ExprsearchError
from exprsearch.law import Law
from exprsearch.vocabulary import ExpressionSyntaxError, parse
from tests.test_law import make_law

pytestmark = pytest.mark.fuzz
# A short pass in the README's test command; CI's slow step runs these again at length (.ci/run).
THOROUGH = os.environ.get("EXPRSEARCH_FUZZ") == "thorough"
EXAMPLES = settings(max_examples=500 if THOROUGH else 150, deadline=None, derandomize=True,  # the same examples in every CI run
                    suppress_health_check=[HealthCheck.too_slow])
SYMBOLS = {"p": sympy.Symbol("p", positive=True), "n": sympy.Symbol("n", positive=True),
           "c0": sympy.Symbol("c0", real=True)}
TOKENS = ["p", "n", "c0", "1", "2.5", "9", "+", "-", "*", "/", "**", "(", ")", "log2(", "sqrt(", "exp(", ",", ".",
          "__class__", "foo(", "[", "]", "lambda", "if", "1e308", "__import__('os')", " "]
expressions = st.one_of(st.text(max_size=60), st.lists(st.sampled_from(TOKENS), max_size=25).map("".join))


@EXAMPLES
@given(expressions)
def test_expressions_parse_or_say_why(text):
    try:
        assert isinstance(parse(text, SYMBOLS), sympy.Basic)
    except ExpressionSyntaxError as exc:
        assert str(exc)


GRAMMAR_LINES = ['[constants]', 'c = { min = 0, max = inf }', 'k = { min = -2, max = 3 }', 'k = { min = 3, max = 1 }',
                 '[rules]', 'start = "c + <term>{1,2}"', 'start = "c + <t>*{0,2}"', 'term = "c * <t>*{1,2}"',
                 't = ["<factor>", "1/<factor>", "<factor>**k"]', 't = "<t>"', 'x = 3', '[limits]',
                 'max_terms = 0', 'max_products = -1', '[factors]', 'p = "extrinsic"', 'q = { role = "inner" }',
                 'name = "g"', '"', '= =', '[rules', 'start = ["c", 1]', 'start = "c * <other>{2,1}"']


@EXAMPLES
@given(st.one_of(st.text(max_size=200), st.lists(st.sampled_from(GRAMMAR_LINES), max_size=12).map("\n".join)))
def test_grammar_files_parse_or_say_why(text):
    try:
        parsed = grammar.parse_text(text, "fuzz.toml")
    except ExprsearchError as exc:
        assert str(exc).startswith("fuzz.toml")
        return
    try:
        grammar.bind(parsed, ("p", "n"))
    except ExprsearchError as exc:
        assert str(exc)


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                                        max_size=4), max_leaves=20)
LAW = json.loads(make_law().to_json())
HOSTILE = ["p.__class__", "__import__('os').system('true')", "open('x')", "p" * 100_000, "9**9**9", "c0(p)",
           "(" * 3000 + "p" + ")" * 3000, "c0 + c9*p"]


@EXAMPLES
@given(st.sampled_from(sorted(LAW)), st.one_of(json_values, st.sampled_from(HOSTILE)))
def test_law_files_load_or_say_why(key, value):
    record = {**LAW, key: value}
    try:
        law = Law.from_json(json.dumps(record))
    except ExprsearchError as exc:
        assert str(exc)
        return
    assert isinstance(law.template, sympy.Basic)


@EXAMPLES
@given(st.dictionaries(st.sampled_from(["c0", "c1"]), st.floats(allow_nan=False, allow_infinity=False,
                                                               min_value=-1e12, max_value=1e12), min_size=2))
def test_a_law_round_trips_exactly(constants):
    law = make_law()
    law = Law(**{**law.__dict__, "constants": {k: constants.get(k, v) for k, v in law.constants.items()}})
    text = law.to_json()
    assert Law.from_json(text).to_json() == text


@EXAMPLES
@given(st.text(max_size=300) | st.lists(st.sampled_from(
    ["PARAMETER p", "PARAMETER p n", "POINTS 1 2 4", "POINTS (1 2) (2 3)", "REGION r", "METRIC time", "DATA 1 2",
     "DATA x", "DATA 1e400", "# c", "REGION r # x", "POINTS", "DATA", "METRIC"]), max_size=10).map("\n".join))
def test_extrap_text_files_read_or_say_why(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("x") / "f.txt"
    path.write_text(text)
    series_or_error(path, "extrap-text")


def series_or_error(path, fmt: str) -> None:
    """The series of ``path`` are finite, positive times, or reading it raised our own error."""
    from exprsearch.readers import load_series

    try:
        series = load_series(path, fmt)
    except ExprsearchError as exc:
        assert str(exc)
        return
    for dataset in series.values():
        assert all(math.isfinite(v) and v > 0 for v in dataset.y)


measurement = st.fixed_dictionaries({"point": st.lists(st.sampled_from([1, 2, 4, "x", None, 1e400]), max_size=3),
                                     "values": st.lists(st.sampled_from([1.5, 2, 0, -1, "y", 1e400, 10**400, True]), max_size=3)})
extrap_json = st.fixed_dictionaries({
    "parameters": st.one_of(st.lists(st.sampled_from(["p", "n", "p", 3]), max_size=3), json_values),
    "measurements": st.one_of(st.dictionaries(st.sampled_from(["r", "s"]), st.dictionaries(
        st.sampled_from(["time", "bytes"]), st.lists(measurement, max_size=5), max_size=2), max_size=2), json_values)})


@EXAMPLES
@given(st.one_of(extrap_json, json_values))
def test_extrap_json_files_read_or_say_why(tmp_path_factory, doc):
    path = tmp_path_factory.mktemp("j") / "f.json"
    path.write_text(json.dumps(doc))
    series_or_error(path, "extrap-json")


CELLS = ["1", "2", "4", "8", "16", "0", "-1", "1e400", "nan", "", "x", "1,000", '"1,000"', "p", "n", "time", " ", ";"]


@EXAMPLES
@given(st.lists(st.lists(st.sampled_from(CELLS), min_size=1, max_size=4).map(",".join), max_size=8).map("\n".join))
def test_tables_read_or_say_why(tmp_path_factory, body):
    """Any CSV text under a plausible header: a Dataset of finite, positive times, or our error."""
    path = tmp_path_factory.mktemp("t") / "m.csv"
    path.write_text("p,n,time\n" + body + "\n")
    dataset_or_error(path)


def dataset_or_error(path) -> None:
    """The table at ``path`` reads as a Dataset of finite factors and finite, positive times, or
    stops with the library's own error and a message."""
    from exprsearch.data import load_table

    try:
        dataset = load_table(path, "time")
    except ExprsearchError as exc:
        assert str(exc)
        return
    assert dataset.n_rows > 0 and all(math.isfinite(v) and v > 0 for v in dataset.y)
    assert all(math.isfinite(v) for f in dataset.factors for v in dataset.column(f))


PIPE_LINES = ["| p | n | time |", "|---|---|---:|", "p | n | time", "--+---+-----", "| 1 | 2 | 3 |", "| 2 | 4 | 01:02:03 |",
              "4 | 8 | 1-00:00:01", "| 8 | 16 | 10:40 |", "| x | | 5 |", "| 1 | 2 |", "(3 rows)", "", "# a title",
              "text after the table", "| a | a |", "|---|", "| 16 | 1 | 0.5 | 7 |"]


@EXAMPLES
@given(st.lists(st.sampled_from(PIPE_LINES), max_size=10).map("\n".join), st.sampled_from([".txt", ".dat", ".md"]))
def test_pipe_tables_read_or_say_why(tmp_path_factory, text, suffix):
    """Markdown, JUBE and psql tables, and whatever else such lines make: a Dataset or our error."""
    path = tmp_path_factory.mktemp("pipes") / f"m{suffix}"
    path.write_text(text + "\n")
    dataset_or_error(path)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_templates_are_refused_quickly(hostile):
    with pytest.raises(ExprsearchError):
        Law.from_json(json.dumps({**LAW, "template": hostile}))


@pytest.mark.parametrize("key", ["seed", "complexity"])
def test_an_infinite_number_where_a_whole_one_belongs_is_the_library_s_error(key):
    with pytest.raises(ExprsearchError, match="cannot be read"):
        Law.from_json(json.dumps({**LAW, key: float("inf")}))


record = st.fixed_dictionaries({"params": st.one_of(st.dictionaries(st.sampled_from(["x", "y"]), st.sampled_from(
    [1, 2, 4, "z", None, 10**400]), max_size=2), json_values)}, optional={
    "value": st.one_of(st.sampled_from([1.5, 0, -2, "v", 10**400]), st.lists(st.sampled_from([1, 2.5, "w"]), max_size=3)),
    "callpath": st.sampled_from(["a", "b", 3]), "metric": st.sampled_from(["t", None])})


@EXAMPLES
@given(st.lists(st.one_of(record.map(json.dumps), st.text(max_size=30)), max_size=6).map("\n".join),
       st.sampled_from(["extrap-jsonl", "talpas", "extrap-json"]))
def test_line_formats_and_older_json_read_or_say_why(tmp_path_factory, text, fmt):
    path = tmp_path_factory.mktemp("l") / "f.txt"
    path.write_text(text.replace('"params"', '"parameters"').replace(",", ";") if fmt == "talpas" else text)
    series_or_error(path, fmt)


RANGES = ["p=1..8", "p=0..4", "p=-1..2", "p=1..8:x2", "p=1..8:x1", "p=1..8:0", "p=1..8:-3", "p=8..1", "p=", "=4",
          "p=1,2,,3", "p=1e400", "q=1", "p=nan", "p", "", "p=3.5..3.5", "p=4", "p=1..1e9", "n=1..4:2", "p=1..8:2.5"]
POINTS = ["p=8,n=1000", "p=0,n=1", "p=-4,n=16000", "p=1e400,n=1", "p=nan,n=1", "p=8", "n=1000", "q=1", "p=1,p=2", "p", ""]
NUMBERS = ["0", "-1", "1e9", "inf", "nan", "0.5", "abc", "3"]
CONSTRAINTS = ["p*n <= 100", "p >", "p <= n", "1 < 2", "log2(p) > 1", "__import__('os')", "p == 4", "p < 0"]
DECISIONS = {"predict": {"--at": POINTS},
             "explain": {"--vary": RANGES, "--threshold": NUMBERS},
             "optimize": {"--vary": RANGES, "--where": CONSTRAINTS, "--price": NUMBERS, "--devices": ["p", "n", "q"],
                          "--budget": NUMBERS, "--time-unit": ["s", "h", "weeks"]}}


def _options(command: str):
    """Each option of ``command`` left out or given one of its values, valid or not."""
    choices = DECISIONS[command]
    return st.tuples(*[st.one_of(st.just(()), st.sampled_from(values).map(lambda v, o=option: (o, v)))
                       for option, values in choices.items()]).map(lambda pairs: [p for p in pairs if p])


@settings(max_examples=150 if THOROUGH else 40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(DECISIONS)).flatmap(lambda command: st.tuples(st.just(command), _options(command))))
def test_decision_commands_answer_or_say_why(tmp_path_factory, call):
    """predict, explain and optimize with any mix of option values: a result, or exit 2 with a
    sentence; never another exception (a range 'p=1..8:0' used to end in an IndexError)."""
    from typer.testing import CliRunner

    from exprsearch.cli import app
    from tests.test_explain import law

    command, options = call
    path = tmp_path_factory.mktemp("law") / "law.json"
    path.write_text(law().to_json())
    given = ["--fix", "n=16000"] if command != "predict" else []  # so that the values under test are reached
    result = CliRunner().invoke(app, [command, str(path), *given, *[part for pair in options for part in pair]])
    assert result.exception is None or isinstance(result.exception, SystemExit), (call, result.exception)
    assert result.exit_code in (0, 2), (call, result.output)
    assert result.exit_code == 0 or "Traceback" not in result.output
