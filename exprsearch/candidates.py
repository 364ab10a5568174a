"""A bound grammar → the unique candidate expressions it derives, in a deterministic order.

Expansion works on sympy expressions in which every constant kind is one symbol (``c``), so
sympy's own canonical form merges ``a + b`` with ``b + a`` and ``c·p + c·p`` with ``c·p``.
Only then is each occurrence of a kind given its own symbol (``c0``, ``c1``, …).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sympy

from .errors import GrammarError
from .grammar import Alternative, Grammar, Reference
from .vocabulary import parse


@dataclass(frozen=True)
class Candidate:
    """A template ``offset + Σ linear[i]·basis[i]``; ``nonlinear`` constants sit inside terms."""

    template: sympy.Expr
    linear: tuple[sympy.Symbol, ...]
    basis: tuple[sympy.Expr, ...]
    offset: sympy.Expr
    nonlinear: tuple[sympy.Symbol, ...]
    bounds: dict[str, tuple[float, float]]
    complexity: int

    @property
    def constants(self) -> tuple[sympy.Symbol, ...]:
        return self.linear + self.nonlinear

    @property
    def n_constants(self) -> int:
        return len(self.linear) + len(self.nonlinear)

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


def complexity(expr: sympy.Expr) -> int:
    """Nodes in the expression tree: every operator, function, symbol and number counts one."""
    return sum(1 for _ in sympy.preorder_traversal(expr))


def generate(grammar: Grammar) -> CandidateSet:
    """Expand a bound grammar's ``start`` rule into unique candidates, simplest first."""
    if not grammar.bound:
        raise GrammarError(f"grammar '{grammar.name}' must be bound to a dataset's factors first")
    expander = _Expander(grammar)
    generic = expander.expand("start", grammar.limits.max_depth)
    dropped: dict[str, int] = {}
    kept: dict[sympy.Expr, Candidate] = {}
    for expr in generic:  # already in a deterministic order, so a stable sort keeps it so
        candidate = _parameterise(expr, grammar)
        reason = _over_limit(candidate, grammar)
        if reason:
            dropped[reason] = dropped.get(reason, 0) + 1
        else:
            kept.setdefault(candidate.template, candidate)
    ordered = sorted(kept.values(), key=lambda c: (c.complexity, c.n_constants))
    if expander.truncated:
        dropped["sums beyond max_candidates (the most complex)"] = expander.truncated
    cap = grammar.limits.max_candidates
    if len(ordered) > cap:
        dropped[f"beyond max_candidates = {cap} (the most complex)"] = len(ordered) - cap
        ordered = ordered[:cap]
    return CandidateSet(tuple(ordered), expander.generated, dropped)


