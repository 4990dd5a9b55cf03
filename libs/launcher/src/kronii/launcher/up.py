"""`kronii up`: the whole mesh on one machine.

Starts embedded NATS, Redis and PostgreSQL for each URL that is not set, applies migrations, starts
every installed service (all in one process by default, KRONII_SERVICE_PROCESSES=shared; one process
each with "separate"), waits for each to be ready, prints their addresses, streams their logs, and on
Ctrl-C or SIGTERM stops everything within 10 s. A service process or embedded server that dies is
started again (on the same data, port and credentials), unless it keeps dying.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any, TextIO

from kronii.foundation.freed_memory import RETURN_EVERY_SECS, return_freed_memory
from kronii.foundation.settings import SettingsError, load_settings
from kronii.launcher.embedded_server import InfraError, InfraServer
from kronii.launcher.infra import EmbeddedInfra, InfraPorts
from kronii.launcher.local_http import get_json
from kronii.launcher.migrate_child import MigrationFailed, migrate_in_child
from kronii.launcher.orphans import (
    orphans_of,
    reap_adopted,
    set_subreaper,
    stop_control_session,
    stop_orphans,
)
from kronii.launcher.processes import Child, infra_sink, stop_all
from kronii.launcher.server_restarts import ServerRestarts
from kronii.launcher.service_units import child_env, process_units, schema_ready_file, start_unit
from kronii.launcher.single_instance import AlreadyRunning, single_instance
from kronii.launcher.up_state import (
    RunningService,
    ServerRecord,
    config_version,
    not_ready_reason,
    write_state,
)
from kronii.runtime.services import installed_services, settle_leftovers
from kronii.runtime.spec import ServiceSpec
from kronii.runtime.up_settings import (
    MAX_RESTARTS,
    RESTART_WINDOW_SECS,
    SETTINGS_EXIT,
    LauncherSettings,
    state_path,
)

__all__ = ["LaunchError", "Launcher", "LauncherSettings", "state_path"]

SERVICE_STOP_SECS = 5.0
INFRA_STOP_SECS = 3.0


class LaunchError(RuntimeError):
    pass


class Launcher:
    def __init__(
        self, settings: LauncherSettings, *, out: TextIO = sys.stdout, log_format: str | None = None
    ) -> None:
        self.settings = settings
        self.out = out
        self.stop_requested = threading.Event()
        self.infra: EmbeddedInfra | None = None
        self.servers: dict[str, InfraServer] = {}
        self.services: list[RunningService] = []
        self.records: dict[str, ServerRecord] = {}
        self._print_lock = threading.Lock()
        self.output_gone = False
        self._log_format = log_format
        self._width = 9
        self._started = time.monotonic()
        self._started_wall = time.time()
        self._unit_serial = 0

    # ---- output ------------------------------------------------------------------------------

    def say(self, line: str) -> None:
        with self._print_lock:
            if self.output_gone:
                return
            try:
                self.out.write(line + "\n")
                self.out.flush()
            except (BrokenPipeError, ValueError):
                # The reader went away (`kronii up | head`): as a closed pipe ends any command, kronii
                # stops, cleanly and quietly (exit 141); nothing more is written.
                self.output_gone = True
                self.stop_requested.set()

    def sink(self, name: str, line: str) -> None:
        self.say(f"{name:<{self._width}} | {line}")

    # ---- start -------------------------------------------------------------------------------

    def _check_stop(self) -> None:
        if self.stop_requested.is_set():
            raise KeyboardInterrupt

    def start(self) -> None:
        self._started = time.monotonic()
        specs = installed_services()
        if not specs:
            raise LaunchError("no kronii service is installed in this environment; run `make up`")
        # One column for every name, so the log prefixes line up.
        self._width = max(9, *(len(spec.name) for spec in specs))
        s = self.settings
        ports = InfraPorts(s.embedded_nats_port, s.embedded_redis_port, s.embedded_postgres_port)
        self.infra = EmbeddedInfra(s.data_dir, ports, sink=infra_sink(self.sink))
        self.servers = self.infra.start(
            nats_url=s.nats_url, redis_url=s.redis_url, database_url=s.database_url
        )
        for server in self.servers.values():
            origin = "embedded" if server.embedded else "configured"
            self.say(f"{server.name:<{self._width}}  {server.display_url}  ({origin})")
        # Services take seconds to import; they start while the migrations run, and are
        # only waited for once the schema is in place.
        marker = schema_ready_file(self.settings.data_dir)
        marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        marker.unlink(missing_ok=True)
        env = self._child_env()
        for unit in process_units(specs, self.settings.service_processes):
            self._check_stop()
            self.services.extend(self._start_unit(unit, env))
        self._check_stop()
        postgres = self.servers["postgres"]
        migrate_in_child(postgres.url, create_database=postgres.embedded)
        marker.touch(mode=0o600)  # nothing in the data directory is open to other users
        self.say(f"{'migrate':<{self._width}}  database schema is up to date")
        for running in self.services:
            self._wait_ready(running)
            grpc = f"  grpc {running.grpc_address}" if running.grpc_address else ""
            self.say(f"{running.spec.name:<{self._width}}  {running.http_url}{grpc}  ready")
        self._write_state()
        self.say(
            f"{'ready':<{self._width}}  every service answered /readyz in {time.monotonic() - self._started:.1f} s"
        )
        self.say("kronii is up")

    def _child_env(self) -> dict[str, str]:
        return child_env(self.servers, self.settings.data_dir, self._log_format)

    def _start_unit(self, specs: list[ServiceSpec], env: dict[str, str]) -> list[RunningService]:
        self._unit_serial += 1
        unit = f"{os.getpid()}.{self._unit_serial}"
        return start_unit(
            specs, env, unit=unit, service_processes=self.settings.service_processes, sink=self.sink
        )

    def _units(self) -> list[list[RunningService]]:
        """The running services grouped by the child process they share, in start order."""
        units: dict[int, list[RunningService]] = {}
        for running in self.services:
            units.setdefault(id(running.child), []).append(running)
        return list(units.values())

    def _wait_ready(self, running: RunningService) -> None:
        deadline = time.monotonic() + self.settings.ready_timeout_secs
        last = "no answer yet"
        while time.monotonic() < deadline:
            self._check_stop()
            if not running.child.alive():
                raise LaunchError(
                    f"{self._label(running.child)} exited with code {running.child.process.returncode} "
                    "while starting"
                )
            try:
                status, body = get_json(f"{running.http_url}/readyz", 2.0)
                if status == 200:
                    return
                last = not_ready_reason(body)
            except (OSError, ValueError) as error:
                last = type(error).__name__
            time.sleep(0.1)
        raise LaunchError(
            f"{running.spec.name} was not ready within {self.settings.ready_timeout_secs:.0f} s: {last}"
        )

    def _write_state(self) -> None:
        state: dict[str, Any] = {
            "pid": os.getpid(),
            "started_at": self._started_wall,
            "infra": {
                name: {
                    "url": server.display_url,
                    "embedded": server.embedded,
                    "pid": server.child.pid if server.child is not None else None,
                    **self.records.get(name, ServerRecord()).state(),
                }
                for name, server in self.servers.items()
            },
            "services": {running.spec.name: running.state() for running in self.services},
        }
        write_state(self.settings.data_dir, state)

    # ---- run and stop ------------------------------------------------------------------------

    def watch(self) -> int:
        """Wait for a stop request or a child's death. Returns the exit code for `kronii up`."""
        return_freed_memory()  # what the start used and let go (as the services do, then every minute)
        trimmed = time.monotonic()
        servers = ServerRestarts(
            self.infra,
            self.servers,
            self.records,
            ready_timeout_secs=self.settings.ready_timeout_secs,
            say=self.say,
            changed=self._write_state,
        )
        while not self.stop_requested.wait(0.2):
            code = self._watch_services()
            if code is None:
                code = servers.check()
            if code is not None:
                return code
            if time.monotonic() - trimmed > RETURN_EVERY_SECS:
                return_freed_memory()
                trimmed = time.monotonic()
            # Adopted processes that ended (a tmux server stopped by hand): no zombie stays behind.
            reap_adopted(self._known_children())
        return 0

    def _watch_services(self) -> int | None:
        for unit in self._units():
            first = unit[0]
            if first.child.alive():
                continue
            label = self._label(first.child)
            if first.parked:
                if config_version() != first.parked_on:
                    self.say(f"kronii: the config file changed; starting {label} again")
                    self._restart(unit, [], label)
                continue
            code = first.child.process.returncode
            self._stop_leftovers(unit, label)
            now = time.monotonic()
            restarts = [at for at in first.restarts if now - at < RESTART_WINDOW_SECS]
            if code == SETTINGS_EXIT:
                self._park(unit, f"{label} cannot start with these settings (its error is above)")
                continue
            if len(restarts) >= MAX_RESTARTS:
                self.say(
                    f"kronii: {label} exited with code {code} "
                    f"{MAX_RESTARTS + 1} times within {RESTART_WINDOW_SECS:.0f} s; stopping kronii"
                )
                return 1
            self.say(f"kronii: {label} exited unexpectedly with code {code}; restarting it")
            self._restart(unit, [*restarts, now], label)
        return None

    def _restart(self, unit: list[RunningService], restarts: list[float], label: str) -> None:
        """Start a unit's services again in a new process; with settings it cannot start with (a config
        file broken meanwhile), leave it stopped until the file changes, and say so."""
        try:
            restarted = self._start_unit([running.spec for running in unit], self._child_env())
        except SettingsError as error:
            why = error.message.removeprefix("kronii: ").removeprefix("cannot start: ")
            self._park(unit, f"cannot start {label} again: {why}")
            return
        for old, fresh in zip(unit, restarted, strict=True):
            fresh.restarts = restarts
            fresh.restart_count, fresh.last_restart_wall = old.restart_count + 1, time.time()
        replacement = {id(old): fresh for old, fresh in zip(unit, restarted, strict=True)}
        self.services = [replacement.get(id(running), running) for running in self.services]
        self._write_state()

    def _park(self, unit: list[RunningService], why: str) -> None:
        for running in unit:
            running.parked, running.parked_on = True, config_version()
        self.say(
            f"kronii: {why}; the servers and the other services keep running: fix the config file "
            "(`kronii config check` names every problem) and kronii starts it again when the file changes"
        )

    def _known_children(self) -> set[int]:
        """The children a Popen waits for itself (kronii.launcher.orphans never reaps them)."""
        pids = {running.child.pid for running in self.services}
        return pids | {server.child.pid for server in self.servers.values() if server.child is not None}

    def _stop_leftovers(self, unit: list[RunningService], label: str) -> None:
        """Stop what a service process that did not end cleanly left behind: its process group, the
        processes it started in sessions of their own (re-parented to this subreaper), and the
        supervisor's tmux control session (its restart opens a new one)."""
        unit[0].child.stop(0.1)
        left = orphans_of({unit[0].unit}, self._known_children())
        if left:
            stop_orphans(left, self._known_children())
            names = ", ".join(str(orphan) for orphan in left)
            self.say(f"kronii: stopped what {label} left running: {names}")
        if any(running.spec.name == "supervisor" for running in unit):
            stop_control_session()

    def _label(self, child: Child) -> str:
        """How the log names a child: its service, or the services that share it."""
        names = [running.spec.name for running in self.services if running.child is child]
        if len(names) == 1 and child.name == names[0]:
            return names[0]
        return f"the process shared by {', '.join(names)}"

    def stop(self) -> None:
        units = self._units()
        stop_all([unit[0].child for unit in units], SERVICE_STOP_SECS)
        for unit in units:
            if unit[0].child.process.returncode != 0:
                self._stop_leftovers(unit, self._label(unit[0].child))
        children = [server.child for server in self.servers.values() if server.child is not None]
        stop_all(children, INFRA_STOP_SECS)
        if self.infra is not None and not self.servers:
            self.infra.stop(INFRA_STOP_SECS)

    def _settle_agents(self) -> None:
        """Stop what the services leave running (the agents' tmux sessions) when asked to; otherwise
        say that it runs on, and how to stop it."""
        started = {running.spec.name: running.settings for running in self.services}
        for line in settle_leftovers(stop=self.settings.stop_agents, started=started):
            self.say(f"kronii: {line}")

    def run(self) -> int:
        """Start, watch, stop. Signals set a flag; the main thread does all the work."""
        previous = {
            sig: signal.signal(sig, lambda *_: self.stop_requested.set())
            for sig in (signal.SIGINT, signal.SIGTERM)
        }
        code = 0
        # What a service process leaves when it dies is re-parented here, to be stopped (orphans.py).
        subreaper = set_subreaper(True)
        try:
            with single_instance(self.settings.data_dir):
                try:
                    self.start()
                    code = self.watch()
                except KeyboardInterrupt:
                    code = 0
                except (LaunchError, InfraError, MigrationFailed) as error:
                    self.say(f"kronii: {error}")
                    code = 1
                finally:
                    self.say("kronii: stopping")
                    started = time.monotonic()
                    self.stop()
                    self._settle_agents()
                    self.say(f"kronii: stopped in {time.monotonic() - started:.1f} s")
        except AlreadyRunning as error:
            self.say(f"kronii: {error}")
            code = 1
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if subreaper:
                reap_adopted(self._known_children())
                set_subreaper(False)
        return code


def launcher_settings() -> LauncherSettings:
    return load_settings(LauncherSettings)
