"""Migration 0005_pipeline: its tables appear on upgrade and go on downgrade to 0004_capture."""

from __future__ import annotations

import psycopg
from kronii.foundation.urls import libpq_url
from kronii.stores.db import migrate_down, migrate_up

PIPELINE_TABLES = {"pipeline_plugins", "pipeline_runs", "pipeline_notifications", "pipeline_source_controls"}


def _tables(url: str) -> set[str]:
    with psycopg.connect(libpq_url(url)) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {row[0] for row in rows}


def test_0005_creates_the_pipeline_tables_and_downgrade_removes_only_them(fresh_database: str) -> None:
    migrate_up(fresh_database, "0005_pipeline")
    before = _tables(fresh_database)
    assert before >= PIPELINE_TABLES
    migrate_down(fresh_database, "0004_capture")
    assert _tables(fresh_database) == before - PIPELINE_TABLES
    migrate_up(fresh_database, "0005_pipeline")
    assert _tables(fresh_database) == before


def test_risk_scores_outside_zero_to_one_are_refused_by_the_database(fresh_database: str) -> None:
    migrate_up(fresh_database, "0005_pipeline")
    with psycopg.connect(libpq_url(fresh_database)) as conn:
        try:
            conn.execute(
                "INSERT INTO pipeline_plugins (app_id, risk_score, registered_at, updated_at) VALUES ('x', 1.5, now(), now())"
            )
        except psycopg.errors.CheckViolation:
            return
    raise AssertionError("a risk score of 1.5 was stored")
