"""Outcome and collision events on the bus: published when it is connected, a failure logged and
dropped (the trigger's row and audit row are the durable record)."""

from __future__ import annotations

import logging
from typing import TypeVar

from google.protobuf.message import Message
from kronii.common.service import ServiceContext
from kronii.common.subjects import Topic

__all__ = ["BusEvents"]

log = logging.getLogger(__name__)
_M = TypeVar("_M", bound=Message)


class BusEvents:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def publish(self, topic: Topic[_M], message: _M) -> None:
        if not self.ctx.bus.connected:
            return
        try:
            await self.ctx.bus.publish(topic, message)
        except Exception as error:
            log.warning("publishing on %s failed: %s", topic.pattern, error)
