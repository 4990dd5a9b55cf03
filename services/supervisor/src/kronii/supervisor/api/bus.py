"""The supervisor's inbound NATS handlers: an agent's ack on `kronii.supervisor.ack`, the
input broker's word on who holds the desktop (`kronii.broker.control`), the critic's failure offers
(`kronii.supervisor.offer`) and the person's yes to one (`kronii.supervisor.offer.accept`). Each decodes its message,
makes the command, and calls the facade."""

from __future__ import annotations

import logging

from kronii.broker.v1 import broker_pb2 as bpb
from kronii.desktop.hold import DesktopHold
from kronii.foundation.errors import KroniiError
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.supervisor.api.convert import ack, failure_offer
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
        await bus.subscribe(subjects.SUPERVISOR_OFFER, self.on_offer)
        await bus.subscribe(subjects.SUPERVISOR_OFFER_ACCEPT, self.on_offer_accept)

    async def on_ack(self, _subject: str, message: pb.AckTriggerRequest) -> None:
        try:
            await self._ops.ack(ack(message), None)
        except KroniiError as error:
            log.info("an ack on the bus was not taken: %s", error.message)

    async def on_control(self, _subject: str, message: bpb.ControlChanged) -> None:
        self._ops.desktop_changed(DesktopHold.from_message(message))

    async def on_offer(self, _subject: str, message: pb.FailureOffer) -> None:
        """The critic's offer of a repeated failure to an agent."""
        try:
            await self._ops.offered(failure_offer(message))
        except KroniiError as error:
            log.warning("the critic's offer %s was not taken: %s", message.offer_id, error.message)

    async def on_offer_accept(self, _subject: str, message: pb.HandOfferRequest) -> None:
        """The person's yes, from the pipeline's bubble."""
        try:
            await self._ops.hand_offer(message.offer_id, message.agent_id, message.workspace_id, None)
        except KroniiError as error:
            log.warning("the person's yes to offer %s was not taken: %s", message.offer_id, error.message)
