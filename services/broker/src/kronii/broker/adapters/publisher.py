"""Control changes on NATS (`kronii.broker.control`), for the supervisor and the pipeline."""

from __future__ import annotations

import time

from kronii.broker.api.convert import control_changed
from kronii.broker.core.model import ControlState
from kronii.stores.bus import Bus
from kronii.stores.subjects import BROKER_CONTROL

__all__ = ["NatsControlPublisher"]


class NatsControlPublisher:
    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def publish(self, state: ControlState, cause: str, signal: str) -> None:
        message = control_changed(state, cause, signal, int(time.time() * 1000))
        await self._bus.publish(BROKER_CONTROL, message)
