"""Simpler shapes for a screened model's terms, exchanged a group at a time.

Where a factor is measured at few values, several sets of its shapes fit those values alike: on
three values of n, ``√b·n³ + √b·log2²n`` and ``√b·√n + √b`` both leave a constant and two shape
constants along n, and the beam keeps whichever fitted the noise a little better. Exchanging one
term at a time cannot reach the simpler set when every step through it fits worse, so the terms
of a model that share the rest of their product (``√b`` here) are exchanged together for every
simpler set of that rest's shapes of the factor; those that fit nearly as well are handed on to be
fitted exactly, where the selection's rule of the lowest-order shape among laws the data cannot
tell apart (docs/method.md) can choose them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import sympy

from . import shared
from .front import MSE_TIE
from .identify import log_slope
from .subsets import solved

KEPT = 5  # the simpler models that fit best, handed on per model and group
SWAPS = 12  # shapes as complex but of lower order tried in place of each of a group's (flatter)
NEAR = 0.1  # they fit nearly as well: their squared error is at most this much larger than the model's
ONE = sympy.S.One  # the part of a term in a factor it does not use (identify.factor_parts)


class Families:
    """The fixed-shape items that share a rest of their product, per factor: ``parts`` gives each
    item's part in every factor (``1`` where it has none), ``column`` its one column, ``size`` its
    complexity; ``varies(f, part)`` says whether a part is a shape of factor ``f`` alone, and
    ``top`` holds each factor's symbol and largest measured value (for a shape's order). A
    family is sorted out only when a model asks for it (a `pmnf` series has thousands of items)."""

    def __init__(self, parts: dict[int, tuple[sympy.Expr, ...]], column: dict[int, int], size: dict[int, int],
                 varies: Callable[[int, sympy.Expr], bool], top: Sequence[tuple[sympy.Symbol, float]]) -> None:
        self.parts, self.column, self.size, self.varies, self.top = parts, column, size, varies, top
        self._index: dict[tuple[int, tuple[sympy.Expr, ...]], list[int]] | None = None
        self._members: dict[tuple[int, tuple[sympy.Expr, ...]], list[int]] = {}
        # a slope depends on the factors' largest values only: a profile's series share them
        self._slopes = shared.tables("slopes", tuple(top), 1)[0]

    def slope(self, f: int, part: sympy.Expr) -> float:
        """|d ln part / d ln x| at factor ``f``'s largest measured value x: the order by which the
        selection keeps, of laws that fit alike, the one that departs least from the data
        (``ShapeRule.order``); infinite where the part is undefined there."""
        key = (f, part)
        if key not in self._slopes:
            symbol, value = self.top[f]
            self._slopes[key] = log_slope(part, {symbol: value}, symbol)
        return self._slopes[key]

    def order(self, f: int, items: Sequence[int]) -> tuple[float, ...]:
        """The items' shapes of factor ``f`` by their slopes, steepest first."""
        return tuple(sorted((self.slope(f, self.parts[i][f]) for i in items), reverse=True))

    def members(self, f: int, rest: tuple[sympy.Expr, ...]) -> list[int]:
        """The columns of the items whose part beside factor ``f`` is ``rest``, and whose part in
        ``f`` is a shape of it alone or nothing (the rest alone; the constant is no item)."""
        key = (f, rest)
        if key not in self._members:
            if self._index is None:
                self._index = {}
                for item, item_parts in self.parts.items():
                    if item in self.column:
                        for g in range(len(item_parts)):
                            self._index.setdefault((g, item_parts[:g] + item_parts[g + 1:]), []).append(item)
            alone = all(p is ONE for p in rest)
            self._members[key] = [self.column[i] for i in self._index.get(key, [])
                                  if (part := self.parts[i][f]) is not ONE and self.varies(f, part)
                                  or part is ONE and not alone]
        return self._members[key]

    def groups(self, items: Sequence[int]) -> list[tuple[int, tuple[sympy.Expr, ...], list[int]]]:
        """The model's items that hold a shape of one factor alone times a common rest: (the
        factor, the rest, the items), for groups of one or more."""
        found: dict[tuple[int, tuple[sympy.Expr, ...]], list[int]] = {}
        for item in items:
            item_parts = self.parts.get(item)
            if item_parts is None:
                continue
            for f, part in enumerate(item_parts):
                if part is not ONE and self.varies(f, part):
                    found.setdefault((f, item_parts[:f] + item_parts[f + 1:]), []).append(item)
        return [(f, rest, group) for (f, rest), group in found.items()]


