"""A bound grammar → the unique candidate expressions it derives, in a deterministic order.

A candidate is kept as its additive terms: each distinct term is analysed once (its constants,
its linear coefficient, the column it contributes), so tens of thousands of candidates stay
cheap; a candidate's numbered template (``c0``, ``c1``, …) is built only when asked for. The
expansion itself is in :mod:`exprsearch.expand`.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import sympy

from .errors import GrammarError
from .grammar import Grammar, Limits
from .vocabulary import to_readable


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

    @cached_property
    def n_nonlinear(self) -> int:
        return len(self.kinds) - (self.coefficient is not None)

    @cached_property
    def varies(self) -> bool:
        """Whether the term's column changes with the factors (its key holds a factor)."""
        return any(not s.name.startswith("_theta") for s in self.key.free_symbols)


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

    def at_limits(self, values: Mapping[str, float]) -> dict[str, tuple[float, float]]:
        """The fitted exponents (nonlinear constants) that ``values`` puts on a finite end of their
        range, each with that range: the grammar, not the data, set where they stopped."""
        bounds = self.bounds
        return {s.name: bounds[s.name] for s in self.nonlinear
                if any(math.isfinite(end) and abs(values[s.name] - end) <= 1e-6 for end in bounds[s.name])}

    @property
    def constants(self) -> tuple[sympy.Symbol, ...]:
        return self.linear + self.nonlinear

    @property
    def n_constants(self) -> int:
        return sum(len(t.kinds) for t in self.terms)

    @cached_property
    def n_nonlinear(self) -> int:  # asked thousands of times per search by the fits' sorting
        return sum(t.n_nonlinear for t in self.terms)

    @property
    def separable(self) -> bool:
        """Every term has a linear coefficient and at most one nonlinear constant is in the
        candidate: the batched fit of :mod:`exprsearch.fit` can handle it."""
        return all(t.coefficient is not None for t in self.terms) and self.n_nonlinear <= 1

    def __str__(self) -> str:
        return to_readable(self.template)


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

    def atoms(self, groups: list[list[Expansion]]) -> list[tuple[list[int], bool]]:
        """Each group's expansions (each group depends on its own factors) by index, best first,
        and whether its factor shows in the data (one that does not keeps one in products)."""

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
    from .expand import Expander  # expand imports this module's types

    expander = Expander(grammar, strategy)
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
    return CandidateSet(tuple(ordered), expander.generated, dropped, dict(sorted(space.items())),
                        tuple(expander.screened), expander.guesses, rejected, expander.producers())


def canonical(expr: sympy.Expr, kinds: frozenset[sympy.Symbol]) -> sympy.Expr:
    """``expr`` without positive numbers multiplying a constant and powers of a lone constant (the
    constant ``kinds`` as symbols): ``2·c·p`` and ``c²·p`` are both ``c·p``."""

    def is_redundant(node: sympy.Basic) -> bool:
        if node.is_Mul:
            return any(a in kinds for a in node.args) and any(a.is_Number and a.is_positive for a in node.args)
        return node.is_Pow and node.base in kinds and node.exp.is_Number

    def simplify(node: sympy.Basic) -> sympy.Basic:
        if node.is_Pow:
            return node.base
        return sympy.Mul(*(a for a in node.args if not (a.is_Number and a.is_positive)))

    return expr.replace(is_redundant, simplify) if expr.has(*kinds) else expr


def analyse(generic: sympy.Expr, kinds: dict[sympy.Symbol, str]) -> Term:
    """Number a term's constant occurrences in tree order and find its linear coefficient."""
    size, merge = complexity(generic), generic.as_coeff_Mul()[1]
    # The two shapes most terms have, without rebuilding the tree (products of transforms make
    # thousands of terms): no constant at all, or one coefficient times constant-free factors.
    args = sympy.Mul.make_args(generic)
    direct = [a for a in args if a in kinds]
    rest = [a for a in args if a not in kinds]
    if not direct and not generic.has(*kinds):
        return Term(generic, generic, (), None, generic, size, merge)
    if len(direct) == 1 and not any(a.has(*kinds) for a in rest):
        key = sympy.Mul(*rest)
        return Term(generic, occurrence(0) * key, (kinds[direct[0]],), 0, key, size, merge)
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
    return Term(generic, pattern, tuple(found), coefficient, key, size, merge)


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


class _Counting:
    """A :class:`Strategy` that chooses nothing: for counting a space without data."""

    def atoms(self, groups: list[list[Expansion]]) -> list[tuple[list[int], bool]]:
        return [(sorted(range(len(g)), key=lambda i: sum(t.complexity for t in g[i])), True) for g in groups]

    def sums(self, fixed: Expansion, items: list[Expansion], low: int, high: int, limits: Limits) -> Choice:
        return Choice([], {}, "counted only")


def space_size(grammar: Grammar) -> int:
    """How many laws a bound grammar's space holds (where a product is too large to make, its
    ``max_products`` simplest transforms per factor are counted, as a run counts them)."""
    return generate(grammar, _Counting()).size


def product(factors: list[sympy.Expr]) -> sympy.Expr | None:
    """The product sympy's Mul makes of ``factors`` that share no base (transforms of different
    factors, or a constant kind and a term without it), when none holds a number part that Mul
    would multiply out: their parts in sympy's own order, without Mul's flattening, the most
    costly step of expanding products of transforms."""
    parts = [a for f in factors for a in sympy.Mul.make_args(f)]
    if any(a.is_number for a in parts):
        return None
    return sympy.Mul._from_args(tuple(sorted(parts, key=_ORDER_KEY)), is_commutative=True)


_ORDERED: dict[tuple[sympy.Basic, sympy.Basic], int] = {}


def _compare(a: sympy.Basic, b: sympy.Basic) -> int:
    """sympy's order of two factors (:meth:`Basic.compare`), kept: the same few transforms are
    compared in thousands of products, and comparing them walks both trees each time."""
    if (a, b) not in _ORDERED:
        _ORDERED[(a, b)] = a.compare(b)
    return _ORDERED[(a, b)]


_ORDER_KEY = functools.cmp_to_key(_compare)
