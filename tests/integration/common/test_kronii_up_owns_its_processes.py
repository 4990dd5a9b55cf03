"""`kronii up` owns every process it starts. On a real desktop (Xvfb with openbox) the broker starts x11vnc
and the supervisor a `tmux -C` control client, both in sessions of their own: after a kill -9 of the
process the services share, neither is left running beside the restarted ones (the new broker's x11vnc
gets its port), `kronii status` counts the restart, a command that finds the services stopped says that
`kronii up` runs rather than "start it with `kronii up`". A config file broken meanwhile and met at the
next restart leaves the services stopped with a line naming the file, kronii up running, and no x11vnc nor
tmux control session behind. After Ctrl-C no process of this kronii is left at all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from kronii.launcher.infra import free_port
from kronii.runtime.services import installed_services

from tests.agents.harness import private_socket
from tests.desktop import start_xvfb
from tests.mesh import Proc, standalone_env, wait_http_ready, wait_until

KRONII = str(Path(sys.executable).parent / "kronii")


def _environ(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def processes_of(data_dir: Path) -> dict[int, str]:
    """Every live process of this kronii, found by walking /proc: its command line names the data
    directory or its environment carries it. pid -> its command line."""
    marker = str(data_dir)
    found = {}
    for proc in psutil.process_iter(["pid", "cmdline", "status", "name"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE or proc.pid == os.getpid():
                continue
            command = " ".join(proc.info["cmdline"] or [])
            if marker in command or f"KRONII_DATA_DIR={marker}\0" in _environ(proc.pid):
                found[proc.pid] = f"{proc.info['name']}: {command}"
        except psutil.Error:
            continue
    return found


def _tree(pid: int) -> set[int]:
    try:
        root = psutil.Process(pid)
        return {pid, *(child.pid for child in root.children(recursive=True))}
    except psutil.NoSuchProcess:
        return set()


def _tmux_server(socket: str) -> int:
    done = subprocess.run(
        ["tmux", "-S", socket, "display-message", "-p", "#{pid}"], capture_output=True, text=True, check=True
    )
    return int(done.stdout.strip())


def _owned(data_dir: Path, launcher: int, socket: str) -> tuple[dict[int, str], dict[int, str]]:
    """(this kronii's processes under `kronii up` or the agents' tmux server, the others: orphans)."""
    owned = _tree(launcher) | _tree(_tmux_server(socket))
    ours = processes_of(data_dir)
    return (
        {pid: what for pid, what in ours.items() if pid in owned},
        {pid: what for pid, what in ours.items() if pid not in owned},
    )


def _of_kind(found: dict[int, str], kind: str) -> list[int]:
    return [pid for pid, what in found.items() if what.startswith(kind)]


def _state(data_dir: Path) -> dict[str, dict[str, object]]:
    services: dict[str, dict[str, object]] = json.loads((data_dir / "run" / "up.json").read_text())[
        "services"
    ]
    return services


# The slow suite's (18 s): tests/unit/common/test_orphans.py proves the subreaper and the unit
# lookup on real processes in the default suite.
@pytest.mark.slow
def test_a_kill_9_of_the_services_process_leaves_no_orphan_and_is_counted(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    names = {spec.name for spec in installed_services()}
    with private_socket() as socket, start_xvfb() as display:
        env = {**standalone_env(data_dir), "KRONII_TEST_FAST_PG": "1", "DISPLAY": display}
        env.update(KRONII_SUPERVISOR_TMUX_SOCKET=socket, KRONII_BROKER_VNC_PORT=str(free_port()))
        config = tmp_path / "config.toml"
        config.write_text('log_level = "INFO"\n')
        env["KRONII_CONFIG"] = str(config)
        proc = Proc([KRONII, "up", "--stop-agents"], env)
        try:
            proc.wait_for_line(lambda line: line.strip() == "kronii is up", 180)
            # An agent, so that the supervisor holds its tmux control connection.
            spawned = subprocess.run(
                [KRONII, "agents", "spawn", "--workspace", "own", "--agent", "a1", "--kind", "generic",
                 "--", "sleep", "600"],
                env=env, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert spawned.returncode == 0, spawned.stdout + spawned.stderr
            launcher = proc.process.pid
            owned, orphans = _owned(data_dir, launcher, socket)
            assert not orphans, orphans
            [x11vnc] = _of_kind(owned, "x11vnc")
            [client] = _of_kind(owned, "tmux: client")
            [shared] = {service["pid"] for service in _state(data_dir).values()}
            assert isinstance(shared, int)

            os.kill(shared, signal.SIGKILL)
            proc.wait_for_line(lambda line: "exited unexpectedly" in line, 20)
            wait_until(lambda: {s["pid"] for s in _state(data_dir).values()} != {shared}, 10, "the restart")
            for service in _state(data_dir).values():
                wait_http_ready(str(service["http"]), timeout=90, proc=proc)
            assert not psutil.pid_exists(x11vnc) or psutil.Process(x11vnc).status() == psutil.STATUS_ZOMBIE
            assert not psutil.pid_exists(client) or psutil.Process(client).status() == psutil.STATUS_ZOMBIE
            owned, orphans = _owned(data_dir, launcher, socket)
            assert not orphans, orphans
            # The restarted broker has its x11vnc again, on the port the old one no longer holds.
            wait_until(
                lambda: len(_of_kind(_owned(data_dir, launcher, socket)[0], "x11vnc")) == 1, 30, "x11vnc"
            )
            assert not any("could not obtain listening port" in line for line in proc.lines)

            status = subprocess.run(
                [KRONII, "status", "--json"], env=env, capture_output=True, text=True, timeout=60
            )
            rows = {row["name"]: row for row in json.loads(status.stdout)}
            assert {name: rows[name]["restarts"] for name in names} == dict.fromkeys(names, 1), status.stdout
            assert "restarted 1 time" in rows["broker"]["detail"]

            [restarted] = {service["pid"] for service in _state(data_dir).values()}
            assert isinstance(restarted, int)
            os.kill(restarted, signal.SIGSTOP)
            try:
                listed = subprocess.run(
                    [KRONII, "agents", "list"], env=env, capture_output=True, text=True, timeout=60
                )
            finally:
                os.kill(restarted, signal.SIGCONT)
            assert listed.returncode == 5, listed.stdout + listed.stderr
            assert f"`kronii up` is running (pid {launcher})" in listed.stderr
            assert "start it with `kronii up`" not in listed.stderr

            # A config file broken while kronii runs, met when the process is started again.
            config.write_text("log_level = \n")
            os.kill(restarted, signal.SIGKILL)
            parked = proc.wait_for_line(lambda line: "starts it again when the file changes" in line, 30)
            assert f"{config} is not valid TOML" in parked
            assert proc.process.poll() is None, "kronii up keeps running"
            owned, orphans = _owned(data_dir, launcher, socket)
            assert not orphans, orphans
            assert not _of_kind(owned, "x11vnc") and not _of_kind(owned, "tmux: client"), owned
            sessions = subprocess.run(
                ["tmux", "-S", socket, "list-sessions", "-F", "#{session_name}"],
                capture_output=True,
                text=True,
            ).stdout.split()
            assert sessions == ["agents_own"], sessions

            os.kill(launcher, signal.SIGINT)  # Ctrl-C
            assert proc.process.wait(timeout=40) == 0, proc.output[-3000:]
        finally:
            if proc.process.poll() is None:
                proc.kill()
        # Before the test's own clean-up of the tmux socket: nothing of this kronii is left.
        wait_until(lambda: not processes_of(data_dir), 10, "no process of this kronii")
    assert not any(line.partition(" | ")[2].startswith("services | ") for line in proc.lines), [
        line for line in proc.lines if line.partition(" | ")[2].startswith("services | ")
    ]
