"""Extra-P 3 experiment files: written here record by record (as Extra-P 3 lays them out), read
back, and refused with the byte where they break; Extra-P's own three are read in test_readers."""

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exprsearch.errors import DataError
from exprsearch.readers import detect_format, load_series, read_profile
from exprsearch.readers.extrap3 import is_extrap3
from tests.test_cli_decide import run


class Writer:
    """The records of an Extra-P 3 experiment in one byte order."""

    def __init__(self, order: str = "<"):
        self.order = order
        self.out = bytearray(struct.pack(order + "h", 1))
        self.string("EXTRAP_EXPERIMENT")
        self.string("1.0")

    def string(self, text: str) -> "Writer":
        raw = text.encode()
        self.out += struct.pack(self.order + "I", len(raw)) + raw
        return self

    def ints(self, *values: int) -> "Writer":
        self.out += struct.pack(self.order + "q" * len(values), *values)
        return self

    def doubles(self, *values: float) -> "Writer":
        self.out += struct.pack(self.order + "d" * len(values), *values)
        return self

    def point(self, coordinate: int, samples: int, mean: float, metric: int, callpath: int) -> "Writer":
        self.string("ExperimentPoint").ints(coordinate, samples)
        return self.doubles(mean, mean, mean, 0.0, mean, mean, mean, mean, mean).ints(metric, callpath)

    def compound(self, coefficient: float, kind: str, exponent: float) -> "Writer":
        return self.doubles(coefficient).ints(1).string("SimpleTerm").string(kind).doubles(exponent)

    def model(self, metric: int, callpath: int, extended: bool) -> "Writer":
        """A stored model c + d·p, its three intervals' bounds as the same function."""
        self.string("Model").ints(metric, callpath, 0)
        for _ in range(7):
            self.string("SingleParameterFunction").doubles(1.0).ints(1).string("CompoundTerm")
            self.compound(2.0, "polynomial", 1.0)
        self.doubles(*([0.5] * (4 if extended else 3)))
        self.ints(1, 7)  # one comment id
        return self.ints(1).string("p").ints(1).doubles(1.0, 8.0)  # one parameter's one interval


def experiment(order: str = "<", extended: bool = True, models: bool = True) -> bytes:
    """Two parameters, one metric, two regions named alike (main->kernel, kernel), four points each."""
    w = Writer(order)
    w.string("Parameter").ints(0).string("p")
    w.string("Parameter").ints(1).string("n")
    w.string("Metric").ints(0).string("time").string("seconds")
    w.string("Region").ints(0).string("main").string("a.c").ints(1)
    w.string("Region").ints(1).string("kernel").string("a.c").ints(10)
    w.string("Region").ints(2).string("kernel").string("b.c").ints(20)
    w.string("Callpath").ints(0, 0, -1)
    w.string("Callpath").ints(1, 1, 0)
    w.string("Callpath").ints(2, 2, -1)
    coordinates = [(1.0, 10.0), (2.0, 10.0), (4.0, 10.0), (4.0, 20.0)]
    for key, (p, n) in enumerate(coordinates):  # parameters given in the other order, as Extra-P allows
        w.string("Coordinate").ints(key, 2).string("n").doubles(n).string("p").doubles(p)
    w.string("ModelComment").ints(7).string("a comment")
    w.string("SingleParameterSimpleModelGenerator").string("Default").string("CROSSVALIDATION_NONE")
    w.doubles(1e-3).string("GENERATE_MODEL_MEAN")
    if extended:
        w.ints(5).string("FIRST_POINTS_FOUND").ints(0, 0).string("INCREASING_COST")
    w.ints(1).string("CompoundTerm").compound(1.0, "polynomial", 1.0).ints(2)
    for key, (p, n) in enumerate(coordinates):
        w.point(key, 5, 1 + n / p, 0, 1)
        w.point(key, 1, 2 * p, 0, 2)
    if models:
        w.model(0, 1, extended)
    return bytes(w.out)


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("extended", [True, False])
def test_points_are_read_past_generators_and_stored_models(tmp_path, order, extended):
    path = tmp_path / "legacy"  # Extra-P 3 files often have no extension
    path.write_bytes(experiment(order, extended))
    assert detect_format(path) == "extrap3"
    profile = read_profile(path)
    assert profile.parameters == ("p", "n")
    assert list(profile.series) == ["main->kernel:time", "kernel #1:time"]
    assert profile.series["main->kernel:time"] == [((1.0, 10.0), [11.0]), ((2.0, 10.0), [6.0]),
                                                   ((4.0, 10.0), [3.5]), ((4.0, 20.0), [6.0])]
    assert [v for _, (v,) in profile.series["kernel #1:time"]] == [2.0, 4.0, 8.0, 8.0]
    assert "fitted as its mean" in profile.notes[0] and "4 of them summarise several repetitions" in profile.notes[0]


def test_detected_by_its_first_bytes_whatever_the_name(tmp_path):
    data = experiment()
    assert is_extrap3(data[:64]) and not is_extrap3(b"p,time\n1,2\n")
    (tmp_path / "e.txt").write_bytes(data)
    assert detect_format(tmp_path / "e.txt") == "extrap3"


@pytest.mark.parametrize("cut", [33, 200, -9])
def test_a_cut_file_names_the_byte(tmp_path, cut):
    path = tmp_path / "cut"
    path.write_bytes(experiment()[:cut])
    with pytest.raises(DataError, match=r"broken Extra-P 3 experiment: it ends inside a record \(byte"):
        read_profile(path, "extrap3")


def test_an_unknown_record_or_undefined_reference_is_refused(tmp_path):
    path = tmp_path / "odd"
    path.write_bytes(experiment(models=False) + Writer().string("Gadget").out[len(Writer().out):])
    with pytest.raises(DataError, match="record 'Gadget' at byte"):
        read_profile(path)
    w = Writer()
    w.string("Parameter").ints(0).string("p").string("Metric").ints(0).string("t").string("s")
    w.string("Callpath").ints(0, 5, -1)
    path.write_bytes(bytes(w.out))
    with pytest.raises(DataError, match="callpath 0 names a region or parent the file has not defined"):
        read_profile(path)
    (tmp_path / "not").write_bytes(b"p,time\n1,2\n")
    with pytest.raises(DataError, match="is not an Extra-P 3 experiment"):
        read_profile(tmp_path / "not", "extrap3")


def test_run_fits_one_series_of_it(tmp_path):
    path = tmp_path / "legacy"
    path.write_bytes(experiment())
    assert load_series(path, target="main->kernel:time")["main->kernel:time"].n_rows == 4
    result = run("run", path, "--target", "main->kernel:time", "-g", "data-parallel", "--bootstrap", "0",
                 "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "Extra-P 3 experiment" in result.output


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=4),
       keep=st.integers(0, 10_000))
def test_any_damaged_file_reads_or_says_why(tmp_path, edits, keep):
    """Whatever bytes are changed or cut, the reader gives a profile or one DataError, never a crash."""
    data = bytearray(experiment())
    for at, value in edits:
        data[at % len(data)] = value
    path = tmp_path / "damaged"
    path.write_bytes(bytes(data[:max(keep, 8)]))
    try:
        read_profile(path, "extrap3")
    except DataError:
        pass
