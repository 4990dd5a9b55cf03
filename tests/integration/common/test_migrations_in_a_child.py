"""`kronii up` migrates in a short-lived child process (Alembic and the driver leave with it), creating the
embedded server's database first when it is missing; the launcher asks pg_isready whether PostgreSQL
accepts sessions. The real PostgreSQL."""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg
import pytest
from kronii.foundation.urls import libpq_url
from kronii.launcher.embedded_postgres import postgres_accepts
from kronii.launcher.infra import free_port
from kronii.launcher.migrate_child import MigrationFailed, migrate_in_child
from kronii.stores.db import head_revision

from tests.infra import InfraUrls, create_database


def test_migrations_in_a_child_bring_a_fresh_database_to_head(infra: InfraUrls) -> None:
    url = create_database(infra.database, "kronii_migrate_child")
    migrate_in_child(url)
    with psycopg.connect(libpq_url(url)) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    assert row is not None and row[0] == head_revision()


def test_a_migration_that_cannot_reach_postgres_fails_with_the_childs_reason() -> None:
    with pytest.raises(MigrationFailed, match=r"^the database migrations failed: .*(refused|connect)"):
        migrate_in_child(f"postgresql://kronii:x@127.0.0.1:{free_port()}/kronii")


def test_the_child_creates_a_missing_database_and_brings_it_to_head(infra: InfraUrls) -> None:
    name = "kronii_created_by_child"
    admin = urlsplit(libpq_url(infra.database))._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    url = urlsplit(infra.database)._replace(path=f"/{name}").geturl()
    migrate_in_child(url, create_database=True)
    migrate_in_child(url, create_database=True)  # a second start finds it there
    with psycopg.connect(libpq_url(url)) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    assert row is not None and row[0] == head_revision()


def test_pg_isready_tells_a_closed_port_from_a_server_that_accepts(infra: InfraUrls) -> None:
    port = urlsplit(infra.database).port
    assert port is not None
    assert postgres_accepts(free_port()) == (False, "no response")
    assert postgres_accepts(port) == (True, "accepting connections")
