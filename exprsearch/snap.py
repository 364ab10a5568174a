"""Fitted exponents that land on a grammar's fixed shapes, offered as those shapes.

The screening (:mod:`exprsearch.screen`) scores a term with a fitted exponent on a coarse grid,
and a grid value is often one of the grammar's fixed shapes: ``b**k`` at k = -1 is ``1/b``. Where
the fixed shape was not among a factor's transforms kept for products (a factor at three values
ranks them alone along its lines, where ``1/b`` beside ``b²`` scores poorly), the law the data
point to was written only with the exponent, and then holds one constant more than its true
form: with ``b`` at three values, ``b²·n + log2(p)·b**k`` uses three shape constants of ``b``
and is rejected (docs/method.md, shapes the data can identify), where ``b²·n + log2(p)/b`` uses
two. So every sum the screening chose is also offered with each such exponent replaced by the
fixed shape its guess lands on, where that shape is one of the grammar's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy

from .candidates import Expansion, Term, occurrence
from .identify import factor_parts

if TYPE_CHECKING:
    from .expand import Expander

STEP = 2  # fixed shapes are powers in steps of 1/2: 1/x, sqrt(x), x, x**(3/2), x**2, ...


class Snapper:
    """Knows each factor's transforms (the parts a product term may have) and makes, from a term
    and the screening's guess of its exponents, the term with the guesses that land on a fixed
    shape written as that shape."""

    def __init__(self, expander: Expander) -> None:
        self.expander = expander
        self.parts: dict[sympy.Symbol, set[sympy.Expr]] = {}  # factor → the keys of its transforms
        self._made: dict[tuple[Term, tuple[float, ...]], tuple[Term, tuple[float, ...]] | None] = {}

    def know(self, factor: sympy.Symbol, atoms: list[Expansion]) -> None:
        """Record ``atoms``, the transforms of ``factor`` a product may take (before any is cut)."""
        self.parts.setdefault(factor, set()).update(a[0].key for a in atoms if len(a) == 1)

    def sums(self, fixed: Expansion, items: list[Expansion], combos: list[tuple[int, ...]],
             guesses: dict[Term, tuple[float, ...]]) -> tuple[list[Expansion], dict[Term, tuple[float, ...]]]:
        """The sums of ``combos`` (of ``items``, added to ``fixed``) with their terms' exponents
        snapped where the ``guesses`` land on a fixed shape, and the guesses of the exponents
        the snapped terms keep."""
        present = {t.generic for item in items for t in item}
        made: dict[Expansion, None] = {}
        kept: dict[Term, tuple[float, ...]] = {}
        for combo in combos:
            parts, changed = [], False
            for i in combo:
                item = items[i]
                snapped = self.term(item[0], guesses[item[0]], present) \
                    if len(item) == 1 and item[0] in guesses else None
                if snapped is None:
                    parts.append(item)
                    continue
                term, rest = snapped
                parts.append((term,))
                changed = True
                if rest:
                    kept.setdefault(term, rest)
            if changed:
                made.setdefault(self.expander.merge((fixed, *parts)), None)
        return list(made), kept

    def term(self, term: Term, guess: tuple[float, ...], present: set[sympy.Expr]) -> \
            tuple[Term, tuple[float, ...]] | None:
        """``term`` with every exponent whose ``guess`` is a fixed shape written as that shape (and
        the guesses of the exponents left), or None where none is or the result is not a term of
        the grammar: one of ``present``, or a product of the factors' transforms."""
        key = (term, guess)
        if key not in self._made:
            self._made[key] = self._snap(term, guess)
        made = self._made[key]
        if made is None or made[0].generic in present or all(
                (part := factor_parts(made[0], f)) is sympy.S.One or part in self.parts.get(f, ())
                for f in self.expander.factor_symbols):
            return made
        return None

    def _snap(self, term: Term, guess: tuple[float, ...]) -> tuple[Term, tuple[float, ...]] | None:
        others = [i for i in range(len(term.kinds)) if i != term.coefficient]
        if len(others) != len(guess):
            return None
        exponents = {node.exp for node in sympy.preorder_traversal(term.pattern)
                     if node.is_Pow and node.base in self.expander.factor_symbols}
        values, rest = {}, []
        for i, value in zip(others, guess):
            steps = round(value * STEP)
            if occurrence(i) in exponents and abs(value * STEP - steps) < 1e-9:
                values[occurrence(i)] = sympy.Rational(steps, STEP)
            else:
                rest.append(value)
        if not values:
            return None
        kinds = self.expander.kinds
        values.update({occurrence(i): kinds[k] for i, k in enumerate(term.kinds) if occurrence(i) not in values})
        expansion = self.expander.canonical_terms(term.pattern.xreplace(values))
        if len(expansion) != 1 or not expansion[0].varies or expansion[0].n_nonlinear != len(rest):
            return None
        return expansion[0], tuple(rest)
