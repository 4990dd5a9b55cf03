"""The issue's test: the scheduler keeps a pending wake-up across its own restart. A wake-up planned
3 s out, a SIGTERM before it is due, a new scheduler process: the Tick still arrives, once."""

from __future__ import annotations

import asyncio
import contextlib
import time

from tests.infra import InfraUrls
from tests.integration.scheduler.conftest import new_prefix, start_scheduler
from tests.integration.scheduler.ticks import listening

SETTINGS = {
    "KRONII_SCHEDULER_POLL_INTERVAL_SECS": "0.05",
    "KRONII_SCHEDULER_SAFETY_NET_INTERVAL_SECS": "3600",
}


async def test_a_pending_wakeup_survives_a_restart_of_the_scheduler_and_fires_once(
    infra: InfraUrls, migrated_database: str
) -> None:
    prefix = new_prefix("restart")
    async with listening(infra.nats) as ticks:
        with contextlib.ExitStack() as stack:
            first = await asyncio.to_thread(
                stack.enter_context, start_scheduler(infra, migrated_database, prefix, **SETTINGS)
            )
            planned = first.plan(run_id="run-restart", app="restart-app", wakeup_in_ms=3000, reason="resume")
            wakeup_id = planned["wakeup_id"]
            assert wakeup_id in {item["wakeup_id"] for item in first.get_schedule()["wakeups"]}
            code, _ = await asyncio.to_thread(first.proc.terminate)
        assert code == 0, first.proc.output[-2000:]
        stopped_at = time.time()
        assert ticks.for_wakeup(wakeup_id) == [], "the first scheduler stopped before the wake-up was due"

        with contextlib.ExitStack() as stack:
            second = await asyncio.to_thread(
                stack.enter_context, start_scheduler(infra, migrated_database, prefix, **SETTINGS)
            )
            arrived, tick = await ticks.wait_for(wakeup_id, timeout=15)
            await asyncio.sleep(1.0)
            assert len(ticks.for_wakeup(wakeup_id)) == 1, "the wake-up fires once"
            assert arrived > stopped_at
            assert tick.app == "restart-app" and tick.run_id == "run-restart" and tick.reason == "resume"
            due = tick.due_at.seconds + tick.due_at.nanos / 1e9
            fired = tick.fired_at.seconds + tick.fired_at.nanos / 1e9
            assert fired >= due
            # Fired by the new process, and no longer pending there.
            assert any(wakeup_id in line for line in second.proc.lines), second.proc.output[-2000:]
            assert wakeup_id not in {item["wakeup_id"] for item in second.get_schedule()["wakeups"]}
            await asyncio.to_thread(stack.close)
