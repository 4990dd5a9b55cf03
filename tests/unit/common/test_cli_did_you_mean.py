"""A mistyped command is answered with the closest one, at the top level and in kronii's own groups
(`kronii stauts` -> did you mean 'status'?), exit 2; a word close to nothing gets no guess. The real
`kronii` command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

KRONII = str(Path(sys.executable).with_name("kronii"))


@pytest.mark.parametrize(
    ("typed", "meant"),
    [(["stauts"], "status"), (["agnets", "list"], "agents"), (["config", "shwo"], "show"),
     (["service", "instal"], "install")],
)  # fmt: skip
def test_a_mistyped_command_is_answered_with_the_closest_one(typed: list[str], meant: str) -> None:
    done = subprocess.run([KRONII, *typed], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert (
        f"Error: No such command '{typed[-1] if typed[0] in ('config', 'service') else typed[0]}'."
        in done.stderr
    )
    assert f"Did you mean '{meant}'?" in done.stderr


def test_a_word_close_to_no_command_gets_no_guess() -> None:
    done = subprocess.run([KRONII, "zzzzqq"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "No such command 'zzzzqq'." in done.stderr and "Did you mean" not in done.stderr
