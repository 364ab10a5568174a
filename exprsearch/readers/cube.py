"""Score-P CUBE experiments, as Extra-P reads them: a directory holding one folder per run,
named ``<prefix>.<p1><v1><p2><v2>….r<repetition>`` (``mm.x10y1z1.r1``, a comma may stand for
the decimal point), each with a ``.cubex`` profile. Parameters come from the folder names
(those that never vary are left out); each callpath × metric is a series of exclusive values.
As Extra-P's default (weak scaling), every location's value of every repetition is a row, so a
point's mean is Extra-P's mean; ``strong`` sums the locations of a run into one row.
Needs ``pycubexr`` (the ``cube`` extra)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import DataError
from .profile import Collector, Profile


def is_cube_directory(path: Path) -> bool:
    return path.is_dir() and any(path.glob("*/[!.]*.cubex"))


def read(path: Path, scaling: str = "weak") -> Profile:
    try:
        from pycubexr import CubexParser
        from pycubexr.utils.exceptions import MissingMetricError
    except ImportError:
        raise DataError("reading CUBE files needs pycubexr: pip install 'exprsearch[cube]'") from None
    files = sorted(path.glob("*/[!.]*.cubex"))
    if not files:
        raise DataError(f"'{path}' holds no CUBE profiles (<run folder>/<name>.cubex)")
    names, points = _parameters(files, path)
    out = Collector(path, names)
    skipped: set[str] = set()
    for file, point in zip(files, points):
        try:
            parsed_file = CubexParser(str(file))
        except Exception as exc:  # pycubexr raises many kinds for a damaged archive
            raise DataError(f"'{file}' cannot be read as a CUBE profile ({exc})") from None
        with parsed_file as parsed:
            callpaths = _callpaths(parsed.get_root_cnodes())
            for metric in parsed.get_metrics():
                try:
                    values = parsed.get_metric_values(metric=metric, cache=False)
                except MissingMetricError:
                    skipped.add(metric.name)
                    continue
                for cnode_id in values.cnode_indices:
                    cnode = parsed.get_cnode(cnode_id)
                    # min/max metrics come as pycubexr's own value types, which convert with astype
                    exclusive = np.asarray(values.cnode_values(cnode, convert_to_exclusive=True).astype(float))
                    rows = [float(exclusive.sum())] if scaling == "strong" else exclusive.tolist()
                    out.add(callpaths[cnode_id], metric.name, point, rows)
    notes = (f"metrics without data were left out: {', '.join(sorted(skipped))}",) if skipped else ()
    return out.profile(notes)


def _parameters(files: list[Path], root: Path) -> tuple[list[str], list[tuple[float, ...]]]:
    """Parameter names and each run's values from its folder name, constant parameters left out."""
    names, values = None, []
    for file in files:
        folder = file.parent.name
        start, end = folder.find(".") + 1, folder.find(".r")
        parts = [p for p in re.split(r"([0-9.,]+)", folder[start:end if end != -1 else None]) if p]
        found = [p.strip(".") for p in parts[0::2]]
        try:
            numbers = [float(v.replace(",", ".").rstrip(".")) for v in parts[1::2]]
        except ValueError:
            numbers = []
        if not found or len(found) != len(numbers):
            raise DataError(f"'{root}': run folder '{folder}' does not name its parameters as "
                            "<prefix>.<name><value>…[.r<repetition>] (mm.x10y1z1.r1)")
        if names is None:
            names = found
        elif found != names:
            raise DataError(f"'{root}': run folder '{folder}' names parameters {', '.join(found)}; the others "
                            f"name {', '.join(names)}")
        values.append(numbers)
    varying = [i for i in range(len(names)) if len({v[i] for v in values}) > 1]
    if not varying:
        raise DataError(f"'{root}': no parameter varies between the run folders")
    return [names[i] for i in varying], [tuple(v[i] for i in varying) for v in values]


def _callpaths(roots) -> dict[int, str]:
    """Each call-tree node's path, ``main->solve->mpi_send``."""
    paths: dict[int, str] = {}

    def walk(node, prefix: str) -> None:
        name = f"{prefix}->{node.region.name}" if prefix else node.region.name
        paths[node.id] = name
        for child in node.get_children():
            walk(child, name)

    for root in roots:
        walk(root, "")
    return paths
