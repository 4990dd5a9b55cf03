"""The pure /proc parsing behind Focus.app_start_time_ms."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest
from kronii.sensor.adapters.x11 import parse_boot_time, parse_start_ticks, start_time_ms

# Field 22 is 987654; the command name holds spaces and a ')' to trip naive splitting.
STAT_LINE = (
    "4242 (evil) name (x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 10 5 0 0 20 0 3 0 987654 "
    "123456789 2048 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 2 0 0 0 0 0\n"
)
PROC_STAT = "cpu  1 2 3 4\ncpu0 1 2 3 4\nintr 5\nctxt 6\nbtime 1700000000\nprocesses 7\n"


def test_start_ticks_are_field_22_counted_after_the_command_name() -> None:
    assert parse_start_ticks(STAT_LINE) == 987654


def test_start_ticks_reject_a_truncated_line() -> None:
    with pytest.raises(ValueError, match="fields"):
        parse_start_ticks("1 (sh) S 0 1 1")
    with pytest.raises(ValueError, match=r"\)"):
        parse_start_ticks("garbage")


def test_boot_time_comes_from_the_btime_line() -> None:
    assert parse_boot_time(PROC_STAT) == 1700000000
    with pytest.raises(ValueError, match="btime"):
        parse_boot_time("cpu 1 2 3\n")


def test_start_time_ms_adds_ticks_as_milliseconds_to_boot_time() -> None:
    assert start_time_ms(987654, 1700000000, 100) == 1700000000_000 + 9876540
    assert start_time_ms(250, 1700000000, 1000) == 1700000000_250
    with pytest.raises(ValueError, match="positive"):
        start_time_ms(1, 1, 0)


def test_start_time_of_this_process_matches_psutil() -> None:
    pid_stat = Path(f"/proc/{os.getpid()}/stat").read_text()
    boot = parse_boot_time(Path("/proc/stat").read_text())
    ours = start_time_ms(parse_start_ticks(pid_stat), boot, os.sysconf("SC_CLK_TCK"))
    # psutil reads btime on its own, which the kernel may round a second differently.
    assert abs(ours - psutil.Process().create_time() * 1000) <= 1000
