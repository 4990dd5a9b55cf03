"""A critique worth a desktop notification goes to the pipeline as a notice on NATS
(`kronii.pipeline.notice`): the pipeline shows it on its channels (store, NATS, SSE, the desktop),
unless its gates hold it back (the person muted that kind, the same notice within the hour, the person
holding the desktop, the hour's budget; a dangerous command is high priority and passes the last two).
The words are the critic's own, redacted already; no model is asked."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.critic.core.model import Trigger
from kronii.critic.core.recommend import Notification
from kronii.pipeline.v1 import pipeline_pb2 as ppb
from kronii.stores.bus import Bus
from kronii.stores.subjects import PIPELINE_NOTICE

__all__ = ["PipelineNotices"]


class PipelineNotices:
    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def publish(self, notification: Notification) -> None:
        at = Timestamp()
        at.FromMilliseconds(notification.at_ms)
        notice = ppb.Notice(
            source="critic",
            kind=notification.kind.value,
            title=notification.title,
            body=notification.body,
            dedup_key=notification.dedup_key,
            high_priority=notification.kind is Trigger.DANGEROUS,
            at=at,
        )
        await self._bus.publish(PIPELINE_NOTICE, notice)
