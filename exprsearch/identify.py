"""What the measurements can tell apart: candidates whose shapes the data cannot identify.

A factor measured at k distinct values gives k numbers along its axis, enough for a constant and
k − 1 shape constants; each distinct non-constant function of the factor in a law (``n``,
``n²·log2 n``, …) uses one, and so does each exponent fitted on it. A law that uses more has a
shape the data cannot pin down. At two values every increasing function of a factor fits like
every other (only the ratio of its two values matters, and the coefficient absorbs the rest), so
only the simplest increasing and the simplest decreasing shapes are kept: the lowest-order shape
among laws the data cannot tell apart. See docs/method.md.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import sympy

from . import shared
from .candidates import Candidate, Term
from .compile import Compiler
from .configs import setting
from .errors import FewConfigurations
from .fit import Fit
from .vocabulary import to_text

ORDER_STEP = 1e-3  # the relative step of a factor over which a term's log-slope is taken
_PLACEHOLDER = sympy.Symbol("factor", positive=True)  # the name every factor takes where shapes are compared


def factor_parts(term: Term, factor: sympy.Expr) -> sympy.Expr:
    """The part of a term's column that depends on ``factor`` (1 if none): some of the factors of
    a product sympy has already made canonical, so they are kept in its order, not multiplied anew."""
    parts = tuple(a for a in sympy.Mul.make_args(term.key) if a.has(factor))
    return sympy.Mul._from_args(parts, is_commutative=True) if len(parts) > 1 else (parts[0] if parts else sympy.S.One)


def log_slope(term: sympy.Expr, at: Mapping[sympy.Symbol, float], factor: sympy.Symbol) -> float:
    """|d ln term / d ln factor| with every symbol of ``at`` at its value there (a step of
    :data:`ORDER_STEP`); undefined or beyond floating point there, infinite: the steepest, so
    never kept for its order."""
    try:
        ratio = float(term.xreplace({**at, factor: at[factor] * (1 + ORDER_STEP)})) / float(term.xreplace(at))
    except (TypeError, ValueError, ZeroDivisionError):
        ratio = math.nan
    return abs(math.log(ratio)) / math.log1p(ORDER_STEP) if math.isfinite(ratio) and ratio > 0 else math.inf


class ShapeRule:
    """Rejects candidates using more shapes of a factor than its distinct values support."""

    def __init__(self, compiler: Compiler) -> None:
        self.compiler = compiler
        self.symbols = {name: sympy.Symbol(name, positive=True) for name in compiler.factors}
        self.levels = {name: np.unique(column) for name, column in zip(compiler.factors, compiler.columns)}
        # the fewest values of a factor; 0 where one has two (its rule of simplest shapes applies)
        counts = [len(v) for v in self.levels.values()]
        self._fewest = 0 if not counts or min(counts) < 3 else min(counts)
        self._simplest: dict[tuple[str, int], sympy.Expr] = {}
        self._direction: dict[tuple[str, sympy.Expr], int] = {}
        # a term's part and shape in a factor depend on the factors' names only, not their
        # values: the searches of one process over the same factors (a profile's series) share them
        self._parts, self._shapes, self._all_parts = shared.tables("shapes", tuple(compiler.factors), 3)
        # what a set of terms is rejected for depends on the factors' values too; with a factor at
        # two values also on the simplest shapes seen so far, so then it is not kept
        levels = tuple((name, tuple(v.tolist())) for name, v in self.levels.items())
        self._reasons = None if any(len(v) == 2 for v in self.levels.values()) else \
            shared.tables("reasons", levels, 1)[0]
        self._orders: dict[tuple, tuple[float, ...]] = {}
        # a term without fitted exponents has the same slopes in every law: kept per factors' tops
        tops = tuple((name, float(v[-1])) for name, v in self.levels.items())
        self._slopes = shared.tables("slopes", tops, 1)[0]

    def part(self, term: Term, name: str) -> sympy.Expr:
        key = (term, name)
        if key not in self._parts:
            self._parts[key] = factor_parts(term, self.symbols[name])
        return self._parts[key]

    def parts(self, term: Term) -> tuple[sympy.Expr, ...]:
        """The term's part in each factor, in the factors' order (1 for a factor it does not use)."""
        if term not in self._all_parts:
            self._all_parts[term] = tuple(self.part(term, name) for name in self.compiler.factors)
        return self._all_parts[term]

    def _shape(self, term: Term, name: str) -> tuple[sympy.Expr, int] | None:
        """A term's shape of factor ``name`` alone and the exponents fitted in it; None where the
        term has no such shape (it does not depend on the factor, or its part mixes factors)."""
        key = (term, name)
        if key not in self._shapes:
            part = self.part(term, name)
            self._shapes[key] = None if part == 1 or self._mixes(name, part) else (part, _fitted(part))
        return self._shapes[key]

    def prepare(self, terms: Iterable[Term]) -> None:
        """Find, for each factor measured at two values, its simplest rising and falling shapes
        among ``terms`` (and those seen before)."""
        terms = list(terms)
        for name, levels in self.levels.items():
            if len(levels) != 2:
                continue
            for part in {self.part(t, name) for t in terms} - {sympy.Integer(1)}:
                direction = self.direction(name, part)
                known = self._simplest.get((name, direction))
                if direction and (known is None or self._simplicity(name, part) < self._simplicity(name, known)):
                    self._simplest[(name, direction)] = part

    def _simplicity(self, name: str, part: sympy.Expr) -> tuple:
        """Orders a factor's shapes simplest first, whatever the factor is called: by size, then
        by operations (1/x before 1/x² and 1/√x), then by the text with the factor renamed, so
        that a column named x or y keeps the shapes one named n keeps."""
        return (_size(part), sympy.count_ops(part), str(part.xreplace({self.symbols[name]: _PLACEHOLDER})))

    def direction(self, name: str, part: sympy.Expr) -> int:
        """+1 if ``part`` (without nonlinear constants) rises from the factor's first to its
        second value, -1 if it falls, 0 otherwise."""
        key = (name, part)
        if key not in self._direction:
            if _fitted(part) or self._mixes(name, part):
                # a fitted exponent, or a part that mixes factors ((m + s - 1)/s): no one direction
                self._direction[key] = 0
            else:
                self._direction[key] = _sign(*(part.subs(self.symbols[name], v) for v in self.levels[name]))
        return self._direction[key]

    def _mixes(self, name: str, part: sympy.Expr) -> bool:
        return mixes(part, self.symbols[name])

    def reason(self, terms: Sequence[Term]) -> str | None:
        """Why the data cannot identify the shape of the law made of ``terms``, or None."""
        # Each term that varies uses at most 1 + its exponents shapes of any factor; where that sum
        # is within every factor's values less one (three values or more each), nothing is to find.
        if sum(1 + t.n_nonlinear for t in terms if t.varies) < self._fewest:
            return None
        if self._reasons is None:
            return self._reason(terms)
        key = frozenset(terms)
        if key not in self._reasons:
            self._reasons[key] = self._reason(terms)
        return self._reasons[key]

    def unpinned(self, terms: Sequence[Term]) -> dict[str, tuple[sympy.Expr, ...]]:
        """The factors whose shapes in the law made of ``terms`` are as many as the factor's values
        can tell apart, each with those shapes: on k values a constant and any k − 1 shapes fit
        every curve, so where the terms holding a factor's shapes share the rest of their product
        and the law holds that rest alone too (the constant, for shapes of the factor alone),
        other shapes fit the measurements exactly as well, and the law's course outside them is
        the search's choice, not a measurement."""
        found: dict[str, tuple[sympy.Expr, ...]] = {}
        for index, name in enumerate(self.compiler.factors):
            groups: dict[tuple[sympy.Expr, ...], list[sympy.Expr]] = {}
            alone: set[tuple[sympy.Expr, ...]] = set()
            for term in terms:
                parts = self.parts(term)
                rest = parts[:index] + parts[index + 1:]
                if term.coefficient is None or any(_fitted(p) for p in rest):
                    continue  # a fixed offset, or a rest whose exponents each term fits its own
                if parts[index] == 1:
                    alone.add(rest)
                elif self._mixes(name, parts[index]):
                    break  # an interaction of factors, told apart across the others' values
                else:
                    groups.setdefault(rest, []).append(parts[index])
            else:
                for rest, shapes in groups.items():
                    used = sum(1 + _fitted(shape) for shape in shapes)
                    if rest in alone and used == len(self.levels[name]) - 1:
                        found[name] = tuple(shapes)
        return found

    def order(self, fit: Fit) -> tuple[float, ...]:
        """How steeply the law's terms grow or fall at the top of the measured range: each varying
        term's |d ln term / d ln x| for each factor x it holds, every factor at its largest value,
        steepest first. Among laws the data cannot tell apart (a factor's shapes not pinned by its
        values) the search keeps the lowest order, whose course beyond the data departs least from
        what was measured: ``n + 1/n`` before ``n + 1/n²``, ``n^1.5`` before ``n³`` (docs/method.md)."""
        key = (fit.candidate, tuple(sorted(fit.values.items())))
        if key not in self._orders:
            self._orders[key] = self._order(fit.candidate, fit.values)
        return self._orders[key]

    def _order(self, candidate: Candidate, values: Mapping[str, float]) -> tuple[float, ...]:
        if not candidate.n_nonlinear:  # without building the template: its terms' slopes
            return tuple(sorted((s for t in candidate.terms for s in self._term_slopes(t)), reverse=True))
        named = {s.name: s for s in candidate.template.free_symbols}
        exponents = {named[s.name]: values[s.name] for s in candidate.nonlinear if s.name in named}
        coefficients = {named[s.name]: 1.0 for s in candidate.linear if s.name in named}
        top = {named[n]: float(v[-1]) for n, v in self.levels.items() if n in named}
        slopes = []
        for term in sympy.Add.make_args(candidate.template.xreplace({**exponents, **coefficients})):
            slopes += [log_slope(term, top, factor) for factor in set(top) & term.free_symbols]
        return tuple(sorted(slopes, reverse=True))

    def _term_slopes(self, term: Term) -> tuple[float, ...]:
        """The log-slopes of a term without fitted exponents in each factor it holds, its
        coefficient 1, as :meth:`_order` finds them in the template of a law holding it."""
        if term not in self._slopes:
            expression = term.pattern.xreplace({s: sympy.Float(1.0) for s in term.pattern.free_symbols
                                               if s.name.startswith("_q")})
            top = {self.symbols[n]: float(v[-1]) for n, v in self.levels.items()}
            self._slopes[term] = tuple(log_slope(expression, top, f) for f in set(top) & expression.free_symbols)
        return self._slopes[term]

    def _reason(self, terms: Sequence[Term]) -> str | None:
        for name, levels in self.levels.items():
            # shapes of this factor alone; a part that mixes factors ((m + s - 1)/s) is an
            # interaction, told apart across the other factors' values, not by this factor's
            shapes = [shape for shape in (self._shape(t, name) for t in terms) if shape is not None]
            if not shapes:
                continue
            parts = {part for part, _ in shapes}
            # a part with a fitted exponent is a shape of its own in each term (n**k0, n**k1)
            used = len({part for part, exponents in shapes if not exponents}) + \
                sum(1 + exponents for _, exponents in shapes if exponents)
            if used > len(levels) - 1:
                return (f"more shapes of '{name}' than its {len(levels)} distinct values can tell apart")
            if len(levels) == 2:
                simplest = {self._simplest.get((name, self.direction(name, p))) for p in parts}
                if not parts <= simplest:
                    return f"'{name}' has two values: only its simplest rising and falling shapes are told apart"
        return None


