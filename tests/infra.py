"""Infrastructure for the test run: the same embedded servers `kronii up` starts (one set per run),
the URLs from the environment when they are set, or containers when KRONII_TEST_INFRA=containers."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from kronii.foundation.urls import libpq_url
from kronii.launcher.infra import EmbeddedInfra, InfraPorts, free_port
from kronii.launcher.migrate_child import create_database_if_missing

__all__ = ["InfraUrls", "create_database", "service_context", "start_test_infra"]


@dataclass(frozen=True)
class InfraUrls:
    nats: str
    redis: str
    database: str

    def env(self) -> dict[str, str]:
        return {
            "KRONII_NATS_URL": self.nats,
            "KRONII_REDIS_URL": self.redis,
            "KRONII_DATABASE_URL": self.database,
        }


@contextlib.contextmanager
def _containers() -> Iterator[InfraUrls]:
    from testcontainers.core.container import DockerContainer
    from testcontainers.postgres import PostgresContainer
    from testcontainers.redis import RedisContainer

    with (
        DockerContainer("nats:2.10").with_command("-js").with_exposed_ports(4222) as nats,
        RedisContainer("redis:7") as redis,
        PostgresContainer("postgres:16", driver=None) as postgres,
    ):
        yield InfraUrls(
            nats=f"nats://{nats.get_container_host_ip()}:{nats.get_exposed_port(4222)}",
            redis=f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0",
            database=postgres.get_connection_url(),
        )


@contextlib.contextmanager
def start_test_infra() -> Iterator[InfraUrls]:
    mode = os.environ.get("KRONII_TEST_INFRA", "embedded")
    if mode == "containers":
        with _containers() as urls:
            yield urls
        return
    if mode != "embedded":
        raise RuntimeError(f"KRONII_TEST_INFRA must be 'embedded' or 'containers', not {mode!r}")
    configured = {
        "nats": os.environ.get("KRONII_NATS_URL"),
        "redis": os.environ.get("KRONII_REDIS_URL"),
        "database": os.environ.get("KRONII_DATABASE_URL"),
    }
    os.environ.setdefault("KRONII_TEST_FAST_PG", "1")
    with tempfile.TemporaryDirectory(prefix="kronii-test-infra-") as tmp:
        infra = EmbeddedInfra(Path(tmp) / "data", InfraPorts(free_port(), free_port(), free_port()))
        try:
            servers = infra.start(
                nats_url=configured["nats"],
                redis_url=configured["redis"],
                database_url=configured["database"],
            )
            if servers["postgres"].embedded:
                # As `kronii up` does in its migrations' child.
                create_database_if_missing(servers["postgres"].url)
            yield InfraUrls(servers["nats"].url, servers["redis"].url, servers["postgres"].url)
        finally:
            infra.stop()


def create_database(url: str, name: str) -> str:
    """A fresh, empty database on the same server; returns its URL."""
    plain = libpq_url(url)
    parts = urlsplit(plain)
    admin = urlunsplit((parts.scheme, parts.netloc, "/postgres", parts.query, ""))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


def service_context(database_url: str, redis: Any, name: str = "supervisor") -> Any:
    """A ServiceContext wired as the runtime wires it (engine, sessions, audit log, audit outbox),
    for tests of code that takes one; `database_url` may point at a closed port (PostgreSQL away)."""
    from kronii.foundation.settings import ServiceSettings
    from kronii.foundation.telemetry import CommonMetrics
    from kronii.runtime.service import ServiceContext
    from kronii.runtime.spec import ServiceSpec
    from kronii.stores.audit import AuditLog
    from kronii.stores.bus import Bus
    from kronii.stores.db import make_engine, make_sessionmaker
    from kronii.stores.durable import AuditOutbox
    from prometheus_client import CollectorRegistry

    spec = ServiceSpec(name, ServiceSettings, f"kronii.{name}.app:App")
    registry = CollectorRegistry()
    metrics = CommonMetrics(name, registry)
    engine = make_engine(database_url)
    sessions = make_sessionmaker(engine)
    audit = AuditLog(sessions, name)
    return ServiceContext(
        spec, ServiceSettings(), metrics, registry, Bus(name, metrics),
        redis=redis, engine=engine, sessions=sessions, audit=audit,
        audit_outbox=AuditOutbox(redis, audit, name),
    )  # fmt: skip
