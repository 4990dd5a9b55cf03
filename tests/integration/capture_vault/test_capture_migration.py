"""Migration 0004_capture on a real PostgreSQL: the three tables come and go, and the table
constraints refuse an unknown object kind and a public key that is not 32 bytes."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest
from kronii.foundation.urls import libpq_url
from kronii.stores.db import migrate_down, migrate_up

CAPTURE_TABLES = {"capture_jobs", "capture_objects", "capture_clients"}


def _tables(url: str) -> set[str]:
    with psycopg.connect(libpq_url(url)) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {row[0] for row in rows}


def test_capture_migration_creates_its_tables_and_removes_them_going_down(fresh_database: str) -> None:
    migrate_up(fresh_database, "0004_capture")
    assert _tables(fresh_database) >= CAPTURE_TABLES

    migrate_down(fresh_database, "0003_supervisor_registry")
    assert not CAPTURE_TABLES & _tables(fresh_database)
    assert "supervisor_runtimes" in _tables(fresh_database)


def test_capture_tables_refuse_unknown_kinds_and_malformed_keys(fresh_database: str) -> None:
    migrate_up(fresh_database, "0004_capture")
    now = datetime.now(UTC)
    with psycopg.connect(libpq_url(fresh_database)) as conn:
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO capture_objects (object_id, job_id, kind, width, height, provider, key_version,"
                " wrapped_key, size_bytes, created_at) VALUES ('o1', 'j1', 'thumbnail', 1, 1, 'keyfile', 1,"
                " 'x', 1, %s)",
                (now,),
            )
        conn.rollback()
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO capture_clients (client_id, public_key, created_at) VALUES ('a1', %s, %s)",
                (b"short", now),
            )
        conn.rollback()
        conn.execute(
            "INSERT INTO capture_clients (client_id, public_key, created_at) VALUES ('a1', %s, %s)",
            (bytes(32), now),
        )
        caps = conn.execute("SELECT capabilities FROM capture_clients WHERE client_id = 'a1'").fetchone()
    assert caps == ([],)