def identifiable(candidates: Sequence[Candidate], configurations: np.ndarray,
                 shapes: ShapeRule) -> tuple[list[Candidate], list[str]]:
    """The candidates the data can identify, and why each other one was left out: fewer constants
    than distinct ``configurations`` (each row's configuration id), so a misfit can show, and no
    more shapes of a factor than its values support."""
    distinct = len(np.unique(configurations))
    shapes.prepare(t for c in candidates for t in c.terms)
    usable, skipped = [], []
    for c in candidates:
        reason = ("with as many constants as distinct configurations" if c.n_constants >= distinct
                  else shapes.reason(c.terms))
        if reason:
            skipped.append(reason)
        else:
            usable.append(c)
    if not usable:
        fewest = min(c.n_constants for c in candidates)
        if fewest < distinct:
            raise FewConfigurations(f"no candidate has a shape the data can identify ({Counter(skipped).most_common(1)[0][0]}); "
                              "measure more values of the factors or use a grammar with fewer shapes")
        configurations = "1 distinct configuration" if distinct == 1 else f"{distinct} distinct configurations"
        constants = "1 constant" if fewest == 1 else f"{fewest} constants"
        raise FewConfigurations(
            f"the data have {configurations} and the simplest candidate has {constants}, but a law needs at "
            "least one configuration more than its constants (so that a misfit can show); measure more "
            "configurations or use a grammar with fewer terms"
        )
    return usable, skipped


