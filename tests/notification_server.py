"""A desktop notification server answered by hand on a private session bus (Notify,
GetCapabilities, CloseNotification, and the ActionInvoked a click sends), for the tests of every
service that shows notifications."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus
from kronii.desktop.notify import NOTIFICATIONS_INTERFACE, NOTIFICATIONS_PATH, NOTIFICATIONS_SERVICE

__all__ = ["NotificationServer", "serve", "server_bus"]


class NotificationServer:
    """org.freedesktop.Notifications answered by hand: every Notify call is kept for the test."""

    def __init__(self, bus: MessageBus, capabilities: list[str]) -> None:
        self.bus = bus
        self.capabilities = capabilities
        self.received: list[dict[str, Any]] = []
        self.closed: list[int] = []

    def handle(self, message: Message) -> Message | None:
        if message.message_type != MessageType.METHOD_CALL or message.interface != NOTIFICATIONS_INTERFACE:
            return None
        if message.member == "GetCapabilities":
            return Message.new_method_return(message, "as", [self.capabilities])
        if message.member == "Notify":
            app_name, _replaces, _icon, summary, body, actions, hints, _expire = message.body
            self.received.append(
                {"app_name": app_name, "summary": summary, "body": body, "actions": actions, "hints": hints}
            )
            return Message.new_method_return(message, "u", [len(self.received)])
        if message.member == "CloseNotification":
            self.closed.append(message.body[0])
            return Message.new_method_return(message)
        return None

    def invoke_action(self, server_id: int, key: str) -> None:
        """What the desktop sends when the user clicks an action button."""
        self.bus.send(
            Message.new_signal(
                NOTIFICATIONS_PATH, NOTIFICATIONS_INTERFACE, "ActionInvoked", "us", [server_id, key]
            )
        )


@pytest_asyncio.fixture
async def server_bus(session_bus: str) -> AsyncIterator[MessageBus]:
    bus = await MessageBus(bus_address=session_bus, bus_type=BusType.SESSION).connect()
    try:
        yield bus
    finally:
        bus.disconnect()


async def serve(bus: MessageBus, capabilities: list[str]) -> NotificationServer:
    server = NotificationServer(bus, capabilities)
    bus.add_message_handler(server.handle)
    await bus.request_name(NOTIFICATIONS_SERVICE)
    return server
