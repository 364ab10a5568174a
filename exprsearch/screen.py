"""Choosing by the data where a grammar's space is too large to enumerate.

Two choices, both made on the measurements averaged per configuration (relative errors, each
configuration weighted by its repetitions), before any law is fitted exactly:

- **Atoms of a product** (``<rule>*{a,b}``): each factor's transforms are ranked as Extra-P's
  multi-parameter modeler ranks single-parameter functions: every transform is fitted along each
  line of the measurement grid where only its factor varies, alone or beside its best partner
  (slopes per line, compared by BIC), and the best are kept.
- **Sums of terms** (``c + <term>{a,b}``): forward selection with a beam, seeded with the terms
  made of each factor's best shapes. Every term is a column (a term with fitted exponents one
  column per value of a coarse grid); the exact least-squares gain of adding each term to each
  model of the beam is computed at once, the best ``beam`` models of each size are kept, and
  every sum of up to ``high`` of the terms that took part is handed on to be fitted exactly (the
  exhaustive search over survivors of SISSO). A second beam grows from the best pairs of all
  fixed-shape terms, each pair solved exactly, for laws whose terms fit poorly one at a time,
  and the best pairs beside each of the beam's best terms complete triples no two of whose
  terms fit well together (the best of them then exchanging its terms as the beam's models do);
  the best model of each size also offers its terms that share a rest exchanged together for
  simpler shapes (:mod:`exprsearch.simpler`).
  The exhaustive enumeration in :mod:`exprsearch.expand` stays the reference for spaces that fit
  the budget.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import sympy

from .candidates import Choice, Expansion, Term
from .compile import Compiler
from .grammar import Limits
from .identify import ShapeRule, factor_parts, mixes
from .lines import line_scores, lines, ranked, shows
from .simpler import NEAR, Families, simpler_sums, simplest_models
from .subsets import (
    ANCHORED_COLUMNS,
    PAIR_COLUMNS,
    anchored_triples,
    best_pairs,
    best_per_item,
    column_ids,
    distinct_models,
    exchanged_terms,
    first_columns,
    gains,
    near_front,
    orthonormal,
)
from .termcolumns import TermColumns

# shapes of a factor whose line scores (BIC) lie within this of the best are ones the data cannot
# tell apart ("not worth more than a bare mention", Kass & Raftery 1995): the simplest are kept first
SHAPE_TIE = 2.0
ANCHORS = 20  # the beam's best single terms beside which the best pairs are scanned


@dataclass(frozen=True)
class ScreenSettings:
    """``beam`` models kept per size; at most ``survivors`` terms are combined exhaustively, and
    of their sums those :func:`near_front` keeps (within ``margin``) are fitted exactly."""

    beam: int = 10
    survivors: int = 20
    margin: float | None = 0.5  # None: fit every sum of the survivors


class DataScreen(TermColumns):
    """The :class:`exprsearch.candidates.Strategy` that decides by the measurements."""

    def __init__(self, compiler: Compiler, y: np.ndarray, kinds: dict[str, tuple[float, float]],
                 settings: ScreenSettings = ScreenSettings(), shapes: ShapeRule | None = None,
                 noise: tuple[float, int] | None = None) -> None:
        super().__init__(compiler, y, kinds, noise)
        self.settings, self.shapes = settings, shapes

    # -- products ----------------------------------------------------------------------------
    def atoms(self, groups: list[list[Expansion]]) -> list[tuple[list[int], bool]]:
        """Each group's expansions (the transforms of one factor) best first, by index, and whether
        the factor shows at all (:func:`~exprsearch.lines.shows`: its levels' times differ by more
        than :data:`SHAPE_TIE` in BIC). Shapes within :data:`SHAPE_TIE` of the best are ordered
        simplest first."""
        return [self._ranked_atoms(group) for group in groups]

    def _ranked_atoms(self, group: list[Expansion]) -> tuple[list[int], bool]:
        names = sorted({s.name for e in group for t in e for s in t.generic.free_symbols} &
                       set(self.compiler.factors))
        own = [self.compiler.factors.index(n) for n in names]
        single = [j for j, e in enumerate(group) if len(e) == 1]
        scores = [np.inf] * len(group)  # an expansion of several terms is no transform
        for j, score in zip(single, self._shape_scores([group[j][0] for j in single], own)):
            scores[j] = score
        keys = [(group[i][0].complexity if group[i] else 0, i) for i in range(len(group))]
        order = ranked(scores, keys)
        best = scores[order[0]] if order else np.inf
        tied = sorted((i for i in order if np.isfinite(best) and scores[i] - best <= SHAPE_TIE), key=keys.__getitem__)
        order = tied + [i for i in order if i not in tied]
        line, _ = lines(self.configs, own)
        return order, shows(self.configs[:, own], line, self.mean, self.weight**2, SHAPE_TIE, self.noise)

    def _shape_scores(self, terms: list[Term], own: list[int]) -> list[float]:
        """Each term's :func:`~exprsearch.lines.line_scores` along the grid's lines where the
        factors ``own`` vary."""
        line, usable = lines(self.configs, own)
        columns, owner, _ = self._stacked(terms)
        return line_scores(columns[usable], owner, len(terms), self.weight[usable] / self.mean[usable],
                           self.weight[usable], line[usable]).tolist()

    # -- sums --------------------------------------------------------------------------------
    def sums(self, fixed: Expansion, items: list[Expansion], low: int, high: int, limits: Limits) -> Choice:
        s = self.settings
        design, owner, thetas, residual, always, undefined = self._design(fixed, items)
        nonlinear = np.array([sum(t.n_nonlinear for t in item) for item in items])
        room = limits.max_nonlinear - sum(t.n_nonlinear for t in fixed)
        most = min(high, limits.max_terms - len(fixed))
        parts = self._parts(items, owner)
        seeds = self._seeds(items, parts, nonlinear)
        seed_items = np.array(sorted(seeds), dtype=np.intp)
        owners = owner.tolist()  # plain ints: the beam's bookkeeping looks them up one by one
        same = column_ids(design)
        costs = nonlinear.tolist()

        def grown(parents: list[tuple[float, tuple[int, ...]]], level: int) -> dict:
            """Each parent with each term it may take added: a model's items → (its sse, the
            exponents it fits, its columns, its items in order), the best per set of items."""
            found: dict[frozenset, tuple[float, int, tuple[int, ...], tuple[int, ...]]] = {}
            for sse, columns in parents:
                used = {owners[c] for c in columns}
                gain, sign = gains(design, residual, columns)
                spent = sum(costs[i] for i in used)
                allowed = (sign >= 0) & (nonlinear[owner] + spent <= room) & ~np.isin(owner, list(used))
                score = np.where(allowed, gain, -1.0)
                best = best_per_item(owner, score)
                best = best[score[best] >= 0]  # items with no allowed column are out
                best = best[np.argsort(-score[best], kind="stable")]
                picked = best[: 4 * s.beam].tolist()
                if level == 0:  # the terms made of each factor's best shapes (see _seeds)
                    chosen = set(picked)
                    picked += [c for c in best[np.isin(owner[best], seed_items)].tolist() if c not in chosen]
                for c, g in zip(picked, gain[picked].tolist()):
                    key = frozenset(used | {owners[c]})  # owners[c] is not used yet (see allowed)
                    new = (sse - g, spent + costs[owners[c]], (*columns, c))
                    if key not in found or new[:2] < found[key][:2]:
                        found[key] = (*new, tuple(sorted(key)))
            return found

        def told(model: tuple[int, ...]) -> bool:
            """Whether the shape rule lets the sum of these items be a law (else it cannot close a gate)."""
            return self.shapes is None or self.shapes.reason((*fixed, *(t for i in model for t in items[i]))) is None

        def order(models) -> list:
            # errors alike to 9 digits (the same sum by other columns) tie: the fewer fitted
            # exponents first, then the items, never the last bits of the data
            return sorted(models, key=lambda m: (float(f"{m[0]:.9g}"), m[1], m[3]))

        best_column: dict[int, tuple] = {}  # item → (sse of the best model using it, its column, the model)
        models: list[tuple[float, tuple[int, ...]]] = [(float(residual @ residual), ())]
        levels: list[list[tuple[int, ...]]] = []
        known: list[set[frozenset]] = []  # per size, the sets of items the beam grew from
        best_sse: list[float] = []  # per size, the beam's best fit
        best_plain: list[float] = []  # per size, the beam's best fit with no fitted exponent that can be a law, of at most that size
        exchanged: list[tuple[int, ...]] = []  # the best models improved by exchanging terms
        first_models: list = []  # the beam's best single terms
        tops: list[tuple[float, tuple[int, ...]]] = []  # per size, the best model after the exchange
        for level in range(most):
            ranked = order(grown(models, level).values())
            kept = ranked[: s.beam] + ([m for m in ranked[s.beam:] if seeds.issuperset(m[3])] if level == 0 else [])
            if level == 0:
                first_models = kept
            # Beside the beam, the best sums of the seeds alone grow too: greedy selection loses an
            # additive law whose pairs each fit worse than some product does (s/p + 1/b against
            # s/p + log2(p)/b, where log2(p) + 1/b + s/p is the law). They are parents only: not
            # fitted themselves, and their terms do not take the survivors' places.
            seeded = distinct_models([m for m in ranked[s.beam:] if seeds.issuperset(m[3])], same)[: s.beam] if level else []
            models = [(sse, columns) for sse, _, columns, _ in kept + seeded]
            levels.append([model for *_, model in kept])
            known.append({frozenset(m[3]) for m in kept + seeded})
            best_sse.append(kept[0][0] if kept else np.inf)
            best_plain.append(min(best_plain[-1:] + [m[0] for m in kept if not m[1] and told(m[3])], default=np.inf))
            # Then the best model of this size exchanges its terms one at a time for the best
            # other while that lowers the error (sequential replacement): a term the beam took
            # early may be the wrong one of two that fit alike (p beside 1/n + 1/b, where the
            # law has p·log2(b)).
            swapped = exchanged_terms(design, residual, models[0], owner, nonlinear, room) if models else None
            if swapped is not None and swapped[1] != models[0][1]:
                exchanged.append(tuple(sorted({owners[c] for c in swapped[1]})))
                models.insert(0, swapped)
            tops += models[:1]
            for sse, columns in models:
                for c in columns:
                    i = owners[c]
                    if i not in best_column or sse < best_column[i][0]:
                        best_column[i] = (sse, c, columns)
            if not models:
                break
        # Where the beam's best fixed-shape sum of at most two terms misses by more than the noise
        # (which only repetitions tell: without them the beam's fit stands; a sum with more shapes
        # of a factor than its values tell apart fits the noise, but cannot be the law), a second beam grows
        # from the best pairs of fixed-shape terms, each pair solved exactly (best_pairs): two
        # terms that fit poorly alone can fit well together (1/(n·p) and n·log2 n of the law
        # 1/(n·p) + 1/p + n·log2 n rank 80th and lower alone). Its models take neither the beam's
        # places nor the survivors'; those that fit better than the beam's best of their size are
        # fitted. (A fitted exponent bends to fit within the noise whatever the terms.) Judged at
        # two terms, not at the beam's largest size: a pair can be the law where only larger sums
        # of the beam fit (n·log2 n + √p/n, where the beam held n³ + p/n + log2(p)/n).
        extra: list[tuple[int, ...]] = []
        paired, anchors, simplify = 0, [], []  # simplify: models whose simpler shapes are offered too
        if len(levels) > 1 and self.misses(best_plain[1], 2):
            plain, paired = first_columns(same, design, residual, nonlinear[owner] == 0)
            top_pairs = best_pairs(design, residual, owner, nonlinear, room, plain, 2 * s.beam, 3)
            found = {frozenset(owners[c] for c in pair): (sse, 0, pair, tuple(sorted(owners[c] for c in pair)))
                     for sse, pair in top_pairs}
            for level in range(1, len(levels)):
                fresh = order(m for key, m in found.items() if key not in known[level])[: (2 if level == 1 else 1) * s.beam]
                extra += [m[3] for m in fresh if m[0] < best_sse[level]]
                # its best fixed-shape sum that can be a law, where it beats the main beam's: it closes
                # the gate of the triples below, so it is fitted whatever the sums with fitted exponents do
                plain_fresh = [m for m in fresh if not m[1] and told(m[3])]  # in order: the best first
                best_plain[level] = min(best_plain[level], best_plain[level - 1])
                if plain_fresh and plain_fresh[0][0] < best_plain[level]:
                    extra.append(plain_fresh[0][3])
                    simplify.append((plain_fresh[0][0], plain_fresh[0][2]))
                    best_plain[level] = plain_fresh[0][0]
                late = [(sse, columns) for sse, _, columns, _ in fresh]
                for sse, columns in late:  # a start only for terms the beam never held
                    for c in columns:
                        best_column.setdefault(owners[c], (sse, c, columns))
                if level + 1 < len(levels):
                    found = grown(late, level + 1)
        # Where the best fixed-shape sums of three (of either beam) still miss by more than the
        # noise, the pairs that fit best beside each of the beam's best single terms complete
        # triples of which no two terms fit well together (1/p + b·log2 b + √p·log2 b). (Where the
        # sums of three miss, so did those of two: the pairs above were scanned, and ``plain`` is set.)
        if paired and len(levels) > 2 and self.misses(best_plain[2], 3):
            # The anchors: the beam's best single terms of fixed shape, the fixed shapes its best terms
            # with fitted exponents land on (b**k·n²·p**k at 0 and -1 is n²/p), the terms of its
            # best pair (√p + p² + b·log2(b)/p, each term worse alone than p^1.5 or p²·log2 b, is
            # reached from the pair p^1.5 + b·log2(b)/p), then those of the scan's best pairs
            # (√p/n of b·log2 b + √b·n·log2 n + √p/n ranks 941st alone, 3rd by its best pair)
            fixed_column = {same[c]: c for c in plain.tolist()}  # plain: one column of each content
            anchors = [columns[0] for _, cost, columns, _ in first_models if not cost][:ANCHORS]
            landed = [fixed_column.get(same[columns[0]]) for _, cost, columns, _ in first_models if cost]
            anchors += [c for c in dict.fromkeys(landed) if c is not None and c not in anchors][:ANCHORS]
            singles, pair = len(anchors), [fixed_column.get(same[c]) for c in (tops[1][1] if len(tops) > 1 else ())]
            anchors += [c for c in dict.fromkeys(pair) if c is not None and c not in anchors]
            of_pair = len(anchors) - singles
            anchors += [c for c in dict.fromkeys(c for _, two in top_pairs for c in two) if c not in anchors]
            triples = anchored_triples(design, residual, owner, nonlinear, room, plain, anchors, 2)[:2 * s.beam]
            offered = [(sse, triple) for sse, triple in triples if sse < best_sse[2]]
            if triples:  # and the best with its terms exchanged, as the beam's best models are
                swapped = exchanged_terms(design, residual, triples[0], owner, nonlinear, room)
                offered += [swapped] if swapped[1] != triples[0][1] else []
            for sse, triple in offered:
                extra.append(tuple(sorted(owners[c] for c in triple)))
                for c in triple:
                    best_column.setdefault(owners[c], (sse, c, triple))
        # The best model of each size with each group of its terms that share a rest exchanged for
        # a simpler set of that rest's shapes (simpler_models): sets of shapes that fit a few values alike
        families = self._families(items, parts, owner, nonlinear)
        for top in tops + simplify:
            extra += [tuple(sorted(owners[c] for c in columns))
                      for _, columns in simplest_models(design, residual, top, owner, families, NEAR)]
        # survivors: the terms of the best models of the largest size first, then of smaller ones,
        # then of the exchanged models
        survivors: list[int] = []
        for model in [m for level in reversed(levels) for m in level] + list(reversed(exchanged)):
            for i in model:
                if i not in survivors:
                    survivors.append(i)
        survivors = sorted(survivors[: s.survivors]) + always
        combos = {m for level in levels for m in level} | set(exchanged) | set(extra)
        for size in range(max(low, 1), most + 1):
            for combo in itertools.combinations(survivors, size):
                if sum(costs[i] for i in combo) <= room:
                    combos.add(combo)
        if low == 0:
            combos.add(())
        # and the best of those sums of each size exchanged alike
        combos.update(simpler_sums(list(combos), design, residual, owner, families, NEAR))
        every = sorted(combos, key=lambda c: (len(c), c))
        # exponents start from the grid's best for every term that will be fitted (a term of a
        # beam's model need not be a survivor), so that none is left to differential evolution
        wanted = set(survivors) | {i for combo in every for i in combo}
        guesses = {items[i][0]: (thetas[c] if nonlinear[i] == 1 else
                                 self._refined(items[i][0], thetas[c], self._fixed_basis,
                                               design[:, [m for m in model if m != c]], residual))
                   for i, (_, c, model) in best_column.items() if nonlinear[i] and i in wanted}
        scanned = (f"the {PAIR_COLUMNS:,} of {paired:,} fixed-shape terms that fit best alone" if paired > PAIR_COLUMNS
                   else f"{paired:,} fixed-shape terms")
        pairs = f", and from the best pairs of {scanned}" if paired else ""
        if anchors:
            beside = (f" (the {ANCHORED_COLUMNS:,} of them that fit best beside each)"
                      if min(paired, PAIR_COLUMNS) > ANCHORED_COLUMNS else "")
            scan = len(anchors) - singles - of_pair
            more = [f"{of_pair} term{'s' * (of_pair > 1)} of its best pair"] * bool(of_pair) + \
                [f"{scan} term{'s' * (scan > 1)} of the best pairs"] * bool(scan)
            pairs += (f", alone and beside each of its {singles} best single terms"
                      + "".join(f", {m}" for m in more[:-1]) + (f" and {more[-1]}" if more else "") + beside)
        how = (f"screened {design.shape[1]:,} term columns by forward selection (beam {s.beam}, seeded with "
               f"{len(seeds)} terms of each factor's best shapes{pairs}) and formed every sum of up to {most} of "
               f"the {len(survivors)} terms that took part ({len(every):,} sums)")
        fitted = "; fitted all of them"
        if s.margin is not None:
            linear = {i: c for c, i in enumerate(owners) if not costs[i]}
            sizes = {i: sum(t.complexity for t in items[i]) for i in linear}
            kept = near_front(every, linear, sizes, design, residual, s.margin)
            if len(kept) < len(every):
                fitted = (f"; fitted the {len(kept):,} of them that could reach the front of error and complexity "
                          f"(a fit here within {100 * s.margin:g} % of the best at most as complex, or with a fitted "
                          "exponent)")
            every = kept
        how += fitted
        if undefined:
            how += f"; {undefined} term(s) undefined (NaN or infinite) on the data were left out"
        return Choice(every, guesses, how, undefined)

    def _design(self, fixed: Expansion, items: list[Expansion]):
        """Unit columns of every screened item, less what the fixed terms explain; the residual
        target; the items kept without screening; how many were undefined on the data."""
        block_items: list[int] = []
        always: list[int] = []
        base, target = self._fixed(fixed)
        if self.shapes is not None:
            self.shapes.prepare(t for item in items for t in item)
        for i, item in enumerate(items):
            if len(item) != 1 or item[0].coefficient is None or self.kinds[item[0].kinds[item[0].coefficient]][0] < 0:
                always.append(i)  # not a single non-negative term: kept without screening
                continue
            if self.shapes is not None and self.shapes.reason((*fixed, *item)):
                continue  # a shape the data cannot identify: rejected later in any sum
            block_items.append(i)
        design, owner, thetas = self._stacked([items[i][0] for i in block_items])
        undefined = len(block_items) - len(np.unique(owner))
        owner = np.array(block_items, dtype=np.intp)[owner]
        # A column the fixed terms (nearly) explain themselves can add nothing.
        with np.errstate(all="ignore"):
            design = design / np.sqrt(np.einsum("nc,nc->c", design, design))
        basis = self._fixed_basis = orthonormal(base)
        design = design - basis @ (basis.T @ design)
        residual = target - basis @ (basis.T @ target)
        norms = np.sqrt(np.einsum("nc,nc->c", design, design))
        live = np.isfinite(norms) & (norms > 1e-6)
        thetas = [t for t, ok in zip(thetas, live) if ok]
        return design[:, live] / norms[live], owner[live], thetas, residual, always, undefined

    def _seeds(self, items: list[Expansion], parts: dict[int, tuple[sympy.Expr, ...]], nonlinear: np.ndarray) -> set[int]:
        """Items made only of each factor's two best shapes, as Extra-P's multi-parameter modeler
        combines the best single-parameter functions: a shape is ranked by how well it fits alone
        along the lines of the grid where only its factor varies. Greedy selection alone misses an
        additive law whose single terms each explain less than some product does."""
        factors = list(self.compiler.factors)
        screened = sorted(parts)
        one = sympy.S.One  # factor_parts gives this singleton for a term without the factor
        alone: dict[int, list[int]] = {}  # factor → the items that depend on it alone
        for i in screened:
            depends = [k for k, p in enumerate(parts[i]) if p is not one]
            if len(depends) == 1:
                alone.setdefault(depends[0], []).append(i)
        top: list[set[sympy.Expr]] = [set() for _ in factors]
        for f_index, lone in sorted(alone.items()):
            scores = self._shape_scores([items[i][0] for i in lone], [f_index])
            order = ranked(scores, [(bool(nonlinear[i]), i) for i in lone])
            top[f_index] = {parts[lone[j]][f_index] for j in order[:2]}  # a set: sympy's == is slow, its hash is kept
        return {i for i in screened if all(p is one or p in top[k] for k, p in enumerate(parts[i]))}

    def _parts(self, items: list[Expansion], owner: np.ndarray) -> dict[int, tuple[sympy.Expr, ...]]:
        """Each screened item's part in every factor (``1`` where it has none)."""
        if self.shapes is not None:
            return {i: self.shapes.parts(items[i][0]) for i in sorted(set(owner.tolist()))}
        symbols = [sympy.Symbol(f, positive=True) for f in self.compiler.factors]
        return {i: tuple(factor_parts(items[i][0], symbol) for symbol in symbols) for i in sorted(set(owner.tolist()))}

    def _families(self, items: list[Expansion], parts: dict[int, tuple[sympy.Expr, ...]], owner: np.ndarray,
                  nonlinear: np.ndarray) -> Families:
        """The screened items grouped by the rest of their product beside each factor's shape."""
        symbols = [sympy.Symbol(f, positive=True) for f in self.compiler.factors]
        column = {int(i): c for c, i in enumerate(owner.tolist()) if not nonlinear[i]}
        size = {i: sum(t.complexity for t in items[i]) for i in parts}
        top = [(symbol, float(np.max(values))) for symbol, values in zip(symbols, self.compiler.columns)]
        return Families(parts, column, size, lambda f, part: not mixes(part, symbols[f]), top)  # a shape of f alone

    def _fixed(self, fixed: Expansion) -> tuple[np.ndarray, np.ndarray]:
        """Columns of the fixed terms' coefficients, and the target less the fixed offsets."""
        columns, target = [], self.weight.copy()
        for term in fixed:
            if term.n_nonlinear:
                continue  # an exponent outside the sum: screened as if absent
            value = self.compiler.value(term.key) / self.mean * self.weight
            if term.coefficient is None:
                target = target - value
            else:
                columns.append(value)
        return (np.column_stack(columns) if columns else np.zeros((len(self.configs), 0))), target
