"""Every NATS message the capture service takes: the sensor's focus and lock events, which the
matcher follows (`kronii.activity.focus_changed`, `lock_changed`). Each handler converts the message
and calls the operations; the composition root subscribes and unsubscribes them."""

from __future__ import annotations

from kronii.activity.v1 import activity_pb2 as apb
from kronii.capture.api.convert import window_facts
from kronii.capture.usecases.operations import CaptureOperations
from kronii.stores import subjects
from kronii.stores.bus import Bus
from nats.aio.subscription import Subscription

__all__ = ["DesktopEvents"]


class DesktopEvents:
    def __init__(self, operations: CaptureOperations) -> None:
        self._operations = operations

    async def subscribe(self, bus: Bus) -> list[Subscription]:
        return [
            await bus.subscribe(subjects.FOCUS_CHANGED, self.on_focus),
            await bus.subscribe(subjects.LOCK_CHANGED, self.on_lock),
        ]

    async def on_focus(self, subject: str, message: apb.FocusChanged) -> None:
        at_ms = message.at.ToMilliseconds() if message.HasField("at") else None
        self._operations.focus_changed(window_facts(message.current), at_ms or None)

    async def on_lock(self, subject: str, message: apb.LockChanged) -> None:
        self._operations.lock_changed(message.locked)
