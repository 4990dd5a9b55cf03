"""The Privacy page's stores on real PostgreSQL: the audit log's tail (newest first) and the chain
verified as `kronii audit verify` does (from the first row, then going on from the last row checked;
the whole chain again on asking: a row altered afterwards found by its id); rows and bytes of the
tables that keep the person's data, and only tables of the console's own list."""

from __future__ import annotations

from collections.abc import AsyncIterator

import psycopg
import pytest_asyncio
from kronii.console.adapters.audit_log import AuditLogReader, TableSizes
from kronii.console.usecases.show_privacy import KNOWN_TABLES
from kronii.foundation.urls import libpq_url
from kronii.stores.audit import AuditLog
from kronii.stores.db import make_engine, make_sessionmaker, migrate_up
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.infra import InfraUrls, create_database


@pytest_asyncio.fixture
async def database(infra: InfraUrls) -> AsyncIterator[tuple[str, AsyncEngine]]:
    url = create_database(infra.database, "kronii_console_privacy_it")
    migrate_up(url)
    engine = make_engine(url)
    try:
        yield url, engine
    finally:
        await engine.dispose()


async def test_the_tail_is_newest_first_and_an_altered_row_breaks_the_chain_at_its_id(
    database: tuple[str, AsyncEngine],
) -> None:
    url, engine = database
    log = AuditLog(make_sessionmaker(engine), "console")
    for n in range(5):
        await log.append(
            actor="person:uid:1000", action="console.privacy.delete_day", subject=f"2026-12-0{n + 1}"
        )
    reader = AuditLogReader(engine)

    tail = await reader.tail(3)
    intact = await reader.verify()
    with psycopg.connect(libpq_url(url)) as connection:
        altered = connection.execute("SELECT id FROM audit_log ORDER BY id LIMIT 1 OFFSET 2").fetchone()
        assert altered
        connection.execute(
            "SET session_replication_role = replica"
        )  # past the append-only trigger, as a tamperer would
        connection.execute("UPDATE audit_log SET subject = 'rewritten' WHERE id = %s", altered)
    await log.append(actor="person:uid:1000", action="console.privacy.delete_app", subject="xterm")
    went_on = await reader.verify()
    broken = await reader.verify(whole=True)
    again = await reader.verify()

    assert [entry.subject for entry in tail] == ["2026-12-05", "2026-12-04", "2026-12-03"]
    assert intact.ok and intact.whole and intact.rows_checked == 5
    # A look goes on from where the last stopped: the new row is checked, the old ones are not again.
    assert went_on.ok and not went_on.whole and went_on.rows_checked == 6
    assert "checked on an earlier look" in went_on.sentence()
    assert not broken.ok and broken.first_broken_id == altered[0]
    assert "altered" in broken.sentence()
    # After a break the next look starts over from the first row, so it keeps saying so.
    assert not again.ok and again.first_broken_id == altered[0]


async def test_sizes_are_the_known_tables_rows_and_bytes_and_nothing_else(
    database: tuple[str, AsyncEngine],
) -> None:
    url, engine = database
    with psycopg.connect(libpq_url(url)) as connection:
        connection.execute(
            "INSERT INTO activity_events (at, kind, state, detail) VALUES (now(), 'focus', 'active', '{}')"
        )

    sizes = {
        size.table: size
        for size in await TableSizes(engine, KNOWN_TABLES).sizes([*KNOWN_TABLES, "pg_class", "x; DROP"])
    }

    assert set(sizes) <= set(KNOWN_TABLES) and "activity_events" in sizes and "audit_log" in sizes
    assert sizes["activity_events"].rows == 1 and sizes["activity_events"].bytes > 0
