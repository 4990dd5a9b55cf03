"""The commands' tables: plain aligned columns for a pipe, whole cells, a ragged last column."""

from __future__ import annotations

import pytest
from kronii.launcher.cli.tables import plain_table


def test_a_piped_table_aligns_every_column_but_the_last_and_cuts_nothing() -> None:
    text = plain_table(("NAME", "ID", "TITLE"), [("a", "rt-0123456789ab", "a long title"), ("bb", "x", "t")])
    assert text.splitlines() == [
        "NAME  ID               TITLE",
        "a     rt-0123456789ab  a long title",
        "bb    x                t",
    ]


def test_a_table_wider_than_the_terminal_is_printed_whole_not_cut_with_an_ellipsis(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from kronii.launcher.cli import tables

    monkeypatch.setattr(tables, "to_a_person", lambda: True)
    monkeypatch.setattr("shutil.get_terminal_size", lambda: os.terminal_size((40, 24)))
    row = ("oWT8BCm3nZe1qKKrRBszE-BW", "2026-12-06 00:35:00", "ZkUy01H4VR3S5Ugt")
    tables.print_table(("ID", "CREATED", "JOB"), [row])
    shown = capsys.readouterr().out
    assert all(cell in shown for cell in row) and "…" not in shown
