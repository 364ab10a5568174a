"""A grammar's expansions by rule and depth, kept for the next search of the same grammar.

An expansion that no choice by the data and no cut went into — nor into any expansion it used —
is the same for every search of a grammar: the searches of one process (a profile's series) take
it, with the expansions first made while making it, instead of building the same sympy terms
again. Whatever depends on the data is made afresh by each search.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from . import shared

Key = tuple[str, int]  # a rule and the depth it is expanded to


class Memo:
    """One search's expansions; ``account(key, expansions, made)`` is told of each expansion taken
    from an earlier search, as it would have been had it been made here."""

    def __init__(self, grammar_key: Hashable, account: Callable[[Key, list, int], None]) -> None:
        self.account = account
        self.own: dict[Key, list] = {}
        self._kept = shared.tables("expansions", grammar_key, 1)[0]
        self._done: set[Key] = set()
        self._open: list[list] = []  # per expansion under way: [depends on the data?, expansions it made first]
        self._data_bound: set[Key] = set()

    def get(self, key: Key) -> list | None:
        """The expansions of ``key`` made or kept before, or None where they are to be made."""
        if key in self.own:
            if self._open and (key in self._data_bound or key not in self._done):
                self._open[-1][0] = True  # a re-entry, or an expansion the data chose: not kept
            return self.own[key]
        if key in self._kept:
            self._take(key)
            return self.own[key]
        return None

    def start(self, key: Key) -> None:
        self._open.append([False, []])
        self.own[key] = []  # guards against re-entry while expanding

    def finish(self, key: Key, expansions: list, made: int, data_bound: bool) -> None:
        """``key`` expanded to ``expansions`` from ``made`` alternatives; ``data_bound`` if a choice
        by the data or a cut was made while expanding it."""
        self.own[key] = expansions
        inner_bound, inner = self._open.pop()
        data_bound = data_bound or inner_bound
        self._done.add(key)
        self.account(key, expansions, made)
        if self._open:
            self._open[-1][0] |= data_bound
            self._open[-1][1].append(key)
        if data_bound:
            self._data_bound.add(key)
        else:  # the first search to finish it keeps it (searches in threads may race here)
            self._kept.setdefault(key, (expansions, made, tuple(inner)))

    def _take(self, key: Key) -> None:
        if key in self.own:
            return
        expansions, made, inner = self._kept[key]
        self.own[key] = expansions
        self._done.add(key)
        self.account(key, expansions, made)
        if self._open:
            self._open[-1][1].append(key)
        for other in inner:
            self._take(other)