def cheaper(members: Sequence[int], sizes: Sequence[int], k: int, limit: int) -> np.ndarray:
    """The ``k``-combinations of ``members`` whose ``sizes`` sum below ``limit``, in the order
    ``itertools.combinations`` gives them, one per row: a family of 300 shapes has 4.5 million
    triples, and testing (and then listing) each in Python took most of the exchange's time; pairs
    are tested by numpy, and a first member that leaves no room for the cheapest rest is passed over."""
    size, member = np.asarray(sizes, dtype=np.int64), np.asarray(members, dtype=np.intp)
    if len(size) < k:
        return np.zeros((0, k), dtype=np.intp)
    if k == 1:
        return member[size < limit].reshape(-1, 1)
    if k == 2:
        first, second = np.triu_indices(len(size), 1)
        keep = size[first] + size[second] < limit
        return np.column_stack([member[first[keep]], member[second[keep]]])
    least = np.sort(size)[:k - 1].sum()  # the cheapest any k - 1 others can be
    blocks = [np.zeros((0, k), dtype=np.intp)]
    for a in range(len(size) - k + 1):
        if size[a] + least < limit:
            rest = cheaper(member[a + 1:], size[a + 1:], k - 1, limit - int(size[a]))
            blocks.append(np.column_stack([np.full(len(rest), member[a], dtype=np.intp), rest]))
    return np.vstack(blocks)


def flatter(families: Families, f: int, mine: Sequence[int], family: Sequence[int], owner: np.ndarray) -> list[tuple[int, ...]]:
    """The sets as complex as the columns ``mine`` with each shape of factor ``f`` kept or
    exchanged for one as complex of lower order from ``family``: up to :data:`SWAPS` per shape,
    the nearest first (all sets as complex as two shapes of size 3 among 500 would be 125,000)."""
    def slope(c: int) -> float:
        return families.slope(f, families.parts[int(owner[c])][f])

    options = []
    for c in mine:
        size = families.size[int(owner[c])]
        # a shape with a fitted exponent has no order to compare: it is kept
        lower = [o for o in family if o not in mine and families.size[int(owner[o])] == size
                 and slope(o) < slope(c) < math.inf]
        options.append([c, *sorted(lower, key=lambda o: -slope(o))[:SWAPS]])
    seen, out = {frozenset(mine)}, []
    for combo in itertools.product(*options):
        if len(set(combo)) == len(combo) and frozenset(combo) not in seen:
            seen.add(frozenset(combo))
            out.append(combo)
    return out


