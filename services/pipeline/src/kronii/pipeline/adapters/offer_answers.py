"""The person's yes to an offer in a bubble goes to the supervisor on NATS
(`kronii.supervisor.offer.accept`, a HandOfferRequest with the offer's id): the supervisor posts the
redacted failure to the agent's thread and the orchestrator wakes the agent."""

from __future__ import annotations

from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.supervisor.v1 import supervisor_pb2 as svpb

__all__ = ["BusOfferAnswers"]


class BusOfferAnswers:
    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def accept(self, offer_id: str) -> None:
        await self._bus.publish(subjects.SUPERVISOR_OFFER_ACCEPT, svpb.HandOfferRequest(offer_id=offer_id))
