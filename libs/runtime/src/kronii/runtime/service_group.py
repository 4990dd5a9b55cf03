"""Several services in one process and one event loop: `python -m kronii.runtime.service_group sensor capture`.

`kronii up` runs every installed service this way by default (KRONII_SERVICE_PROCESSES=shared): one
interpreter and one copy of FastAPI, gRPC, SQLAlchemy, Redis and OpenTelemetry instead of one per service.
Each service keeps its own runtime (settings, ports, metrics registry, connections, readiness) and runs as
its own task; its log records name it (`kronii.foundation.logs.current_service`).

A service whose run raises is logged under its name and started again (a new runtime) after a pause, up to
MAX_RESTARTS within RESTART_WINDOW_SECS; past that the whole process exits with code 1 and the launcher
restarts it. The others keep running meanwhile. What a process cannot contain — a segfault, os._exit, an
OOM kill, a task that blocks the loop — all of them share: the launcher then starts the whole group again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from kronii.foundation.freed_memory import keep_returning_freed_memory
from kronii.foundation.logs import configure_logging, current_service
from kronii.foundation.settings import ServiceSettings, SettingsError
from kronii.foundation.telemetry import configure_tracing
from kronii.runtime.service import _Runtime, failure_reason
from kronii.runtime.spec import ServiceSpec, checked_settings
from kronii.runtime.up_settings import MAX_RESTARTS, RESTART_WINDOW_SECS, SHARED_PROCESS_NAME
from kronii.stores.bus import JetStreamUnavailable
from kronii.stores.db import EngineShare

__all__ = ["ServiceGroup", "main"]

# Named, not __name__: run as `python -m`, this module is __main__.
log = logging.getLogger("kronii.runtime.service_group")

RESTART_PAUSE_SECS = 1.0


class _GroupFailure(Exception):
    """A member cannot go on: the group stops and exits with `code`."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class _Member:
    spec: ServiceSpec
    settings: ServiceSettings
    runtime: _Runtime | None = None
    failures: list[float] = field(default_factory=list)