def mixes(part: sympy.Expr, factor: sympy.Symbol) -> bool:
    """Whether ``part`` depends on another factor besides ``factor`` (fitted exponents aside)."""
    return any(s != factor and not s.name.startswith("_theta") for s in part.free_symbols)


def _fitted(part: sympy.Expr) -> int:
    """How many exponents are fitted in ``part`` (n**k: one)."""
    return sum(1 for s in part.free_symbols if s.name.startswith("_theta"))


def _size(expr: sympy.Expr) -> int:
    return sum(1 for _ in sympy.preorder_traversal(expr))


def _sign(low: sympy.Expr, high: sympy.Expr) -> int:
    """The sign of ``high - low`` where both are finite real numbers, else 0 (a shape undefined
    or complex at a value: √x or log2 x at a negative one, 1/x at 0)."""
    try:
        low, high = complex(low), complex(high)
    except TypeError:  # sympy's complex infinity, or nan
        return 0
    if low.imag or high.imag or not np.isfinite([low.real, high.real]).all():
        return 0
    return int(np.sign(high.real - low.real))


def unpinned_record(terms: Sequence[Term], shapes: ShapeRule) -> dict[str, dict]:
    """:meth:`ShapeRule.unpinned` for law.json: each factor's count of values and its shapes as
    text (``1/n**2``, each fitted exponent written ``k``)."""
    k, c = sympy.Symbol("k"), sympy.Symbol("c")
    written = {}
    for name, parts in shapes.unpinned(terms).items():
        texts = [to_text(c * part.subs({s: k for s in part.free_symbols if s.name.startswith("_theta")}))
                 for part in parts]
        written[name] = {"values": len(shapes.levels[name]),
                         "shapes": ["1/" + t[2:] if t.startswith("c/") else t.removeprefix("c*") for t in texts]}
    return written


