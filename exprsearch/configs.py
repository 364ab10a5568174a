"""Configurations to evaluate a law at: ``--vary``/``--fix``/``--at`` specs and ``--where``
constraints, parsed without ``eval``."""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from .cells import is_number
from .compile import factor_symbol, to_function
from .errors import ExprsearchError, did_you_mean
from .tables import rows_named
from .vocabulary import ExpressionSyntaxError, law_name, parse, to_readable

if TYPE_CHECKING:
    from .law import Law

MAX_VALUES = 1_000_000  # values of one --vary factor


class ConfigError(ExprsearchError, ValueError):
    """A --vary, --fix, --at or --where value cannot be used."""


def parse_values(spec: str, factor: str) -> np.ndarray:
    """``1..1024`` (every integer), ``1..1024:x2`` (geometric), ``0.5..2.5`` (50 evenly spaced),
    ``0.5..2:7`` (7 evenly spaced), or a list ``32,64,128``."""
    text = spec.strip()
    try:
        if ".." in text:
            low_text, _, rest = text.partition("..")
            high_text, _, step = rest.partition(":")
            low, high = float(low_text), float(high_text)
            if not (np.isfinite(low) and np.isfinite(high)):
                raise ConfigError(f"{factor}={spec}: give finite numbers (not nan or inf)")
            if high < low:
                raise ConfigError(f"{factor}={spec}: the range is empty ({low:g} > {high:g}); write LOW..HIGH")
            if step.startswith("x"):
                ratio = float(step[1:])
                if ratio <= 1 or low <= 0:
                    raise ConfigError(f"{factor}={spec}: a geometric range needs LOW > 0 and a ratio above 1")
                count = int(np.floor(np.log(high / low) / np.log(ratio) + 1e-9)) + 1
                if count > MAX_VALUES:
                    raise ConfigError(f"{factor}={spec}: {count:,} values, more than {MAX_VALUES:,}; take a larger ratio")
                return low * ratio ** np.arange(count)
            if step:
                count = int(step)
                if count > MAX_VALUES:
                    raise ConfigError(f"{factor}={spec}: {count:,} values, more than {MAX_VALUES:,}; give fewer")
                if count < (1 if low == high else 2):
                    raise ConfigError(f"{factor}={spec}: {count} values cannot span {low:g}..{high:g}; give a count "
                                      "of at least 2 after the colon")
                return np.linspace(low, high, count)
            if low.is_integer() and high.is_integer():
                if high - low + 1 > MAX_VALUES:  # before numpy allocates them (1..1e8 took 8 GB)
                    raise ConfigError(f"{factor}={spec} holds {high - low + 1:,.0f} integers, more than {MAX_VALUES:,}; "
                                      f"use a geometric range ({factor}={low:g}..{high:g}:x2) or fewer values")
                return np.arange(low, high + 1)
            return np.linspace(low, high, 50)
        values = np.array([float(v) for v in text.split(",") if v.strip()])
    except ConfigError:
        raise
    except ValueError:
        raise ConfigError(
            f"{factor}={spec} is not a list (32,64,128) or a range (1..512, 1..1024:x2, 0.5..2:7)"
        ) from None
    if values.size == 0:
        raise ConfigError(f"{factor}={spec}: no values given")
    if not np.isfinite(values).all():
        raise ConfigError(f"{factor}={spec}: give finite numbers (not nan or inf)")
    twice = values[np.flatnonzero(np.diff(np.sort(values)) == 0)[:1]]
    if twice.size:
        raise ConfigError(f"{factor}={spec}: {twice[0]:g} is given twice; give each value once")
    return values


def measured_span(low: float, high: float) -> np.ndarray:
    """A measured range as values to try: doubling from ``low`` and ending at ``high`` (where a
    law interpolates), every whole value of a count from 0 up to 16, else nine even steps."""
    if low > 0:
        values = low * 2.0 ** np.arange(int(np.floor(np.log2(high / low) + 1e-9)) + 1)
        return np.unique(np.append(values[values < high * (1 - 1e-9)], high))
    if float(low).is_integer() and float(high).is_integer() and high - low <= 16:
        return np.arange(low, high + 1)  # a count from 0, or a 0/1 switch: whole values only
    return np.linspace(low, high, 9)


