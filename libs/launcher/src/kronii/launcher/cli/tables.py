"""Tables the commands print: rich for a person at a terminal, plain aligned columns for a pipe (ids
and addresses stay whole and `cut`/`awk` read them; the last column is left ragged)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence

import click

__all__ = ["natural_width", "plain_table", "print_table", "to_a_person"]


def plain_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    table = [tuple(header), *(tuple(row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    lines = (
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]]) for row in table
    )
    return "\n".join(line.rstrip() for line in lines)


def to_a_person() -> bool:
    return sys.stdout.isatty()


def natural_width(header: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    """The width of the table with every cell whole, two spaces between columns."""
    table = [tuple(header), *(tuple(row) for row in rows)]
    return sum(max(len(row[i]) for row in table) for i in range(len(header))) + 2 * (len(header) - 1)


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    # A table wider than the terminal is printed plain and lets the terminal wrap its lines: rich would
    # cut ids to "oWT8BCm3nZe1…", which a person can no longer copy into the next command.
    if not to_a_person() or natural_width(header, rows) > shutil.get_terminal_size().columns:
        click.echo(plain_table(header, rows))
        return
    from rich.console import Console  # only for a person: rich takes longer to import than the command
    from rich.table import Table

    table = Table(*header, box=None, header_style="bold", pad_edge=False)
    for row in rows:
        table.add_row(*row)
    Console().print(table)
