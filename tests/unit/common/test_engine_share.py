"""The services of one process share one PostgreSQL pool (kronii up's default): one pool per database,
held while any of them holds it, with room for each service's connections."""

from __future__ import annotations

from kronii.stores.db import (
    CONNECTIONS_PER_SERVICE,
    IDLE_CONNECTIONS_ALONE,
    IDLE_CONNECTIONS_SHARED,
    EngineShare,
)
from sqlalchemy.pool import AsyncAdaptedQueuePool

URL = "postgresql://kronii:pw@127.0.0.1:1/kronii"


async def test_the_services_of_a_process_get_one_pool_per_database() -> None:
    share = EngineShare(services=3)
    first, second = share.acquire(URL), share.acquire(URL)
    other = share.acquire(URL.replace("/kronii", "/elsewhere"))
    assert first is second
    assert other is not first
    for engine in (first, second, other):
        await share.release(engine)


async def test_the_pool_stays_while_a_service_holds_it_and_goes_with_the_last() -> None:
    share = EngineShare(services=2)
    engine = share.acquire(URL)
    share.acquire(URL)
    await share.release(engine)
    assert share.acquire(URL) is engine  # a service started again takes the same pool back
    await share.release(engine)
    await share.release(engine)
    assert share.acquire(URL) is not engine  # the last one let it go: disposed, a new one is made


def test_the_shared_pool_keeps_few_idle_connections_and_room_for_every_service() -> None:
    alone, shared = EngineShare().acquire(URL).pool, EngineShare(services=8).acquire(URL).pool
    assert isinstance(alone, AsyncAdaptedQueuePool) and isinstance(shared, AsyncAdaptedQueuePool)
    assert (alone.size(), shared.size()) == (IDLE_CONNECTIONS_ALONE, IDLE_CONNECTIONS_SHARED)
    # Every service may still hold as many connections at once as in a process of its own.
    assert alone.size() + alone._max_overflow == CONNECTIONS_PER_SERVICE
    assert shared.size() + shared._max_overflow == 8 * CONNECTIONS_PER_SERVICE
