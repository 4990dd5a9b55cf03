"""The activity events on NATS (kronii.activity.<kind>, in the ACTIVITY stream)."""

from __future__ import annotations

from kronii.sensor.api.convert import event_message
from kronii.sensor.core.snapshot import ActivityEvent
from kronii.sensor.ports import PublishFailed
from kronii.stores import subjects
from kronii.stores.bus import Bus

__all__ = ["BusActivityPublisher"]


class BusActivityPublisher:
    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def publish(self, kind: str, event: ActivityEvent) -> None:
        """Raises PublishFailed when the bus did not take it."""
        try:
            await self._bus.publish(subjects.activity_topic(kind), event_message(event))
        except Exception as error:
            raise PublishFailed(str(error)) from error
