"""The audit log on a real PostgreSQL: the chain verifies, tampering is found, history is append-only."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator

import psycopg
import pytest
from kronii.foundation.urls import libpq_url
from kronii.stores.audit import DETAIL_VALUE_CAP, GENESIS_HASH, AuditLog
from kronii.stores.db import make_engine, make_sessionmaker, migrate_up
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker


def _plain(url: str) -> str:
    return libpq_url(url)


@pytest.fixture
async def audit(fresh_database: str) -> AsyncIterator[AuditLog]:
    migrate_up(fresh_database)
    engine = make_engine(fresh_database)
    sessions: async_sessionmaker[AsyncSession] = make_sessionmaker(engine)
    yield AuditLog(sessions, "test")
    await engine.dispose()


async def test_audit_chain_of_appended_rows_verifies(audit: AuditLog) -> None:
    first = await audit.append(actor="logind", action="session.lock", outcome="recorded", detail={"n": 1})
    for n in range(2, 6):
        await audit.append(actor="logind", action="session.unlock", detail={"n": n})
    assert first.prev_hash == GENESIS_HASH
    report = await audit.verify()
    assert report.ok
    assert report.rows_checked == 5
    rows = await audit.tail(3)
    assert [row.detail["n"] for row in rows] == [3, 4, 5]
    assert rows[1].prev_hash == rows[0].row_hash


async def test_concurrent_appends_keep_one_linear_chain(audit: AuditLog) -> None:
    await asyncio.gather(*(audit.append(actor=f"a{n}", action="test.concurrent") for n in range(20)))
    report = await audit.verify()
    assert report.ok and report.rows_checked == 20


async def test_audit_rows_cannot_be_updated_or_deleted(audit: AuditLog, fresh_database: str) -> None:
    row = await audit.append(actor="x", action="test.append_only")
    with psycopg.connect(_plain(fresh_database)) as conn:
        with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
            conn.execute("UPDATE audit_log SET outcome = 'changed' WHERE id = %s", (row.id,))
        conn.rollback()
        with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
            conn.execute("DELETE FROM audit_log WHERE id = %s", (row.id,))


def _tamper(url: str, sql: str, params: tuple[object, ...]) -> None:
    """A superuser bypassing the trigger, as an attacker with database access would."""
    with psycopg.connect(_plain(url)) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute(sql, params)


async def test_audit_verify_reports_the_first_altered_row(audit: AuditLog, fresh_database: str) -> None:
    rows = [await audit.append(actor="u", action="test.tamper", detail={"n": n}) for n in range(6)]
    _tamper(fresh_database, "UPDATE audit_log SET outcome = 'forged' WHERE id = %s", (rows[3].id,))
    report = await audit.verify()
    assert not report.ok
    assert report.first_broken_id == rows[3].id
    assert "altered" in report.reason


async def test_audit_verify_reports_a_removed_row(audit: AuditLog, fresh_database: str) -> None:
    rows = [await audit.append(actor="u", action="test.remove", detail={"n": n}) for n in range(5)]
    _tamper(fresh_database, "DELETE FROM audit_log WHERE id = %s", (rows[2].id,))
    report = await audit.verify()
    assert report.first_broken_id == rows[3].id
    assert "link" in report.reason


async def test_kronii_audit_verify_cli_exits_nonzero_and_names_the_row(
    audit: AuditLog, fresh_database: str
) -> None:
    rows = [await audit.append(actor="u", action="test.cli", detail={"n": n}) for n in range(3)]
    env = {**os.environ, "KRONII_DATABASE_URL": fresh_database}
    ok = subprocess.run(
        [sys.executable, "-m", "kronii.launcher.cli.main", "audit", "verify"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert "3 rows verified" in ok.stdout
    tail = subprocess.run(
        [sys.executable, "-m", "kronii.launcher.cli.main", "audit", "tail", "-n", "2"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert tail.returncode == 0
    assert tail.stdout.count("test.cli") == 2

    _tamper(fresh_database, "UPDATE audit_log SET actor = 'mallory' WHERE id = %s", (rows[1].id,))
    broken = subprocess.run(
        [sys.executable, "-m", "kronii.launcher.cli.main", "audit", "verify"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert broken.returncode == 1
    assert f"BROKEN at row {rows[1].id}" in broken.stdout


async def test_kronii_audit_tail_keeps_its_columns_in_line_for_long_actions_and_actors(
    audit: AuditLog, fresh_database: str
) -> None:
    await audit.append(
        actor="agent:reviewer-of-the-night-shift", action="supervisor.trigger.typed_not_submitted",
        subject="t-1", outcome="typed_not_submitted",
    )  # fmt: skip
    await audit.append(actor="u", action="x", subject="s1", outcome="ok")
    env = {**os.environ, "KRONII_DATABASE_URL": fresh_database}
    tail = subprocess.run(
        [sys.executable, "-m", "kronii.launcher.cli.main", "audit", "tail", "-n", "2"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert tail.returncode == 0, tail.stderr
    header, *lines = tail.stdout.splitlines()
    assert len(lines) == 2
    # Every column starts where its heading starts, whatever the width of the values before it.
    for heading in ("SERVICE", "ACTION", "ACTOR", "OUTCOME", "SUBJECT"):
        column = header.index(heading)
        assert all(line[column - 2 : column] == "  " and line[column] != " " for line in lines), heading


async def test_long_detail_values_are_stored_capped_and_the_chain_still_verifies(audit: AuditLog) -> None:
    long_text = "p" * (DETAIL_VALUE_CAP * 50)
    long_list = [f"item-{n}" for n in range(2_000)]
    row = await audit.append(
        actor="t", action="test.cap", detail={"prompt": long_text, "items": long_list, "short": "kept"}
    )
    await audit.append(actor="t", action="test.after")
    assert row.detail["short"] == "kept"
    assert row.detail["prompt"] == {
        "truncated": long_text[:DETAIL_VALUE_CAP],
        "length": len(long_text),
        "sha256": hashlib.sha256(long_text.encode()).hexdigest(),
    }
    assert row.detail["items"]["length"] > DETAIL_VALUE_CAP
    stored = (await audit.tail(2))[0]
    assert stored.detail == row.detail
    report = await audit.verify()
    assert report.ok and report.rows_checked == 2
