"""An app a vision plan opens is the person's: it is started with KRONII_DETACHED=1, so that `kronii up`,
which stops what a crashed service process leaves running, leaves it open. A real process."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
from kronii.launcher.orphans import DETACHED_ENV
from kronii.vision.adapters.launcher import AppLauncher


def _cmdline(process: psutil.Process) -> list[str]:
    """A child's command line; [] for a zombie an earlier test's desktop left to this process to reap."""
    try:
        return list(process.cmdline())
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return []


def test_an_opened_app_carries_the_mark_of_a_process_meant_to_outlive_kronii() -> None:
    AppLauncher({"Sleeper": "sleep 123.25"}).open("sleeper")
    deadline = time.monotonic() + 5
    found: list[psutil.Process] = []
    while not found and time.monotonic() < deadline:
        found = [c for c in psutil.Process().children() if _cmdline(c) == ["sleep", "123.25"]]
        time.sleep(0.02)
    [app] = found
    try:
        environment = Path(f"/proc/{app.pid}/environ").read_bytes().split(b"\0")
        assert f"{DETACHED_ENV}=1".encode() in environment
        assert os.getsid(app.pid) == app.pid, "in a session of its own"
    finally:
        os.kill(app.pid, signal.SIGKILL)
        app.wait(5)
