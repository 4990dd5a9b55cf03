"""The Redis timers against a real Redis: a due wake-up is claimed by one poller only, however many
poll at once; a claim never confirmed fires again after its lease; a plan replaces its slot."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import pytest_asyncio
import redis.asyncio as aioredis
from kronii.scheduler.adapters.timers import RedisTimers
from kronii.scheduler.core.model import Cooldown, TickKind, WakeUp

from tests.infra import InfraUrls

NOW = 1_700_000_000.0


@pytest_asyncio.fixture
async def redis(infra: InfraUrls) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(infra.redis)
    try:
        yield client
    finally:
        await client.aclose()


def _timers(redis: aioredis.Redis, lease_secs: float = 10.0) -> RedisTimers:
    return RedisTimers(redis, f"kronii-test:timers:{uuid.uuid4().hex[:8]}", lease_secs=lease_secs)


def _wakeup(slot: str, due_at: float, wakeup_id: str | None = None) -> WakeUp:
    return WakeUp(wakeup_id or uuid.uuid4().hex, slot, due_at, TickKind.PLANNED, app=slot, run_id="r")


async def test_a_due_wakeup_is_claimed_once_by_many_concurrent_pollers(redis: aioredis.Redis) -> None:
    timers = _timers(redis)
    await timers.put_wakeup(_wakeup("app:a", NOW - 1))
    await timers.put_wakeup(_wakeup("app:later", NOW + 60))
    claims = await asyncio.gather(*(timers.claim_due(NOW) for _ in range(20)))
    claimed = [wakeup for batch in claims for wakeup in batch]
    assert [wakeup.slot for wakeup in claimed] == ["app:a"]
    await timers.done(claimed[0])
    assert await timers.claim_due(NOW + 10) == []
    assert [wakeup.slot for wakeup in await timers.pending()] == ["app:later"]


async def test_an_unconfirmed_claim_fires_again_after_its_lease(redis: aioredis.Redis) -> None:
    timers = _timers(redis, lease_secs=5)
    await timers.put_wakeup(_wakeup("global", NOW, "w-crash"))
    (first,) = await timers.claim_due(NOW)
    assert await timers.claim_due(NOW + 4) == [], "within the lease nobody else gets it"
    (again,) = await timers.claim_due(NOW + 6)
    assert again == first and again.due_at == NOW
    await timers.done(again)
    assert await timers.pending() == []


async def test_a_new_wakeup_replaces_the_slots_pending_one(redis: aioredis.Redis) -> None:
    timers = _timers(redis)
    await timers.put_wakeup(_wakeup("app:code", NOW + 5, "old"))
    await timers.put_wakeup(_wakeup("app:code", NOW + 9, "new"))
    assert [(item.wakeup_id, item.due_at) for item in await timers.pending()] == [("new", NOW + 9)]
    assert await timers.claim_due(NOW + 6) == []
    assert await timers.has_slot("app:code")


async def test_cooldown_filters_and_runs_round_trip_through_redis(redis: aioredis.Redis) -> None:
    timers = _timers(redis)
    now = time.time()
    await timers.set_cooldown(Cooldown(now + 30, app="code", run_id="r1", reason="why"))
    await timers.merge_filters({"title_changed": now + 10})
    await timers.merge_filters({"title_changed": now + 5, "app:x": now - 1})
    await timers.record_run("code", now - 5)
    await timers.record_run("", now - 4)
    view = await timers.admission_view("code", now)
    assert view.cooldown == Cooldown(round((now + 30) * 1000) / 1000, app="code", run_id="r1", reason="why")
    assert view.filters == {"title_changed": round((now + 10) * 1000) / 1000}, "the later end is kept"
    assert len(view.global_runs) == 2 and len(view.app_runs) == 1
    assert await timers.apps_with_runs(now) == ["code"]
    await timers.set_cooldown(None)
    assert await timers.cooldown(now) is None
