"""A repeated failure offered to the workspace's agent goes to the supervisor on NATS
(`kronii.supervisor.offer`): the supervisor keeps it, chooses the agent working where the command
failed, and asks the person with a bubble (the pipeline's notice with a button); their yes hands the
command, its exit status and its error to the agent's thread. The texts are the record's, redacted
already. Nobody listening (no supervisor) loses the offer: the prompt's hint said it all the same."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.critic.core.offers import FailureOffer
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.supervisor.v1 import supervisor_pb2 as svpb

__all__ = ["SupervisorOffers"]


class SupervisorOffers:
    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def offer(self, offer: FailureOffer) -> None:
        at = Timestamp()
        at.FromMilliseconds(offer.at_ms)
        message = svpb.FailureOffer(
            offer_id=offer.offer_id,
            command_line=offer.command_line,
            exit_code=offer.exit_code,
            error_text=offer.error_text,
            cwd=offer.cwd,
            times=offer.times,
            failure_key=offer.failure_key,
            at=at,
        )
        await self._bus.publish(subjects.SUPERVISOR_OFFER, message)
