"""rendezvous.service_http_url: --url, then KRONII_<SVC>_URL, then the running `kronii up`'s state
file (only this user's own private file with a live launcher), then the settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kronii.foundation.settings import load_settings
from kronii.launcher import status
from kronii.launcher.up import LauncherSettings, state_path
from kronii.runtime.rendezvous import ServiceAddress, connect_host, service_http_url, service_url_variable
from kronii.supervisor.settings import SupervisorSettings

UP_URL = "http://127.0.0.1:18105"


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No KRONII_ variable from the caller's shell; a private data directory."""
    for name in list(os.environ):
        if name.startswith("KRONII_"):
            monkeypatch.delenv(name)
    folder = tmp_path / "data"
    monkeypatch.setenv("KRONII_DATA_DIR", str(folder))
    return folder


def write_state(data_dir: Path, *, pid: int | None = None, mode: int = 0o600, **services: Any) -> Path:
    path = state_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = services or {"supervisor": {"http": UP_URL, "grpc": "127.0.0.1:17105", "pid": 1}}
    path.write_text(json.dumps({"pid": os.getpid() if pid is None else pid, "services": entries}))
    path.chmod(mode)
    return path


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def supervisor_address() -> ServiceAddress:
    return service_http_url("supervisor", SupervisorSettings)


def test_without_anything_the_settings_defaults_are_used(data_dir: Path) -> None:
    assert supervisor_address() == ServiceAddress("http://127.0.0.1:8105", "settings")


def test_http_port_and_host_settings_are_followed(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_SUPERVISOR_HTTP_PORT", "9123")
    assert supervisor_address() == ServiceAddress("http://127.0.0.1:9123", "settings")
    monkeypatch.setenv("KRONII_SUPERVISOR_HOST", "10.1.2.3")
    assert supervisor_address().url == "http://10.1.2.3:9123"


@pytest.mark.parametrize("bound", ["0.0.0.0", "::", ""])  # noqa: S104 - settings values, not binds
def test_wildcard_host_means_loopback(data_dir: Path, monkeypatch: pytest.MonkeyPatch, bound: str) -> None:
    monkeypatch.setenv("KRONII_SUPERVISOR_HOST", bound)
    assert supervisor_address().url == "http://127.0.0.1:8105"


def test_ipv6_host_gets_brackets() -> None:
    assert connect_host("::1") == "[::1]"
    assert connect_host("[::1]") == "[::1]"
    assert connect_host("localhost") == "localhost"


def test_a_running_kronii_up_wins_over_the_settings(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_SUPERVISOR_HTTP_PORT", "9123")
    write_state(data_dir)
    assert supervisor_address() == ServiceAddress(UP_URL, "kronii up", "127.0.0.1:17105")


def test_the_url_variable_wins_over_kronii_up_and_settings(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_state(data_dir)
    monkeypatch.setenv("KRONII_SUPERVISOR_HTTP_PORT", "9123")
    monkeypatch.setenv("KRONII_SUPERVISOR_URL", "http://sup.example:7000/")
    assert supervisor_address() == ServiceAddress("http://sup.example:7000", "env url")
    assert service_url_variable("supervisor", SupervisorSettings) == "KRONII_SUPERVISOR_URL"


def test_the_flag_wins_over_everything(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_state(data_dir)
    monkeypatch.setenv("KRONII_SUPERVISOR_URL", "http://sup.example:7000")
    found = service_http_url("supervisor", SupervisorSettings, flag="http://127.0.0.1:4444/")
    assert found == ServiceAddress("http://127.0.0.1:4444", "flag")


def test_a_state_file_whose_launcher_is_dead_is_ignored(data_dir: Path) -> None:
    write_state(data_dir, pid=dead_pid())
    assert supervisor_address() == ServiceAddress("http://127.0.0.1:8105", "settings")


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
def test_a_state_file_others_may_write_is_ignored(data_dir: Path, mode: int) -> None:
    write_state(data_dir, mode=mode)
    assert supervisor_address().source == "settings"


def test_a_state_file_owned_by_another_user_is_ignored(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_state(data_dir)
    monkeypatch.setattr(os, "getuid", lambda: os.geteuid() + 1)
    assert supervisor_address().source == "settings"


def test_a_symlinked_state_file_is_ignored(data_dir: Path, tmp_path: Path) -> None:
    real = write_state(tmp_path / "elsewhere")
    link = state_path(data_dir)
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    assert supervisor_address().source == "settings"


def test_a_state_file_without_the_service_or_with_garbage_is_ignored(data_dir: Path) -> None:
    write_state(data_dir, sensor={"http": "http://127.0.0.1:18101", "grpc": ""})
    assert supervisor_address().source == "settings"
    write_state(data_dir, supervisor={"http": "file:///etc/passwd"})
    assert supervisor_address().source == "settings"
    state_path(data_dir).write_text("{not json")
    assert supervisor_address().source == "settings"


def test_an_explicit_data_dir_is_read_instead_of_the_settings_one(data_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write_state(other)
    assert supervisor_address().source == "settings"
    assert service_http_url("supervisor", SupervisorSettings, data_dir=other).url == UP_URL


async def test_status_shows_the_same_service_address_as_the_commands(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing listens on these ports: only the addresses matter here.
    write_state(data_dir, supervisor={"http": "http://127.0.0.1:9", "grpc": "127.0.0.1:9", "pid": 1})
    for name in ("NATS", "REDIS", "POSTGRES"):
        monkeypatch.setenv(f"KRONII_EMBEDDED_{name}_PORT", "9")
    rows = {row.name: row for row in await status.collect_status(load_settings(LauncherSettings))}
    assert rows["supervisor"].address == "http://127.0.0.1:9  grpc 127.0.0.1:9"
    state_path(data_dir).chmod(0o660)
    rows = {row.name: row for row in await status.collect_status(load_settings(LauncherSettings))}
    assert rows["supervisor"].address == "http://127.0.0.1:8105  grpc 127.0.0.1:7105"