def parse_point(spec: str, option: str, repeatable: bool = False) -> dict[str, float]:
    """``"p=128,n=16000"`` → ``{"p": 128.0, "n": 16000.0}``; ``repeatable``: the option may be
    given once per configuration, which a second value of a factor (``p=16,32``) is pointed to."""
    point = {}
    for part in spec.split(","):
        name, sep, value = part.partition("=")
        if not sep and point and is_number(name):
            last = next(reversed(point))
            more = (f"; give each configuration its own {option} ({option} {last}={setting(point[last])} {option} "
                    f"{last}={name.strip()})" if repeatable else "")
            raise ConfigError(f"{option} {spec}: '{name.strip()}' names no factor; a configuration gives each "
                              f"factor one value{more}")
        name = law_name(name) if name.strip() else name  # 'batch size=32' is batch_size in a law
        if name in point:
            raise ConfigError(f"{option} {spec}: '{name}' is given twice; give each factor once")
        try:
            point[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise ConfigError(f"{option} {spec}: write FACTOR=NUMBER pairs separated by commas")
        if not np.isfinite(point[name]):
            raise ConfigError(f"{option} {spec}: '{value.strip()}' is not a finite number; give one")
    return point


def parse_assignments(specs: list[str], option: str) -> dict[str, str]:
    """``["p=1..8", "n=1000"]`` → ``{"p": "1..8", "n": "1000"}``."""
    pairs = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name.strip() or not value.strip():
            example = name.strip() if name.strip().isidentifier() else "p"
            raise ConfigError(f"{option} takes FACTOR=VALUES, a range ({example}=1..64) or a list "
                              f"({example}=1,2,4); got '{spec}'")
        name = law_name(name)  # 'batch size=32,64' is batch_size in a law
        if name in pairs:
            raise ConfigError(f"{option} gives '{name}' twice ({name}={pairs[name]} and "
                              f"{spec.strip()}); give each factor once")
        pairs[name] = value.strip()
    return pairs


def check_factors(names: list[str], factors: tuple[str, ...], option: str, held: Mapping[str, float] | None = None,
                  given: Mapping[str, float] | None = None) -> None:
    """Raise for a name that is no factor of the law; a factor every measurement ``held`` at one
    value (which the law leaves out) is said as such, and passes where ``given`` that value."""
    for name in names:
        if name not in factors and name in (held or {}):
            if given is not None and given.get(name) == held[name]:
                continue
            raise ConfigError(
                f"{option} names '{name}', which every measurement held at {setting(held[name])}: the law leaves "
                f"it out and cannot say what another value of it would do; measure runs at another value of "
                f"{name} and fit the law again")
        if name not in factors:
            raise ConfigError(
                f"{option} names '{name}', which is not a factor of the law{did_you_mean(name, list(factors))}; "
                f"its factors are {', '.join(factors)}"
            )


def check_varies(law: Law, what: str) -> None:
    """Raise where the law is a constant: no factor changes it, so ``what`` has nothing to go on."""
    if not any(law.uses(f) for f in law.factors):
        quantity = "rate" if law.rate else "time"
        raise ConfigError(f"the law is a constant, {float(law.expression):.4g}: no factor changes the {quantity}, so "
                          f"{what}; exprsearch run's notes say why no term was kept (measure more configurations)")


def listed(words: list[str]) -> str:
    """Words as a sentence lists them: ``a``, ``a and b``, ``a, b and c``."""
    return ", ".join(words[:-1]) + " and " * (len(words) > 1) + words[-1]


def values_wanted(missing: list[str], domain: Mapping[str, list[float]], at: Mapping[str, float] | None = None,
                  example: Mapping[str, float] | None = None) -> str:
    """The sentence asking for every factor in ``missing`` at once, with its measured range where
    ``domain`` has it: as ``--fix`` values, or with ``at`` (the values given) as a whole ``--at``
    to copy, each missing factor at its value in ``example`` (a measured configuration: factors
    measured together keep a combination that exists), else the largest value measured."""
    names = listed([f"'{f}'" for f in missing])
    known = [f for f in missing if domain.get(f)]
    ranges = "; ".join(f"{f} " * (len(missing) > 1) + "..".join(map(setting, domain[f][:2])) for f in known)
    lead = f"give factor{'s' * (len(missing) > 1)} {names} a value"
    if at is None:
        hint = f" (measured {ranges})" if known else ""
        return f"{lead}: --fix {','.join(f'{f}=VALUE' for f in missing)}{hint}"
    example = example or {}
    value = {f: setting(example[f]) if f in example else setting(domain[f][1]) if domain.get(f) else "VALUE"
             for f in missing}
    given = [f"{k}={setting(v)}" for k, v in at.items()] + [f"{f}={value[f]}" for f in missing]
    return f"{lead} in --at{f' (measured {ranges})' if known else ''}, such as --at {','.join(given)}"


def grid(factors: tuple[str, ...], vary: Mapping[str, np.ndarray], fixed: Mapping[str, float],
         domain: Mapping[str, list[float]] | None = None, limit: int = 5_000_000,
         held: Mapping[str, float] | None = None) -> dict[str, np.ndarray]:
    """Every combination of the varied values, the fixed ones alongside; all factors needed (a
    factor the measurements ``held`` at one value may be fixed at it)."""
    check_factors(list(vary) + list(fixed), factors, "--vary/--fix", held, fixed)
    missing = [f for f in factors if f not in vary and f not in fixed]
    if missing:
        raise ConfigError(values_wanted(missing, domain or {}))
    size = int(np.prod([len(v) for v in vary.values()])) if vary else 1
    if size > limit:
        raise ConfigError(f"the grid has {size:,} configurations, more than {limit:,}; use coarser ranges")
    combos = list(itertools.product(*vary.values())) if vary else [()]
    columns = {name: np.array([c[i] for c in combos], dtype=float) for i, name in enumerate(vary)}
    for name, value in fixed.items():
        columns[name] = np.full(len(combos), float(value))
    return columns


def defined(law: Law, columns: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The law's predictions at ``columns`` and where they are a time: positive and finite (a law
    with 1/p or log2 p gives none at p = 0, one with a falling term may go negative far out)."""
    with np.errstate(all="ignore"):
        time = law.predict(columns)
    return time, np.isfinite(time) & (time > 0)


def check_defined(law: Law, columns: Mapping[str, np.ndarray], option: str, table: bool = False,
                  lines: np.ndarray | None = None) -> np.ndarray:
    """The law's predictions at ``columns``; a configuration where it gives no time is an error
    that names it (from a ``table``, also its line of the file, or its row where ``lines`` is None
    because the format has none; it used to print inf or nan)."""
    time, ok = defined(law, columns)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        place = rows_named(np.array([i]), 0 if lines is None else lines)
        at = f"{place} ({describe(columns, i)})" if table else describe(columns, i)
        raise ConfigError(f"{option}: at {at} the law gives {time[i]:g}, not a {'rate' if law.rate else 'time'} "
                          f"({law.target} = {to_readable(law.expression, 4)}); {_measured(law)}")
    return time


def setting(value: float) -> str:
    """A factor's value as a user writes it: a whole number in full (64862437376, where ``:g``
    writes 6.48624e+10, another number), others to six digits."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