def simpler_models(design: np.ndarray, residual: np.ndarray, model: tuple[float, tuple[int, ...]],
                   owner: np.ndarray, families: Families, margin: float) -> list[tuple[float, tuple[int, ...]]]:
    """Models made from ``model`` (its squared error and columns) by exchanging each group of its
    terms that share a rest for a less complex set of as many of that rest's shapes, or for one
    as complex of lower order (:func:`flatter`: ``n² + 1/n`` for ``n³ + 1/n²``, which fit three
    values of n alike), that fit within ``margin`` of its error with non-negative coefficients:
    the :data:`KEPT` best per group, those that fit alike least complex and lowest order first."""
    sse, columns = model
    items = [int(owner[c]) for c in columns]
    found: dict[tuple[int, ...], float] = {}
    for f, rest, group in families.groups(items):
        others = [c for c, i in zip(columns, items) if i not in group]
        taken = {int(owner[c]) for c in others}
        size = sum(families.size[i] for i in group)
        family = [c for c in families.members(f, rest) if int(owner[c]) not in taken]
        combos = cheaper(family, [families.size[int(owner[c])] for c in family], len(group), size)
        swapped = flatter(families, f, [c for c, i in zip(columns, items) if i in group], family, owner)
        if swapped:
            combos = np.vstack([combos, np.array(swapped, dtype=np.intp)])
        if not len(combos):
            continue
        which = np.hstack([np.broadcast_to(np.array(others, dtype=np.intp), (len(combos), len(others))), combos])
        cost, fine = solved(design, residual, which)
        good = np.flatnonzero(fine & (cost <= (1 + margin) * sse)).tolist()
        if not good:
            continue
        # sets that fit alike (the selection's MSE_TIE) are told apart by the data no better than
        # by the noise's last digits: the least complex, then the lowest order, are handed on first
        least = min(cost[j] for j in good)
        alike = {j: (sum(families.size[int(owner[c])] for c in which[j, -len(group):].tolist()),
                     families.order(f, [int(owner[c]) for c in which[j, -len(group):].tolist()]))
                 for j in good if cost[j] <= (1 + MSE_TIE) * least}
        for j in sorted(good, key=lambda j: (j not in alike, alike.get(j, ()), cost[j]))[:KEPT]:
            found.setdefault(tuple(which[j].tolist()), float(cost[j]))
    return [(cost, combo) for combo, cost in found.items()]


def simplest_models(design: np.ndarray, residual: np.ndarray, model: tuple[float, tuple[int, ...]],
                    owner: np.ndarray, families: Families, margin: float) -> list[tuple[float, tuple[int, ...]]]:
    """:func:`simpler_models` of ``model``, and of each of those once more: an exchange can form a
    group that the first did not hold (``1/n² + n³·log2 b`` exchanged to ``1/n² + n³``, which share
    the rest ``1``), whose simpler set (``1/n + √n``) only a second exchange reaches. Each kept
    within ``margin`` of ``model``'s own error."""
    first = simpler_models(design, residual, model, owner, families, margin)
    found = dict((columns, cost) for cost, columns in first)
    for cost, columns in first:
        for again, more in simpler_models(design, residual, (cost, columns), owner, families, margin):
            if again <= (1 + margin) * model[0]:
                found.setdefault(more, again)
    return [(cost, columns) for columns, cost in found.items()]


def simpler_sums(sums: Sequence[tuple[int, ...]], design: np.ndarray, residual: np.ndarray, owner: np.ndarray,
                 families: Families, margin: float) -> list[tuple[int, ...]]:
    """The best of ``sums`` (of items) of every length whose items each have one column, each
    exchanged by :func:`simpler_models`: a sum formed from the survivors can hold a steeper shape
    than the beam's models did, where the simpler one is no survivor (``n³ + 1/n`` for the law's
    ``n² + 1/n``, random law 39 of seed 11)."""
    by_length: dict[int, list[tuple[int, ...]]] = {}
    column = families.column
    for combo in sums:
        if combo and all(i in column for i in combo):
            by_length.setdefault(len(combo), []).append(combo)
    found: list[tuple[int, ...]] = []
    for _, combos in sorted(by_length.items()):
        which = np.array([[column[i] for i in combo] for combo in combos], dtype=np.intp)
        cost, fine = solved(design, residual, which)
        if not fine.any():
            continue
        best = int(np.flatnonzero(fine)[np.argmin(cost[fine])])
        found += [tuple(sorted(int(owner[c]) for c in columns)) for _, columns in
                  simpler_models(design, residual, (float(cost[best]), tuple(which[best].tolist())), owner, families,
                                 margin)]
    return found
