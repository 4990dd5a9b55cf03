"""Every way the supervisor's lifecycle table can end a trigger (or defer it) is a record PostgreSQL
takes: each row of kronii.supervisor.core.table.TABLE is driven through the real TriggerMachine, and
the outcome it gives is written by the real Outcomes through the real TriggerRecords into the real,
migrated PostgreSQL, audit row and all. Before migration 0009 the row that ends a trigger as
`typed_not_submitted` broke the `result_known` constraint and the caller got an HTTP 500.

The migration's frozen lists and the constraints in the database are checked against the core's
Result and Backend enums, so a new result cannot be added to the core without its migration."""

from __future__ import annotations

import importlib.util
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from kronii.foundation.urls import libpq_url
from kronii.stores.db import MIGRATIONS_DIR
from kronii.supervisor.adapters.tables import triggers
from kronii.supervisor.adapters.trigger_records import OUTBOX_KEY, TriggerRecords
from kronii.supervisor.core.job import Job
from kronii.supervisor.core.machine import Defer, Finish, TriggerMachine
from kronii.supervisor.core.model import Backend, Result
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.table import TABLE, Guard, Phase, Row
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.usecases.trigger_outcomes import Outcomes
from prometheus_client import CollectorRegistry
from sqlalchemy import select

from tests.infra import InfraUrls, service_context
from tests.unit.supervisor.trigger_fakes import (
    FakeAudit,
    FakeBus,
    FakeClock,
    FakeState,
    FakeTriggerLog,
    runtime,
)

PARAMS = SupervisorParams()


def _machine_at(row: Row, *, timed_out: bool = False) -> TriggerMachine:
    """A machine in the row's phase whose state makes exactly this row's guard (and no earlier
    row's for the same signal) hold."""
    guard = row.guard
    state = {
        "phase": sorted(row.phases)[0].value,
        "deliveries": 1 if guard is Guard.RETRIES_LEFT else PARAMS.ack_retries + 1,
        "resubmitted": guard is not Guard.NOT_RESUBMITTED,
        "resume_attempts": 0 if guard is Guard.RESUME_ATTEMPTS_LEFT else PARAMS.resume_max_attempts,
        "timed_out": timed_out,
        "recovered": guard is Guard.RECOVERED,
        "code": None,
        "chain": ["tmux"],
        "can_resume": guard is Guard.CAN_RESUME,
        "can_spawn": guard is Guard.CAN_SPAWN,
    }
    return TriggerMachine.from_dict(PARAMS, state)


def _cases() -> Iterator[tuple[str, Row, bool]]:
    for row in TABLE:
        yield row.name, row, False
        if row.result is None and Phase.DONE is row.to:
            # A FINISH row without its own result ends delivered, or timeout after an ack timed out.
            yield f"{row.name}+timed_out", row, True


CASES = list(_cases())


@pytest_asyncio.fixture
async def redis(infra: InfraUrls) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(infra.redis.rsplit("/", 1)[0] + "/15")
    await client.delete(OUTBOX_KEY)
    try:
        yield client
    finally:
        await client.delete(OUTBOX_KEY)
        await client.aclose()


def _job(trigger_id: str) -> Job:
    return Job(
        trigger_id=trigger_id, agent_id="agent", workspace_id="ws", thread_id="th", prompt="say hello",
        literal=True, ack_timeout_secs=PARAMS.ack_timeout_secs, force=False, reason="", caller="test",
        request_id="r", created_at=FakeClock().time(), detail="why it ended so",
    )  # fmt: skip


@pytest.mark.asyncio
async def test_every_row_of_the_lifecycle_table_writes_a_record_postgres_takes(
    migrated_database: str, redis: aioredis.Redis
) -> None:
    ctx = service_context(migrated_database, redis)
    clock = FakeClock()
    outcomes = Outcomes(
        state=FakeState(), records=TriggerRecords(ctx, redis), trigger_log=FakeTriggerLog(), events=FakeBus(),
        audit=FakeAudit(), metrics=SupervisorMetrics(CollectorRegistry()), params=PARAMS,
        dedupe_ttl_secs=60, clock=clock,
    )  # fmt: skip
    written: dict[str, tuple[str, str]] = {}
    ended: set[Result] = set()
    try:
        for name, row, timed_out in CASES:
            machine = _machine_at(row, timed_out=timed_out)
            assert machine.match(row.signal) is row, f"{name}: the set-up does not reach this row"
            trigger_id = f"every-{uuid.uuid4().hex[:8]}"
            effects = machine.handle(row.signal, clock.monotonic(), code=row.code)
            end = [effect for effect in effects if isinstance(effect, Finish | Defer)]
            if not end:
                assert row.to not in (Phase.DONE, Phase.DEFERRED), f"{name} ends nothing yet goes to {row.to}"
                continue
            (effect,) = end
            if isinstance(effect, Finish):
                await outcomes.finish(_job(trigger_id), machine, effect, runtime())
                ended.add(effect.result)
            else:
                await outcomes.defer(_job(trigger_id), machine, effect, runtime())
                ended.add(Result.DEFERRED)
            assert await redis.llen(OUTBOX_KEY) == 0, f"{name}: PostgreSQL refused the record"
            written[trigger_id] = (name, row.backend.value)
        assert ctx.engine is not None
        async with ctx.engine.connect() as conn:
            stored = {
                tid: (result, backend)
                for tid, result, backend in (
                    await conn.execute(
                        select(triggers.c.trigger_id, triggers.c.result, triggers.c.delivery_backend).where(
                            triggers.c.trigger_id.in_(list(written))
                        )
                    )
                ).all()
            }
    finally:
        assert ctx.engine is not None
        await ctx.engine.dispose()
    assert set(stored) == set(written), "every terminal row left its record"
    assert Result.TYPED_NOT_SUBMITTED in ended and Result.TIMEOUT in ended and Result.DEFERRED in ended
    assert {backend for _, backend in stored.values()} == {b.value for b in Backend}


def _constraint(url: str, name: str) -> set[str]:
    with psycopg.connect(libpq_url(url)) as conn:
        row = conn.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = %s", (name,)
        ).fetchone()
    assert row is not None, f"no constraint {name}"
    return set(re.findall(r"'([^']*)'", row[0]))


def test_the_databases_constraints_allow_exactly_the_cores_results_and_backends(
    migrated_database: str,
) -> None:
    assert _constraint(migrated_database, "result_known") == {result.value for result in Result}
    assert _constraint(migrated_database, "delivery_backend_known") == {backend.value for backend in Backend}


def test_the_migrations_frozen_lists_are_the_cores_enums() -> None:
    path = MIGRATIONS_DIR / "versions" / "0009_supervisor_results.py"
    spec = importlib.util.spec_from_file_location("m0009", path)
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert set(module.RESULTS) == {result.value for result in Result}
    assert set(module.BACKENDS) == {backend.value for backend in Backend}
