"""Grammar files (TOML) → validated :class:`Grammar`, and binding a grammar to a dataset's factors.

A grammar names factors, constant kinds with bounds, and production rules whose alternatives are
expressions that may refer to other rules as ``<rule>``, to a sum of 1 to 3 distinct
expansions of a rule as ``<rule>{1,3}``, or to a product of 1 to 3 expansions that each depend on
different factors as ``<rule>*{1,3}``. The rules ``<factor>``, ``<extrinsic>``,
``<intrinsic>`` and ``<other>`` are provided: they expand to the dataset's factors (all, by role,
or those the grammar does not declare by name). See docs/grammar.md.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

import sympy

from .errors import BindingError, GrammarError
from .vocabulary import ExpressionSyntaxError, parse, suggest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROLES = ("extrinsic", "intrinsic")
PROVIDED_RULES = ("factor", "extrinsic", "intrinsic", "other")
REFERENCE = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)>(?:(\*)?\{(\d+),(\d+)\})?")
_TOP_KEYS = {"name", "description", "factors", "constants", "rules", "limits"}
RESERVED = frozenset({"numpy", "predict", "FACTORS", "TARGET"})  # names law.py defines or imports


@dataclass(frozen=True)
class Factor:
    """A factor the grammar names: ``column`` is the dataset column it is bound to."""

    name: str
    role: str = "extrinsic"
    about: str = ""
    unit: str = ""
    column: str | None = None


@dataclass(frozen=True)
class ConstantKind:
    """A kind of constant; every occurrence in a candidate becomes its own fitted constant."""

    name: str
    min: float
    max: float
    about: str = ""


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

    def constant(self, name: str) -> ConstantKind:
        return next(c for c in self.constants if c.name == name)

    def symbols(self) -> dict[str, sympy.Symbol]:
        """Names usable in alternatives: factors (as their bound columns) and constant kinds."""
        table = {f.name: sympy.Symbol(f.column or f.name, positive=True) for f in self.factors}
        table.update({c.name: sympy.Symbol(c.name, real=True) for c in self.constants})
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
                f"no built-in grammar '{name_or_path}'{suggest(str(name_or_path), names)} "
                f"and no such file; built-in grammars are {', '.join(names)}"
            )
        return parse_text(builtin.read_text(), source=f"{name_or_path} (built-in)", name=path.stem)
    if not path.is_file():
        raise GrammarError(f"grammar file '{path}' does not exist; check the path")
    return parse_text(path.read_text(), source=str(path), name=path.stem)


def source_text(name_or_path: str | Path) -> str:
    """The TOML text of a built-in grammar or grammar file (validated first)."""
    grammar = load(name_or_path)
    path = Path(name_or_path)
    return path.read_text() if path.is_file() else (_builtin_dir() / f"{grammar.name}.toml").read_text()


def uses_free_factors(grammar: Grammar) -> bool:
    """Whether the grammar refers to the provided factor rules (so any column can take part)."""
    return any(r.rule in PROVIDED_RULES for alts in grammar.rules.values() for a in alts for r in a.references)


def parse_text(text: str, source: str = "<grammar>", name: str = "grammar") -> Grammar:
    """Parse and validate grammar TOML ``text``; ``source`` names it in error messages."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GrammarError(f"{source}: TOML syntax error: {exc}") from None
    where = _Locator(text, source)
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise GrammarError(
            f"{where.at(unknown[0])}: unknown section or key '{unknown[0]}'"
            f"{suggest(unknown[0], sorted(_TOP_KEYS))}; allowed are {', '.join(sorted(_TOP_KEYS))}"
        )
    factors = _factors(doc.get("factors", {}), where)
    constants = _constants(doc.get("constants", {}), where)
    limits = _limits(doc.get("limits", {}), where)
    rules = _rules(doc.get("rules", {}), where)
    grammar = Grammar(
        name=str(doc.get("name", name)),
        description=str(doc.get("description", "")),
        factors=factors,
        constants=constants,
        rules=rules,
        limits=limits,
        source=source,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
    )
    _check_names(grammar, where)
    _check_references(grammar, where)
    _check_termination(grammar, where)
    return grammar


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
    mapping = dict(mapping or {})
    declared = {f.name for f in grammar.factors}
    for key in mapping:
        if key not in declared:
            raise BindingError(
                f"--map {key}=…: '{key}' is not a factor of grammar '{grammar.name}'"
                f"{suggest(key, sorted(declared))}; its factors are {', '.join(sorted(declared)) or 'none'}"
            )
    for name in intrinsic:
        if name not in columns:
            raise BindingError(
                f"--intrinsic names '{name}', which is not a factor of the data"
                f"{suggest(name, list(columns))}; factors are {', '.join(columns)}"
            )
    bound: list[Factor] = []
    for f in grammar.factors:
        column = mapping.get(f.name, f.name)
        if column not in columns:
            raise BindingError(
                f"grammar '{grammar.name}' needs factor '{f.name}' ({f.about or f.role}) but the "
                f"data has no such factor{suggest(column, list(columns))}; factors are "
                f"{', '.join(columns)}: pass --map {f.name}=COLUMN"
            )
        bound.append(replace(f, column=column))
    used = {f.column for f in bound}
    free = [c for c in columns if c not in used]
    numbered = re.compile(rf"^(?:{'|'.join(re.escape(c.name) for c in grammar.constants)})\d*$")
    clash = sorted(c for c in used | set(free) if numbered.match(c))
    if clash:
        raise BindingError(
            f"data column '{clash[0]}' has the name of a constant of grammar '{grammar.name}' (its kinds "
            f"{', '.join(c.name for c in grammar.constants)} are numbered c0, c1, …); rename the column"
        )
    reserved = sorted((used | set(free)) & RESERVED)
    if reserved:
        raise BindingError(f"data column '{reserved[0]}' is a name the law's Python module needs "
                           f"({', '.join(sorted(RESERVED))}); rename the column")
    for column in free:
        role = "intrinsic" if column in intrinsic else "extrinsic"
        bound.append(Factor(name=column, role=role, column=column))
    rules = dict(grammar.rules)
    rules.update(_provided_rules(bound, declared))
    return replace(grammar, factors=tuple(bound), rules=rules, bound=True)


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


