"""The engine's inbound events: the sensor's FocusChanged on NATS and a click on the confirmation
notification (the notification server's D-Bus signal). Each handler reads what it is given, builds
the command and calls the facade."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kronii.vision.core.commands import ConfirmationAnswer
from kronii.vision.usecases.operations import VisionOperations

__all__ = ["confirmation_handler", "focus_handler"]

BusHandler = Callable[[str, Any], Awaitable[None]]
Answer = Callable[[str, str], Awaitable[None]]


def focus_handler(operations: VisionOperations) -> BusHandler:
    """kronii.sensor.focus_changed: the screen watch does not skip its next tick."""

    async def focused(_subject: str, _message: Any) -> None:
        operations.focus_changed()

    return focused


def confirmation_handler(operations: VisionOperations) -> Answer:
    """The notification's Approve or Deny button, for the plan the notification was about."""

    async def answered(plan_id: str, key: str) -> None:
        await operations.answer(ConfirmationAnswer(plan_id, key))

    return answered
