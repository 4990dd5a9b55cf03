"""Where services find each other's shared state besides NATS subjects: the sensor's snapshot in
Redis and the capture service's local socket. Spelled once, here."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CAPTURE_SOCKET_NAME", "SENSOR_SNAPSHOT_KEY", "capture_socket_path"]

# The sensor's latest kronii.activity.v1.Snapshot (serialized protobuf).
SENSOR_SNAPSHOT_KEY = "kronii:sensor:snapshot"

CAPTURE_SOCKET_NAME = "capture.sock"


def capture_socket_path(
    data_dir: Path, socket_dir: Path | None = None, *, runtime_dir: str | None = None
) -> Path:
    """The capture service's Unix socket: in ``socket_dir`` when configured, else
    ``$XDG_RUNTIME_DIR/kronii/capture.sock``, else ``<data_dir>/run/capture.sock``.
    ``runtime_dir`` overrides ``XDG_RUNTIME_DIR``."""
    if socket_dir is not None:
        return Path(socket_dir) / CAPTURE_SOCKET_NAME
    base = runtime_dir if runtime_dir is not None else os.environ.get("XDG_RUNTIME_DIR", "")
    directory = Path(base) / "kronii" if base else Path(data_dir) / "run"
    return directory / CAPTURE_SOCKET_NAME
