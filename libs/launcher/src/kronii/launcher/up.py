"""`kronii up`: the whole mesh on one machine.

Starts embedded NATS, Redis and PostgreSQL for each URL that is not set, applies migrations, starts
every installed service (all in one process by default, KRONII_SERVICE_PROCESSES=shared; one process
each with "separate"), waits for each to be ready, prints their addresses, streams their logs, and on
Ctrl-C or SIGTERM stops everything within 10 s. A service process or embedded server that dies is
started again (on the same data, port and credentials), unless it keeps dying.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from kronii.foundation.freed_memory import RETURN_EVERY_SECS, return_freed_memory
from kronii.foundation.settings import SettingsError, load_settings
from kronii.launcher.embedded_server import InfraError, InfraServer
from kronii.launcher.infra import EmbeddedInfra, InfraPorts
from kronii.launcher.local_http import get_json
from kronii.launcher.migrate_child import MigrationFailed, migrate_in_child
from kronii.launcher.orphans import (
    UNIT_ENV,
    orphans_of,
    reap_adopted,
    set_subreaper,
    stop_control_session,
    stop_orphans,
)
from kronii.launcher.private_data import ensure_private_dir, mesh_token, tighten_private_tree
from kronii.launcher.processes import Child, infra_sink, split_sink, stop_all
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
    SHARED_PROCESS_NAME,
    LauncherSettings,
    running_pid,
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
        self._lock_handle: TextIO | None = None
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

    # ---- single instance ---------------------------------------------------------------------

    @contextlib.contextmanager
    def single_instance(self) -> Iterator[None]:
        data_dir = ensure_private_dir(self.settings.data_dir)
        lock_file = data_dir / "up.lock"
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
        os.fchmod(fd, 0o600)
        handle = os.fdopen(fd, "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            pid = running_pid(data_dir)
            where = f" (pid {pid})" if pid else ""
            raise LaunchError(
                f"kronii is already running{where} with data in {data_dir}; "
                f"stop it with Ctrl-C in its terminal{f' or `kill {pid}`' if pid else ''}, "
                "or use another KRONII_DATA_DIR"
            ) from None
        self._lock_handle = handle
        # Files an older kronii (or a command run under a loose umask) left readable to others.
        tighten_private_tree(data_dir)
        try:
            yield
        finally:
            state_path(data_dir).unlink(missing_ok=True)
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()

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
        marker = self._schema_ready_file()
        marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        marker.unlink(missing_ok=True)
        env = self._child_env()
        for unit in self._process_units(specs):
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
        env = dict(os.environ)
        env["KRONII_NATS_URL"] = self.servers["nats"].url
        env["KRONII_REDIS_URL"] = self.servers["redis"].url
        env["KRONII_DATABASE_URL"] = self.servers["postgres"].url
        env["KRONII_DATA_DIR"] = str(self.settings.data_dir)
        # The mesh token lets the services reach each other where the kernel cannot vouch for the caller.
        env.setdefault("KRONII_API_TOKEN", mesh_token(self.settings.data_dir))
        if self._log_format and "KRONII_LOG_FORMAT" not in os.environ:
            env["KRONII_LOG_FORMAT"] = self._log_format
        env["PYTHONUNBUFFERED"] = "1"
        # Services start while the migrations run; each waits for this file before touching its tables.
        env["KRONII_SCHEMA_READY_FILE"] = str(self._schema_ready_file())
        # `kronii up` prints each service's ready line itself.
        env["KRONII_LAUNCHED_BY_UP"] = "1"
        return env

    def _schema_ready_file(self) -> Path:
        return self.settings.data_dir / "run" / "schema.ready"

    def _process_units(self, specs: list[ServiceSpec]) -> list[list[ServiceSpec]]:
        """The services each child process runs."""
        if self.settings.service_processes == "shared":
            return [specs]
        return [[spec] for spec in specs]

    def _start_unit(self, specs: list[ServiceSpec], env: dict[str, str]) -> list[RunningService]:
        settings = [load_settings(spec.settings_cls) for spec in specs]
        # Every process this child starts inherits its unit: what it leaves when it dies is found by it.
        self._unit_serial += 1
        env = {**env, UNIT_ENV: f"{os.getpid()}.{self._unit_serial}"}
        if self.settings.service_processes == "separate":
            [spec] = specs
            child = Child(spec.name, [sys.executable, "-m", spec.module], sink=self.sink, env=env)
        else:
            names = [spec.name for spec in specs]
            argv = [sys.executable, "-m", "kronii.runtime.service_group", *names]
            child = Child(SHARED_PROCESS_NAME, argv, sink=split_sink(self.sink, names), env=env)
        unit = env[UNIT_ENV]
        return [RunningService(spec, item, child, unit) for spec, item in zip(specs, settings, strict=True)]

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
        while not self.stop_requested.wait(0.2):
            code = self._watch_services()
            if code is None:
                code = self._watch_servers()
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

    def _watch_servers(self) -> int | None:
        """Restart a dead embedded server; between ticks, look once whether a restarted one answers,
        so that a slow PostgreSQL recovery never holds up the watch of the other children."""
        for server in self.servers.values():
            if server.child is None:
                continue
            record = self.records.setdefault(server.name, ServerRecord())
            if not server.child.alive():
                code = self._server_died(server, record)
                if code is not None:
                    return code
            elif record.down_since is not None:
                if self.infra is not None and self.infra.answers(server.name):
                    self._server_back(server, record)
                elif time.monotonic() > record.deadline:
                    self.say(
                        f"kronii: the embedded {server.name} did not come back within "
                        f"{self.settings.ready_timeout_secs:.0f} s; stopping kronii"
                    )
                    return 1
        return None

    def _server_died(self, server: InfraServer, record: ServerRecord) -> int | None:
        assert server.child is not None and self.infra is not None
        reason = server.child.exit_reason()
        now = time.monotonic()
        record.deaths = [at for at in record.deaths if now - at < RESTART_WINDOW_SECS]
        if len(record.deaths) >= MAX_RESTARTS:
            self.say(
                f"kronii: the embedded {server.name} exited ({reason}) {MAX_RESTARTS + 1} times "
                f"within {RESTART_WINDOW_SECS:.0f} s; stopping kronii"
            )
            return 1
        record.deaths.append(now)
        if record.down_since is None:
            record.down_since, record.down_since_wall, record.reason = now, time.time(), reason
            self.say(f"kronii: the embedded {server.name} exited unexpectedly ({reason}); restarting it")
        else:
            self.say(
                f"kronii: the embedded {server.name} exited again while starting ({reason}); restarting it"
            )
        record.deadline = now + self.settings.ready_timeout_secs
        try:
            self.infra.respawn(server.name)
        except (InfraError, OSError) as error:
            self.say(f"kronii: the embedded {server.name} cannot be started again: {error}; stopping kronii")
            return 1
        record.restarts += 1
        self._write_state()
        return None

    def _server_back(self, server: InfraServer, record: ServerRecord) -> None:
        assert record.down_since is not None
        down = time.monotonic() - record.down_since
        record.outages.append(
            {"died_at": record.down_since_wall, "down_secs": round(down, 2), "reason": record.reason}
        )
        record.down_since = None
        self.say(f"kronii: {server.name} is back after {down:.1f} s")
        self._write_state()

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
        for line in settle_leftovers(stop=self.settings.stop_agents):
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
            with self.single_instance():
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
        except LaunchError as error:
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
