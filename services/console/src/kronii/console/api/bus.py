"""NATS in: the events the pages show live, reduced to names, ids and states (never a title, a body or
any text a person wrote) and handed to the live hub under the console's topic names."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message
from kronii.console.usecases.live_updates import LiveHub, LiveUpdate

__all__ = ["LiveBus", "live_fields"]

log = logging.getLogger(__name__)

# The fields of each message that may reach a page; everything else stays out.
_ALLOWED: dict[str, tuple[str, ...]] = {
    "FocusChanged": ("change",),
    "StateChanged": ("cause",),
    "LockChanged": ("locked",),
    "TriggerOutcome": ("trigger_id", "runtime_id", "result"),
    "CollisionEvent": ("trigger_id", "runtime_id", "agent_id"),
    "ControlChanged": ("signal",),
    "CaptureStatus": ("job_id", "status"),
    "Notice": ("source", "kind"),
}


def live_fields(subject: str, message: Message) -> dict[str, Any]:
    """`{"event": <the subject's last word>, <allowed fields>}`: enums by name, nothing nested."""
    data: dict[str, Any] = {"event": subject.rsplit(".", 1)[-1]}
    descriptor = message.DESCRIPTOR
    for name in _ALLOWED.get(descriptor.name, ()):
        field = descriptor.fields_by_name.get(name)
        if field is None:
            continue
        value = getattr(message, name)
        if field.enum_type is not None:
            value = (
                field.enum_type.values_by_number[value].name
                if value in field.enum_type.values_by_number
                else ""
            )
        if isinstance(value, str | bool | int):
            data[name] = value
    if descriptor.name == "FocusChanged":
        current = getattr(message, "current")  # noqa: B009 - a FocusChanged, read by name
        data["app"] = str(current.app_name)
    if descriptor.name == "CaptureStatus":
        data["event"] = "status"
    return data


class LiveBus:
    """One handler per console topic, given to `bus.subscribe` for each of its subjects."""

    def __init__(self, hub: LiveHub) -> None:
        self._hub = hub

    def handler(self, topic: str) -> Callable[[str, Message], Any]:
        async def on_message(subject: str, message: Message) -> None:
            try:
                self._hub.publish(LiveUpdate(topic, live_fields(subject, message)))
            except Exception:
                log.exception("a live update on %s was not passed on", subject)

        return on_message
