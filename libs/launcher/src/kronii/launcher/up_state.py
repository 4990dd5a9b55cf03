"""What `kronii up` knows about what it runs, and the state file it keeps for `kronii status` and the
commands that look for the mesh (run/up.json in the data directory)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kronii.foundation.settings import ServiceSettings
from kronii.launcher.private_data import ensure_private_dir
from kronii.launcher.processes import Child
from kronii.runtime.spec import ServiceSpec
from kronii.runtime.up_settings import state_path

__all__ = [
    "OUTAGES_KEPT",
    "RunningService",
    "ServerRecord",
    "config_version",
    "connect_host",
    "not_ready_reason",
    "write_state",
]

# How many outages per server the state file keeps for `kronii status`.
OUTAGES_KEPT = 10


def connect_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host  # noqa: S104 - mapping, not binding


@dataclass
class RunningService:
    spec: ServiceSpec
    settings: ServiceSettings
    # Shared by every service of the process in "shared" mode.
    child: Child
    # The KRONII_UP_UNIT its process and everything that process starts carry (kronii.launcher.orphans).
    unit: str = ""
    # When its process was started again, within the restart window (for the restart limit).
    restarts: list[float] = field(default_factory=list)
    # How many times its process was started again since `kronii up` started (for `kronii status`).
    restart_count: int = 0
    last_restart_wall: float | None = None
    # Stopped for settings it cannot start with: the config file's version then (it starts again when
    # the file changes).
    parked: bool = False
    parked_on: tuple[int, int] | None = None

    @property
    def http_url(self) -> str:
        return f"http://{connect_host(self.settings.host)}:{self.settings.http_port}"

    @property
    def grpc_address(self) -> str:
        return (
            f"{connect_host(self.settings.host)}:{self.settings.grpc_port}" if self.settings.grpc_port else ""
        )

    def state(self) -> dict[str, Any]:
        return {
            "http": self.http_url,
            "grpc": self.grpc_address,
            "pid": self.child.pid,
            "restarts": self.restart_count,
            "last_restart": self.last_restart_wall,
        }


@dataclass
class ServerRecord:
    """An embedded server's deaths (for the restart limit) and outages (for `kronii status`)."""

    deaths: list[float] = field(default_factory=list)
    restarts: int = 0
    outages: list[dict[str, Any]] = field(default_factory=list)
    down_since: float | None = None
    down_since_wall: float = 0.0
    reason: str = ""
    deadline: float = 0.0

    def state(self) -> dict[str, Any]:
        return {
            "restarts": self.restarts,
            "outages": self.outages[-OUTAGES_KEPT:],
            "down_since": self.down_since_wall if self.down_since is not None else None,
        }


def write_state(data_dir: Path, state: dict[str, Any]) -> None:
    path = state_path(data_dir)
    ensure_private_dir(path.parent)
    # Written beside and renamed: `kronii status` may read it while a restart rewrites it.
    scratch = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(state, handle, indent=2)
    os.replace(scratch, path)


def not_ready_reason(body: dict[str, Any]) -> str:
    deps = body.get("dependencies", {})
    reasons = [
        f"{name}: {item.get('detail') or 'not ready'}"
        for name, item in deps.items()
        if item.get("required", True) and not item.get("ready")
    ]
    return "; ".join(reasons) or "not ready"


def config_version() -> tuple[int, int] | None:
    """The config file's version (modification time and size), None when there is none."""
    from kronii.foundation.config_file import config_path

    try:
        info = config_path().stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size
