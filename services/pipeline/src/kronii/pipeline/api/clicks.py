"""The buttons of the pipeline's desktop bubbles, as the notification server reports the person's
click (ActionInvoked, through kronii.desktop.notify's `on_action`): the yes to an offer, Snooze and
Don't show again, each as its HTTP route would do it."""

from __future__ import annotations

import logging

from kronii.foundation.errors import KroniiError
from kronii.pipeline.api.source import OperationsSource

__all__ = ["DesktopClicks"]

log = logging.getLogger(__name__)


class DesktopClicks:
    def __init__(self, operations: OperationsSource) -> None:
        self._operations = operations

    async def on_action(self, notification_id: str, key: str) -> None:
        try:
            await self._operations().clicked(notification_id, key)
        except KroniiError as error:
            log.info("the %r button of notification %s did nothing: %s", key, notification_id, error.message)
