"""Counting the sums a rule's expansions make without listing them, so that the space a grammar
describes is reported whole even where only part of it is searched (see :mod:`exprsearch.expand`)."""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter

import numpy as np

from .candidates import Expansion
from .grammar import Limits, Reference


def sum_count(items: list[Expansion], ref: Reference, limits: Limits, fixed: Expansion = (),
              summary: tuple | None = None) -> tuple[int, Counter[int]]:
    """How many sums of ``low`` to ``high`` distinct ``items`` (plus ``fixed``) pass the limits
    on terms, nonlinear constants and complexity, and how many of them have each number of
    constants: a count over (terms, nonlinear constants, complexity, constants), one item at a time.
    ``summary`` is :func:`alike` of the items where the caller has it already."""
    base = (len(fixed), sum(t.n_nonlinear for t in fixed), sum(len(t.kinds) for t in fixed),
            sum(t.complexity for t in fixed))
    total, by_constants = _counted(alike(items) if summary is None else summary, base, ref.low, ref.high, limits)
    return total, Counter(dict(by_constants))


def alike(items: list[Expansion]) -> tuple[tuple[tuple[int, int, int], int], ...]:
    """How many items are alike in (nonlinear constants, complexity, constants): they are counted
    together, since j of m of them can be chosen in C(m, j) ways (each item is used at most once)."""
    counts = Counter((item[0].n_nonlinear, item[0].complexity, len(item[0].kinds)) if len(item) == 1 else
                     (sum(t.n_nonlinear for t in item), sum(t.complexity for t in item),
                      sum(len(t.kinds) for t in item)) for item in items)
    return tuple(sorted(counts.items()))


@functools.lru_cache(maxsize=256)
def _counted(alike: tuple, base: tuple[int, int, int, int], low: int, high: int,
             limits: Limits) -> tuple[int, tuple[tuple[int, int], ...]]:
    """:func:`sum_count` of items summarised by kind: the same for every series of a profile
    whose screening kept alike items, so it is counted once per process."""
    base_terms, base_nonlinear, base_constants, base_size = base
    most = min(high, max(limits.max_terms - base_terms, 0))
    room_nl = limits.max_nonlinear - base_nonlinear
    room_cx = limits.max_complexity
    if room_nl < 0:
        return 0, ()
    width = 16 * most + 1
    table = np.zeros((most + 1, room_nl + 1, room_cx + 1, width), dtype=np.int64)
    table[0, 0, 0, 0] = 1
    for (nl, cx, k), m in alike:
        before = table.copy()
        for j in range(1, min(m, most) + 1):
            if j * nl > room_nl or j * cx > room_cx or j * k >= width:
                break
            ways = math.comb(m, j)
            for s in range(j, most + 1):
                table[s, j * nl:, j * cx:, j * k:] += ways * before[s - j, : room_nl + 1 - j * nl,
                                                                    : room_cx + 1 - j * cx, : width - j * k]
    counts = np.zeros(width, dtype=np.int64)  # sums by their constants beyond the fixed terms'
    for s in range(max(low, 0), most + 1):
        # the size of the whole sum (the Add counts one), as Expander.size measures it
        room = limits.max_complexity - base_size - (1 if base_terms + s > 1 else 0)
        if room >= 0:
            counts += table[s, :, : min(room, room_cx) + 1].sum(axis=(0, 1))
    return int(counts.sum()), tuple((base_constants + k, int(counts[k])) for k in np.flatnonzero(counts).tolist())


def disjoint_choices(keys: list[frozenset], low: int, high: int) -> list[tuple[int, ...]]:
    """Index tuples of ``low`` to ``high`` groups whose factor sets are pairwise disjoint: which
    groups of transforms a product takes one of each from."""
    out = []
    for size in range(low, high + 1):
        for combo in itertools.combinations(range(len(keys)), size):
            sets = [keys[i] for i in combo]
            if sum(len(s) for s in sets) == len(frozenset().union(*sets)):
                out.append(combo)
    return out


