"""The mesh's services as real processes on free ports (started at once, in threads), for the tests
that feed them hostile input: the same starters the services' own integration tests use."""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kronii.launcher.infra import EmbeddedInfra, InfraPorts, free_port
from kronii.stores.db import migrate_up

from tests.agents.harness import private_socket
from tests.infra import InfraUrls, create_database
from tests.integration.capture.capture_support import capture_env, start_capture
from tests.integration.pipeline.pipeline_support import pipeline_database, pipeline_env, start_pipeline
from tests.integration.scheduler.conftest import new_prefix, start_scheduler
from tests.integration.supervisor.conftest import start_supervisor, token
from tests.mesh import Proc, start_service

__all__ = ["SERVICES", "Mesh", "Service", "mesh_of_five"]

SERVICES = ("sensor", "capture", "pipeline", "scheduler", "supervisor", "broker", "critic", "vision")


@dataclass(frozen=True)
class Service:
    name: str
    url: str
    grpc_port: int
    # What every call carries: the supervisor verifies its own signed token on every route.
    headers: dict[str, str]
    proc: Proc


@contextlib.contextmanager
def _sensor(infra: InfraUrls, database: str, folder: Path) -> Iterator[Service]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_") and k != "DISPLAY"}
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(folder / "data"),
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    with start_service("sensor", env, timeout=60) as sensor:
        yield Service("sensor", sensor.url, sensor.grpc_port, {}, sensor.proc)


@contextlib.contextmanager
def _capture(infra: InfraUrls, database: str, folder: Path) -> Iterator[Service]:
    with start_capture(capture_env(infra, database, folder / "capture", None)) as capture:
        yield Service("capture", capture.http, capture.grpc_port, {}, capture.proc)


@contextlib.contextmanager
def _pipeline(infra: InfraUrls, database: str, folder: Path) -> Iterator[Service]:
    env = pipeline_env(infra, pipeline_database(infra, "hostile"), folder / "pipeline")
    with start_pipeline(env) as pipeline:
        port = int(env["KRONII_PIPELINE_GRPC_PORT"])
        yield Service("pipeline", pipeline.url, port, {}, pipeline.proc)


@contextlib.contextmanager
def _scheduler(infra: InfraUrls, database: str, folder: Path) -> Iterator[Service]:
    with start_scheduler(infra, database, new_prefix("hostile")) as scheduler:
        yield Service("scheduler", scheduler.url, scheduler.grpc_port, {}, scheduler.proc)


@contextlib.contextmanager
def _supervisor(infra: InfraUrls, database: str, folder: Path) -> Iterator[Service]:
    with private_socket() as socket, start_supervisor(infra, database, folder / "supervisor", socket) as sup:
        headers = {"authorization": f"Bearer {token()}"}
        yield Service("supervisor", sup.url, sup.grpc_port, headers, sup.proc)


@contextlib.contextmanager
def _broker(infra: InfraUrls, database: str, folder: Path) -> Iterator[Service]:
    from tests.integration.broker.broker_support import start_broker

    with start_broker(infra, database, "", folder / "broker") as broker:
        yield Service("broker", broker.url, broker.grpc_port, {}, broker.proc)


@contextlib.contextmanager
def _critic(infra: InfraUrls, database: str, folder: Path) -> Iterator[Service]:
    from tests.integration.critic.test_critic_service import start_critic

    with start_critic(infra, database, folder / "critic") as critic:
        grpc_port = int(critic.env["KRONII_CRITIC_GRPC_PORT"])
        yield Service("critic", critic.url, grpc_port, {}, critic.proc)


@contextlib.contextmanager
def _vision(infra: InfraUrls, database: str, folder: Path) -> Iterator[Service]:
    """The engine on a private accessible desktop of its own (Xvfb, a session bus and the accessibility
    bus it activates): without one, planning and the context are 503 by design, which schemathesis would
    count as server errors. Its broker address leads nowhere, so a generated plan that runs fails at its
    first action instead of reaching a broker it does not belong to."""
    from tests.integration.vision.vision_desktop import start_a11y_desktop

    with start_a11y_desktop() as desktop:
        env = {k: v for k, v in desktop.env.items() if not k.startswith("KRONII_")}
        env.update(infra.env())
        env.update(
            KRONII_DATABASE_URL=database,
            KRONII_DATA_DIR=str(folder / "vision"),
            KRONII_VISION_USE_CAPTURE="false",
            KRONII_VISION_BROKER_URL=f"http://127.0.0.1:{free_port()}",
        )
        # Stopped (killed if it does not stop) before the desktop it reads is gone.
        with start_service("vision", env, timeout=60) as vision:
            yield Service("vision", vision.url, vision.grpc_port, {}, vision.proc)


@dataclass(frozen=True)
class Mesh:
    services: dict[str, Service]
    # The database the sensor, capture, scheduler and supervisor share (the audit log is there).
    database: str

    def __getitem__(self, name: str) -> Service:
        return self.services[name]


_STARTERS: dict[str, Callable[[InfraUrls, str, Path], contextlib.AbstractContextManager[Service]]] = {
    "sensor": _sensor,
    "capture": _capture,
    "pipeline": _pipeline,
    "scheduler": _scheduler,
    "supervisor": _supervisor,
    "broker": _broker,
    "critic": _critic,
    "vision": _vision,
}


@contextlib.contextmanager
def _private_bus_and_cache(infra: InfraUrls, folder: Path) -> Iterator[InfraUrls]:
    """A NATS and a Redis of the mesh's own (PostgreSQL is shared, in a database of its own): its
    scheduler and pipeline join queue groups and its sensor writes the snapshot key, which must not
    reach the other tests' services."""
    own = EmbeddedInfra(folder / "infra", InfraPorts(free_port(), free_port(), free_port()))
    try:
        servers = own.start(nats_url=None, redis_url=None, database_url=infra.database)
        yield InfraUrls(servers["nats"].url, servers["redis"].url, infra.database)
    finally:
        own.stop()


@contextlib.contextmanager
def mesh_of_five(shared: InfraUrls, folder: Path) -> Iterator[Mesh]:
    """All the services, started in parallel (each takes seconds to come up), stopped at the end."""
    with _private_bus_and_cache(shared, folder) as infra:
        yield from _mesh(infra, folder)


def _mesh(infra: InfraUrls, folder: Path) -> Iterator[Mesh]:
    database = create_database(infra.database, f"kronii_hostile_{uuid.uuid4().hex[:6]}")
    migrate_up(database)
    stacks = {name: contextlib.ExitStack() for name in SERVICES}
    started: dict[str, Service] = {}
    failures: list[BaseException] = []

    def start(name: str) -> None:
        try:
            started[name] = stacks[name].enter_context(_STARTERS[name](infra, database, folder))
        except BaseException as error:  # reported below, on the test's thread
            failures.append(error)

    try:
        _each(start)
        if failures:
            raise failures[0]
        yield Mesh(started, database)
    finally:
        # Stopping takes each service a second or more: stop them all at once too.
        _each(lambda name: stacks[name].close())


def _each(action: Callable[[str], None]) -> None:
    threads = [threading.Thread(target=action, args=(name,)) for name in SERVICES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