class _Locator:
    """Finds the line where a key is written, so errors can point at it."""

    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source

    def line(self, key: str, section: str | None = None) -> int | None:
        in_section = section is None
        pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
        for number, line in enumerate(self.lines, start=1):
            stripped = line.strip()
            if stripped.startswith("["):
                in_section = section is None or stripped.strip("[] ") == section
                if section is None and stripped.strip("[] ") == key:
                    return number
                continue
            if in_section and pattern.match(line):
                return number
        return None

    def at(self, key: str, section: str | None = None) -> str:
        number = self.line(key, section)
        return f"{self.source}, line {number}" if number else self.source


def _table(value: object, what: str, where: _Locator) -> dict:
    if not isinstance(value, dict):
        raise GrammarError(f"{where.at(what)}: '{what}' must be a table")
    return value


def _factors(table: object, where: _Locator) -> tuple[Factor, ...]:
    factors = []
    for name, spec in _table(table, "factors", where).items():
        loc = where.at(name, "factors")
        if isinstance(spec, str):
            spec = {"role": spec}
        if not isinstance(spec, dict):
            raise GrammarError(f"{loc}: factor '{name}' must be a table such as {{ role = \"extrinsic\" }}")
        extra = sorted(set(spec) - {"role", "about", "unit"})
        if extra:
            raise GrammarError(f"{loc}: factor '{name}' has unknown key '{extra[0]}'; use role, about, unit")
        role = spec.get("role", "extrinsic")
        if role not in ROLES:
            raise GrammarError(
                f"{loc}: factor '{name}' has role '{role}'{suggest(str(role), list(ROLES))}; "
                "use 'extrinsic' or 'intrinsic'"
            )
        if name in PROVIDED_RULES:
            raise GrammarError(f"{loc}: '{name}' is reserved for a provided rule; rename the factor")
        factors.append(Factor(name, role, str(spec.get("about", "")), str(spec.get("unit", ""))))
    return tuple(factors)


def _constants(table: object, where: _Locator) -> tuple[ConstantKind, ...]:
    kinds = []
    for name, spec in _table(table, "constants", where).items():
        loc = where.at(name, "constants")
        if not re.fullmatch(r"[A-Za-z_]+", name):
            raise GrammarError(f"{loc}: constant kind '{name}' must be letters only: its constants are numbered "
                               f"{name}0, {name}1, … and a digit in the name would make them ambiguous")
        if not isinstance(spec, dict) or "min" not in spec or "max" not in spec:
            raise GrammarError(f"{loc}: constant '{name}' needs min and max, e.g. {{ min = 0, max = inf }}")
        extra = sorted(set(spec) - {"min", "max", "about"})
        if extra:
            raise GrammarError(f"{loc}: constant '{name}' has unknown key '{extra[0]}'; use min, max, about")
        low, high = spec["min"], spec["max"]
        if not all(isinstance(v, (int, float)) and not math.isnan(v) for v in (low, high)) or low >= high:
            raise GrammarError(f"{loc}: constant '{name}' needs numbers min < max, got {low!r} and {high!r}")
        kinds.append(ConstantKind(name, float(low), float(high), str(spec.get("about", ""))))
    if not kinds:
        raise GrammarError(f"{where.source}: a grammar needs a [constants] table with at least one kind")
    return tuple(kinds)


