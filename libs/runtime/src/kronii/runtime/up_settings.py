"""The settings of `kronii up` and where it leaves its state file: light (pydantic only), so that commands
that read them (`kronii status`, `kronii config`, rendezvous) do not import the launcher."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from kronii.foundation.settings import KroniiSettings
from pydantic import Field
from pydantic_settings import SettingsConfigDict

__all__ = [
    "MAX_RESTARTS",
    "RESTART_WINDOW_SECS",
    "SETTINGS_EXIT",
    "SHARED_PROCESS_NAME",
    "LauncherSettings",
    "running_pid",
    "state_path",
    "up_running",
]

# A service or embedded server that dies is started again, unless it keeps dying: then kronii stops and
# says so. A service that fails inside a shared process (kronii.runtime.service_group) has the same budget.
MAX_RESTARTS = 3
RESTART_WINDOW_SECS = 60.0
# The name `kronii up` shows for the process that runs the services together, for what no service says.
SHARED_PROCESS_NAME = "services"
# The exit code of a service process that cannot start with its settings: starting it again as it is
# would fail the same way.
SETTINGS_EXIT = 2


class LauncherSettings(KroniiSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_", extra="ignore", frozen=True)

    embedded_nats_port: int = Field(default=14222, ge=0, le=65535)
    embedded_redis_port: int = Field(default=16379, ge=0, le=65535)
    embedded_postgres_port: int = Field(default=15432, ge=0, le=65535)
    ready_timeout_secs: float = Field(default=45.0, gt=0)
    # The agents' tmux sessions outlive kronii unless asked: a coding agent mid-task is the user's work.
    stop_agents: bool = False
    # "shared": every service in one process and one event loop (the desktop's footprint: one interpreter
    # and one copy of FastAPI, gRPC, SQLAlchemy...); "separate": one process per service, isolated from
    # each other's hard crashes (a segfault, os._exit or an OOM kill takes down the shared process).
    service_processes: Literal["shared", "separate"] = "shared"


def state_path(data_dir: Path) -> Path:
    return data_dir / "run" / "up.json"


def running_pid(data_dir: Path) -> int | None:
    """The pid the state file of `kronii up` names (it may have ended since)."""
    try:
        return int(json.loads(state_path(data_dir).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def up_running(data_dir: Path) -> int | None:
    """The pid of the `kronii up` that holds this data directory's lock now, or None when none runs.

    Read from the kernel's table of locks (/proc/locks), without taking the lock: asking must never make
    a `kronii up` starting at that moment believe that another one runs."""
    try:
        info = os.stat(data_dir / "up.lock")
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF" (a blocked waiter's line has "->" first)
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device and fields[4].isdigit():
            return int(fields[4])
    return None