class ServiceGroup:
    """Runs each member as its own task; SIGTERM and SIGINT stop them all."""

    def __init__(
        self,
        members: Sequence[tuple[ServiceSpec, ServiceSettings]],
        *,
        restart_pause_secs: float = RESTART_PAUSE_SECS,
        max_restarts: int = MAX_RESTARTS,
        restart_window_secs: float = RESTART_WINDOW_SECS,
    ) -> None:
        self.members = [_Member(spec, settings) for spec, settings in members]
        self.restart_pause_secs = restart_pause_secs
        self.max_restarts = max_restarts
        self.restart_window_secs = restart_window_secs
        self.stopping = asyncio.Event()
        self.engines = EngineShare(services=len(self.members))

    @property
    def shutdown_timeout_secs(self) -> float:
        # They stop together, so the slowest one's allowance is the group's.
        return max(member.settings.shutdown_timeout_secs for member in self.members)

    def runtime(self, name: str) -> _Runtime | None:
        """The member's current runtime (a new one after each restart)."""
        return next((member.runtime for member in self.members if member.spec.name == name), None)

    def request_stop(self) -> None:
        self.stopping.set()
        for member in self.members:
            if member.runtime is not None:
                member.runtime.stopping.set()

    async def run(self) -> int:
        """Run until a stop is asked (exit code 0) or a member cannot go on (its code). Past the shutdown
        timeout the process exits at once with code 1, as a single service does."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        try:
            tasks = [self._start(member) for member in self.members]
            stop_wait = asyncio.create_task(self.stopping.wait())
            trims = asyncio.create_task(keep_returning_freed_memory(self.stopping), name="freed-memory")
            await asyncio.wait({*tasks, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            self.request_stop()
            stop_wait.cancel()
            trims.cancel()
            _, pending = await asyncio.wait(tasks, timeout=self.shutdown_timeout_secs)
            if pending:
                names = ", ".join(task.get_name() for task in pending)
                log.error("%s did not stop within %.1f s; exiting", names, self.shutdown_timeout_secs)
                logging.shutdown()
                os._exit(1)
            return max(_exit_code(task) for task in tasks)
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    def _start(self, member: _Member) -> asyncio.Task[None]:
        # Set before the task is made, so the task and everything it starts carry the service's name.
        token = current_service.set(member.spec.name)
        try:
            return asyncio.create_task(self._keep_running(member), name=member.spec.name)
        finally:
            current_service.reset(token)

    async def _keep_running(self, member: _Member) -> None:
        name = member.spec.name
        while not self.stopping.is_set():
            try:
                member.runtime = _Runtime(member.spec, member.settings, engines=self.engines)
                if self.stopping.is_set():
                    member.runtime.stopping.set()
                await member.runtime.run(handle_signals=False)
                if self.stopping.is_set():
                    return
                log.error("%s stopped though nobody asked it to", name)
            except (SettingsError, JetStreamUnavailable) as error:
                # A setting to change: starting again would fail the same way.
                log.error("%s failed: %s", name, getattr(error, "message", error))
                raise _GroupFailure(2) from None
            except Exception as error:
                log.exception("%s failed: %s", name, failure_reason(error))
            await self._pause_before_restart(member)

    async def _pause_before_restart(self, member: _Member) -> None:
        now = time.monotonic()
        member.failures = [at for at in member.failures if now - at < self.restart_window_secs]
        member.failures.append(now)
        if len(member.failures) > self.max_restarts:
            log.error(
                "%s failed %d times within %.0f s; stopping the services that share its process",
                member.spec.name,
                len(member.failures),
                self.restart_window_secs,
            )
            raise _GroupFailure(1)
        log.warning("%s: starting it again in %.1f s", member.spec.name, self.restart_pause_secs)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), self.restart_pause_secs)


def _exit_code(task: asyncio.Task[object]) -> int:
    if task.cancelled():
        return 1
    error = task.exception()
    if error is None:
        return 0
    if isinstance(error, _GroupFailure):
        return error.code
    log.error("%s failed: %s", task.get_name(), failure_reason(error), exc_info=error)
    return 1


def _specs(names: Sequence[str]) -> list[ServiceSpec]:
    from kronii.runtime.services import installed_services

    installed = {spec.name: spec for spec in installed_services()}
    unknown = [name for name in names if name not in installed]
    if unknown or not names:
        raise SettingsError(
            f"kronii: cannot start services {', '.join(unknown) or '(none named)'}: "
            f"the installed ones are {', '.join(installed) or 'none'}"
        )
    return [installed[name] for name in dict.fromkeys(names)]


def main(argv: Sequence[str] | None = None) -> int:
    """Check every member's settings before the heavy imports, then run them until SIGTERM."""
    names = list(sys.argv[1:] if argv is None else argv)
    try:
        members = [(spec, checked_settings(spec)) for spec in _specs(names)]
    except SettingsError as error:
        print(error.message, file=sys.stderr)
        return 2
    first = members[0][1]
    # Under `kronii up` each line says its service, so the launcher shows it under that name.
    prefixed = bool(os.environ.get("KRONII_LAUNCHED_BY_UP"))
    configure_logging(SHARED_PROCESS_NAME, first.log_level, first.log_format, prefix_lines=prefixed)
    configure_tracing(SHARED_PROCESS_NAME)
    return asyncio.run(_run_in_fresh_loop(ServiceGroup(members)))


async def _run_in_fresh_loop(group: ServiceGroup) -> int:
    # asyncio.to_thread's pool, as large as the members had in processes of their own: a burst of
    # capture's redaction or a long LLM call must not leave the sensor waiting for a thread.
    workers = len(group.members) * min(32, (os.cpu_count() or 1) + 4)
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(workers))
    return await group.run()


if __name__ == "__main__":
    raise SystemExit(main())
