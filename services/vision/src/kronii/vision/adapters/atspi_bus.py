"""The accessibility bus (the session bus's `org.a11y.Bus.GetAddress`): its well-known names and
interfaces, one connection's bounded method calls, and refs. Every application's objects live under
its unique bus name; a ref is "<bus name>|<object path>", valid while the object lives."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any

from dbus_fast import DBusFastError, Message, MessageType
from dbus_fast.aio import MessageBus

__all__ = ["A11yBus", "AccessibilityError", "DBusCallError", "settle", "split_ref"]

A11Y_BUS_NAME = "org.a11y.Bus"
A11Y_BUS_PATH = "/org/a11y/bus"
REGISTRY_NAME = "org.a11y.atspi.Registry"
REGISTRY_PATH = "/org/a11y/atspi/registry"
ROOT_PATH = "/org/a11y/atspi/accessible/root"
ACCESSIBLE = "org.a11y.atspi.Accessible"
ACTION = "org.a11y.atspi.Action"
COMPONENT = "org.a11y.atspi.Component"
EDITABLE_TEXT = "org.a11y.atspi.EditableText"
SELECTION = "org.a11y.atspi.Selection"
TABLE = "org.a11y.atspi.Table"
TEXT = "org.a11y.atspi.Text"
PROPERTIES = "org.freedesktop.DBus.Properties"
DBUS_NAME = "org.freedesktop.DBus"
DBUS_PATH = "/org/freedesktop/DBus"
SCREEN = 0  # ATSPI_COORD_TYPE_SCREEN
MAX_CALLS_IN_FLIGHT = 64


class AccessibilityError(RuntimeError):
    """An accessibility call failed; the message is a sentence fit for a log or a plan's notes."""


class DBusCallError(Exception):
    """A D-Bus error reply, kept inside the adapter (public methods turn it into AccessibilityError)."""

    def __init__(self, name: str, text: str) -> None:
        super().__init__(f"{name}: {text}")
        self.name = name


def split_ref(ref: str) -> tuple[str, str]:
    bus_name, sep, path = ref.partition("|")
    if not sep or not bus_name or not path.startswith("/"):
        raise AccessibilityError(f"{ref!r} is not an accessibility ref ('<bus name>|<object path>').")
    return bus_name, path


class A11yBus:
    """One connection to the accessibility bus: method calls bounded in time, errors as DBusCallError."""

    def __init__(self, bus: MessageBus, call_timeout_s: float) -> None:
        self.bus = bus
        self.call_timeout_s = call_timeout_s
        # dbus-fast drops the whole connection when the socket's send buffer is full (EAGAIN in its
        # write callback, dbus-next issue #153), which some hundred queued calls reach: so few fly at once.
        self._in_flight = asyncio.Semaphore(MAX_CALLS_IN_FLIGHT)

    async def call(
        self,
        destination: str,
        path: str,
        interface: str,
        member: str,
        signature: str = "",
        body: Sequence[Any] = (),
    ) -> list[Any]:
        """The reply's body; TimeoutError after `call_timeout_s`, DBusCallError on an error reply."""
        try:
            message = Message(destination, path, interface, member, signature=signature, body=list(body))
        except DBusFastError as exc:
            raise DBusCallError("org.freedesktop.DBus.Error.InvalidArgs", str(exc)) from exc
        async with self._in_flight:
            reply = await asyncio.wait_for(self.bus.call(message), self.call_timeout_s)
        if reply.message_type == MessageType.ERROR:
            text = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
            raise DBusCallError(reply.error_name or "unknown error", text.strip())
        return list(reply.body)

    async def first(
        self, dest: str, path: str, iface: str, member: str, sig: str = "", body: Sequence[Any] = ()
    ) -> Any:
        """The first value of the reply's body."""
        return (await self.call(dest, path, iface, member, sig, body))[0]

    async def action_names(self, destination: str, path: str) -> list[str]:
        """The actions' names, not GetActions' localized ones ("Click"): plans name "click" anywhere."""
        (count,) = await self.call(destination, path, PROPERTIES, "Get", "ss", [ACTION, "NActions"])
        calls = (self.call(destination, path, ACTION, "GetName", "i", [i]) for i in range(int(count.value)))
        return [str(reply[0]) for reply in await settle(*calls)]

    async def pid_of(self, bus_name: str) -> int:
        """The process behind a bus name, or 0 when the bus will not say."""
        try:
            pid = await self.first(
                DBUS_NAME, DBUS_PATH, DBUS_NAME, "GetConnectionUnixProcessID", "s", [bus_name]
            )
        except (DBusCallError, TimeoutError):
            return 0
        return int(pid)


async def settle(*calls: Awaitable[Any]) -> list[Any]:
    """Await every call; a timeout anywhere wins over any other error, so a hung app is noticed."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, TimeoutError):
            raise result
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results
