"""Exceptions the library raises, and the checks of settings that raise them; only the CLI turns
them into a message and an exit code."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from pathlib import Path


class ExprsearchError(Exception):
    """Base class: the message is one sentence that names the culprit and says what to do."""


class DataError(ExprsearchError, ValueError):
    """The measurement table cannot be used as given (missing file or column, NaN, bad values)."""


class ShortData(DataError):
    """The rows are valid but too few for a law (a group of a table with a single usable row)."""


class RepeatedSummaries(DataError):
    """Rows that each summarise runs (--spread) hold a configuration twice: which summary stands for
    it is the user's to say. In a --by group, the other groups are still fitted."""


class GrammarError(ExprsearchError, ValueError):
    """A grammar file is malformed: TOML syntax, unknown rule, name or function, bad limits."""


class BindingError(ExprsearchError, ValueError):
    """A grammar and a dataset do not fit together (a grammar factor missing from the data)."""


class SettingsError(ExprsearchError, ValueError):
    """A setting is outside its range (a negative seed or count, an unknown loss or strategy)."""


class SearchError(ExprsearchError, RuntimeError):
    """The search produced nothing usable (every candidate rejected, too few rows)."""


class FewConfigurations(SearchError):
    """The data hold too few distinct configurations, or values of a factor, for any law of the
    grammar to be identified (a group of a table split too finely)."""


class LawError(ExprsearchError, ValueError):
    """A law file cannot be read or does not match the factors it is asked to predict."""


class OutputError(ExprsearchError, OSError):
    """Results cannot be written without overwriting something the user has."""


class Failure(str):
    """Why a --by group or a series cannot be fitted, as its error said it, and that error's kind
    (a group too small for a law, where fewer --by columns would help, or one that repeats a
    summarised configuration), so that the failures travel as one mapping of name → reason."""

    kind: type[Exception]

    def __new__(cls, error: Exception) -> Failure:
        made = super().__new__(cls, str(error))
        made.kind = type(error)
        return made


def whole(name: str, value: object, smallest: int, largest: int | None = None) -> None:
    """Refuse ``value`` unless it is a whole number in [smallest, largest]."""
    if not isinstance(value, int) or isinstance(value, bool) or value < smallest or (
            largest is not None and value > largest):
        span = f"from {smallest} to {largest}" if largest is not None else f"{smallest} or more"
        raise SettingsError(f"{name} must be a whole number {span}, got {value!r}")


def number(name: str, value: object, smallest: float, strict: bool = False) -> None:
    """Refuse ``value`` unless it is a finite number >= ``smallest`` (> with ``strict``)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and (
        value > smallest if strict else value >= smallest)
    if not ok:
        raise SettingsError(f"{name} must be a finite number {'above' if strict else 'of at least'} "
                            f"{smallest:g}, got {value!r}")


def missing_file(kind: str, path: str | Path) -> str:
    """Why the ``kind`` file at ``path`` cannot be read: it does not exist, or it is no regular
    file (a folder, a device such as /dev/null)."""
    path = Path(path)
    if path.exists():
        what = "a folder" if path.is_dir() else "not a regular file"
        return f"{kind} file '{path}' is {what}; give the path of the file itself"
    return f"{kind} file '{path}' does not exist{_nearby(path)}; check the path"


def _nearby(path: Path) -> str:
    """' (did you mean X?)' where the first part of ``path`` that does not exist has a close name
    beside it under which the rest does: a group's folder as run names it (``model_ResNet18``
    where the group prints as ``model=ResNet18``), a misspelt file."""
    parts = path.parts
    try:  # a folder that may not be listed (permissions) leaves the hint out, not the sentence
        missing = next((i for i in range(len(parts)) if not Path(*parts[:i + 1]).exists()), None)
        if missing is None:
            return ""
        parent = Path(*parts[:missing]) if missing else Path(".")
        names = sorted(entry.name for _, entry in zip(range(10_000), parent.iterdir()))
        rest = parts[missing + 1:]
        names = [n for n in names if parent.joinpath(n, *rest).exists()]
    except OSError:
        return ""
    return did_you_mean(parts[missing], names, lambda name: str(parent.joinpath(name, *rest)))


ALIKE = 0.1  # names whose closeness (difflib's ratio) is within this of the closest are offered too


def in_other_case(names: list[str], joined: str = " or ") -> str:
    """' (did you mean 'x'? …)' for ``names`` the user wrote in other letter case."""
    quoted = joined.join(f"'{n}'" for n in names)
    return f" (did you mean {quoted}? names match upper and lower case as written)"


def did_you_mean(name: str, choices: list[str], shown: Callable[[str], str] = str) -> str:
    """' (did you mean X?)' when ``name`` is close to one of ``choices``; ' (did you mean X, Y or
    Z?)' when up to three are about as close (a rate measured as its mean, median and spread);
    ``shown`` writes a choice as the sentence gives it (a name as the whole path it stands for)."""
    cased = [c for c in choices if c != name and c.casefold() == name.casefold()][:3]
    if cased:  # 'EPOCH_S' for epoch_s: names match as written, which no closeness says
        return in_other_case([shown(c) for c in cased])
    originals: dict[str, str] = {}
    for choice in choices:
        originals.setdefault(choice.casefold(), choice)
    folded = name.casefold()
    # a name written short ('h100-sxm5-80gb' for 'NVIDIA H100-SXM5-80GB') lies inside the one meant,
    # which difflib ranks below names of its own length that differ in a character or two
    inside = sorted((c for c in originals if len(folded) >= 3 and folded in c and c != folded), key=len)[:3]
    close = difflib.get_close_matches(folded, list(originals), n=3)
    ratio = [difflib.SequenceMatcher(None, folded, c).ratio() for c in close]
    close = [c for c, r in zip(close, ratio) if r >= ratio[0] - ALIKE]
    named = [f"'{shown(originals[c])}'" for c in [*inside, *(c for c in close if c not in inside)][:3]]
    if not named:
        return ""
    return f" (did you mean {' or '.join(named) if len(named) < 3 else ', '.join(named[:-1]) + ' or ' + named[-1]}?)"
