"""The service processes `kronii up` starts: which services share a process (one for all, or one
each), the environment every child gets (the servers' URLs, the mesh token, the schema-ready file),
and the child itself, tagged with its unit so that what it leaves when it dies is found."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from kronii.foundation.settings import load_settings
from kronii.launcher.embedded_server import InfraServer
from kronii.launcher.orphans import UNIT_ENV
from kronii.launcher.private_data import mesh_token
from kronii.launcher.processes import Child, LineSink, split_sink
from kronii.launcher.up_state import RunningService
from kronii.runtime.spec import ServiceSpec
from kronii.runtime.up_settings import SHARED_PROCESS_NAME

__all__ = ["child_env", "process_units", "schema_ready_file", "start_unit"]


def schema_ready_file(data_dir: Path) -> Path:
    return data_dir / "run" / "schema.ready"


def child_env(servers: Mapping[str, InfraServer], data_dir: Path, log_format: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env["KRONII_NATS_URL"] = servers["nats"].url
    env["KRONII_REDIS_URL"] = servers["redis"].url
    env["KRONII_DATABASE_URL"] = servers["postgres"].url
    env["KRONII_DATA_DIR"] = str(data_dir)
    # The mesh token lets the services reach each other where the kernel cannot vouch for the caller.
    env.setdefault("KRONII_API_TOKEN", mesh_token(data_dir))
    if log_format and "KRONII_LOG_FORMAT" not in os.environ:
        env["KRONII_LOG_FORMAT"] = log_format
    env["PYTHONUNBUFFERED"] = "1"
    # Services start while the migrations run; each waits for this file before touching its tables.
    env["KRONII_SCHEMA_READY_FILE"] = str(schema_ready_file(data_dir))
    # `kronii up` prints each service's ready line itself.
    env["KRONII_LAUNCHED_BY_UP"] = "1"
    return env


def process_units(specs: list[ServiceSpec], service_processes: str) -> list[list[ServiceSpec]]:
    """The services each child process runs."""
    if service_processes == "shared":
        return [specs]
    return [[spec] for spec in specs]


def start_unit(
    specs: list[ServiceSpec],
    env: dict[str, str],
    *,
    unit: str,
    service_processes: str,
    sink: LineSink,
) -> list[RunningService]:
    """Start one child process running `specs`; `unit` names it for the processes it starts."""
    settings = [load_settings(spec.settings_cls) for spec in specs]
    # Every process this child starts inherits its unit: what it leaves when it dies is found by it.
    env = {**env, UNIT_ENV: unit}
    if service_processes == "separate":
        [spec] = specs
        child = Child(spec.name, [sys.executable, "-m", spec.module], sink=sink, env=env)
    else:
        names = [spec.name for spec in specs]
        argv = [sys.executable, "-m", "kronii.runtime.service_group", *names]
        child = Child(SHARED_PROCESS_NAME, argv, sink=split_sink(sink, names), env=env)
    return [RunningService(spec, item, child, unit) for spec, item in zip(specs, settings, strict=True)]
