"""A bound grammar → the unique candidate expressions it derives, in a deterministic order.

Expansion works on sympy expressions in which every constant kind is one symbol (``c``), so
sympy's own canonical form merges ``a + b`` with ``b + a`` and ``c·p + c·p`` with ``c·p``.
An expansion is kept as its additive terms: each distinct term is analysed once (its constants,
its linear coefficient, the column it contributes), and sums of terms that sympy would not merge
are formed without building a new sympy expression, which keeps tens of thousands of candidates
cheap. A candidate's numbered template (``c0``, ``c1``, …) is built only when asked for.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np
import sympy

from .errors import GrammarError
from .grammar import PROVIDED_RULES, Alternative, Grammar, Limits, Reference
from .vocabulary import parse


@dataclass(frozen=True, eq=False)  # one instance per distinct term, so identity is equality
class Term:
    """One additive term in generic form (each constant kind one symbol), analysed once.

    ``pattern`` has each constant occurrence as a positional symbol ``_q0, _q1, …`` in tree
    order, ``kinds`` the kind of each occurrence, ``coefficient`` the occurrence that multiplies
    the whole term (solved in closed form) if any, and ``key`` the column the term contributes:
    the term without its coefficient, with its other constants as ``_theta0, _theta1, …``.
    """

    generic: sympy.Expr
    pattern: sympy.Expr
    kinds: tuple[str, ...]
    coefficient: int | None
    key: sympy.Expr
    complexity: int
    merge: sympy.Expr  # terms with equal ``merge`` differ by a number factor: sympy adds them into one

    @cached_property
    def order(self) -> tuple[int, str]:
        """Where the term goes in a sum: simplest first, then by its text (made only when needed:
        printing costs more than the rest of the analysis)."""
        return (self.complexity, str(self.generic))

    @property
    def n_nonlinear(self) -> int:
        return len(self.kinds) - (self.coefficient is not None)


Expansion = tuple[Term, ...]  # the additive terms of an expression, in Term.order


def occurrence(i: int) -> sympy.Symbol:
    return sympy.Symbol(f"_q{i}", real=True)


def theta(i: int) -> sympy.Symbol:
    """The i-th nonlinear constant of a term's column key."""
    return sympy.Symbol(f"_theta{i}", real=True)


@dataclass(frozen=True)
class Candidate:
    """A sum of terms ``offset + Σ linear[i]·basis[i]``; ``nonlinear`` constants sit inside terms."""

    terms: tuple[Term, ...]
    complexity: int
    limits: Mapping[str, tuple[float, float]] = field(compare=False, repr=False, default_factory=dict)

    @cached_property
    def names(self) -> tuple[tuple[str, ...], ...]:
        """Each term's constant names: every occurrence of a kind numbered in term order."""
        return _numbering(tuple(t.kinds for t in self.terms))

    @cached_property
    def _numbered(self) -> tuple[sympy.Expr, ...]:
        return tuple(
            t.pattern.xreplace({occurrence(i): sympy.Symbol(n, real=True) for i, n in enumerate(names)})
            for t, names in zip(self.terms, self.names))

    @cached_property
    def template(self) -> sympy.Expr:
        return sympy.Add(*self._numbered)

    @property
    def linear(self) -> tuple[sympy.Symbol, ...]:
        return tuple(sympy.Symbol(names[t.coefficient], real=True)
                     for t, names in zip(self.terms, self.names) if t.coefficient is not None)

    @property
    def nonlinear(self) -> tuple[sympy.Symbol, ...]:
        """In term order, then tree order: the order of a term's ``_theta`` symbols."""
        return tuple(sympy.Symbol(n, real=True) for t, names in zip(self.terms, self.names)
                     for i, n in enumerate(names) if i != t.coefficient)

    @property
    def basis(self) -> tuple[sympy.Expr, ...]:
        return tuple(expr / sympy.Symbol(names[t.coefficient], real=True)
                     for t, names, expr in zip(self.terms, self.names, self._numbered) if t.coefficient is not None)

    @property
    def offset(self) -> sympy.Expr:
        return sympy.Add(*(e for t, e in zip(self.terms, self._numbered) if t.coefficient is None))

    @property
    def bounds(self) -> dict[str, tuple[float, float]]:
        return {n: self.limits[k] for t, names in zip(self.terms, self.names) for k, n in zip(t.kinds, names)}

    @property
    def constants(self) -> tuple[sympy.Symbol, ...]:
        return self.linear + self.nonlinear

    @property
    def n_constants(self) -> int:
        return sum(len(t.kinds) for t in self.terms)

    @property
    def n_nonlinear(self) -> int:
        return sum(t.n_nonlinear for t in self.terms)

    @property
    def separable(self) -> bool:
        """Every term has a linear coefficient and at most one nonlinear constant is in the
        candidate: the batched fit of :mod:`exprsearch.fit` can handle it."""
        return all(t.coefficient is not None for t in self.terms) and self.n_nonlinear <= 1

    def __str__(self) -> str:
        return str(self.template)


