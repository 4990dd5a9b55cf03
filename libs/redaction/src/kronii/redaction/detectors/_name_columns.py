"""Columns of people's names in tables: CSV and TSV files, `psql` and MySQL output, Markdown tables.

A header row whose cell is a person's label (`name`, `full_name`, `customer`, `Nombre`, `Имя`, `姓名`...) makes the
cells below it in that column candidates; person_names.py decides which read as names. The header is found from a
few literal words (`name`, `nom`, `имя`, `姓名`...) that every such label holds or is, searched with `str.find`,
so a text without a table costs a handful of C-level scans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

__all__ = ["name_column_cells"]

# Words one of which a table's person column header holds: `name` (first_name, customer_name...), `nom` (nombre,
# nome), ... Each costs a `str.find` over the text (about 1 ms a MB), so the list is short, and the words of other
# scripts are looked for only in text that is not ASCII.
_ASCII_HEADER_WORDS = ("name", "nom", "naam", "navn", "namn", "nimi", "customer", "patient")
_OTHER_HEADER_WORDS = ("imię", "név", "jméno", "имя", "фио", "όνομα", "姓名", "名字", "氏名", "名前", "이름", "성명", "tên", "ชื่อ", "اسم", "שם")  # fmt: skip
_DELIMITERS = ("\t", "|", ";", ",")
# A column headed only `name` (or `nom`, `Имя`...) holds people's names when another column is about a person;
# `name,version,license` lists packages.
_PERSON_COLUMNS = frozenset(
    [
        "email",
        "e-mail",
        "mail",
        "phone",
        "tel",
        "telephone",
        "mobile",
        "address",
        "city",
        "country",
        "birth",
        "birthday",
        "dob",
        "date_of_birth",
        "age",
        "gender",
        "sex",
        "ssn",
        "employee",
        "department",
        "title",
        "role",
        "salary",
        "signup_date",
        "ciudad",
        "ville",
        "stadt",
        "ort",
        "città",
        "cidade",
        "stad",
        "город",
        "correo",
        "courriel",
        "telefon",
        "teléfono",
        "téléphone",
        "telefone",
        "telefono",
        "adresse",
        "dirección",
        "indirizzo",
        "endereço",
        "adres",
        "адрес",
        "телефон",
        "почта",
        "电话",
        "邮箱",
        "地址",
        "電話",
        "住所",
        "전화",
        "주소",
    ]
)
_MAX_ROWS = 100_000

# (text, start, end, whether the column's label is a generic one) -> whether text[start:end] is a name.
IsName = Callable[[str, int, int, bool], bool]


def name_column_cells(
    text: str, lower: str, labels: frozenset[str], generic: frozenset[str], is_name: IsName
) -> Iterator[tuple[int, int]]:
    """(start, end) of each cell under a person's column header that `is_name` accepts."""
    seen_headers: set[int] = set()
    words = _ASCII_HEADER_WORDS if lower.isascii() else _ASCII_HEADER_WORDS + _OTHER_HEADER_WORDS
    for word in words:
        position = lower.find(word)
        while position >= 0:
            line_start = lower.rfind("\n", 0, position) + 1
            if _in_a_cell(lower, position, position + len(word)) and line_start not in seen_headers:
                seen_headers.add(line_start)
                yield from _column(text, lower, line_start, labels, generic, is_name)
            position = lower.find(word, position + len(word))


_CELL_EDGE = "\t|;, \"'`*\r\n"


def _in_a_cell(lower: str, start: int, end: int) -> bool:
    """Whether the word at lower[start:end] can be (part of) a header cell: `name,`, `| nombre |`, `first_name;`,
    not `self.name =`. Decided on the characters around the word it is part of, before any line is split."""
    while start and (lower[start - 1].isalpha() or lower[start - 1] == "_"):
        start -= 1
    while end < len(lower) and (lower[end].isalpha() or lower[end] == "_"):
        end += 1
    before = lower[start - 1] if start else "\n"
    after = lower[end] if end < len(lower) else "\n"
    return before in _CELL_EDGE and after in _CELL_EDGE


def _header(
    lower: str, line_start: int, labels: frozenset[str], generic: frozenset[str]
) -> tuple[str, list[tuple[int, bool]], int] | None:
    """The delimiter, the person columns (index, whether its label is generic) and the number of cells of a
    header line; None when the line is no such header."""
    line_end = lower.find("\n", line_start)
    line = lower[line_start : len(lower) if line_end < 0 else line_end]
    for delimiter in _DELIMITERS:
        if delimiter not in line:
            continue
        cells = [cell.strip(" \"'`*") for cell in line.strip(" |").split(delimiter)]
        if len(cells) < 2 or any(len(cell) > 40 for cell in cells):
            continue
        about_a_person = any(cell in _PERSON_COLUMNS for cell in cells)
        columns = [
            (index, cell in generic)
            for index, cell in enumerate(cells)
            if cell in labels and (about_a_person or cell not in generic)
        ]
        if columns:
            return delimiter, columns, len(cells)
    return None


def _column(
    text: str, lower: str, line_start: int, labels: frozenset[str], generic: frozenset[str], is_name: IsName
) -> Iterator[tuple[int, int]]:
    header = _header(lower, line_start, labels, generic)
    header_end = text.find("\n", line_start)
    if header is None or header_end < 0:
        return
    delimiter, columns, width = header
    for position, cells in _rows(text, header_end + 1, delimiter, width):
        for index, is_generic in columns:
            start, end = cells[index]
            if end > start and is_name(text, position + start, position + end, is_generic):
                yield position + start, position + end


def _rows(
    text: str, position: int, delimiter: str, width: int
) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """(where each row starts, its cells) for the rows under a header, up to the first row of another width."""
    for _ in range(_MAX_ROWS):
        if position >= len(text):
            return
        row_end = text.find("\n", position)
        row_end = len(text) if row_end < 0 else row_end
        row = text[position:row_end]
        if not set(row.strip()) <= set("-+|: "):  # the rule under a psql or Markdown header is skipped
            cells = _cells(row, delimiter)
            if len(cells) != width:
                return
            yield position, cells
        position = row_end + 1


def _cells(row: str, delimiter: str) -> list[tuple[int, int]]:
    """(start, end) of each cell of `row`, spaces and quotes around its value left out."""
    inner_start, inner_end = 0, len(row)
    if delimiter == "|":
        stripped = row.strip()
        if stripped.startswith("|"):
            inner_start = row.index("|") + 1
        if stripped.endswith("|"):
            inner_end = row.rindex("|")
    spans, cell_start = [], inner_start
    while True:
        cut = row.find(delimiter, cell_start, inner_end)
        cell_end = inner_end if cut < 0 else cut
        start, end = cell_start, cell_end
        while start < end and row[start] in " \t\"'":
            start += 1
        while end > start and row[end - 1] in " \t\"'\r":
            end -= 1
        spans.append((start, end))
        if cut < 0:
            return spans
        cell_start = cut + 1