def amount(value: float, digits: int = 3) -> str:
    """A cost or budget to ``digits`` significant digits, written out where it is a whole number
    below 10⁹ (3,700 device-seconds, where ``:.3g`` writes 3.7e+03), else as ``:g`` writes it."""
    value = float(f"{float(value):.{digits}g}")
    return f"{value:,.0f}" if value.is_integer() and abs(value) < 1e9 else f"{value:g}"


def describe(columns: Mapping[str, np.ndarray], i: int) -> str:
    """Configuration ``i`` of ``columns`` as ``p = 0, n = 1000``."""
    return described({k: np.asarray(v)[i] for k, v in columns.items()})


def described(config: Mapping[str, float]) -> str:
    """A configuration (factor → value) as ``p = 0, n = 1000``."""
    return ", ".join(f"{k} = {setting(v)}" for k, v in config.items())


def _measured(law: Law) -> str:
    ranges = [f"{f} {setting(lo)}..{setting(hi)}" for f, (lo, hi) in law.domain.items() if f in law.factors]
    return ("give values near the measured ones (" + ", ".join(ranges) + ")") if ranges else "give other values"


def constraint_mask(constraints: list[str], columns: Mapping[str, np.ndarray]) -> np.ndarray:
    """Rows of ``columns`` that satisfy every ``--where`` constraint such as ``p*b <= 65536``."""
    mask = np.ones(len(next(iter(columns.values()))), dtype=bool)
    names = tuple(columns)
    symbols = {name: factor_symbol(name) for name in names}
    for text in constraints:
        try:  # a lone '=' is equality, as in run's --where (batch=64)
            node = ast.parse(re.sub(r"(?<![<>!=])=(?!=)", "==", text), mode="eval").body
        except SyntaxError:
            node = None
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            raise ConfigError(f"--where '{text}' must compare two expressions, e.g. 'p*b <= 65536'")
        try:
            left = parse(ast.unparse(node.left), symbols)
            right = parse(ast.unparse(node.comparators[0]), symbols)
        except ExpressionSyntaxError as exc:
            raise ConfigError(f"--where '{text}': {exc}") from None
        values = [to_function(side, names)([columns[n] for n in names]) for side in (left, right)]
        op = type(node.ops[0])
        compare = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater,
                   ast.GtE: np.greater_equal, ast.Eq: np.isclose, ast.NotEq: np.not_equal}.get(op)
        if compare is None:
            raise ConfigError(f"--where '{text}': use <, <=, >, >=, == or !=")
        mask &= compare(*np.broadcast_arrays(*values))
    return mask
