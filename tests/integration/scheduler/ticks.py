"""A NATS listener for the scheduler's Ticks, and its admission request over NATS request/reply."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from kronii.scheduler.v1 import scheduler_pb2 as pb
from kronii.stores import subjects
from kronii.stores.bus import Bus


@dataclass
class TickLog:
    bus: Bus
    # (arrival time, tick), in arrival order.
    seen: list[tuple[float, pb.Tick]] = field(default_factory=list)

    def for_wakeup(self, wakeup_id: str) -> list[tuple[float, pb.Tick]]:
        return [(at, tick) for at, tick in self.seen if tick.wakeup_id == wakeup_id]

    def of_kind(self, kind: int) -> list[tuple[float, pb.Tick]]:
        return [(at, tick) for at, tick in self.seen if tick.kind == kind]

    async def wait_for_app(self, app: str, timeout: float) -> tuple[float, pb.Tick]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [(at, tick) for at, tick in self.seen if tick.app == app]
            if found:
                return found[0]
            await asyncio.sleep(0.02)
        raise AssertionError(f"no Tick for app {app} within {timeout} s")

    async def wait_for(self, wakeup_id: str, timeout: float) -> tuple[float, pb.Tick]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.for_wakeup(wakeup_id)
            if found:
                return found[0]
            await asyncio.sleep(0.02)
        raise AssertionError(f"no Tick for wake-up {wakeup_id} within {timeout} s")

    async def admit(self, request: pb.AdmitRequest) -> pb.AdmitResponse:
        return await self.bus.request(subjects.SCHEDULER_ADMIT, request, wait_secs=5)


@asynccontextmanager
async def listening(nats_url: str) -> AsyncIterator[TickLog]:
    bus = Bus("scheduler-test")
    await bus.connect(nats_url)
    log = TickLog(bus)

    async def on_tick(subject: str, tick: pb.Tick) -> None:
        log.seen.append((time.time(), tick))

    await bus.subscribe(subjects.SCHEDULER_TICK, on_tick)
    await bus.client.flush()
    try:
        yield log
    finally:
        await bus.close()