class _Expander:
    """Memoised expansion of rules into generic expressions, pruned by the grammar's limits."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self.kinds = {c.name: sympy.Symbol(c.name, real=True) for c in grammar.constants}
        self.kind_symbols = frozenset(self.kinds.values())
        self.symbols = grammar.symbols()
        self.memo: dict[tuple[str, int], list[sympy.Expr]] = {}
        self.generated = 0
        self.truncated = 0

    def expand(self, rule: str, depth: int) -> list[sympy.Expr]:
        key = (rule, depth)
        if key not in self.memo:
            self.memo[key] = []  # guards against re-entry while expanding
            unique: dict[sympy.Expr, None] = {}
            for alt in self.grammar.rules[rule]:
                for expr in self._alternative(alt, depth):
                    self.generated += 1
                    if self._within_limits(expr):
                        unique.setdefault(expr, None)
            self.memo[key] = list(unique)
        return self.memo[key]

    def _alternative(self, alt: Alternative, depth: int) -> list[sympy.Expr]:
        table = dict(self.symbols)
        table.update({r.placeholder: sympy.Symbol(r.placeholder) for r in alt.references})
        shape = parse(alt.placeholder_text(), table)
        if not alt.references:
            return [self._canonical(shape)]
        if depth == 0:
            return []
        refs = alt.references
        options = [self._options(ref, depth - 1) for ref in refs]
        holders = [table[ref.placeholder] for ref in refs]
        return [
            self._canonical(shape.xreplace(dict(zip(holders, combo))))
            for combo in itertools.product(*options)
        ]

    def _options(self, ref: Reference, depth: int) -> list[sympy.Expr]:
        items = self.expand(ref.rule, depth)
        if (ref.low, ref.high) == (1, 1):
            return items
        limits = self.grammar.limits
        counts = [self._nonlinear_count(e) for e in items]
        sizes = [complexity(e) for e in items]
        combos = [
            (sum(sizes[i] for i in combo) + 1, combo)
            for size in range(ref.low, ref.high + 1)
            for combo in itertools.combinations(range(len(items)), size)
            if sum(counts[i] for i in combo) <= limits.max_nonlinear
        ]
        # Only the simplest sums can survive the candidate cap, so build no others.
        combos.sort(key=lambda pair: pair[0])
        combos = [combo for cost, combo in combos if cost <= limits.max_complexity]
        self.truncated += max(0, len(combos) - limits.max_candidates)
        return [sympy.Add(*(items[i] for i in combo)) for combo in combos[: limits.max_candidates]]

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

    def _nonlinear_count(self, expr: sympy.Expr) -> int:
        template, bounds = _renumber(expr, self.kinds, self.grammar)
        return len(_split(template, set(bounds))[2])

    def _within_limits(self, expr: sympy.Expr) -> bool:
        return complexity(expr) <= self.grammar.limits.max_complexity


def _renumber(
    expr: sympy.Expr, kinds: dict[str, sympy.Symbol], grammar: Grammar
) -> tuple[sympy.Expr, dict[str, tuple[float, float]]]:
    """Give every occurrence of a constant kind its own symbol, numbered in tree order."""
    by_symbol = {s: name for name, s in kinds.items()}
    counters = dict.fromkeys(kinds, 0)
    bounds: dict[str, tuple[float, float]] = {}

    def walk(node: sympy.Basic) -> sympy.Basic:
        if node in by_symbol:
            kind = by_symbol[node]
            name = f"{kind}{counters[kind]}"
            counters[kind] += 1
            spec = grammar.constant(kind)
            bounds[name] = (spec.min, spec.max)
            return sympy.Symbol(name, real=True)
        if not node.args:
            return node
        return node.func(*(walk(a) for a in node.args))

    return walk(expr), bounds


def _split(template: sympy.Expr, names: set[str]):
    """Separate ``template`` into an offset, linear coefficients with their basis, and the rest."""
    constants = {s for s in template.free_symbols if s.name in names}
    linear, basis, offset = [], [], sympy.Integer(0)
    for term in sympy.Add.make_args(template):
        direct = [f for f in sympy.Mul.make_args(term) if f in constants]
        if direct:
            coefficient = sorted(direct, key=lambda s: s.name)[0]
            linear.append(coefficient)
            basis.append(term / coefficient)
        else:
            offset += term
    nonlinear = sorted(constants - set(linear), key=lambda s: s.name)
    return linear, basis, nonlinear, offset


def _parameterise(expr: sympy.Expr, grammar: Grammar) -> Candidate:
    kinds = {c.name: sympy.Symbol(c.name, real=True) for c in grammar.constants}
    template, bounds = _renumber(expr, kinds, grammar)
    linear, basis, nonlinear, offset = _split(template, set(bounds))
    return Candidate(
        template=template,
        linear=tuple(linear),
        basis=tuple(basis),
        offset=offset,
        nonlinear=tuple(nonlinear),
        bounds=bounds,
        complexity=complexity(template) + len(nonlinear),  # a fitted exponent costs more than a fixed one
    )


def _over_limit(candidate: Candidate, grammar: Grammar) -> str | None:
    limits = grammar.limits
    if len(sympy.Add.make_args(candidate.template)) > limits.max_terms:
        return f"more than max_terms = {limits.max_terms} terms"
    if len(candidate.nonlinear) > limits.max_nonlinear:
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
    generic_terms = []
    for term in sympy.Add.make_args(template):
        back = {s: kinds[s.name.rstrip("0123456789")] for s in term.free_symbols
                if s.name.rstrip("0123456789") in kinds and s.name[-1:].isdigit()}
        generic_terms.append(expander._canonical(term.xreplace(back)))
    labels = []
    for generic in generic_terms:
        if generic in expander.kind_symbols:
            labels.append("constant")
            continue
        label = "term"
        for rule in grammar.rules:
            if rule == "start" or rule in ("factor", "extrinsic", "intrinsic", "other"):
                continue
            if generic in expander.expand(rule, grammar.limits.max_depth):
                label = rule
                break
        labels.append(label)
    return tuple(labels)
