"""The lease clock: a held lease ends on time (a TICK through the table every 100 ms), and the state
goes out on NATS again every few seconds, for a supervisor or pipeline that started since."""

from __future__ import annotations

import asyncio

from kronii.broker.usecases.control_session import ControlSession

__all__ = ["run_lease_clock"]

TICK_S = 0.1
# How often the current state goes out on NATS unasked, in ticks.
REPUBLISH_EVERY = 50


async def run_lease_clock(
    session: ControlSession, *, tick_s: float = TICK_S, republish_every: int = REPUBLISH_EVERY
) -> None:
    """Until cancelled."""
    ticks = 0
    while True:
        await asyncio.sleep(tick_s)
        session.tick()
        ticks += 1
        if ticks % republish_every == 0:
            session.republish()
