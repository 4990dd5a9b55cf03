"""`kronii up` with KRONII_SERVICE_PROCESSES=shared (the desktop default) runs every installed service in one
child process: the state file gives them one pid, that process is the service group, each log line is
shown under its own service's name, and a kill -9 of the process brings all of them back, restarted once.
With "separate" each service has a process of its own, and a kill -9 of one leaves the others alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from kronii.runtime.services import installed_services

from tests.mesh import Proc, kronii_process_pids, standalone_env, wait_http_ready, wait_until

KRONII = str(Path(sys.executable).parent / "kronii")


def _services(state_file: Path) -> dict[str, dict[str, object]]:
    services: dict[str, dict[str, object]] = json.loads(state_file.read_text())["services"]
    return services


def _service_children(launcher_pid: int) -> list[list[str]]:
    """The command lines of the launcher's children that run kronii services."""
    found = []
    for child in psutil.Process(launcher_pid).children(recursive=True):
        command = child.cmdline()
        if any(part.startswith("kronii.") and part != "kronii.launcher.cli.main" for part in command):
            found.append(command)
    return found


def _assert_lines_name_their_service(lines: list[str], names: set[str]) -> None:
    """Every JSON log line shown under a service's name came from that service."""
    shown = set()
    for line in lines:
        prefix, separator, rest = line.partition(" | ")
        if not separator or not rest.startswith("{"):
            continue
        entry = json.loads(rest)
        assert prefix.strip() == entry["service"], line
        shown.add(entry["service"])
    assert shown >= names, f"no log line from {sorted(names - shown)}"


def test_kronii_up_runs_every_service_in_one_process_and_restarts_it_as_one(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    env = {**standalone_env(data_dir), "KRONII_TEST_FAST_PG": "1", "KRONII_SERVICE_PROCESSES": "shared"}
    names = {spec.name for spec in installed_services()}
    state_file = data_dir / "run" / "up.json"
    proc = Proc([KRONII, "up"], env)
    try:
        proc.wait_for_line(lambda line: line.strip() == "kronii is up", 120)
        services = _services(state_file)
        assert set(services) == names
        [pid] = {service["pid"] for service in services.values()}
        assert isinstance(pid, int)
        [command] = _service_children(proc.process.pid)
        assert command[1:3] == ["-m", "kronii.runtime.service_group"]
        assert set(command[3:]) == names
        _assert_lines_name_their_service(proc.lines, names)

        status = subprocess.run([KRONII, "status"], env=env, capture_output=True, text=True, timeout=30)
        assert status.returncode == 0, status.stdout + status.stderr
        rows = {line.split()[0] for line in status.stdout.splitlines()[1:] if line.strip()}
        assert rows >= names

        os.kill(pid, signal.SIGKILL)
        proc.wait_for_line(lambda line: "exited unexpectedly" in line and "restarting" in line, 10)
        wait_until(
            lambda: {service["pid"] for service in _services(state_file).values()} not in ({pid}, set()),
            5,
            "the restarted process in up.json",
        )
        [restarted] = {service["pid"] for service in _services(state_file).values()}
        assert restarted != pid
        for service in _services(state_file).values():
            wait_http_ready(str(service["http"]), timeout=60)
        assert sum("exited unexpectedly" in line for line in proc.lines) == 1, "restarted once per service"
        assert len(_service_children(proc.process.pid)) == 1
    finally:
        code, _ = proc.terminate(timeout=20)
    assert code == 0, proc.output[-3000:]
    wait_until(lambda: not kronii_process_pids(str(data_dir)), 5, "kronii's processes to exit")


@pytest.mark.slow  # eight interpreters starting at once on two cores: about 22 s
def test_kronii_up_separate_runs_one_process_per_service_and_a_kill_touches_one(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    env = {**standalone_env(data_dir), "KRONII_TEST_FAST_PG": "1", "KRONII_SERVICE_PROCESSES": "separate"}
    names = {spec.name for spec in installed_services()}
    state_file = data_dir / "run" / "up.json"
    proc = Proc([KRONII, "up"], env)
    try:
        proc.wait_for_line(lambda line: line.strip() == "kronii is up", 120)
        before = {name: service["pid"] for name, service in _services(state_file).items()}
        assert len(set(before.values())) == len(names)
        commands = _service_children(proc.process.pid)
        assert sorted(command[2] for command in commands) == sorted(f"kronii.{name}" for name in names)

        killed = before["sensor"]
        assert isinstance(killed, int)
        os.kill(killed, signal.SIGKILL)
        proc.wait_for_line(lambda line: "kronii: sensor exited unexpectedly" in line, 10)
        wait_until(lambda: _services(state_file)["sensor"]["pid"] != killed, 5, "the restarted sensor")
        after = {name: service["pid"] for name, service in _services(state_file).items()}
        assert {name: pid for name, pid in after.items() if name != "sensor"} == {
            name: pid for name, pid in before.items() if name != "sensor"
        }, "a service other than the killed one was restarted"
        wait_http_ready(str(_services(state_file)["sensor"]["http"]), timeout=60)
    finally:
        code, _ = proc.terminate(timeout=20)
    assert code == 0, proc.output[-3000:]
