"""The plain `kronii control stop` (kronii.launcher.cli.quick_stop): the stop socket found where the
broker puts it, as the settings would find it, and the whole command, as a process, against a real
stop socket (the broker's adapter, in this process): it imports neither click nor the settings, says
what happened in a sentence, and leaves everything else (no socket, --help, flags) to the full CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.broker.adapters.stop_socket import StopSocket
from kronii.broker.settings import BrokerSettings
from kronii.foundation.settings import load_settings
from kronii.launcher.cli import quick_stop
from kronii.runtime.rendezvous import BROKER_STOP_SOCKET_NAME, broker_stop_socket_path

_WHERE = ("XDG_RUNTIME_DIR", "KRONII_DATA_DIR", "KRONII_CONFIG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME")


def _settings_path() -> str:
    return str(broker_stop_socket_path(load_settings(BrokerSettings).data_dir))


@pytest.mark.parametrize(
    "case",
    [
        "runtime dir",
        "data dir",
        "empty data dir",
        "config file",
        "config file overridden",
        "xdg data",
        "home",
    ],
)
def test_the_fast_path_finds_the_stop_socket_where_the_settings_put_it(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in _WHERE:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = tmp_path / "config.toml"
    config.write_text(f'data_dir = "{tmp_path / "from-file"}"\n[broker]\nhttp_port = 8106\n')
    monkeypatch.setenv(
        "KRONII_CONFIG", str(config) if case.startswith("config file") else str(tmp_path / "none")
    )
    if case == "runtime dir":
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
        monkeypatch.setenv("KRONII_DATA_DIR", str(tmp_path / "data"))
    elif case == "data dir":
        monkeypatch.setenv("KRONII_DATA_DIR", str(tmp_path / "data"))
    elif case in ("empty data dir", "config file overridden"):
        monkeypatch.setenv("KRONII_DATA_DIR", "")
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    elif case == "xdg data":
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert quick_stop.STOP_SOCKET_NAME == BROKER_STOP_SOCKET_NAME
    assert quick_stop.stop_socket_path() == _settings_path()


def test_a_config_file_it_cannot_read_leaves_the_stop_to_the_full_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in _WHERE:
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    config.write_text("data_dir = [unclosed\n")
    monkeypatch.setenv("KRONII_CONFIG", str(config))
    assert quick_stop.stop_socket_path() is None
    assert quick_stop.stop() is None


# What the installed `kronii` script runs (`from ... import main` asks the module for __path__ too).
_CONSOLE_SCRIPT = "import sys; from kronii.launcher.cli.main import main; sys.exit(main())"


def _kronii(env: dict[str, str], *args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-c", _CONSOLE_SCRIPT, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    run = tmp_path / "run"
    return {
        **os.environ,
        "XDG_RUNTIME_DIR": str(run),
        "KRONII_DATA_DIR": str(tmp_path / "data"),
        "KRONII_CONFIG": str(tmp_path / "no-config.toml"),
        # Where the full command would look next: nobody listens on port 1.
        "KRONII_BROKER_URL": "http://127.0.0.1:1",
    }


@pytest.fixture
def stop_socket(env: dict[str, str]) -> Iterator[list[str]]:
    stops: list[str] = []
    door = StopSocket(
        Path(env["XDG_RUNTIME_DIR"]) / "kronii" / BROKER_STOP_SOCKET_NAME,
        stop=lambda: 12,
        hand_over=lambda: stops.append("STOP_NOW"),
    )
    door.start()
    try:
        yield stops
    finally:
        door.stop()


def test_kronii_control_stop_goes_through_the_stop_socket_without_click_or_the_settings(
    env: dict[str, str], stop_socket: list[str]
) -> None:
    done = _kronii(env, "control", "stop", importtime=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == (
        "STOP_NOW: the agent is stopped, its lease revoked and its queued input dropped; "
        "control is yours (epoch 12)\n"
    )
    assert stop_socket == ["STOP_NOW"]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "kronii.launcher.cli.quick_stop" in imported  # the listing is real
    heavy = sorted(name for name in imported if name.split(".")[0] in ("click", "pydantic", "httpx", "grpc"))
    assert heavy == [] and "kronii.launcher.cli.shell" not in imported and "typing" not in imported


def test_kronii_control_stop_refused_by_the_stop_socket_says_so_and_exits_4(env: dict[str, str]) -> None:
    door = StopSocket(
        Path(env["XDG_RUNTIME_DIR"]) / "kronii" / BROKER_STOP_SOCKET_NAME,
        stop=lambda: 0,
        hand_over=lambda: None,
        uid=os.getuid() + 1,
    )
    door.start()
    try:
        done = _kronii(env, "control", "stop")
    finally:
        door.stop()
    assert done.returncode == 4
    assert done.stderr == "kronii: control stop refused: only the desktop user may stop agents here\n"


def test_kronii_control_stop_with_no_broker_is_the_full_commands_sentence_and_exit_5(
    env: dict[str, str],
) -> None:
    done = _kronii(env, "control", "stop")
    assert done.returncode == 5, done.stderr
    assert "kronii: the broker is not reachable at http://127.0.0.1:1" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_stop_with_any_other_word_is_the_full_command(env: dict[str, str], stop_socket: list[str]) -> None:
    helped = _kronii(env, "control", "stop", "--help")
    assert helped.returncode == 0 and "Usage: kronii control stop [OPTIONS]" in helped.stdout
    as_json = _kronii(env, "control", "stop", "--json")
    assert as_json.returncode == 5 and "127.0.0.1:1" in as_json.stderr  # over HTTP, not the stop socket
    assert stop_socket == []
