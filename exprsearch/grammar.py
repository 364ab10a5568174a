"""Grammars: their types, the built-in ones, and binding a grammar to a dataset's factors (files
are read by :mod:`exprsearch.grammar_file`).

A grammar names factors, constant kinds with bounds, and production rules whose alternatives are
expressions that may refer to other rules as ``<rule>``, to a sum of 1 to 3 distinct
expansions of a rule as ``<rule>{1,3}``, or to a product of 1 to 3 expansions that each depend on
different factors as ``<rule>*{1,3}``. The rules ``<factor>``, ``<extrinsic>``,
``<intrinsic>`` and ``<other>`` are provided: they expand to the dataset's factors (all, by role,
or those the grammar does not declare by name). See docs/grammar.md.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

import sympy

from .errors import BindingError, GrammarError, did_you_mean, missing_file
from .vocabulary import law_name

ROLES = ("extrinsic", "intrinsic")
PROVIDED_RULES = ("factor", "extrinsic", "intrinsic", "other")
REFERENCE = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)>(?:(\*)?\{(\d+),(\d+)\})?")


@dataclass(frozen=True)
class Factor:
    """A factor the grammar names: ``column`` is the dataset column it is bound to."""

    name: str
    role: str = "extrinsic"
    about: str = ""
    unit: str = ""
    column: str | None = None
    absent: float | None = None  # the value it takes where the data has no such column


@dataclass(frozen=True)
class ConstantKind:
    """A kind of constant; every occurrence in a candidate becomes its own fitted constant."""

    name: str
    min: float
    max: float
    about: str = ""
    written: str = ""  # the name the rules use, where binding renamed the kind away from a column
    negative_if_growing: bool = False  # a lone constant of this kind may be negative where the law grows (intercept.py)


@dataclass(frozen=True)
class Limits:
    """Bounds on the candidates a grammar expands to."""

    max_terms: int = 4
    max_complexity: int = 40
    max_candidates: int = 20000
    max_depth: int = 8
    max_nonlinear: int = 2
    max_products: int = 4000


@dataclass(frozen=True)
class Reference:
    """``<rule>`` (``low == high == 1``), ``<rule>{low,high}`` (a sum of distinct expansions) or
    ``<rule>*{low,high}`` (a product of expansions of different factors) inside an alternative."""

    rule: str
    low: int
    high: int
    position: int = 0
    product: bool = False

    @property
    def placeholder(self) -> str:
        """A parseable name standing for this occurrence until it is expanded."""
        return f"__rule{self.position}_{self.rule}"


@dataclass(frozen=True)
class Alternative:
    """One right-hand side of a rule, as written, with its rule references."""

    text: str
    references: tuple[Reference, ...]
    line: int | None = None

    def placeholder_text(self) -> str:
        """The text with each reference replaced by its placeholder name."""
        names = iter(r.placeholder for r in self.references)
        return REFERENCE.sub(lambda m: next(names), self.text)


@dataclass(frozen=True)
class Grammar:
    """A validated grammar; after :func:`bind` its factors carry dataset columns."""

    name: str
    description: str
    factors: tuple[Factor, ...]
    constants: tuple[ConstantKind, ...]
    rules: dict[str, tuple[Alternative, ...]]
    limits: Limits = field(default_factory=Limits)
    source: str | None = None
    sha256: str | None = None
    bound: bool = False
    fixed: dict[str, float] = field(default_factory=dict)  # factors absent from the data, at their value

    def constant(self, name: str) -> ConstantKind:
        return next(c for c in self.constants if c.name == name)

    def symbols(self) -> dict[str, sympy.Symbol]:
        """Names usable in alternatives: factors (as their bound columns) and constant kinds."""
        table = {f.name: sympy.Symbol(f.column or f.name, positive=True) for f in self.factors}
        table.update({name: sympy.nsimplify(value) for name, value in self.fixed.items()})
        table.update({c.written or c.name: sympy.Symbol(c.name, real=True) for c in self.constants})
        return table


def builtin_names() -> list[str]:
    """Names of the grammars shipped with exprsearch."""
    return sorted(p.name[:-5] for p in _builtin_dir().iterdir() if p.name.endswith(".toml"))


def load(name_or_path: str | Path) -> Grammar:
    """Load a built-in grammar by name, or a grammar file by path."""
    path = Path(name_or_path)
    if path.suffix != ".toml" and not path.exists():
        builtin = _builtin_dir() / f"{name_or_path}.toml"
        if not builtin.is_file():
            names = builtin_names()
            raise GrammarError(
                f"no built-in grammar '{name_or_path}'{did_you_mean(str(name_or_path), names)} "
                f"and no such file; built-in grammars are {', '.join(names)}"
            )
        return parse_text(builtin.read_text(), source=f"{name_or_path} (built-in)", name=path.stem)
    if not path.is_file():
        raise GrammarError(missing_file("grammar", path))
    return parse_text(path.read_text(), source=str(path), name=path.stem)


def source_text(name_or_path: str | Path) -> str:
    """The TOML text of a built-in grammar or grammar file (validated first)."""
    grammar = load(name_or_path)
    path = Path(name_or_path)
    return path.read_text() if path.is_file() else (_builtin_dir() / f"{grammar.name}.toml").read_text()


def uses_free_factors(grammar: Grammar) -> bool:
    """Whether the grammar refers to the provided factor rules (so any column can take part)."""
    return any(r.rule in PROVIDED_RULES for alts in grammar.rules.values() for a in alts for r in a.references)


@functools.lru_cache(maxsize=32)  # a profile's series load the same grammar; a Grammar is never changed
def parse_text(text: str, source: str = "<grammar>", name: str = "grammar") -> Grammar:
    """Parse and validate grammar TOML ``text``; ``source`` names it in error messages (the
    reading itself is :mod:`exprsearch.grammar_file`)."""
    from .grammar_file import parse

    return parse(text, source, name)


def bind(
    grammar: Grammar,
    columns: tuple[str, ...],
    mapping: dict[str, str] | None = None,
    intrinsic: tuple[str, ...] = (),
) -> Grammar:
    """Bind grammar factors to dataset ``columns`` and materialise the provided rules.

    ``mapping`` maps a grammar factor name to a column when they differ; columns the grammar
    does not declare become free factors (role extrinsic unless listed in ``intrinsic``).
    """
    # columns are named as the data's factors are: 'batch size' is batch_size (vocabulary.law_name)
    mapping = {key: law_name(column) for key, column in (mapping or {}).items()}
    intrinsic = tuple(law_name(name) for name in intrinsic)
    declared = {f.name for f in grammar.factors}
    for key in mapping:
        if key not in declared and not declared:
            raise BindingError(
                f"--map {key}=…: grammar '{grammar.name}' declares no factors (it takes every factor "
                "column under its own name), so there is nothing to bind; leave out --map"
            )
        if key not in declared:
            raise BindingError(
                f"--map {key}=…: '{key}' is not a factor of grammar '{grammar.name}'"
                f"{did_you_mean(key, sorted(declared))}; its factors are {', '.join(sorted(declared))}"
            )
    for name in intrinsic:
        if name not in columns:
            raise BindingError(
                f"--intrinsic names '{name}', which is not a factor of the data"
                f"{did_you_mean(name, list(columns))}; factors are {', '.join(columns)}"
            )
    bound: list[Factor] = []
    fixed: dict[str, float] = {}
    for f in grammar.factors:
        column = mapping.get(f.name, f.name)
        if column not in columns and f.absent is not None and f.name not in mapping:
            fixed[f.name] = f.absent  # the grammar says what the factor is where it was not varied
            continue
        if column not in columns:
            # the one column no other grammar factor takes is the likely one to name
            open_ = [c for c in columns if c not in mapping.values() and c not in {g.name for g in grammar.factors}]
            named = [c for c in open_ if _described(c, f.about)]  # or the one its description names
            example = open_[0] if len(open_) == 1 else named[0] if len(named) == 1 else "COLUMN"
            raise BindingError(
                f"grammar '{grammar.name}' needs factor '{f.name}' ({f.about or f.role}) but the "
                f"data has no such factor{did_you_mean(column, list(columns))}; factors are "
                f"{', '.join(columns)}: pass --map {f.name}={example}"
            )
        bound.append(replace(f, column=column))
    used = {f.column for f in bound}
    free = [c for c in columns if c not in used]
    constants = _renamed(grammar.constants, used | set(free))
    names = declared | {c.written or c.name for c in constants}  # what the rules already mean
    keys = names | set(free)
    for column in free:
        role = "intrinsic" if column in intrinsic else "extrinsic"
        # the key the rules know it by: its name, unless a constant kind or another factor has it
        key = column if column not in names else fresh(column + "_", keys.__contains__)
        keys.add(key)
        bound.append(Factor(name=key, role=role, column=column))
    rules = dict(grammar.rules)
    rules.update(_provided_rules(bound, declared))
    return replace(grammar, factors=tuple(bound), constants=constants, rules=rules, bound=True, fixed=fixed)


def free_constant(grammar: Grammar) -> Grammar:
    """``grammar`` with the constant its start rule adds to every law (``c`` in ``c + <term>{0,3}``,
    a kind that cannot be negative) free to take either sign, as a new kind ``a`` (as in ``pmnf``):
    for laws that need hold only over a segment of a factor (:mod:`exprsearch.segments`), where a
    regime such as ``2·p − 2`` above a knee has no non-negative constant. Unchanged where the start
    rule adds no such constant."""
    fixed_sign = {c.written or c.name for c in grammar.constants if c.min >= 0}
    taken = {c.written or c.name for c in grammar.constants} | {f.name for f in grammar.factors} | set(grammar.rules)
    name = fresh("a", taken.__contains__)
    start = tuple(_freed(alternative, fixed_sign, name) for alternative in grammar.rules.get("start", ()))
    if start == grammar.rules.get("start", ()):
        return grammar
    kind = ConstantKind(name, -math.inf, math.inf, about="the constant of a law over a segment, of either sign")
    return replace(grammar, constants=(*grammar.constants, kind), rules={**grammar.rules, "start": start})


def _freed(alternative: Alternative, kinds: set[str], name: str) -> Alternative:
    """``alternative`` with each constant of ``kinds`` that stands alone in its top-level sum
    written as ``name``; its rule references are kept as they were written."""
    text = alternative.placeholder_text()
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return alternative
    summed, alone = [tree], []
    while summed:
        node = summed.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            summed += [node.left, node.right]
        elif isinstance(node, ast.Name) and node.id in kinds and node.lineno == node.end_lineno == 1:
            alone.append(node)
    if not alone:
        return alternative
    written = text.encode()
    for node in sorted(alone, key=lambda n: -n.col_offset):  # ast offsets count UTF-8 bytes
        written = written[:node.col_offset] + name.encode() + written[node.end_col_offset:]
    text = written.decode()
    for reference, match in zip(alternative.references, REFERENCE.finditer(alternative.text)):
        text = text.replace(reference.placeholder, match.group(0))
    return replace(alternative, text=text)


def _provided_rules(
    factors: list[Factor], declared: set[str]
) -> dict[str, tuple[Alternative, ...]]:
    def alts(selected: list[Factor]) -> tuple[Alternative, ...]:
        return tuple(Alternative(f.name, ()) for f in selected)

    return {
        "factor": alts(factors),
        "extrinsic": alts([f for f in factors if f.role == "extrinsic"]),
        "intrinsic": alts([f for f in factors if f.role == "intrinsic"]),
        "other": alts([f for f in factors if f.name not in declared]),
    }


def _builtin_dir() -> Path:
    try:
        packaged = resources.files("exprsearch.grammars")
        if packaged.is_dir():
            return Path(str(packaged))
    except ModuleNotFoundError:  # pragma: no cover - running from a source tree without install
        pass
    return Path(__file__).resolve().parent.parent / "grammars"


def fresh(name: str, taken: Callable[[str], bool], extend: str = "_") -> str:
    """``name``, extended until ``taken`` no longer holds for it."""
    while taken(name):
        name += extend
    return name


def _described(column: str, about: str | None) -> bool:
    """Whether ``column``'s name holds a word of a grammar factor's description, such as ``GPU_count``
    for "workers (processes, GPUs or nodes)" (words of three letters or more, a plural's s dropped)."""
    def singular(text: str) -> set[str]:
        return {w[:-1] if w.endswith("s") else w for w in re.findall(r"[a-z]+", text.lower())}

    words, parts = singular(about or ""), singular(column)
    return any(len(w) >= 3 and w in parts for w in words - {"the", "and", "or", "of", "per", "number"})


def _renamed(kinds: tuple[ConstantKind, ...], columns: set[str]) -> tuple[ConstantKind, ...]:
    """The constant kinds, each renamed where its numbered constants (c0, c1, …) would read as a
    column, so a parameter named like a constant (Extra-P's ``a``, ``b``, ``c``) keeps its name."""
    names = {k.name for k in kinds}
    out = []
    for kind in kinds:
        def taken(name: str, kind: ConstantKind = kind) -> bool:
            numbered = re.compile(rf"^{re.escape(name)}\d*$")
            return any(numbered.match(c) for c in columns) or (name != kind.name and name in names)

        if taken(kind.name):
            kind = replace(kind, name=fresh(kind.name, taken, kind.name[-1]), written=kind.name)
            names.add(kind.name)
        out.append(kind)
    return tuple(out)
