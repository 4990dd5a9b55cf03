"""Alembic migrations against a real PostgreSQL: up to head, down to base, up again."""

from __future__ import annotations

import psycopg
from kronii.foundation.urls import libpq_url
from kronii.stores.db import head_revision, migrate_down, migrate_up


def _tables(url: str) -> set[str]:
    plain = libpq_url(url)
    with psycopg.connect(plain) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {row[0] for row in rows}


def _revision(url: str) -> str | None:
    plain = libpq_url(url)
    with psycopg.connect(plain) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return row[0] if row else None


def test_migrations_up_create_every_table_and_down_remove_them(fresh_database: str) -> None:
    migrate_up(fresh_database)
    supervisor = {"supervisor_runtimes", "supervisor_triggers", "supervisor_trigger_attempts"}
    assert {"audit_log", "activity_events", "alembic_version"} | supervisor <= _tables(fresh_database)
    assert _revision(fresh_database) == head_revision()

    migrate_down(fresh_database, "0002_activity_events")
    assert not supervisor & _tables(fresh_database)
    assert _revision(fresh_database) == "0002_activity_events"

    migrate_down(fresh_database, "0001_audit_log")
    assert "activity_events" not in _tables(fresh_database)
    assert _revision(fresh_database) == "0001_audit_log"

    migrate_down(fresh_database, "base")
    assert _tables(fresh_database) <= {"alembic_version"}

    migrate_up(fresh_database)
    assert {"audit_log", "activity_events"} <= _tables(fresh_database)


def test_migrations_are_idempotent_at_head(fresh_database: str) -> None:
    migrate_up(fresh_database)
    migrate_up(fresh_database)
    assert _revision(fresh_database) == head_revision()
