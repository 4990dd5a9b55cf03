"""What kronii up owns after a service process dies: the processes it started in sessions of their own are
re-parented to kronii up (a child subreaper) and found by the unit they inherited; a tmux server and a
process started with KRONII_DETACHED=1 are meant to outlive kronii and are left alone; what is stopped is
reaped, no zombie stays. Real processes, this test's process as the subreaper."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.launcher.orphans import (
    DETACHED_ENV,
    UNIT_ENV,
    children,
    orphans_of,
    reap_adopted,
    set_subreaper,
    stop_orphans,
)

# A service process: starts two helpers in sessions of their own, prints their pids, and dies at once.
_SERVICE = f"""
import json, os, subprocess, sys
helper = subprocess.Popen(["sleep", "300"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
app = subprocess.Popen(["sleep", "301"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={{**os.environ, "{DETACHED_ENV}": "1"}})
print(json.dumps([helper.pid, app.pid]), flush=True)
"""


@pytest.fixture
def subreaper() -> Iterator[None]:
    assert set_subreaper(True)
    try:
        yield
    finally:
        reap_adopted(())
        set_subreaper(False)


def _state(pid: int) -> str:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "gone"
    return text[text.rindex(")") + 2 :].split()[0]


def test_a_dead_service_processes_helpers_are_stopped_and_a_detached_app_is_left(subreaper: None) -> None:
    env = {**os.environ, UNIT_ENV: "test.1"}
    service = subprocess.run(
        [sys.executable, "-c", _SERVICE], env=env, capture_output=True, text=True, check=True
    )
    helper, app = json.loads(service.stdout)
    try:
        deadline = time.monotonic() + 5
        while not {helper, app} <= set(children(os.getpid())) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert {helper, app} <= set(children(os.getpid())), "re-parented to the subreaper"
        assert orphans_of({"test.2"}, ()) == [], "another unit's: not this one's"
        left = orphans_of({"test.1"}, ())
        assert [orphan.pid for orphan in left] == [helper]
        assert str(left[0]) == f"sleep (pid {helper})"
        stop_orphans(left, ())
        assert _state(helper) == "gone", "stopped and reaped: no zombie"
        assert _state(app) not in ("gone", "Z"), "the detached app runs on"
    finally:
        for pid in (helper, app):
            if _state(pid) != "gone":
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while _state(app) not in ("gone",) and time.monotonic() < deadline:
            reap_adopted(())
            time.sleep(0.02)
    assert _state(app) == "gone", "an adopted process that ended is reaped"
