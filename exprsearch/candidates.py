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
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import sympy

from .errors import GrammarError
from .grammar import Alternative, Grammar, Reference
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
    order: tuple[int, str]
    merge: sympy.Expr  # terms with equal ``merge`` differ by a number factor: sympy adds them into one

    @property
    def n_nonlinear(self) -> int:
        return len(self.kinds) - (self.coefficient is not None)


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
    """The candidates a grammar expands to, with counts of what was generated and dropped."""

    candidates: tuple[Candidate, ...]
    generated: int
    dropped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.candidates)


@functools.lru_cache(maxsize=4096)
def _numbering(kinds: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    counters: dict[str, int] = {}
    names = []
    for row in kinds:
        names.append(tuple(f"{kind}{counters.setdefault(kind, 0)}" for kind in row))
        for kind in row:
            counters[kind] += 1
    return tuple(names)


def complexity(expr: sympy.Expr) -> int:
    """Nodes in the expression tree: every operator, function, symbol and number counts one."""
    return sum(1 for _ in sympy.preorder_traversal(expr))


Expansion = tuple[Term, ...]  # the additive terms of an expression, in Term.order


def generate(grammar: Grammar) -> CandidateSet:
    """Expand a bound grammar's ``start`` rule into unique candidates, simplest first."""
    if not grammar.bound:
        raise GrammarError(f"grammar '{grammar.name}' must be bound to a dataset's factors first")
    expander = _Expander(grammar)
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
    cap = grammar.limits.max_candidates
    if len(ordered) > cap:
        dropped[f"beyond max_candidates = {cap} (the most complex)"] = len(ordered) - cap
        ordered = ordered[:cap]
    return CandidateSet(tuple(ordered), expander.generated, dropped)


class _Expander:
    """Memoised expansion of rules into expansions (tuples of terms), pruned by the limits."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
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
            return [self.merge((fixed, *combo)) for combo in itertools.product(*options)]
        return [
            self.decompose(self._canonical(shape.xreplace(dict(zip(holders, map(self.expression, combo))))))
            for combo in itertools.product(*options)
        ]

    def _options(self, ref: Reference, depth: int) -> list[Expansion]:
        items = self.expand(ref.rule, depth)
        if (ref.low, ref.high) == (1, 1):
            return items
        limits = self.grammar.limits
        counts = np.array([sum(t.n_nonlinear for t in e) for e in items], dtype=np.int64)
        sizes = np.array([self.size(e) for e in items], dtype=np.int64)
        groups = [_combinations(len(items), size) for size in range(ref.low, ref.high + 1)]
        starts = np.cumsum([0] + [len(g) for g in groups])  # sums: sizes ascending, then lexicographic
        cost = np.concatenate([sizes[g].sum(axis=1) + 1 for g in groups])
        nonlinear = np.concatenate([counts[g].sum(axis=1) for g in groups])
        # Only the simplest sums can survive the candidate cap, so build no others.
        order = np.argsort(cost, kind="stable")
        order = order[(nonlinear[order] <= limits.max_nonlinear) & (cost[order] <= limits.max_complexity)]
        self.truncated += max(0, len(order) - limits.max_candidates)
        kept = order[: limits.max_candidates]
        which = np.searchsorted(starts, kept, side="right") - 1
        return [self.merge(tuple(items[i] for i in groups[g][k - starts[g]].tolist())) for g, k in zip(which, kept)]

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
        return tuple(sorted(terms, key=lambda t: t.order))

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
    return Term(generic, pattern, tuple(found), coefficient, key, size, (size, str(generic)),
                generic.as_coeff_Mul()[1])


def _over_limit(candidate: Candidate, grammar: Grammar) -> str | None:
    limits = grammar.limits
    if len(candidate.terms) > limits.max_terms:
        return f"more than max_terms = {limits.max_terms} terms"
    if candidate.n_nonlinear > limits.max_nonlinear:
        return f"more than max_nonlinear = {limits.max_nonlinear} nonlinear constants"
    return None


def term_labels(grammar: Grammar, template: sympy.Expr) -> tuple[str, ...]:
    """For each additive term of ``template``, the grammar rule that produced it.

    A term is matched (with its constants turned back into their kinds) against the expansions
    of each rule other than ``start``, in file order; a lone constant is the ``constant`` term
    and a term no rule produces whole is labelled ``term``.
    """
    expander = _Expander(grammar)
    kinds = {s.name: s for s in expander.kinds.values()}
    labels = []
    for term in sympy.Add.make_args(template):
        back = {s: kinds[s.name.rstrip("0123456789")] for s in term.free_symbols
                if s.name.rstrip("0123456789") in kinds and s.name[-1:].isdigit()}
        generic = expander._canonical(term.xreplace(back))
        if generic in expander.kind_symbols:
            labels.append("constant")
            continue
        label = "term"
        for rule in grammar.rules:
            if rule == "start" or rule in ("factor", "extrinsic", "intrinsic", "other"):
                continue
            if any(len(e) == 1 and e[0].generic == generic for e in expander.expand(rule, grammar.limits.max_depth)):
                label = rule
                break
        labels.append(label)
    return tuple(labels)
