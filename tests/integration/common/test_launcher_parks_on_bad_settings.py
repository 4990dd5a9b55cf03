"""A service process that cannot start with the settings it would get (a config file broken while kronii
ran, met when the process is started again after a crash) does not stop the whole mesh: `kronii up` says
which file and which line are wrong, keeps the servers and other services running, and starts the
process again once the file changes. A real `kronii up` launcher and real child processes."""

from __future__ import annotations

import io
import os
import signal
import sys
from pathlib import Path

import pytest
from kronii.launcher.embedded_server import InfraServer
from kronii.launcher.processes import Child
from kronii.launcher.up import Launcher, LauncherSettings
from kronii.launcher.up_state import RunningService
from kronii.runtime.services import installed_services


def _launcher(tmp_path: Path, out: io.StringIO) -> Launcher:
    launcher = Launcher(LauncherSettings(data_dir=tmp_path / "data"), out=out)
    launcher.servers = {
        "nats": InfraServer("nats", "nats://127.0.0.1:1", embedded=False),
        "redis": InfraServer("redis", "redis://127.0.0.1:1/0", embedded=False),
        "postgres": InfraServer("postgres", "postgresql://kronii@127.0.0.1:1/kronii", embedded=False),
    }
    return launcher


def test_a_config_file_broken_before_a_restart_parks_the_process_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('log_level = "INFO"\n')
    monkeypatch.setenv("KRONII_CONFIG", str(config))
    monkeypatch.setenv("KRONII_SERVICE_PROCESSES", "separate")
    out = io.StringIO()
    launcher = _launcher(tmp_path, out)
    spec = next(spec for spec in installed_services() if spec.name == "scheduler")
    launcher.services = launcher._start_unit([spec], launcher._child_env())
    [first] = launcher.services
    try:
        os.kill(first.child.pid, signal.SIGKILL)
        first.child.process.wait(10)
        config.write_text("log_level = \n")  # broken meanwhile: not TOML

        assert launcher._watch_services() is None, out.getvalue()  # kronii goes on
        said = out.getvalue()
        assert "cannot start scheduler again" in said and "is not valid TOML" in said, said
        assert "starts it again when the file changes" in said
        assert launcher.services == [first]
        assert launcher._watch_services() is None
        assert out.getvalue() == said, "said once, not at every look"

        config.write_text('log_level = "DEBUG"\n')  # fixed
        assert launcher._watch_services() is None
        [fresh] = launcher.services
        assert fresh.child.pid != first.child.pid and fresh.child.alive()
        assert fresh.restart_count == 1 and fresh.state()["restarts"] == 1
        assert "the config file changed; starting scheduler again" in out.getvalue()
    finally:
        launcher.stop()


def test_a_service_process_that_exits_for_its_settings_is_not_restarted_in_a_loop(tmp_path: Path) -> None:
    out = io.StringIO()
    launcher = _launcher(tmp_path, out)
    spec = next(spec for spec in installed_services() if spec.name == "scheduler")
    settings = spec.settings_cls()
    child = Child("scheduler", [sys.executable, "-c", "raise SystemExit(2)"], sink=None)
    launcher.services = [RunningService(spec, settings, child, "unit")]
    child.process.wait(10)
    assert launcher._watch_services() is None
    assert launcher.services[0].child is child, "not started again with the same settings"
    assert "scheduler cannot start with these settings" in out.getvalue()
    assert "exited unexpectedly" not in out.getvalue()
    launcher.stop()
