"""Reading a grammar file: TOML → a validated :class:`~exprsearch.grammar.Grammar`, each error
with the line of the key it is about (factors, constant kinds, limits, rules and their
references, names, and rules that can never finish)."""

from __future__ import annotations

import hashlib
import math
import re
import sys

import sympy

from .errors import GrammarError, did_you_mean
from .grammar import (
    PROVIDED_RULES,
    REFERENCE,
    ROLES,
    Alternative,
    ConstantKind,
    Factor,
    Grammar,
    Limits,
    Reference,
)
from .vocabulary import ExpressionSyntaxError
from .vocabulary import parse as parse_expression

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_TOP_KEYS = {"name", "description", "factors", "constants", "rules", "limits"}


def parse(text: str, source: str = "<grammar>", name: str = "grammar") -> Grammar:
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
            f"{did_you_mean(unknown[0], sorted(_TOP_KEYS))}; allowed are {', '.join(sorted(_TOP_KEYS))}"
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
        extra = sorted(set(spec) - {"role", "about", "unit", "absent"})
        if extra:
            raise GrammarError(f"{loc}: factor '{name}' has unknown key '{extra[0]}'; use role, about, unit, absent")
        absent = spec.get("absent")
        if absent is not None and (isinstance(absent, bool) or not isinstance(absent, (int, float))
                                   or not math.isfinite(absent) or absent <= 0):
            raise GrammarError(f"{loc}: factor '{name}': absent must be a positive number (the value the factor "
                               "takes where the data has no such column)")
        role = spec.get("role", "extrinsic")
        if role not in ROLES:
            raise GrammarError(
                f"{loc}: factor '{name}' has role '{role}'{did_you_mean(str(role), list(ROLES))}; "
                "use 'extrinsic' or 'intrinsic'"
            )
        if name in PROVIDED_RULES:
            raise GrammarError(f"{loc}: '{name}' is reserved for a provided rule; rename the factor")
        factors.append(Factor(name, role, str(spec.get("about", "")), str(spec.get("unit", "")),
                              absent=None if absent is None else float(absent)))
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
        extra = sorted(set(spec) - {"min", "max", "about", "negative_if_growing"})
        if extra:
            raise GrammarError(f"{loc}: constant '{name}' has unknown key '{extra[0]}'; use min, max, about, "
                               "negative_if_growing")
        low, high = spec["min"], spec["max"]
        if not all(isinstance(v, (int, float)) and not math.isnan(v) for v in (low, high)) or low >= high:
            raise GrammarError(f"{loc}: constant '{name}' needs numbers min < max, got {low!r} and {high!r}")
        growing = spec.get("negative_if_growing", False)
        if not isinstance(growing, bool):
            raise GrammarError(f"{loc}: constant '{name}': negative_if_growing must be true or false, got {growing!r}")
        if growing and (low != 0 or high <= 0):
            raise GrammarError(f"{loc}: constant '{name}': negative_if_growing frees a constant bounded below by 0; "
                               f"this one has min = {low:g}, max = {high:g}")
        kinds.append(ConstantKind(name, float(low), float(high), str(spec.get("about", "")),
                                  negative_if_growing=growing))
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
            raise GrammarError(f"{loc}: unknown limit '{key}'{did_you_mean(key, list(known))}; known are {', '.join(known)}")
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
                parse_expression(alt.placeholder_text(), table)
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
                        f"'<{ref.rule}>'{did_you_mean(ref.rule, sorted(known))}; define it in [rules]"
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
