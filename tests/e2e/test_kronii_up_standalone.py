"""`kronii up` from nothing: it starts its own NATS, Redis and PostgreSQL, refuses a second instance,
answers `kronii status`, and leaves no process behind after SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kronii.stores.db import head_revision

from tests.mesh import Proc, kronii_process_pids, standalone_env, wait_http_ready, wait_until

pytestmark = pytest.mark.e2e

KRONII = str(Path(sys.executable).parent / "kronii")


def _env(data_dir: Path) -> dict[str, str]:
    return {**standalone_env(data_dir), "KRONII_TEST_FAST_PG": "1"}


def test_kronii_up_runs_embedded_infra_refuses_a_second_instance_and_stops_clean(tmp_path: Path) -> None:
    data_dir = tmp_path / "kronii-data"
    env = _env(data_dir)
    proc = Proc([KRONII, "up"], env)
    try:
        proc.wait_for_line(lambda line: line.strip() == "kronii is up", 90)
        # 0710 when root runs PostgreSQL: the group bits show the ACL mask of its traversal entry.
        assert (data_dir.stat().st_mode & 0o777) in (0o700, 0o710)
        for name in ("nats", "redis", "postgres"):
            line = next(line for line in proc.lines if line.startswith(name) and "://" in line)
            assert "embedded" in line
            assert "@" not in line or "kronii@" in line, "a password was printed"
        secrets = data_dir / "secrets"
        assert {p.name for p in secrets.iterdir()} == {
            "nats_token",
            "redis_password",
            "postgres_password",
            "api_token",
        }
        assert all((p.stat().st_mode & 0o777) == 0o600 for p in secrets.iterdir())
        assert all(p.read_text().strip() not in proc.output for p in secrets.iterdir())

        second = subprocess.run([KRONII, "up"], env=env, capture_output=True, text=True, timeout=30)
        assert second.returncode == 1
        assert "already running" in second.stdout

        # A command that knows only the data directory finds the running mesh's ports in its state.
        plain = {k: v for k, v in env.items() if not k.startswith("KRONII_EMBEDDED_")}
        keys = subprocess.run(
            [KRONII, "keys", "status"], env=plain, capture_output=True, text=True, timeout=60
        )
        assert keys.returncode == 0, keys.stdout + keys.stderr
        assert "0 live objects" in keys.stdout

        status = subprocess.run([KRONII, "status"], env=env, capture_output=True, text=True, timeout=30)
        assert status.returncode == 0, status.stdout + status.stderr
        rows = {line.split()[0]: line for line in status.stdout.splitlines()[1:]}
        assert set(rows) >= {"nats", "redis", "postgres", "sensor"}
        assert all("  yes  " in row for row in rows.values()), status.stdout
        assert "JetStream on" in rows["nats"]
        assert head_revision() in rows["postgres"]
        assert "no display" in rows["sensor"]

        # A service that dies is started again; the mesh stays up. By default the services share one
        # process, which the launcher names by its services.
        state_file = data_dir / "run" / "up.json"
        killed = json.loads(state_file.read_text())["services"]["sensor"]["pid"]
        os.kill(killed, signal.SIGKILL)
        proc.wait_for_line(
            lambda line: "sensor" in line and "exited unexpectedly" in line and "restarting" in line, 10
        )
        wait_until(
            lambda: json.loads(state_file.read_text())["services"]["sensor"]["pid"] != killed,
            5,
            "the restarted sensor in up.json",
        )
        wait_http_ready(f"http://127.0.0.1:{env['KRONII_SENSOR_HTTP_PORT']}", timeout=60)
        assert proc.process.poll() is None
    finally:
        code, took = proc.terminate(timeout=20)
    assert code == 0, proc.output[-3000:]
    assert took < 10
    wait_until(lambda: not kronii_process_pids(str(data_dir)), 5, "embedded servers to exit")

    stopped = subprocess.run([KRONII, "status"], env=env, capture_output=True, text=True, timeout=30)
    assert stopped.returncode == 1
    assert "not reachable" in stopped.stdout
