"""The commands' tables: plain aligned columns for a pipe, whole cells, a ragged last column."""

from __future__ import annotations

from kronii.common.cli.tables import plain_table


def test_a_piped_table_aligns_every_column_but_the_last_and_cuts_nothing() -> None:
    text = plain_table(("NAME", "ID", "TITLE"), [("a", "rt-0123456789ab", "a long title"), ("bb", "x", "t")])
    assert text.splitlines() == [
        "NAME  ID               TITLE",
        "a     rt-0123456789ab  a long title",
        "bb    x                t",
    ]
