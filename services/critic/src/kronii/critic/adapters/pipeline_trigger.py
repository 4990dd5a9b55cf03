"""A critique worth a desktop notification goes to the pipeline as a trigger on NATS
(`kronii.pipeline.trigger`): the pipeline decides whether and how to show it (its budgets, Do Not
Disturb, the person holding the desktop), as for every other source."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.common.bus import Bus
from kronii.common.subjects import PIPELINE_TRIGGER
from kronii.critic.core.recommend import Notification
from kronii.pipeline.v1 import pipeline_pb2 as ppb

__all__ = ["PipelineTriggers"]


class PipelineTriggers:
    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def publish(self, notification: Notification) -> None:
        at = Timestamp()
        at.FromMilliseconds(notification.at_ms)
        request = ppb.TriggerRequest(
            kind="plugin_event",
            source="critic",
            app_id="critic",
            attributes={
                "critique": notification.kind.value,
                "title": notification.title,
                "body": notification.body,
                "dedup_key": notification.dedup_key,
                "severity": str(notification.severity),
            },
            reason=notification.title,
            high_priority=notification.kind.value == "dangerous",
            at=at,
        )
        await self._bus.publish(PIPELINE_TRIGGER, request)
