"""``exprsearch grammar list|show|check``."""

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from .. import candidates as _candidates
from .. import grammar as _grammar
from .common import _guard, _split, _target_needed, grammar_app, out
from .layout import snug


@grammar_app.command("list")
def grammar_list() -> None:
    """List the built-in grammars."""
    table = Table("name", "about")
    for name in _grammar.builtin_names():
        g = _grammar.load(name)
        text = " ".join(g.description.split())
        first = text.split(": ", 1)[0] if ": " in text[:120] else text.split(". ", 1)[0]
        table.add_row(name, first.rstrip(".") + ("; grammar show " + name + " for the rest" if first != text else ""))
    out.print(snug(table))


@grammar_app.command("show")
def grammar_show(name: Annotated[str, typer.Argument(help="Built-in grammar name or file.")]) -> None:
    """Print a grammar file, byte for byte (to save and edit: grammar show NAME > mine.toml)."""
    sys.stdout.write(_guard(lambda: _grammar.source_text(name)))


@grammar_app.command("check")
def grammar_check(
    file: Annotated[str, typer.Argument(help="Grammar file (or built-in name) to validate.")],
    data: Annotated[Path | None, typer.Option(help="Count candidates for this dataset's factors.")] = None,
    target: Annotated[str | None, typer.Option("--target", "-t", help="Target column of --data.")] = None,
    intrinsic: Annotated[str | None, typer.Option(help="Comma-separated intrinsic factors.")] = None,
) -> None:
    """Validate a grammar; print its factors, rules and how many candidates it expands to."""
    from ..data import load_table

    def work() -> tuple[_grammar.Grammar, _grammar.Grammar, _candidates.CandidateSet, tuple[str, ...]]:
        g = _grammar.load(file)
        if data is not None:
            if target is None:
                raise _target_needed(data, "--data needs --target COLUMN")
            columns = load_table(data, target).factors
        else:
            columns = tuple(f.name for f in g.factors) or ("x1", "x2")
            if g.factors and _grammar.uses_free_factors(g):
                columns += ("x1",)
        bound = _grammar.bind(g, columns, intrinsic=tuple(_split(intrinsic) or ()))
        return g, bound, _candidates.generate(bound), columns

    g, bound, found, columns = _guard(work)
    out.print(f"{g.source} is valid.", highlight=False)
    for f in g.factors:
        out.print(f"  factor {f.name}: {f.role}{' — ' + f.about if f.about else ''}", highlight=False)
    for c in g.constants:
        out.print(f"  constant {c.name} in [{c.min:g}, {c.max:g}]{' — ' + c.about if c.about else ''}",
                  highlight=False)
    for rule, alts in g.rules.items():
        out.print(f"  <{rule}> ::= " + " | ".join(a.text for a in alts), highlight=False, markup=False)
    source = f"the factors of {data}" if data else f"factors {', '.join(columns)}"
    size = _candidates.space_size(bound)
    if size > len(found):
        out.print(f"its space holds {size:,} laws for {source}, more than max_candidates = "
                  f"{bound.limits.max_candidates:,}: `run` lets the data choose which to fit (docs/method.md), or "
                  "with --strategy exhaustive fits the simplest and reports the rest as not searched", highlight=False)
    else:
        out.print(f"expands to {len(found)} unique candidates for {source} ({found.generated} expansions)",
                  highlight=False)


