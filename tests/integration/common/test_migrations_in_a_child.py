"""`kronii up` migrates in a short-lived child process (Alembic leaves with it); the real PostgreSQL."""

from __future__ import annotations

import psycopg
import pytest
from kronii.common.db import head_revision
from kronii.common.infra import free_port
from kronii.common.migrate_child import MigrationFailed, migrate_in_child
from kronii.common.urls import libpq_url

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
