"""Extra-P 3 experiment files (the legacy binary format Extra-P 4 opens with ``--extra-p-3``).

The file is a byte-order mark, the qualifier ``EXTRAP_EXPERIMENT`` and a version, then a stream of
records, each a tag string followed by its fields. Only parameters, metrics, regions, callpaths,
coordinates and measured points matter here; the models Extra-P 3 stored are read past, since
exprsearch fits its own. A point keeps only summaries (mean, median, spread), so each point is
fitted as its mean, one row per point, as Extra-P models the mean by default, and a note says so.
"""

from __future__ import annotations

import struct
from pathlib import Path

from ..errors import DataError
from .profile import Collector, Profile

QUALIFIER = b"EXTRAP_EXPERIMENT"
_MAX_STRING = 1 << 24  # no name or path in an experiment is 16 MB long; a larger length is a broken file


def is_extrap3(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) opens an Extra-P 3 experiment."""
    if len(head) < 6 + len(QUALIFIER) or head[:2] not in (b"\x01\x00", b"\x00\x01"):
        return False
    order = "<" if head[:2] == b"\x01\x00" else ">"
    (size,) = struct.unpack(order + "I", head[2:6])
    return size == len(QUALIFIER) and head[6:6 + size] == QUALIFIER


class _Broken(Exception):
    """The bytes end early or hold something no record can."""


class _Cursor:
    """Reads the file's fixed-size numbers and length-prefixed strings in its byte order."""

    def __init__(self, data: bytes):
        self.data, self.at = data, 2
        self.order = "<" if data[:2] == b"\x01\x00" else ">"

    def _take(self, size: int) -> bytes:
        if self.at + size > len(self.data):
            raise _Broken(f"it ends inside a record (byte {self.at:,} of {len(self.data):,})")
        chunk = self.data[self.at:self.at + size]
        self.at += size
        return chunk

    def int64(self) -> int:
        return struct.unpack(self.order + "q", self._take(8))[0]

    def double(self) -> float:
        return struct.unpack(self.order + "d", self._take(8))[0]

    def doubles(self, count: int) -> tuple[float, ...]:
        return struct.unpack(self.order + "d" * count, self._take(8 * count))

    def string(self) -> str:
        (size,) = struct.unpack(self.order + "I", self._take(4))
        if size > _MAX_STRING:
            raise _Broken(f"a string at byte {self.at - 4:,} claims {size:,} bytes")
        try:
            return self._take(size).decode("utf-8")
        except UnicodeDecodeError:
            raise _Broken(f"a string at byte {self.at - size:,} is not UTF-8") from None

    def count(self) -> int:
        n = self.int64()
        if not 0 <= n <= len(self.data):
            raise _Broken(f"a count at byte {self.at - 8:,} is {n:,}")
        return n

    def tag(self, expected: str) -> None:
        found = self.string()
        if found != expected:
            raise _Broken(f"expected a {expected} at byte {self.at:,}, found '{found[:40]}'")


