"""Expanding a bound grammar's rules into terms and sums of terms, and counting what they hold.

Expansion works on sympy expressions in which every constant kind is one symbol (``c``), so
sympy's own canonical form merges ``a + b`` with ``b + a`` and ``c·p + c·p`` with ``c·p``; sums
of terms that sympy would not merge are formed without building new expressions. A sum
``<rule>{a,b}`` or a product ``<rule>*{a,b}`` larger than the grammar's limits is handed to a
:class:`~exprsearch.candidates.Strategy` when there is one (the data choose), and cut to its
simplest members otherwise; either way the whole space is counted.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import sympy

from . import counting, shared
from .candidates import Expansion, Strategy, Term, analyse, canonical, complexity, occurrence, product, theta
from .counting import alike, allocated, cut_products, disjoint_choices, kept_note, product_count, sum_count
from .grammar import PROVIDED_RULES, Alternative, Grammar, Reference
from .memo import Memo
from .snap import Snapper
from .vocabulary import parse


class Expander:
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
        self._made_by: dict[str, dict[sympy.Expr, None]] = {}  # rule → the single terms it made
        self.kinds = {c.name: sympy.Symbol(c.name, real=True) for c in grammar.constants}
        self.kind_symbols = frozenset(self.kinds.values())
        self.symbols = grammar.symbols()
        self.kind_of = {s: n for n, s in self.kinds.items()}
        # what a term's analysis finds depends only on its expression and the constant kinds, so
        # the searches of one process (a profile's series) share it
        self.terms, self._walks, self._made, self._scalings, self._scaled_made, self._symbols_of, self._grids = \
            shared.tables("terms", frozenset(self.kinds), 7)
        self.generated = 0
        self.truncated = 0
        self._summaries: dict[int, tuple] = {}
        self.memo = Memo(_fingerprint(grammar, strategy is not None), self._account)
        self.snapper = Snapper(self)

    def expand(self, rule: str, depth: int) -> list[Expansion]:
        key = (rule, depth)
        known = self.memo.get(key)
        if known is not None:
            return known
        cuts = (len(self.screened), self.truncated, self.unmade)
        self.memo.start(key)
        unique: dict[Expansion, None] = {}
        made = 0
        for alt in self.grammar.rules[rule]:
            for terms in self._alternative(alt, depth):
                made += 1
                if self.size(terms) <= self.grammar.limits.max_complexity:
                    unique.setdefault(terms, None)
        self.memo.finish(key, list(unique), made, cuts != (len(self.screened), self.truncated, self.unmade))
        return self.memo.own[key]

    def _account(self, key: tuple[str, int], expansions: list[Expansion], made: int) -> None:
        """Count an expansion's alternatives as generated and note the rule that made each term."""
        self.generated += made
        rule = key[0]
        if rule != "start" and rule not in PROVIDED_RULES:
            self._made_by.setdefault(rule, {}).update({terms[0].generic: None for terms in expansions
                                                       if len(terms) == 1})

    def producers(self) -> dict[sympy.Expr, str]:
        """Each single term made by a rule of the grammar's own, with the first such rule in the
        grammar's order."""
        found: dict[sympy.Expr, str] = {}
        for rule in reversed(self.grammar.rules):  # earlier rules overwrite later ones
            found.update(dict.fromkeys(self._made_by.get(rule, ()), rule))
        return found

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
            return [self.canonical_terms(shape)]
        if depth == 0:
            return []
        refs = alt.references
        options = [self._options(ref, depth - 1) for ref in refs]
        holders = [table[ref.placeholder] for ref in refs]
        parts = sympy.Add.make_args(shape)
        if all(h in parts for h in holders) and not any(
                p.has(*holders) for p in parts if p not in holders):
            # The references are whole terms of a sum: add their terms without sympy.
            fixed = self.canonical_terms(sympy.Add(*(p for p in parts if p not in holders)))
            if len(refs) == 1 and options[0] is None:
                return self._screened_sums(fixed, refs[0], depth - 1)
            return [self.merge((fixed, *combo)) for combo in itertools.product(*options)]
        if any(o is None for o in options):
            options = [self._capped_sums(r, depth - 1) if o is None else o for r, o in zip(refs, options)]
        kind = self._scaling_kind(shape, holders)
        return [
            (kind is not None and self._scaled(kind, combo[0]))
            or self.canonical_terms(shape.xreplace(dict(zip(holders, map(self.expression, combo)))))
            for combo in itertools.product(*options)
        ]

    def _scaling_kind(self, shape: sympy.Expr, holders: list[sympy.Symbol]) -> sympy.Symbol | None:
        """The constant kind of a shape ``kind·<rule>`` (the default grammar's terms), else None."""
        if len(holders) == 1 and shape.is_Mul and len(shape.args) == 2 and holders[0] in shape.args:
            other = next(a for a in shape.args if a != holders[0])
            return other if other in self.kind_symbols else None
        return None

    def _scaled(self, kind: sympy.Symbol, expansion: Expansion) -> Expansion | None:
        """``kind`` times one constant-free term without a number factor, analysed directly: what
        :func:`analyse` would find, without sympy's replace and a walk of the tree (products of
        transforms make thousands of these); None where the general path is needed."""
        if len(expansion) != 1:
            return None
        key = (kind, expansion)  # terms are one instance each, so this is cheap to look up
        if key not in self._scaled_made:  # the same for every series: kept
            self._scaled_made[key] = self._scaled_term(kind, expansion)
        return self._scaled_made[key]

    def _scaled_term(self, kind: sympy.Symbol, expansion: Expansion) -> Expansion | None:
        inner = expansion[0].generic
        if (kind, inner) not in self._scalings:
            self._scalings[(kind, inner)] = None if inner.has(kind) else product([kind, inner])
        generic = self._scalings[(kind, inner)]
        if generic is None:
            return None
        if expansion[0].kinds:  # other constants inside (p**k)
            return (self._product_term(generic),)
        if generic not in self.terms:
            size = expansion[0].complexity + (1 if inner.is_Mul else 2)
            pattern = product([occurrence(0), inner])
            self.terms[generic] = Term(generic, pattern, (self.kind_of[kind],), 0, inner, size, generic)
        return (self.terms[generic],)

    def _options(self, ref: Reference, depth: int) -> list[Expansion] | None:
        """The expansions a reference stands for; None for a sum too large to enumerate that a
        strategy will choose from (see :meth:`_screened_sums`)."""
        items = self.expand(ref.rule, depth)
        if ref.product:
            return self._products(ref, items)
        if (ref.low, ref.high) == (1, 1):
            return items
        if self.strategy is not None and sum_count(items, ref, self.grammar.limits, summary=self._alike(items))[0] > \
                self.grammar.limits.max_candidates:
            return None
        return self._capped_sums(ref, depth)

    def _alike(self, items: list[Expansion]) -> tuple:
        """:func:`~exprsearch.counting.alike` of a rule's expansions (a list the memo keeps, so its
        identity names it), counted once though both deciding to screen and screening need it."""
        if id(items) not in self._summaries:
            self._summaries[id(items)] = alike(items)
        return self._summaries[id(items)]

    def _capped_sums(self, ref: Reference, depth: int) -> list[Expansion]:
        """Sums of ``low`` to ``high`` distinct expansions, the simplest ``max_candidates``."""
        items = self.expand(ref.rule, depth)
        limits = self.grammar.limits
        total = sum_count(items, ref, limits, summary=self._alike(items))[0]
        if math.comb(len(items), ref.high) > 50 * limits.max_candidates:
            # Too many to list: the simplest sums are made of the simplest items, so list the sums
            # of just enough of those (the rest count as cut by max_candidates).
            by_size = sorted(range(len(items)), key=lambda i: self.size(items[i]))
            enough = next((m for m in range(ref.high, len(items) + 1)
                           if math.comb(m, ref.high) >= 4 * limits.max_candidates), len(items))
            items = [items[i] for i in sorted(by_size[:enough])]
        counts = np.array([sum(t.n_nonlinear for t in e) for e in items], dtype=np.int64)
        sizes = np.array([self.size(e) for e in items], dtype=np.int64)
        groups = [counting.subsets(len(items), size) for size in range(max(ref.low, 1), ref.high + 1)]
        starts = np.cumsum([0] + [len(g) for g in groups])  # sums: sizes ascending, then lexicographic
        cost = np.concatenate([sizes[g].sum(axis=1) + 1 for g in groups])
        nonlinear = np.concatenate([counts[g].sum(axis=1) for g in groups])
        # Only the simplest sums can survive the candidate cap, so build no others.
        order = np.argsort(cost, kind="stable")
        order = order[(nonlinear[order] <= limits.max_nonlinear) & (cost[order] <= limits.max_complexity)]
        kept = order[: limits.max_candidates - (ref.low == 0)]  # the bare constant takes one place
        self.truncated += max(0, total - len(kept) - (ref.low == 0))
        which = np.searchsorted(starts, kept, side="right") - 1
        empty = [()] if ref.low == 0 else []
        return empty + [self.merge(tuple(items[i] for i in groups[g][k - starts[g]].tolist()))
                        for g, k in zip(which, kept)]

    def _screened_sums(self, fixed: Expansion, ref: Reference, depth: int) -> list[Expansion]:
        """``fixed`` plus the sums of distinct expansions of ``ref.rule`` that the strategy chose."""
        items = self.expand(ref.rule, depth)
        limits = self.grammar.limits
        total, by_constants = sum_count(items, ref, limits, fixed, self._alike(items))
        self.space.update(by_constants)
        choice = self.strategy.sums(fixed, items, ref.low, ref.high, limits)
        self.guesses.update(choice.guesses)
        self.undefined += choice.undefined
        self.screened.append(f"<{ref.rule}>{{{ref.low},{ref.high}}}: {total:,} sums in the space; {choice.how}")
        sums = [self.merge((fixed, *(items[i] for i in combo))) for combo in choice.combos]
        snapped, guesses = self.snapper.sums(fixed, items, choice.combos, choice.guesses)
        for term, values in guesses.items():
            self.guesses.setdefault(term, values)
        return list(dict.fromkeys(sums + snapped))

    def dependencies(self, expansion: Expansion) -> frozenset[sympy.Symbol]:
        if expansion not in self._symbols_of:  # the same expansion recurs in every series
            self._symbols_of[expansion] = frozenset().union(*(t.generic.free_symbols for t in expansion))
        return self._symbols_of[expansion] & self.factor_symbols

    def _products(self, ref: Reference, items: list[Expansion]) -> list[Expansion]:
        """Products of ``low`` to ``high`` expansions that each depend on one factor, a different
        one each (expansions of several factors, or of none, are not transforms and are left out).

        Expansions are grouped by the factors they depend on; when the products number more than
        ``max_products``, each group is cut to the expansions the strategy ranks first (or, without
        one, the simplest), as few as needed, for the products of several factors (of three or
        more only, where those of two take at most half the budget: :func:`cut_products`): every
        shape of a factor alone is kept (a factor's own term costs one product per shape, and a
        small effect beside a large one does not show in its lines).
        """
        groups: dict[frozenset, list[Expansion]] = {}
        for item in items:
            needs = self.dependencies(item)
            if len(needs) == 1:  # a transform of one factor (x·log2 x, not n·log2 w)
                groups.setdefault(needs, []).append(item)
        keys = sorted(groups, key=lambda k: sorted(s.name for s in k))
        choices = disjoint_choices(keys, ref.low, ref.high)
        whole = [groups[k] for k in keys]
        picks = [list(range(len(m))) for m in whole]  # of each group, the members products take
        lengths = [len(m) for m in whole]
        full = product_count(choices, lengths)
        cut = [c for c in choices if len(c) > 1]  # the products whose groups are cut
        if full > self.grammar.limits.max_products and max(lengths, default=0) > 1:
            # without the data to rank shapes, every product of several factors is cut alike
            cut, counted, keep, budget = cut_products(choices, lengths, self.grammar.limits.max_products,
                                                      whole_pairs=self.strategy is not None)
            if self.strategy is not None:
                for factors, group in zip(keys, whole):
                    self.snapper.know(next(iter(factors)), group)
                alone = ("every expansion alone and, in products of several factors" if any(len(c) == 2 for c in cut)
                         else "every expansion alone and in products of two factors, and, in products of "
                         + ("three" if max(map(len, cut)) == 3 else "three or more"))
                ranked = self.strategy.atoms(whole)
                sizes = allocated(counted, lengths, [shows for _, shows in ranked], keep, budget)
                picks = [sorted(order[:size]) for (order, _), size in zip(ranked, sizes)]
                self.screened.append(f"<{ref.rule}>*{{{ref.low},{ref.high}}}: {full:,} products in the space; kept "
                                     f"{alone}, {kept_note(keys, sizes, [shows for _, shows in ranked])} "
                                     f"({counting.made_count(choices, cut, whole, picks):,} products)")
            else:
                picks = [sorted(range(len(m)), key=lambda i, m=m: self.size(m[i]))[:keep] for m in whole]
                self.unmade += full - counting.made_count(choices, cut, whole, picks)
        made: list[Expansion] = []
        for choice in choices:
            made += self._product_grid([whole[g] for g in choice],
                                       [picks[g] if choice in cut else range(lengths[g]) for g in choice])
        return list(dict.fromkeys(made))

    def _product_grid(self, groups: list[list[Expansion]], picks: list) -> list[Expansion]:
        """The products of one member of each group, those of the ``picks`` (indices), in
        itertools.product's order. Each is made once per process: every series of a profile
        multiplies the same transforms and keeps a different few of them."""
        if not groups:
            return [self._make(())]
        grid = self._grids.setdefault(tuple(map(tuple, groups)), {})  # terms are one instance each: cheap
        shape = [len(g) for g in groups]
        flat = np.ravel_multi_index(np.meshgrid(*map(list, picks), indexing="ij"), shape).ravel().tolist()
        for i in flat:
            if i not in grid:
                grid[i] = self._make(tuple(g[j] for g, j in zip(groups, np.unravel_index(i, shape))))
        return [grid[i] for i in flat]

    def _make(self, combo: tuple[Expansion, ...]) -> Expansion:
        """The terms of the product of ``combo``."""
        return self._multiplied(combo) or self.canonical_terms(sympy.Mul(*(self.expression(e) for e in combo)))

    def _multiplied(self, combo: tuple[Expansion, ...]) -> Expansion | None:
        """The product of single terms of different factors, made from their parts (no Mul, no
        :func:`~exprsearch.candidates.canonical`, which has nothing to do there); None where the
        general path is needed."""
        if any(len(e) != 1 for e in combo):
            return None
        generics = tuple(e[0].generic for e in combo)
        if generics not in self._made:  # the same for every series: kept, with the term it makes
            direct = product(list(generics))
            self._made[generics] = None if direct is None or \
                any(self._holds_kind(a) for a in sympy.Mul.make_args(direct)) else (self._product_term(direct),)
        return self._made[generics]

    def _product_term(self, generic: sympy.Expr) -> Term:
        """The :class:`Term` :func:`analyse` makes of a product whose factors cannot combine (made
        by :func:`_product`), with each factor's constants numbered once per starting number and
        kept: the factors recur in thousands of products, and walking each product's tree again
        was most of what expanding them cost."""
        if generic in self.terms:
            return self.terms[generic]
        args = sympy.Mul.make_args(generic)
        bare = [a in self.kind_of for a in args]
        if not generic.is_Mul or not generic.has(*self.kind_symbols) or \
                any(a.is_Pow and a.base.has(*self.kind_symbols) for a in args):
            return self.term(generic)
        pattern_args, key_args, kinds, coefficient = [], [], [], None
        for a, is_kind in zip(args, bare):
            start = len(kinds)
            if is_kind and coefficient is None:
                coefficient = start
                kinds.append(self.kind_of[a])
                pattern_args.append(occurrence(start))
                continue
            walked, found = self._walked(a, start, occurrence)
            kinds.extend(found)
            pattern_args.append(walked)
            key_args.append(self._walked(a, start - (coefficient is not None), theta)[0] if found else a)
        pattern, key = product(pattern_args), product(key_args) if key_args else sympy.S.One
        if pattern is None or key is None:
            return self.term(generic)
        self.terms[generic] = Term(generic, pattern, tuple(kinds), coefficient, key, complexity(generic),
                                   generic.as_coeff_Mul()[1])
        return self.terms[generic]

    def _walked(self, part: sympy.Expr, start: int, symbol) -> tuple[sympy.Expr, tuple[str, ...]]:
        """``part`` with its constants replaced, in tree order, by ``symbol(start)``,
        ``symbol(start + 1)``, …, and their kinds (cached)."""
        name = (part, start, symbol)
        if name not in self._walks:
            found: list[str] = []

            def walk(node: sympy.Basic) -> sympy.Basic:
                if node in self.kind_of:
                    found.append(self.kind_of[node])
                    return symbol(start + len(found) - 1)
                return node.func(*(walk(a) for a in node.args)) if node.args else node

            self._walks[name] = (walk(part), tuple(found))
        return self._walks[name]

    def _holds_kind(self, part: sympy.Expr) -> bool:
        """Whether a factor of a product is a constant kind or a power of one (which a product
        would merge, and :func:`~exprsearch.candidates.canonical` reduce); kinds in exponents (p**k) are not."""
        return part in self.kind_symbols or (part.is_Pow and part.base in self.kind_symbols)

    def merge(self, parts: tuple[Expansion, ...]) -> Expansion:
        """The terms of the sum of ``parts``; sympy is needed only when two terms would combine."""
        terms = tuple(t for part in parts for t in part)
        if len({t.merge for t in terms}) == len(terms):
            return tuple(sorted(terms, key=lambda t: t.order))
        return self.canonical_terms(self.expression(terms))

    def expression(self, terms: Expansion) -> sympy.Expr:
        return sympy.Add(*(t.generic for t in terms))

    def decompose(self, expr: sympy.Expr) -> Expansion:
        terms = [self.term(t) for t in sympy.Add.make_args(expr) if t != 0]
        return tuple(terms) if len(terms) < 2 else tuple(sorted(terms, key=lambda t: t.order))

    def canonical_terms(self, expr: sympy.Expr) -> Expansion:
        """The terms of ``expr`` (constant kinds as symbols) in canonical form."""
        return self.decompose(canonical(expr, self.kind_symbols))

    def term(self, generic: sympy.Expr) -> Term:
        """The analysed :class:`Term` of a canonical generic term (cached)."""
        if generic not in self.terms:
            self.terms[generic] = analyse(generic, self.kind_of)
        return self.terms[generic]


def _fingerprint(grammar: Grammar, chooses: bool) -> tuple:
    """What a grammar's expansions depend on besides the data (and whether a strategy chooses)."""
    return (grammar.factors, grammar.constants, tuple(grammar.rules.items()), grammar.limits,
            tuple(sorted(grammar.fixed.items())), chooses)