def subsets(count: int, size: int) -> np.ndarray:
    """Every ``size``-subset of ``range(count)``, in itertools order, as rows of an array."""
    flat = itertools.chain.from_iterable(itertools.combinations(range(count), size))
    return np.fromiter(flat, dtype=np.int64).reshape(-1, size)


def product_count(choices: list[tuple[int, ...]], sizes: list[int]) -> int:
    """How many products the ``choices`` of groups make, with ``sizes`` members per group."""
    return sum(math.prod(sizes[g] for g in choice) for choice in choices)


def made_count(choices: list[tuple[int, ...]], cut: list[tuple[int, ...]], whole: list[list],
               picks: list[list]) -> int:
    """The products :meth:`~exprsearch.expand.Expander._products` makes: every member of each
    group in the ``choices`` not ``cut``, the ``picks`` of each group in those that are."""
    return (product_count([c for c in choices if c not in cut], [len(m) for m in whole])
            + product_count(cut, [len(m) for m in picks]))


def allocated(choices: list[tuple[int, ...]], lengths: list[int], shows: list[bool], keep: int,
              budget: int) -> list[int]:
    """How many members of each group the products keep within ``budget``: ``keep`` of each (the
    most every group can keep) where the factor shows in the data, one where it does not, then as
    many more of the former as still fit, then of the latter. A factor the data say nothing of
    needs no choice of shapes; the budget it frees lets those that show keep shapes the noise of
    a wide table ranks close."""
    sizes = [min(n, keep if show else 1) for n, show in zip(lengths, shows)]
    for wanted in (True, False):
        while True:
            grown = [s + 1 if show == wanted and s < n else s for s, n, show in zip(sizes, lengths, shows)]
            if grown == sizes or product_count(choices, grown) > budget:
                break
            sizes = grown
    return sizes


def cut_products(choices: list[tuple[int, ...]], lengths: list[int], budget: int,
                 whole_pairs: bool = True) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]], int, int]:
    """Which ``choices`` of groups (of ``lengths`` members) have their groups cut to fit
    ``budget`` products; the choices the budget is counted over, with every group at its cut
    size; the most members each group keeps; and that budget. With ``whole_pairs``, products of
    two factors are kept whole where they take at most half the budget: the rest goes to products
    of three, whose many combinations are what overflows it (``1/(b·p)`` and ``n·log2(n)/b`` had
    been cut with a third of b's shapes). Else every product of several factors is cut alike, and
    the budget is counted over all choices (a factor alone too, though it keeps every shape)."""
    cut, counted = [c for c in choices if len(c) > 1], choices
    if whole_pairs and any(len(c) > 2 for c in choices) and \
            product_count([c for c in choices if len(c) == 2], lengths) <= budget // 2:
        cut = counted = [c for c in choices if len(c) > 2]
        budget -= product_count([c for c in choices if len(c) <= 2], lengths)
    keep = max(lengths, default=0)
    while keep > 1 and product_count(counted, [min(n, keep) for n in lengths]) > budget:
        keep -= 1
    return cut, counted, keep, budget


def kept_note(keys: list[frozenset], sizes: list[int], shows: list[bool]) -> str:
    """What :func:`allocated` kept, in words: the factors (``keys``: each group's symbols) by how
    many shapes each kept."""
    if len(set(sizes)) == 1:
        return (f"{'the expansion' if sizes[0] == 1 else f'the {sizes[0]} expansions'} of each factor that "
                "fit its lines best, alone or in a pair")
    def named(which: list[int]) -> str:
        counts = sorted({sizes[i] for i in which})
        span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
        return f"{span} of {', '.join(sorted(s.name for i in which for s in keys[i]))}"
    shown = [i for i, show in enumerate(shows) if show]
    quiet = [i for i, show in enumerate(shows) if not show]
    return ("the expansions of each factor that fit its lines best, alone or in a pair: "
            + "; ".join([named(shown)] if shown else [])
            + ("; " if shown and quiet else "")
            + (f"{named(quiet)}, whose shapes fit them no better than a constant" if quiet else ""))