def _limits(table: object, where: _Locator) -> Limits:
    table = _table(table, "limits", where)
    known = Limits.__dataclass_fields__
    values = {}
    for key, value in table.items():
        loc = where.at(key, "limits")
        if key not in known:
            raise GrammarError(f"{loc}: unknown limit '{key}'{suggest(key, list(known))}; known are {', '.join(known)}")
        smallest = 0 if key == "max_nonlinear" else 1
        if not isinstance(value, int) or isinstance(value, bool) or value < smallest:
            raise GrammarError(f"{loc}: limit '{key}' must be a whole number >= {smallest}, got {value!r}")
        values[key] = value
    return Limits(**values)


def _rules(table: object, where: _Locator) -> dict[str, tuple[Alternative, ...]]:
    rules: dict[str, tuple[Alternative, ...]] = {}
    for name, value in _table(table, "rules", where).items():
        line = where.line(name, "rules")
        loc = where.at(name, "rules")
        if name in PROVIDED_RULES:
            raise GrammarError(f"{loc}: rule '{name}' is provided by exprsearch; choose another name")
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise GrammarError(f"{loc}: rule '{name}' must be a string or a non-empty list of strings")
        alts = []
        for text in texts:
            refs = tuple(_reference(m, i) for i, m in enumerate(REFERENCE.finditer(text)))
            for ref in refs:
                smallest = 1 if ref.product else 0
                if ref.low > ref.high or ref.low < smallest or ref.high < 1:
                    written = f"<{ref.rule}>{'*' if ref.product else ''}{{{ref.low},{ref.high}}}"
                    raise GrammarError(f"{loc}: '{written}' needs {smallest} <= low <= high and high >= 1")
            alts.append(Alternative(text, refs, line))
        rules[name] = tuple(alts)
    if "start" not in rules:
        raise GrammarError(f"{where.source}: [rules] needs a 'start' rule, the shape of every candidate")
    return rules


def _reference(match: re.Match, position: int) -> Reference:
    low, high = match.group(3), match.group(4)
    return Reference(match.group(1), int(low or 1), int(high or 1), position, product=bool(match.group(2)))


def _check_names(grammar: Grammar, where: _Locator) -> None:
    symbols = grammar.symbols()
    for rule, alts in grammar.rules.items():
        for alt in alts:
            table = dict(symbols)
            table.update({r.placeholder: sympy.Symbol(r.placeholder) for r in alt.references})
            try:
                parse(alt.placeholder_text(), table)
            except ExpressionSyntaxError as exc:
                message = str(exc).replace(alt.placeholder_text(), alt.text)
                raise GrammarError(
                    f"{where.at(rule, 'rules')}: rule '{rule}': {message}; names must be factors "
                    "declared in [factors], constants in [constants], or rules written <rule>"
                ) from None


def _check_references(grammar: Grammar, where: _Locator) -> None:
    known = set(grammar.rules) | set(PROVIDED_RULES)
    for rule, alts in grammar.rules.items():
        for alt in alts:
            for ref in alt.references:
                if ref.rule not in known:
                    raise GrammarError(
                        f"{where.at(rule, 'rules')}: rule '{rule}' refers to unknown rule "
                        f"'<{ref.rule}>'{suggest(ref.rule, sorted(known))}; define it in [rules]"
                    )


def _check_termination(grammar: Grammar, where: _Locator) -> None:
    finishing = set(PROVIDED_RULES)
    changed = True
    while changed:
        changed = False
        for rule, alts in grammar.rules.items():
            if rule not in finishing and any(
                all(r.rule in finishing for r in alt.references) for alt in alts
            ):
                finishing.add(rule)
                changed = True
    stuck = [rule for rule in grammar.rules if rule not in finishing]
    # The root cause is usually a rule that refers only to itself; name that one.
    stuck.sort(key=lambda r: not any(ref.rule == r for a in grammar.rules[r] for ref in a.references))
    for rule in stuck[:1]:
        if rule not in finishing:
            raise GrammarError(
                f"{where.at(rule, 'rules')}: rule '{rule}' can never finish: every alternative "
                "refers to a rule that cannot finish; add an alternative without such references"
            )


def _builtin_dir() -> Path:
    try:
        packaged = resources.files("exprsearch.grammars")
        if packaged.is_dir():
            return Path(str(packaged))
    except ModuleNotFoundError:  # pragma: no cover - running from a source tree without install
        pass
    return Path(__file__).resolve().parent.parent / "grammars"
