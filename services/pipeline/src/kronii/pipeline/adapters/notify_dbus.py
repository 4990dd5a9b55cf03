"""The pipeline's suggestions as desktop notifications (kronii.desktop.notify): the
notification's body with its source summary, and its actions as buttons ("Snooze", "Don't show
again"), whose clicks come back through `on_action(notification_id, key)`."""

from __future__ import annotations

from kronii.desktop.notify import (
    NOTIFICATIONS_INTERFACE,
    NOTIFICATIONS_PATH,
    NOTIFICATIONS_SERVICE,
    ActionCallback,
)
from kronii.desktop.notify import DesktopNotifier as _Notifier
from kronii.pipeline.v1 import pipeline_pb2 as pb

__all__ = [
    "NOTIFICATIONS_INTERFACE",
    "NOTIFICATIONS_PATH",
    "NOTIFICATIONS_SERVICE",
    "ActionCallback",
    "DesktopNotifier",
]


class DesktopNotifier(_Notifier):
    async def notify(self, message: pb.Notification) -> int | None:
        """Show the notification; the server's id for it, or None if it could not be shown."""
        body = message.body
        if message.source_summary:
            body = f"{body}\n\n{message.source_summary}" if body else message.source_summary
        actions = [(action.key, action.label) for action in message.actions]
        return await self.show(message.id, message.title, body, actions)