def unpinned_notes(unpinned: dict[str, dict], domain: dict[str, list[float]]) -> tuple[str, ...]:
    """What a run says of each factor whose shapes its values cannot test (``unpinned_record``)."""
    return tuple(f"the law's shapes of '{name}' ({', '.join(u['shapes'])}) are as many as its {u['values']} measured "
                 "values can tell apart: other shapes fit the measurements exactly as well, so the law's course "
                 f"outside {name} = {setting(domain[name][0])}..{setting(domain[name][1])} is the search's "
                 "choice, not a measurement (of the laws it fitted that fit alike, the one whose terms change "
                 f"least at the top of the data); measure {name} at one more value to test it"
                 for name, u in unpinned.items())


BARELY_TESTED = 3  # a law of this many constants or more, on one configuration more than it has


def barely_tested_notes(constants: int, configurations: int, fitted: int, target: str) -> tuple[str, ...]:
    """What a run says of a law of several constants on one configuration more than it has,
    chosen from many fitted laws: one residual tests its form, and of so many laws some fit a
    handful of runs closely by chance, so its close fit says little of how the target scales."""
    if constants < BARELY_TESTED or configurations - constants > 1 or fitted < 10 * constants:
        return ()
    return (f"the law has {constants} constants for {configurations} measured configurations: one residual tests "
            f"its form, and it was chosen from {fitted:,} fitted laws, of which some fit so few runs closely by "
            f"chance; its fit says little of how {target} scales: measure more configurations (exprsearch suggest "
            "says which) before relying on it beyond them",)


LEFT_OUT = "the law leaves out"  # how left_out_notes' note starts, for those who look for it


def unreached_notes(missed: Sequence[str], grammar: str) -> tuple[str, ...]:
    """What a run says of the factors :func:`limits` finds the grammar does not reach."""
    if not missed:
        return ()
    listed = ", ".join(missed)
    return (f"grammar '{grammar}' reaches no term in {listed} of the data, so no law it holds follows "
            f"{'it' if len(missed) == 1 else 'them'}: --map binds a factor its rules name to a column (L=layers), "
            "or a grammar such as default reaches every column",)


def limits(candidates: Sequence[Candidate], usable: Sequence[Candidate], factors: Sequence[str]) -> dict[str, list]:
    """For law.json's search, where there are any: the factors of the data that some candidate
    holds but no identifiable one does (``unaffordable``: every law in them has as many constants as
    there are configurations, say, so a law leaves them out because the measurements cannot afford
    it, not because the times do not depend on them), and those no candidate holds (``unreached``:
    the grammar's rules name factors of their own)."""
    held, afforded = _held(candidates), _held(usable)
    found = {"unaffordable": [f for f in factors if f in held - afforded],
             "unreached": [f for f in factors if f not in held]}
    return {k: v for k, v in found.items() if v}


def limit_notes(record: dict[str, list], configurations: np.ndarray, grammar: str) -> tuple[str, ...]:
    """What a run says of the :func:`limits` found."""
    return (left_out_notes(record.get("unaffordable", ()), configurations)
            + unreached_notes(record.get("unreached", ()), grammar))


def _held(pool: Sequence[Candidate]) -> set[str]:
    """The factors the candidates' terms hold."""
    terms = {t for c in pool for t in c.terms}
    return {s.name for t in terms for s in t.key.free_symbols if not s.name.startswith("_theta")}


def left_out_notes(left_out: Sequence[str], configurations: np.ndarray) -> tuple[str, ...]:
    """What a run says of the factors :func:`limits` finds the data cannot afford."""
    if not left_out:
        return ()
    distinct = len(np.unique(configurations))
    listed, it = ", ".join(f"'{f}'" for f in left_out), "it" if len(left_out) == 1 else "them"
    return (f"{LEFT_OUT} {listed} although the data vary {it}: with {distinct} distinct configuration(s), "
            f"every law of the grammar that holds {it} has as many constants (or more shapes than the measured values "
            f"tell apart), so its misfit could not show; measure more values of {listed} (exprsearch suggest says "
            f"which) before using the law along {it}",)
