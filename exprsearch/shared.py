"""Tables that the searches of one process share: what they hold depends on expressions, names and
the factors' values (never on the measured times), so a profile's series, measured on one grid,
need not work it out again each time."""

from __future__ import annotations

import threading
from collections.abc import Hashable

KEYS_KEPT = 8  # keys (sets of constant kinds, of factor names) kept per kind of table, at most

_TABLES: dict[tuple[str, Hashable], tuple[dict, ...]] = {}
_LOCK = threading.Lock()  # a Dask worker may run several searches in threads


def tables(kind: str, key: Hashable, count: int) -> tuple[dict, ...]:
    """``count`` dicts for ``key`` among the tables of ``kind``; past ``KEYS_KEPT`` keys of one
    kind the oldest are let go, so that a long session does not grow without bound."""
    with _LOCK:
        if (kind, key) not in _TABLES:
            mine = [k for k in _TABLES if k[0] == kind]
            for old in mine[: max(0, len(mine) - KEYS_KEPT + 1)]:
                del _TABLES[old]
            _TABLES[(kind, key)] = tuple({} for _ in range(count))
        return _TABLES[(kind, key)]


def clear() -> None:
    """Forget every table (tests use it to compare a cold search with a warm one)."""
    with _LOCK:
        _TABLES.clear()
