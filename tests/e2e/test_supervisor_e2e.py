"""The supervisor inside `kronii up`: an agent started with `kronii agents spawn` in a private tmux
server, a trigger typed into its pane, the outcome in the audit chain, a clean stop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.harness import FAKE_CODEX, codex_bin, private_socket
from tests.mesh import Proc, standalone_env, wait_until

pytestmark = pytest.mark.e2e

KRONII = str(Path(sys.executable).parent / "kronii")


def test_kronii_up_runs_the_supervisor_which_spawns_triggers_and_audits(tmp_path: Path) -> None:
    codex = codex_bin(tmp_path)
    data_dir = tmp_path / "kronii-data"
    with private_socket() as socket:
        env = standalone_env(data_dir)
        # The port standalone_env chose: one picked apart could be handed out again to another service.
        http = int(env["KRONII_SUPERVISOR_HTTP_PORT"])
        env.update(codex.env())
        env.update(
            KRONII_SUPERVISOR_TMUX_SOCKET=socket,
            KRONII_TEST_FAST_PG="1",
            DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
            DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
        )
        up = Proc([KRONII, "up"], env)
        try:
            up.wait_for_line(lambda line: line.strip() == "kronii is up", 90)
            cli = {**env, "KRONII_SUPERVISOR_URL": f"http://127.0.0.1:{http}"}

            def agents(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run([sys.executable, "-m", "kronii.supervisor.cli", "agents", *args], env=cli,
                                      capture_output=True, text=True, timeout=60)  # fmt: skip

            # No token configured: the CLI signs one with the secret the supervisor keeps in the data dir.
            key = data_dir / "supervisor" / "token.key"
            assert (key.stat().st_mode & 0o777) == 0o600
            spawned = agents("spawn", "--workspace", "e2e", "--agent", "reviewer", "--role", "review",
                             "--kind", "codex", "--", sys.executable, str(FAKE_CODEX))  # fmt: skip
            assert spawned.returncode == 0, spawned.stderr
            assert f"tmux -S {socket} attach -t agents_e2e" in spawned.stdout
            runtime_id = spawned.stdout.split(" as ", 1)[1].split()[0]
            for _ in range(100):
                if "\u203a" in agents("logs", runtime_id).stdout:
                    break
            triggered = agents("trigger", "--workspace", "e2e", "--agent", "reviewer", "--thread", "t1",
                               "--trigger-id", "e2e-1", "--json", "review the e2e branch")  # fmt: skip
            assert triggered.returncode == 0, triggered.stderr
            outcome = json.loads(triggered.stdout)
            assert outcome["result"] == "delivered" and outcome["delivery_backend"] == "tmux"
            assert [e["prompt"] for e in codex.submits()] == ["review the e2e branch"]
            listed = agents("list", "--json")
            assert [r["runtime_id"] for r in json.loads(listed.stdout)] == [runtime_id]

            audit_env = {**env}

            def audited() -> set[tuple[str, str]]:
                tail = subprocess.run([KRONII, "audit", "tail", "-n", "50", "--json"], env=audit_env,
                                      capture_output=True, text=True, timeout=60)  # fmt: skip
                rows = [json.loads(line) for line in tail.stdout.splitlines() if line.strip()]
                return {(row["action"], row["subject"]) for row in rows}

            # Audit rows are written off the path to the pane, by the supervisor's writer task.
            wait_until(lambda: ("supervisor.trigger", "e2e-1") in audited(), 15, "the trigger's audit row")
            assert ("supervisor.spawn", runtime_id) in audited()
            verify = subprocess.run(
                [KRONII, "audit", "verify"], env=audit_env, capture_output=True, text=True, timeout=60
            )
            assert verify.returncode == 0, verify.stdout + verify.stderr
        finally:
            code, took = up.terminate(timeout=20)
        assert code == 0, up.output[-3000:]
        assert took < 10
        sessions = subprocess.run(["tmux", "-S", socket, "list-sessions", "-F", "#{session_name}"],
                                  capture_output=True, text=True, check=False)  # fmt: skip
        assert "_kronii_control" not in sessions.stdout, "the supervisor leaves its control session behind"
        assert "agents_e2e" in sessions.stdout, "agents outlive the supervisor: people may be watching them"