@dataclass(frozen=True)
class CandidateSet:
    """The candidates to fit, with counts of what was generated and dropped.

    ``space`` counts the laws of the whole space by their number of constants (more than the
    candidates when a strategy chose among them by the data: see :mod:`exprsearch.screen`),
    ``screened`` says where and how such a choice was made, ``guesses`` gives, for terms with
    nonlinear constants, the values the screening found best (a start for their fit),
    ``rejected`` counts, by reason, the terms the strategy left out, and ``producers`` names the
    rule each term came from (see :func:`term_labels`).
    """

    candidates: tuple[Candidate, ...]
    generated: int
    dropped: dict[str, int] = field(default_factory=dict)
    space: dict[int, int] = field(default_factory=dict)
    screened: tuple[str, ...] = ()
    guesses: Mapping[Term, tuple[float, ...]] = field(default_factory=dict, compare=False, repr=False)
    rejected: dict[str, int] = field(default_factory=dict)
    producers: Mapping[sympy.Expr, str] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.candidates)

    @property
    def size(self) -> int:
        """Laws in the whole space the grammar describes."""
        return sum(self.space.values()) if self.space else len(self.candidates)


class Strategy(Protocol):
    """Chooses by the data where a rule expands to more than the limits allow to enumerate."""

    def atoms(self, groups: list[list[Expansion]], keep: int) -> list[list[Expansion]]:
        """At most ``keep`` expansions of each group (each group depends on its own factors)."""

    def sums(self, fixed: Expansion, items: list[Expansion], low: int, high: int, limits: Limits) -> Choice:
        """Which sums of ``low`` to ``high`` distinct ``items`` (added to ``fixed``) to fit."""


@dataclass(frozen=True)
class Choice:
    """A strategy's choice of sums: item indices, the best values found for the nonlinear
    constants of terms, a sentence saying what was done, and how many items were left out
    because they are undefined (NaN or infinite) on the data."""

    combos: list[tuple[int, ...]]
    guesses: dict[Term, tuple[float, ...]]
    how: str
    undefined: int = 0


