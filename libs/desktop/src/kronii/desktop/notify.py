"""Desktop notifications through org.freedesktop.Notifications on the session bus, with action
buttons, for every service that shows one (the pipeline's suggestions, the broker's lease).

Without a session bus (a server, a container, CI) the notifier is simply unavailable and show()
returns None. When the person clicks a button in the desktop's bubble, `on_action(notification_id,
key)` runs. Only signals from the owner of org.freedesktop.Notifications are matched: another
process of the same user cannot fake a click."""

from __future__ import annotations

import asyncio
import html
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from dbus_fast import BusType, DBusFastError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

__all__ = [
    "NOTIFICATIONS_INTERFACE",
    "NOTIFICATIONS_PATH",
    "NOTIFICATIONS_SERVICE",
    "URGENCY_CRITICAL",
    "URGENCY_NORMAL",
    "ActionCallback",
    "DesktopNotifier",
]

log = logging.getLogger(__name__)

NOTIFICATIONS_SERVICE = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"
NOTIFICATIONS_INTERFACE = "org.freedesktop.Notifications"
URGENCY_NORMAL = 1
URGENCY_CRITICAL = 2

ActionCallback = Callable[[str, str], Awaitable[None]]

_BUS_ERRORS = (OSError, DBusFastError, TimeoutError, ValueError, EOFError)


def _session_address() -> str | None:
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if address:
        return address
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir and (Path(runtime_dir) / "bus").exists():
        return f"unix:path={runtime_dir}/bus"
    return None


class DesktopNotifier:
    """Sends notifications to the desktop's notification server.

    `expire_timeout_ms` -1 lets the server decide how long a bubble stays."""

    def __init__(
        self,
        *,
        bus_address: str | None = None,
        app_name: str = "kronii",
        expire_timeout_ms: int = -1,
        timeout_s: float = 5.0,
        on_action: ActionCallback | None = None,
    ) -> None:
        self._address = bus_address if bus_address is not None else _session_address()
        self._app_name = app_name
        self._expire_timeout_ms = expire_timeout_ms
        self._timeout_s = timeout_s
        self._on_action = on_action
        self._bus: MessageBus | None = None
        self._capabilities: frozenset[str] = frozenset()
        # The notification server's unique bus name: signals from anyone else are not its clicks.
        self._owner = ""
        # The server's id for each bubble -> our notification id, to resolve ActionInvoked.
        self._shown: dict[int, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def available(self) -> bool:
        return self._bus is not None and self._bus.connected

    @property
    def capabilities(self) -> frozenset[str]:
        return self._capabilities

    async def start(self) -> bool:
        """Connect and ask the server what it can do; False when there is no bus or no server."""
        if not self._address:
            log.info("no D-Bus session bus; desktop notifications are off")
            return False
        bus: MessageBus | None = None
        try:
            bus = MessageBus(bus_address=self._address, bus_type=BusType.SESSION)
            await asyncio.wait_for(bus.connect(), self._timeout_s)
            reply = await self._call(bus, "GetCapabilities", "", [])
            self._capabilities = frozenset(reply[0])
            self._owner = str((await self._call_bus(bus, "GetNameOwner", [NOTIFICATIONS_SERVICE]))[0])
            await self._call_bus(
                bus,
                "AddMatch",
                [f"type='signal',sender='{NOTIFICATIONS_SERVICE}',interface='{NOTIFICATIONS_INTERFACE}'"],
            )
        except _BUS_ERRORS as error:
            log.info(
                "no desktop notification server on the session bus (%s); desktop notifications are off", error
            )
            if bus is not None:
                bus.disconnect()
            return False
        bus.add_message_handler(self._on_message)
        self._bus = bus
        return True

    async def stop(self) -> None:
        bus, self._bus = self._bus, None
        if bus is not None:
            bus.disconnect()
        for task in list(self._tasks):
            task.cancel()

    async def show(
        self,
        notification_id: str,
        title: str,
        body: str,
        actions: Sequence[tuple[str, str]] = (),
        *,
        category: str = "x-kronii.suggestion",
        urgency: int = URGENCY_NORMAL,
        replaces: int = 0,
    ) -> int | None:
        """Show a bubble with (key, label) buttons; the server's id for it, or None if it could not be shown."""
        if self._bus is None or not self._bus.connected:
            return None
        if "body-markup" in self._capabilities:
            # The server would read <, > and & as markup; the text is plain.
            body = html.escape(body, quote=False)
        flat: list[str] = []
        if "actions" in self._capabilities:
            for key, label in actions:
                flat += [key, label]
        hints = {"urgency": Variant("y", urgency), "category": Variant("s", category)}
        try:
            reply = await self._call(
                self._bus,
                "Notify",
                "susssasa{sv}i",
                [self._app_name, replaces, "", title, body, flat, hints, self._expire_timeout_ms],
            )
        except _BUS_ERRORS as error:
            log.warning("the desktop did not take notification %s: %s", notification_id, error)
            return None
        server_id = int(reply[0])
        self._shown[server_id] = notification_id
        return server_id

    async def close(self, server_id: int) -> None:
        """Take a bubble down (e.g. once the user acted on it elsewhere)."""
        if self._bus is not None and self._bus.connected:
            try:
                await self._call(self._bus, "CloseNotification", "u", [server_id])
            except _BUS_ERRORS as error:
                log.info("could not close notification bubble %d: %s", server_id, error)
        self._shown.pop(server_id, None)

    async def _call(self, bus: MessageBus, member: str, signature: str, body: list[Any]) -> list[Any]:
        call = Message(
            destination=NOTIFICATIONS_SERVICE,
            path=NOTIFICATIONS_PATH,
            interface=NOTIFICATIONS_INTERFACE,
            member=member,
            signature=signature,
            body=body,
        )
        return await self._send(bus, call)

    async def _call_bus(self, bus: MessageBus, member: str, body: list[Any]) -> list[Any]:
        call = Message(
            destination="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            member=member,
            signature="s",
            body=body,
        )
        return await self._send(bus, call)

    async def _send(self, bus: MessageBus, call: Message) -> list[Any]:
        reply = await asyncio.wait_for(bus.call(call), self._timeout_s)
        if reply is None or reply.message_type == MessageType.ERROR:
            detail = "no reply" if reply is None else f"{reply.error_name}: {reply.body}"
            raise DBusFastError(f"{call.member} failed: {detail}")
        return list(reply.body)

    def _on_message(self, message: Message) -> None:
        if message.message_type != MessageType.SIGNAL or message.interface != NOTIFICATIONS_INTERFACE:
            return
        if message.sender != self._owner:
            return  # a signal sent straight to us by another process, not by the server
        if message.member == "NotificationClosed":
            self._shown.pop(int(message.body[0]), None)
        elif message.member == "ActionInvoked" and self._on_action is not None:
            notification_id = self._shown.get(int(message.body[0]))
            if notification_id is None:
                return  # another application's bubble
            task = asyncio.get_running_loop().create_task(
                self._run_action(notification_id, str(message.body[1]))
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run_action(self, notification_id: str, key: str) -> None:
        assert self._on_action is not None
        try:
            await self._on_action(notification_id, key)
        except Exception:
            log.exception("the %r action of notification %s failed", key, notification_id)
