"""Delimited tables (CSV, TSV, `;` or `|` separated): the cells under a header that names what they hold.

A column named `cpf` or `date_of_birth` says what every value under it is, though no row repeats the word.
Detectors look from the header down (not from every value up), so a text with no such header costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._base import line_bounds

__all__ = ["column_cells"]

_DELIMITERS = (";", "\t", ",", "|")


def column_cells(text: str, position: int) -> Iterator[tuple[int, int]]:
    """The (start, end) of each cell below the header cell at `position`, when its line heads a table.

    A table is a run of consecutive lines with the same number of one delimiter; its first line is the header.
    A line inside a run is not a header (its neighbours above have its shape), so a word repeated in every row
    does not walk the rest of the table again.
    """
    line_start, line_end = line_bounds(text, position, position)
    delimiter = next((d for d in _DELIMITERS if d in text[line_start:line_end]), None)
    if delimiter is None:
        return
    cells = text.count(delimiter, line_start, line_end)
    if line_start > 0 and _delimiters(text, line_start - 1, delimiter) == cells:
        return  # not the top of its table
    column = text.count(delimiter, line_start, position)
    row_start = line_end + 1
    while row_start < len(text):
        row_end = text.find("\n", row_start)
        row_end = len(text) if row_end < 0 else row_end
        if text.count(delimiter, row_start, row_end) != cells:
            return
        yield _cell(text, row_start, row_end, delimiter, column)
        row_start = row_end + 1


def _delimiters(text: str, newline: int, delimiter: str) -> int:
    """How many delimiters the line ending at the newline `newline` holds."""
    start = text.rfind("\n", 0, newline) + 1
    return text.count(delimiter, start, newline)


def _cell(text: str, row_start: int, row_end: int, delimiter: str, column: int) -> tuple[int, int]:
    start = row_start
    for _ in range(column):
        start = text.index(delimiter, start, row_end) + 1
    end = text.find(delimiter, start, row_end)
    return start, row_end if end < 0 else end
