"""Outcome and collision events on the bus, turned into their wire messages here (api/convert.py
holds the one conversion): published when the bus is connected, a failure logged and dropped (the
trigger's row and audit row are the durable record)."""

from __future__ import annotations

import logging
from typing import TypeVar

from google.protobuf.message import Message
from kronii.runtime.service import ServiceContext
from kronii.stores import subjects
from kronii.stores.subjects import Topic
from kronii.supervisor.api.convert import collision_message, outcome_message
from kronii.supervisor.core.trigger import Collision, TriggerOutcome

__all__ = ["BusEvents"]

log = logging.getLogger(__name__)
_M = TypeVar("_M", bound=Message)


class BusEvents:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def publish_outcome(self, outcome: TriggerOutcome) -> None:
        await self._publish(subjects.SUPERVISOR_OUTCOME, outcome_message(outcome))

    async def publish_collision(self, collision: Collision) -> None:
        await self._publish(subjects.SUPERVISOR_COLLISION, collision_message(collision))

    async def _publish(self, topic: Topic[_M], message: _M) -> None:
        if not self.ctx.bus.connected:
            return
        try:
            await self.ctx.bus.publish(topic, message)
        except Exception as error:
            log.warning("publishing on %s failed: %s", topic.pattern, error)
