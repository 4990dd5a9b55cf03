"""The supervisor's inbound NATS handlers: an agent's ack on `kronii.supervisor.ack`, and the
input broker's word on who holds the desktop (`kronii.broker.control`). Each decodes its message,
makes the command, and calls the facade."""

from __future__ import annotations

import logging

from kronii.broker.v1 import broker_pb2 as bpb
from kronii.desktop.hold import DesktopHold
from kronii.foundation.errors import KroniiError
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.supervisor.api.convert import ack
from kronii.supervisor.usecases.operations import SupervisorOperations
from kronii.supervisor.v1 import supervisor_pb2 as pb

__all__ = ["SupervisorBus"]

log = logging.getLogger(__name__)


class SupervisorBus:
    def __init__(self, ops: SupervisorOperations) -> None:
        self._ops = ops

    async def subscribe(self, bus: Bus) -> None:
        await bus.subscribe(subjects.SUPERVISOR_ACK, self.on_ack)
        await bus.subscribe(subjects.BROKER_CONTROL, self.on_control)

    async def on_ack(self, _subject: str, message: pb.AckTriggerRequest) -> None:
        try:
            await self._ops.ack(ack(message), None)
        except KroniiError as error:
            log.info("an ack on the bus was not taken: %s", error.message)

    async def on_control(self, _subject: str, message: bpb.ControlChanged) -> None:
        self._ops.desktop_changed(DesktopHold.from_message(message))
