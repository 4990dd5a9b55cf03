"""Where services and commands find each other besides NATS subjects: the sensor's snapshot in
Redis, the capture service's local socket, and a service's HTTP address for a command on this host
(service_http_url). Spelled once, here."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kronii.foundation.settings import ServiceSettings

__all__ = [
    "BROKER_SOCKET_NAME",
    "BROKER_STOP_SOCKET_NAME",
    "CAPTURE_SOCKET_NAME",
    "SENSOR_SNAPSHOT_KEY",
    "SOURCE_ENV_URL",
    "SOURCE_FLAG",
    "SOURCE_KRONII_UP",
    "SOURCE_SETTINGS",
    "ServiceAddress",
    "broker_socket_path",
    "broker_stop_socket_path",
    "capture_socket_path",
    "connect_host",
    "local_socket_path",
    "service_http_url",
    "service_url_variable",
]

# The sensor's latest kronii.activity.v1.Snapshot (serialized protobuf).
SENSOR_SNAPSHOT_KEY = "kronii:sensor:snapshot"

CAPTURE_SOCKET_NAME = "capture.sock"
BROKER_SOCKET_NAME = "broker.sock"
# The broker's stop door, beside its socket: one line in ("STOP"), one out; kronii.launcher.cli.quick_stop
# finds it with the standard library alone and must keep to the same places as local_socket_path.
BROKER_STOP_SOCKET_NAME = "broker-stop.sock"


def local_socket_path(
    name: str, data_dir: Path, socket_dir: Path | None = None, *, runtime_dir: str | None = None
) -> Path:
    """A service's Unix socket ``name``: in ``socket_dir`` when configured, else
    ``$XDG_RUNTIME_DIR/kronii/<name>``, else ``<data_dir>/run/<name>``. ``runtime_dir`` overrides
    ``XDG_RUNTIME_DIR``."""
    if socket_dir is not None:
        return Path(socket_dir) / name
    base = runtime_dir if runtime_dir is not None else os.environ.get("XDG_RUNTIME_DIR", "")
    directory = Path(base) / "kronii" if base else Path(data_dir) / "run"
    return directory / name


def capture_socket_path(
    data_dir: Path, socket_dir: Path | None = None, *, runtime_dir: str | None = None
) -> Path:
    """The capture service's Unix socket (see local_socket_path)."""
    return local_socket_path(CAPTURE_SOCKET_NAME, data_dir, socket_dir, runtime_dir=runtime_dir)


def broker_socket_path(
    data_dir: Path, socket_dir: Path | None = None, *, runtime_dir: str | None = None
) -> Path:
    """The broker's Unix socket, the desktop user's door for grants (see local_socket_path)."""
    return local_socket_path(BROKER_SOCKET_NAME, data_dir, socket_dir, runtime_dir=runtime_dir)


def broker_stop_socket_path(
    data_dir: Path, socket_dir: Path | None = None, *, runtime_dir: str | None = None
) -> Path:
    """The broker's stop socket, beside its local socket: STOP_NOW from a terminal without HTTP, the
    event loop or a heavy client (see local_socket_path)."""
    return local_socket_path(BROKER_STOP_SOCKET_NAME, data_dir, socket_dir, runtime_dir=runtime_dir)


# ---- a service's HTTP address, for commands on this host ------------------------------------------

# Where a ServiceAddress came from, in the order service_http_url tries them.
SOURCE_FLAG = "flag"
SOURCE_ENV_URL = "env url"
SOURCE_KRONII_UP = "kronii up"
SOURCE_SETTINGS = "settings"

# A larger state file is not `kronii up`'s.
_STATE_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class ServiceAddress:
    """A service's HTTP base URL (no trailing slash) and where it came from: "flag", "env url",
    "kronii up" or "settings". ``grpc`` is the gRPC address the running `kronii up` recorded for
    the service ("" when the URL did not come from it)."""

    url: str
    source: str
    grpc: str = ""


def connect_host(host: str) -> str:
    """The host a client dials for a server bound to ``host``: the wildcard addresses mean this
    machine's loopback; an IPv6 literal gets its brackets."""
    if host in ("", "0.0.0.0", "::", "[::]"):  # noqa: S104 - mapping, not binding
        return "127.0.0.1"
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def service_url_variable(name: str, settings_cls: type[ServiceSettings] | None = None) -> str:
    """KRONII_<SVC>_URL: the service's settings prefix (KRONII_SUPERVISOR_) plus URL."""
    prefix = str(settings_cls.model_config.get("env_prefix") or "") if settings_cls is not None else ""
    if not prefix:
        prefix = "KRONII_" + name.upper().replace("-", "_") + "_"
    return f"{prefix}URL"


def service_http_url(
    name: str,
    settings_cls: type[ServiceSettings],
    *,
    flag: str | None = None,
    data_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServiceAddress:
    """Where a command on this host finds service ``name``'s HTTP API, in this order:

    1. ``flag`` (a --url the caller gave);
    2. the KRONII_<SVC>_URL variable;
    3. the running `kronii up`'s state file in the data directory, trusted only when this user owns
       it, no group or other may write it, and the launcher pid it records is alive;
    4. the settings: KRONII_<SVC>_HOST (0.0.0.0 and :: mean 127.0.0.1) and KRONII_<SVC>_HTTP_PORT.

    ``data_dir`` overrides the settings' data directory; ``environ`` is for tests. Raises
    SettingsError (a sentence) when the service's settings are invalid and are needed.
    """
    if flag:
        return ServiceAddress(flag.rstrip("/"), SOURCE_FLAG)
    env = os.environ if environ is None else environ
    configured = env.get(service_url_variable(name, settings_cls), "").strip()
    if configured:
        return ServiceAddress(configured.rstrip("/"), SOURCE_ENV_URL)
    from kronii.foundation.settings import load_settings

    settings = load_settings(settings_cls)
    running = _kronii_up_service(data_dir if data_dir is not None else settings.data_dir, name)
    if running is not None:
        return running
    return ServiceAddress(f"http://{connect_host(settings.host)}:{settings.http_port}", SOURCE_SETTINGS)


def _kronii_up_service(data_dir: Path, name: str) -> ServiceAddress | None:
    """The address the running `kronii up` recorded for ``name``, or None when there is no state
    file, it is not this user's own private file, its launcher is gone, or it lacks ``name``."""
    from kronii.runtime.up_settings import state_path

    state = _read_own_state(state_path(data_dir))
    if state is None or not _launcher_alive(state.get("pid")):
        return None
    services = state.get("services")
    entry = services.get(name) if isinstance(services, dict) else None
    if not isinstance(entry, dict):
        return None
    url, grpc = entry.get("http"), entry.get("grpc")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    return ServiceAddress(url.rstrip("/"), SOURCE_KRONII_UP, grpc if isinstance(grpc, str) else "")


def _read_own_state(path: Path) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.getuid()
            or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        ):
            return None
        try:
            raw = handle.read(_STATE_MAX_BYTES + 1)
            data = json.loads(raw) if len(raw) <= _STATE_MAX_BYTES else None
        except (OSError, ValueError):
            return None
    return data if isinstance(data, dict) else None


def _launcher_alive(pid: object) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # alive, but another user's: not the launcher that wrote our file
    return True