@functools.lru_cache(maxsize=4096)
def _numbering(kinds: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    counters: dict[str, int] = {}
    names = []
    for row in kinds:
        named = []
        for kind in row:
            named.append(f"{kind}{counters.get(kind, 0)}")
            counters[kind] = counters.get(kind, 0) + 1
        names.append(tuple(named))
    return tuple(names)


def complexity(expr: sympy.Expr) -> int:
    """Nodes in the expression tree: every operator, function, symbol and number counts one."""
    return sum(1 for _ in sympy.preorder_traversal(expr))


def generate(grammar: Grammar, strategy: Strategy | None = None) -> CandidateSet:
    """Expand a bound grammar's ``start`` rule into unique candidates, simplest first.

    Where a sum ``<rule>{a,b}`` or a product ``<rule>*{a,b}`` has more expansions than
    ``max_candidates`` or ``max_products``, ``strategy`` chooses among them by the data; without
    one the simplest are kept and the rest counted as dropped.
    """
    if not grammar.bound:
        raise GrammarError(f"grammar '{grammar.name}' must be bound to a dataset's factors first")
    expander = _Expander(grammar, strategy)
    limits = {c.name: (c.min, c.max) for c in grammar.constants}
    dropped: dict[str, int] = {}
    kept = []
    for terms in expander.expand("start", grammar.limits.max_depth):  # unique, deterministic order
        nonlinear = sum(t.n_nonlinear for t in terms)
        # a fitted exponent costs more than a fixed one
        candidate = Candidate(terms, expander.size(terms) + nonlinear, limits)
        reason = _over_limit(candidate, grammar)
        if reason:
            dropped[reason] = dropped.get(reason, 0) + 1
        else:
            kept.append(candidate)
    ordered = sorted(kept, key=lambda c: (c.complexity, c.n_constants))
    if expander.truncated:
        dropped["sums beyond max_candidates (the most complex)"] = expander.truncated
    if expander.unmade:
        dropped["products beyond max_products (the most complex)"] = expander.unmade
    rejected = {"undefined term(s) left out by the screening": expander.undefined} if expander.undefined else {}
    cap = grammar.limits.max_candidates
    if len(ordered) > cap:
        dropped[f"beyond max_candidates = {cap} (the most complex)"] = len(ordered) - cap
        ordered = ordered[:cap]
    space = expander.space if expander.screened else dict(Counter(c.n_constants for c in ordered))
    order = {rule: i for i, rule in enumerate(grammar.rules)}
    producers = {g: min(rules, key=order.__getitem__) for g, rules in expander.producers.items()}
    return CandidateSet(tuple(ordered), expander.generated, dropped, dict(sorted(space.items())),
                        tuple(expander.screened), expander.guesses, rejected, producers)


class _Expander:
    """Memoised expansion of rules into expansions (tuples of terms), pruned by the limits."""

    def __init__(self, grammar: Grammar, strategy: Strategy | None = None) -> None:
        self.grammar = grammar
        self.strategy = strategy
        self.factor_symbols = frozenset(grammar.symbols()[f.name] for f in grammar.factors)
        self.space: Counter[int] = Counter()  # laws of the whole space, by constants, once screened
        self.screened: list[str] = []
        self.guesses: dict[Term, tuple[float, ...]] = {}
        self.unmade = 0
        self.undefined = 0
        self.producers: dict[sympy.Expr, set[str]] = {}
        self.kinds = {c.name: sympy.Symbol(c.name, real=True) for c in grammar.constants}
        self.kind_symbols = frozenset(self.kinds.values())
        self.symbols = grammar.symbols()
        self.memo: dict[tuple[str, int], list[Expansion]] = {}
        self.kind_of = {s: n for n, s in self.kinds.items()}
        self.terms: dict[sympy.Expr, Term] = {}
        self.generated = 0
        self.truncated = 0

    def expand(self, rule: str, depth: int) -> list[Expansion]:
        key = (rule, depth)
        if key not in self.memo:
            self.memo[key] = []  # guards against re-entry while expanding
            unique: dict[Expansion, None] = {}
            for alt in self.grammar.rules[rule]:
                for terms in self._alternative(alt, depth):
                    self.generated += 1
                    if self.size(terms) <= self.grammar.limits.max_complexity:
                        unique.setdefault(terms, None)
            self.memo[key] = list(unique)
            if rule != "start" and rule not in PROVIDED_RULES:
                for terms in self.memo[key]:
                    if len(terms) == 1:
                        self.producers.setdefault(terms[0].generic, set()).add(rule)
        return self.memo[key]

    def size(self, terms: Expansion) -> int:
        """:func:`complexity` of the sum of ``terms``."""
        if len(terms) == 1:
            return terms[0].complexity
        return 1 + sum(t.complexity for t in terms) if terms else 1

    def _alternative(self, alt: Alternative, depth: int) -> list[Expansion]:
        table = dict(self.symbols)
        table.update({r.placeholder: sympy.Symbol(r.placeholder) for r in alt.references})
        shape = parse(alt.placeholder_text(), table)
        if not alt.references:
            return [self.decompose(self._canonical(shape))]
        if depth == 0:
            return []
        refs = alt.references
        options = [self._options(ref, depth - 1) for ref in refs]
        holders = [table[ref.placeholder] for ref in refs]
        parts = sympy.Add.make_args(shape)
        if all(h in parts for h in holders) and not any(
                p.has(*holders) for p in parts if p not in holders):
            # The references are whole terms of a sum: add their terms without sympy.
            fixed = self.decompose(self._canonical(sympy.Add(*(p for p in parts if p not in holders))))
            if len(refs) == 1 and options[0] is None:
                return self._screened_sums(fixed, refs[0], depth - 1)
            return [self.merge((fixed, *combo)) for combo in itertools.product(*options)]
        if any(o is None for o in options):
            options = [self._capped_sums(r, depth - 1) if o is None else o for r, o in zip(refs, options)]
        return [
            self.decompose(self._canonical(shape.xreplace(dict(zip(holders, map(self.expression, combo))))))
            for combo in itertools.product(*options)
        ]

    def _options(self, ref: Reference, depth: int) -> list[Expansion] | None:
        """The expansions a reference stands for; None for a sum too large to enumerate that a
        strategy will choose from (see :meth:`_screened_sums`)."""
        items = self.expand(ref.rule, depth)
        if ref.product:
            return self._products(ref, items)
        if (ref.low, ref.high) == (1, 1):
            return items
        if self.strategy is not None and _sum_count(items, ref, self.grammar.limits, self.size)[0] > \
                self.grammar.limits.max_candidates:
            return None
        return self._capped_sums(ref, depth)

    def _capped_sums(self, ref: Reference, depth: int) -> list[Expansion]:
        """Sums of ``low`` to ``high`` distinct expansions, the simplest ``max_candidates``."""
        items = self.expand(ref.rule, depth)
        limits = self.grammar.limits
        total = _sum_count(items, ref, limits, self.size)[0]
        if math.comb(len(items), ref.high) > 50 * limits.max_candidates:
            # Too many to list: the simplest sums are made of the simplest items, so list the sums
            # of just enough of those (the rest count as cut by max_candidates).
            by_size = sorted(range(len(items)), key=lambda i: self.size(items[i]))
            enough = next((m for m in range(ref.high, len(items) + 1)
                           if math.comb(m, ref.high) >= 4 * limits.max_candidates), len(items))
            items = [items[i] for i in sorted(by_size[:enough])]
        counts = np.array([sum(t.n_nonlinear for t in e) for e in items], dtype=np.int64)
        sizes = np.array([self.size(e) for e in items], dtype=np.int64)
        groups = [_combinations(len(items), size) for size in range(max(ref.low, 1), ref.high + 1)]
        starts = np.cumsum([0] + [len(g) for g in groups])  # sums: sizes ascending, then lexicographic
        cost = np.concatenate([sizes[g].sum(axis=1) + 1 for g in groups])
        nonlinear = np.concatenate([counts[g].sum(axis=1) for g in groups])
        # Only the simplest sums can survive the candidate cap, so build no others.
        order = np.argsort(cost, kind="stable")
        order = order[(nonlinear[order] <= limits.max_nonlinear) & (cost[order] <= limits.max_complexity)]
        kept = order[: limits.max_candidates]
        self.truncated += max(0, total - len(kept) - (ref.low == 0))
        which = np.searchsorted(starts, kept, side="right") - 1
        empty = [()] if ref.low == 0 else []
        return empty + [self.merge(tuple(items[i] for i in groups[g][k - starts[g]].tolist()))
                        for g, k in zip(which, kept)]

    def _screened_sums(self, fixed: Expansion, ref: Reference, depth: int) -> list[Expansion]:
        """``fixed`` plus the sums of distinct expansions of ``ref.rule`` that the strategy chose."""
        items = self.expand(ref.rule, depth)
        limits = self.grammar.limits
        total, by_constants = _sum_count(items, ref, limits, self.size, fixed)
        self.space.update(by_constants)
        choice = self.strategy.sums(fixed, items, ref.low, ref.high, limits)
        self.guesses.update(choice.guesses)
        self.undefined += choice.undefined
        self.screened.append(f"<{ref.rule}>{{{ref.low},{ref.high}}}: {total:,} sums in the space; {choice.how}")
        return [self.merge((fixed, *(items[i] for i in combo))) for combo in choice.combos]

    def dependencies(self, expansion: Expansion) -> frozenset[sympy.Symbol]:
        return frozenset().union(*(t.generic.free_symbols for t in expansion)) & self.factor_symbols

    def _products(self, ref: Reference, items: list[Expansion]) -> list[Expansion]:
        """Products of ``low`` to ``high`` expansions that each depend on one factor, a different
        one each (expansions of several factors, or of none, are not transforms and are left out).

        Expansions are grouped by the factors they depend on; when the products number more than
        ``max_products``, each group is cut to the expansions the strategy ranks first (or, without
        one, the simplest), as few as needed.
        """
        groups: dict[frozenset, list[Expansion]] = {}
        for item in items:
            needs = self.dependencies(item)
            if len(needs) == 1:  # a transform of one factor (x·log2 x, not n·log2 w)
                groups.setdefault(needs, []).append(item)
        keys = sorted(groups, key=lambda k: sorted(s.name for s in k))
        choices = _disjoint_choices(keys, ref.low, ref.high)
        members = [groups[k] for k in keys]
        budget = self.grammar.limits.max_products
        full = _product_count(choices, [len(m) for m in members])
        keep = max(len(m) for m in members) if members else 0
        while keep > 1 and _product_count(choices, [min(len(m), keep) for m in members]) > budget:
            keep -= 1
        if keep < max((len(m) for m in members), default=0):
            if self.strategy is not None:
                members = self.strategy.atoms(members, keep)
                made = _product_count(choices, [len(m) for m in members])
                self.screened.append(
                    f"<{ref.rule}>*{{{ref.low},{ref.high}}}: {full:,} products in the space; kept the {keep} "
                    f"expansions of each factor that fit its lines best, alone or in a pair ({made:,} products)")
            else:
                members = [sorted(m, key=self.size)[:keep] for m in members]
                self.unmade += full - _product_count(choices, [len(m) for m in members])
        products: dict[Expansion, None] = {}
        for choice in choices:
            for combo in itertools.product(*(members[g] for g in choice)):
                expr = sympy.Mul(*(self.expression(e) for e in combo))
                products.setdefault(self.decompose(self._canonical(expr)), None)
        return list(products)

    def merge(self, parts: tuple[Expansion, ...]) -> Expansion:
        """The terms of the sum of ``parts``; sympy is needed only when two terms would combine."""
        terms = tuple(t for part in parts for t in part)
        if len({t.merge for t in terms}) == len(terms):
            return tuple(sorted(terms, key=lambda t: t.order))
        return self.decompose(self._canonical(self.expression(terms)))

    def expression(self, terms: Expansion) -> sympy.Expr:
        return sympy.Add(*(t.generic for t in terms))

    def decompose(self, expr: sympy.Expr) -> Expansion:
        terms = [self.term(t) for t in sympy.Add.make_args(expr) if t != 0]
        return tuple(terms) if len(terms) < 2 else tuple(sorted(terms, key=lambda t: t.order))

    def term(self, generic: sympy.Expr) -> Term:
        """The analysed :class:`Term` of a canonical generic term (cached)."""
        if generic not in self.terms:
            self.terms[generic] = _analyse(generic, self.kind_of)
        return self.terms[generic]

    def _canonical(self, expr: sympy.Expr) -> sympy.Expr:
        """Drop positive numbers multiplying a constant and powers of a lone constant."""
        kinds = self.kind_symbols

        def is_redundant(node: sympy.Basic) -> bool:
            if node.is_Mul:
                return any(a in kinds for a in node.args) and any(
                    a.is_Number and a.is_positive for a in node.args
                )
            return node.is_Pow and node.base in kinds and node.exp.is_Number

        def simplify(node: sympy.Basic) -> sympy.Basic:
            if node.is_Pow:
                return node.base
            return sympy.Mul(*(a for a in node.args if not (a.is_Number and a.is_positive)))

        return expr.replace(is_redundant, simplify) if expr.has(*kinds) else expr


def _combinations(count: int, size: int) -> np.ndarray:
    """Every ``size``-subset of ``range(count)``, in itertools order, as rows of an array."""
    flat = itertools.chain.from_iterable(itertools.combinations(range(count), size))
    return np.fromiter(flat, dtype=np.int64).reshape(-1, size)


def _disjoint_choices(keys: list[frozenset], low: int, high: int) -> list[tuple[int, ...]]:
    """Index tuples of ``low`` to ``high`` groups whose factor sets are pairwise disjoint."""
    out = []
    for size in range(low, high + 1):
        for combo in itertools.combinations(range(len(keys)), size):
            sets = [keys[i] for i in combo]
            if sum(len(s) for s in sets) == len(frozenset().union(*sets)):
                out.append(combo)
    return out


def _product_count(choices: list[tuple[int, ...]], sizes: list[int]) -> int:
    return sum(math.prod(sizes[g] for g in choice) for choice in choices)


def _sum_count(items: list[Expansion], ref: Reference, limits: Limits, size,
               fixed: Expansion = ()) -> tuple[int, Counter[int]]:
    """How many sums of ``low`` to ``high`` distinct ``items`` (plus ``fixed``) pass the limits
    on terms, nonlinear constants and complexity, and how many of them have each number of
    constants: a count over (terms, nonlinear constants, complexity, constants), one item at a time."""
    base_terms = len(fixed)
    base_nonlinear = sum(t.n_nonlinear for t in fixed)
    base_constants = sum(len(t.kinds) for t in fixed)
    base_size = sum(t.complexity for t in fixed)
    most = min(ref.high, max(limits.max_terms - base_terms, 0))
    room_nl = limits.max_nonlinear - base_nonlinear
    room_cx = limits.max_complexity
    if room_nl < 0:
        return 0, Counter()
    width = 16 * most + 1
    table = np.zeros((most + 1, room_nl + 1, room_cx + 1, width), dtype=np.int64)
    table[0, 0, 0, 0] = 1
    for item in items:
        nl = sum(t.n_nonlinear for t in item)
        cx = sum(t.complexity for t in item)
        k = sum(len(t.kinds) for t in item)
        if nl > room_nl or cx > room_cx or k >= width:
            continue
        # every count of terms at once, largest first, so an item is used at most once
        for s in range(most, 0, -1):
            table[s, nl:, cx:, k:] += table[s - 1, : room_nl + 1 - nl, : room_cx + 1 - cx, : width - k]
    total, by_constants = 0, Counter()
    for s in range(max(ref.low, 0), most + 1):
        terms = base_terms + s
        for cx in range(room_cx + 1):
            # the size of the whole sum (the Add counts one), as _Expander.size measures it
            if base_size + cx + (1 if terms > 1 else 0) > limits.max_complexity:
                continue
            for nl in range(room_nl + 1):
                row = table[s, nl, cx]
                for k in np.flatnonzero(row):
                    total += int(row[k])
                    by_constants[base_constants + int(k)] += int(row[k])
    return total, by_constants


def _analyse(generic: sympy.Expr, kinds: dict[sympy.Symbol, str]) -> Term:
    """Number a term's constant occurrences in tree order and find its linear coefficient."""
    found: list[str] = []

    def walk(node: sympy.Basic) -> sympy.Basic:
        if node in kinds:
            found.append(kinds[node])
            return occurrence(len(found) - 1)
        if not node.args:
            return node
        return node.func(*(walk(a) for a in node.args))

    pattern = walk(generic)
    direct = [i for i in range(len(found)) if occurrence(i) in sympy.Mul.make_args(pattern)]
    coefficient = direct[0] if direct else None
    others = [i for i in range(len(found)) if i != coefficient]
    key = pattern / occurrence(coefficient) if coefficient is not None else pattern
    key = key.xreplace({occurrence(i): theta(j) for j, i in enumerate(others)})
    size = complexity(generic)
    return Term(generic, pattern, tuple(found), coefficient, key, size, generic.as_coeff_Mul()[1])


def _over_limit(candidate: Candidate, grammar: Grammar) -> str | None:
    limits = grammar.limits
    if len(candidate.terms) > limits.max_terms:
        return f"more than max_terms = {limits.max_terms} terms"
    if candidate.n_nonlinear > limits.max_nonlinear:
        return f"more than max_nonlinear = {limits.max_nonlinear} nonlinear constants"
    return None


def term_labels(grammar: Grammar, template: sympy.Expr, producers: Mapping[sympy.Expr, str]) -> tuple[str, ...]:
    """For each additive term of ``template``, the grammar rule that produced it.

    ``producers`` (from :attr:`CandidateSet.producers`) maps each generic term to the first rule
    other than ``start``, in file order, that expands to it alone; a lone constant is the
    ``constant`` term and a term no rule produces whole is labelled ``term``.
    """
    kinds = {c.name: sympy.Symbol(c.name, real=True) for c in grammar.constants}
    labels = []
    for term in sympy.Add.make_args(template):
        back = {s: kinds[s.name.rstrip("0123456789")] for s in term.free_symbols
                if s.name.rstrip("0123456789") in kinds and s.name[-1:].isdigit()}
        generic = term.xreplace(back)
        labels.append("constant" if generic in kinds.values() else producers.get(generic, "term"))
    return tuple(labels)