class _Reader:
    """The records of one experiment, gathered into a Profile."""

    STRATEGIES = ({"FIRST_POINTS_FOUND", "MAX_NUMBER_POINTS", "CHEAPEST_POINTS"}, {"INCREASING_COST", "DECREASING_COST"})

    def __init__(self, path: Path, data: bytes):
        self.path, self.cursor = path, _Cursor(data)
        self.parameters: list[str] = []
        self.metrics: list[str] = []
        self.regions: dict[int, str] = {}
        self.region_names: dict[str, int] = {}
        self.callpaths: dict[int, str] = {}
        self.coordinates: dict[int, tuple[float, ...]] = {}
        self.points: list[tuple[str, str, tuple[float, ...], float, int]] = []
        self.extended = False  # generators carry the sparse modeler's options, and models a relative error

    def read(self) -> Profile:
        c = self.cursor
        if c.string() != QUALIFIER.decode():
            raise _Broken("it does not start with EXTRAP_EXPERIMENT")
        c.string()  # the format's version
        handlers = {
            "Parameter": self._parameter, "Metric": self._metric, "Region": self._region,
            "Callpath": self._callpath, "Coordinate": self._coordinate, "ModelComment": self._comment,
            "SingleParameterSimpleModelGenerator": self._simple_generator,
            "SingleParameterRefiningModelGenerator": self._single_generator,
            "MultiParameterSimpleModelGenerator": self._multi_generator,
            "MultiParameterSparseModelGenerator": self._multi_generator,
            "ExperimentPoint": self._point, "Model": self._model,
        }
        while c.at < len(c.data):
            start = c.at
            tag = c.string()
            if not tag:
                break
            if tag not in handlers:
                raise _Broken(f"it holds a record '{tag[:40]}' at byte {start:,} that Extra-P 3 does not write")
            handlers[tag]()
        return self._profile()

    def _parameter(self) -> None:
        self.cursor.int64()
        self.parameters.append(self.cursor.string())

    def _metric(self) -> None:
        self.cursor.int64()
        self.metrics.append(self.cursor.string())
        self.cursor.string()  # its unit

    def _region(self) -> None:
        c = self.cursor
        key, name = c.int64(), c.string()
        c.string(), c.int64()  # source file and line
        # Extra-P numbers regions that share a name, so that their callpaths stay apart
        if key not in self.regions and name in self.region_names:
            self.region_names[name] += 1
            self.regions[key] = f"{name} #{self.region_names[name]}"
        else:
            self.region_names[name] = 0
            self.regions[key] = name

    def _callpath(self) -> None:
        c = self.cursor
        key, region, parent = c.int64(), c.int64(), c.int64()
        if region not in self.regions or (parent != -1 and parent not in self.callpaths):
            raise _Broken(f"callpath {key} names a region or parent the file has not defined")
        name = self.regions[region]
        self.callpaths[key] = name if parent == -1 else f"{self.callpaths[parent]}->{name}"

    def _coordinate(self) -> None:
        c = self.cursor
        key = c.int64()
        values: dict[str, float] = {}
        for _ in range(c.count()):
            name = c.string()
            values[name] = c.double()
        if set(values) != set(self.parameters):
            raise _Broken(f"coordinate {key} gives {', '.join(values) or 'no parameters'}, not the parameters "
                          f"{', '.join(self.parameters)}")
        self.coordinates[key] = tuple(values[p] for p in self.parameters)

    def _comment(self) -> None:
        self.cursor.int64(), self.cursor.string()

    def _options(self) -> None:
        """The options later Extra-P 3 versions add to a generator; older files lack them."""
        c, start = self.cursor, self.cursor.at
        try:
            c.int64()
            single = c.string()
            c.int64(), c.int64()
            multi = c.string()
        except _Broken:
            single = multi = ""
        if single in self.STRATEGIES[0] and multi in self.STRATEGIES[1]:
            self.extended = True
        else:
            c.at = start

    def _single_generator(self) -> None:
        c = self.cursor
        c.string(), c.string(), c.double(), c.string()  # name, cross-validation, epsilon, mean or median
        self._options()

    def _simple_generator(self) -> None:
        self._single_generator()
        for _ in range(self.cursor.count()):
            self.cursor.tag("CompoundTerm")
            self._compound_term()
        self.cursor.int64()  # the largest number of terms

    def _multi_generator(self) -> None:
        self.cursor.string(), self.cursor.string()  # name, mean or median
        self._options()

    def _point(self) -> None:
        c = self.cursor
        coordinate, samples = c.int64(), c.int64()
        mean = c.doubles(9)[0]  # then its interval, spread, median with interval, minimum, maximum
        metric, callpath = c.int64(), c.int64()
        if coordinate not in self.coordinates or callpath not in self.callpaths \
                or not 0 <= metric < len(self.metrics):
            raise _Broken(f"a measured point names a coordinate, metric or callpath the file has not defined "
                          f"(coordinate {coordinate}, metric {metric}, callpath {callpath})")
        self.points.append((self.callpaths[callpath], self.metrics[metric], self.coordinates[coordinate], mean,
                            samples))

    def _model(self) -> None:
        c = self.cursor
        c.int64(), c.int64(), c.int64()  # metric, callpath, generator
        for _ in range(7):  # the model, then its confidence, error-cone and noise intervals' bounds
            self._function(c.string())
        c.doubles(4 if self.extended else 3)  # RSS, adjusted R², SMAPE (and relative error)
        for _ in range(c.count()):
            c.int64()  # a comment's id
        for _ in range(c.count()):
            c.string()
            c.doubles(2 * c.count())

    def _function(self, kind: str) -> None:
        c = self.cursor
        if kind == "SingleParameterFunction":
            c.double()
            for _ in range(c.count()):
                c.tag("CompoundTerm")
                self._compound_term()
        elif kind == "MultiParameterFunction":
            c.double()
            for _ in range(c.count()):
                c.double()
                for _ in range(c.count()):
                    c.string()
                    c.tag("CompoundTerm")
                    self._compound_term()
        elif kind == "CompoundTerm":
            self._compound_term()
        elif kind == "SimpleTerm":
            c.string(), c.double()
        elif kind != "Function":
            raise _Broken(f"a model holds a function of an unknown kind '{kind[:40]}'")

    def _compound_term(self) -> None:
        c = self.cursor
        c.double()
        for _ in range(c.count()):
            c.tag("SimpleTerm")
            c.string(), c.double()

    def _profile(self) -> Profile:
        out = Collector(self.path, self.parameters)
        for callpath, metric, point, mean, _ in self.points:
            out.add(callpath, metric, point, [mean])
        repeated = sum(samples > 1 for *_, samples in self.points)
        notes = (f"'{self.path.name}' is an Extra-P 3 experiment, which keeps only summaries: each of its "
                 f"{len(self.points)} point(s) is fitted as its mean, one row per point"
                 + (f" ({repeated} of them summarise several repetitions, whose noise is not known)" if repeated else ""),)
        return out.profile(notes)


def read(path: Path) -> Profile:
    data = path.read_bytes()
    if not is_extrap3(data[:64]):
        raise DataError(f"'{path}' is not an Extra-P 3 experiment (it does not start with EXTRAP_EXPERIMENT)")
    try:
        return _Reader(path, data).read()
    except _Broken as exc:
        raise DataError(f"'{path}' is a broken Extra-P 3 experiment: {exc}") from None
