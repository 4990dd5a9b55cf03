"""A session-bus connection (dbus-fast) on an asyncio loop of its own thread, for the display adapters
that learn the focus over D-Bus (GNOME's Shell extension, KWin's script): the sensor calls them from its
own threads and waits for their answer there, bounded in time."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from dbus_fast import DBusFastError, Message
from dbus_fast.aio import MessageBus

__all__ = ["BUS_ERRORS", "DBUS", "BusThread", "bus_call"]

DBUS = "org.freedesktop.DBus"
# What a bus that went away, or never answered, raises.
BUS_ERRORS = (OSError, EOFError, TimeoutError, DBusFastError, ValueError)


def bus_call(
    destination: str, path: str, interface: str, member: str, signature: str = "", body: Any = ()
) -> Message:
    return Message(
        destination=destination,
        path=path,
        interface=interface,
        member=member,
        signature=signature,
        body=list(body),
    )


class BusThread:
    """The loop, its thread and (once `connect` ran) the bus; every call bounded by `timeout_s`."""

    def __init__(self, name: str, timeout_s: float = 3.0) -> None:
        self.timeout_s = timeout_s
        self.bus: MessageBus | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        return self._loop.is_closed()

    def wait(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run `coroutine` on the bus's loop and wait for its result (from any other thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=self.timeout_s * 2)

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Run `coroutine` on the bus's loop without waiting (from the loop's own callbacks)."""
        self._loop.create_task(coroutine)

    async def connect(self, address: str, handler: Callable[[Message], Any]) -> MessageBus:
        bus = MessageBus(bus_address=address)
        await asyncio.wait_for(bus.connect(), self.timeout_s)
        bus.add_message_handler(handler)
        self.bus = bus
        return bus

    async def ask(self, message: Message) -> Message:
        """The reply (an error reply too); DBusFastError when none came."""
        assert self.bus is not None
        reply = await asyncio.wait_for(self.bus.call(message), self.timeout_s)
        if reply is None:
            raise DBusFastError(f"no reply to {message.member}")
        return reply

    def close(self) -> None:
        if self._loop.is_closed():
            return
        if self.bus is not None:
            self._loop.call_soon_threadsafe(self.bus.disconnect)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=self.timeout_s)
        if not self._thread.is_alive():
            self._loop.close()
