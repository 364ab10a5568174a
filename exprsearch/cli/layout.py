"""Tables drawn to fit the console: laws wrapped between terms, series' names between their
settings, and tables too wide drawn tighter, so that rich never folds a number or a name
inside a word."""

import re

from rich import box
from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from . import common


def law_column(header: str, laws: list[str], beside: int) -> tuple[Column, list[str]]:
    """A table column for ``laws`` where the console leaves room beside the other columns
    (``beside`` characters), and the laws wrapped to it between terms or before a product's ``*``
    or ``/``: rich folds a piece too long for its column anywhere, which split
    ``model_flops**2.27`` into ``model_flops**2.`` and ``27``, another number."""
    pieces = [piece for law in laws for term in _terms(law) for piece in _LAW_PIECE.findall(term)]
    width = min(max([len(law) for law in laws] + [len(header)]),
                max([len(p) for p in pieces] + [common.out.width - beside, min(len(header), 24)]))
    return Column(header, overflow="fold", width=width), [_wrapped(law, width) for law in laws]


def snug(table: Table) -> RenderableType:
    """``table``, drawn tighter where the console is too narrow for it as it is: without its box
    and edges, one space between columns, then none, then as tables of a few columns each, its
    first column (the configuration) in each. Else rich folds the widest column to make room, a
    header in mid-word (``step_time_s_m`` over ``ean``) or a number (``0.0101`` over ``1``)."""
    if not _wide(table):
        return table
    table.box, table.show_edge, table.pad_edge, table.padding = box.SIMPLE_HEAD, False, False, (0, 1, 0, 0)
    if not _wide(table):
        return table
    table.padding = (0, 0, 0, 0)
    first, parts = table.columns[0], [[]]
    if not _wide(table) or len(table.columns) < 3 or _longest(first) > common.out.width // 4:
        return table  # a long first column (a series' name) would take its room again in every part: it folds
    for column in table.columns[1:]:
        if parts[-1] and _wide(_part(table, [first, *parts[-1], column])):
            parts.append([])
        parts[-1].append(column)
    tables = [_part(table, [first, *columns]) for columns in parts]
    # the title and caption run the console's width: under a part two columns wide, the caption
    # wrapped into a word or two a line
    head = [Text(str(table.title), style="table.title")] if table.title else []
    foot = [Text(str(table.caption), style="table.caption")] if table.caption else []
    return Group(*head, *(item for k, part in enumerate(tables) for item in ([""] if k else []) + [part]), *foot)


def series_cell(name: str, room: int | None = None) -> str:
    """A series' name (``platform=GCE n1-standard-32,model=ResNet-152``) for a table's cell, on
    lines broken after its commas where longer than ``room`` (a third of the console): folded
    where the column ends, a name was cut inside a value (``Re`` over ``sNet-152``)."""
    room = room or max(common.out.width // 3, 12)
    if cell_len(name) <= room:
        return name
    lines = [""]
    for piece in name.split(","):
        if lines[-1] and cell_len(lines[-1]) + 1 + cell_len(piece) > room:
            lines[-1] += ","
            lines.append(piece)
        else:
            lines[-1] += ("," if lines[-1] else "") + piece
    return "\n".join(lines)


def _longest(column: Column) -> int:
    return max(cell_len(str(cell)) for cell in (column.header, *column.cells))


def _wide(table: Table) -> bool:
    return Measurement.get(common.out, common.out.options.update(max_width=10**6), table).maximum > common.out.width


def _part(table: Table, columns: list[Column]) -> Table:
    """A table of some of ``table``'s columns, drawn as it is."""
    part = Table(box=table.box, show_edge=table.show_edge, pad_edge=table.pad_edge, padding=(0, 1, 0, 0),
                 title_justify=table.title_justify, caption_justify=table.caption_justify)
    for column in columns:
        part.add_column(column.header, justify=column.justify, overflow=column.overflow, no_wrap=column.no_wrap,
                        width=column.width, min_width=column.min_width)
    for row in zip(*(column.cells for column in columns)):
        part.add_row(*row)
    return part


_LAW_PIECE = re.compile(r"[*/]?(?:[^*/]|\*\*)+")  # a factor of a product: split before * or /, never in **


def _terms(law: str) -> list[str]:
    """The words of ``law`` with each term's sign joined to it: ``+ 0.5*p``."""
    words = law.split()
    return [w if i == 0 or words[i - 1] not in "+-" else f"{words[i - 1]} {w}"
            for i, w in enumerate(words) if w not in "+-" or i == len(words) - 1]


def _wrapped(law: str, width: int) -> str:
    """``law`` in lines of at most ``width``, broken before a term (its sign beginning the next
    line), or before a product's ``*`` or ``/`` where a term is too long for a line of its own."""
    lines, line = [], ""
    for term in _terms(law):
        for k, piece in enumerate([term] if len(term) <= width else _LAW_PIECE.findall(term)):
            joined = f"{line} {piece}" if line and k == 0 else line + piece
            if line and len(joined) > width:
                lines.append(line)
                joined = piece
            line = joined
    return "\n".join(lines + [line])
