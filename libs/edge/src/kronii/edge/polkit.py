"""polkit on the system bus: is an authority there, and does it authorize a process for an action.

A service asks about its own action id for the caller's process (subject ``unix-process``: pid,
start time and uid, so a reused pid cannot stand in for it) with AllowUserInteraction, so that the
person's authentication agent asks them. Each check opens its own short connection: proofs are rare
(one per window), and no connection is left to go stale when the system bus restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass
from typing import Any

from dbus_fast import BusType, DBusFastError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

__all__ = ["POLKIT_NAME", "PolkitAnswer", "PolkitClient", "PolkitError"]

log = logging.getLogger(__name__)

POLKIT_NAME = "org.freedesktop.PolicyKit1"
_PATH = "/org/freedesktop/PolicyKit1/Authority"
_INTERFACE = "org.freedesktop.PolicyKit1.Authority"
_ALLOW_USER_INTERACTION = 1
_BUS_ERRORS = (OSError, DBusFastError, EOFError, ValueError)


class PolkitError(Exception):
    """The authority could not answer; the message is a sentence."""


@dataclass(frozen=True)
class PolkitAnswer:
    authorized: bool
    # polkit would authorize after authentication, but nobody authenticated (no agent, dismissed).
    challenge: bool
    dismissed: bool


class PolkitClient:
    """CheckAuthorization against the authority on the system bus (``bus_address`` overrides
    DBUS_SYSTEM_BUS_ADDRESS and the default system socket)."""

    def __init__(self, *, bus_address: str | None = None, timeout_s: float = 60.0) -> None:
        self._address = bus_address
        self._timeout_s = timeout_s

    async def _connect(self) -> MessageBus:
        bus = MessageBus(bus_address=self._address, bus_type=BusType.SYSTEM)
        await asyncio.wait_for(bus.connect(), 5.0)
        return bus

    async def available(self) -> bool:
        """True when the authority's name is owned on the system bus now."""
        try:
            bus = await self._connect()
        except (*_BUS_ERRORS, TimeoutError) as error:
            log.debug("no system bus for polkit: %s", error)
            return False
        try:
            reply = await asyncio.wait_for(
                bus.call(
                    Message(
                        destination="org.freedesktop.DBus",
                        path="/org/freedesktop/DBus",
                        interface="org.freedesktop.DBus",
                        member="NameHasOwner",
                        signature="s",
                        body=[POLKIT_NAME],
                    )
                ),
                5.0,
            )
        except (*_BUS_ERRORS, TimeoutError):
            return False
        finally:
            bus.disconnect()
        return reply is not None and reply.message_type != MessageType.ERROR and bool(reply.body[0])

    async def check(self, *, pid: int, start_ticks: int, uid: int, action: str) -> PolkitAnswer:
        """Ask the authority, letting the person's agent ask them; PolkitError when it cannot."""
        try:
            bus = await self._connect()
        except (*_BUS_ERRORS, TimeoutError):
            raise PolkitError("the system bus did not answer, so polkit could not be asked") from None
        cancellation = f"kronii-{secrets.token_hex(8)}"
        subject = (
            "unix-process",
            {"pid": Variant("u", pid), "start-time": Variant("t", start_ticks), "uid": Variant("i", uid)},
        )
        call = Message(
            destination=POLKIT_NAME,
            path=_PATH,
            interface=_INTERFACE,
            member="CheckAuthorization",
            signature="(sa{sv})sa{ss}us",
            body=[subject, action, {}, _ALLOW_USER_INTERACTION, cancellation],
        )
        try:
            reply = await asyncio.wait_for(bus.call(call), self._timeout_s)
        except TimeoutError:
            await self._cancel(bus, cancellation)
            raise PolkitError("nobody answered polkit's question in time") from None
        except asyncio.CancelledError:
            await self._cancel(bus, cancellation)
            raise
        except _BUS_ERRORS:
            raise PolkitError("polkit could not be asked (the system bus connection failed)") from None
        finally:
            bus.disconnect()
        return _answer(reply)

    @staticmethod
    async def _cancel(bus: MessageBus, cancellation: str) -> None:
        # The agent's dialog closes instead of waiting for a person nobody is waiting for.
        with contextlib.suppress(*_BUS_ERRORS, TimeoutError):
            await asyncio.wait_for(
                bus.call(
                    Message(
                        destination=POLKIT_NAME,
                        path=_PATH,
                        interface=_INTERFACE,
                        member="CancelCheckAuthorization",
                        signature="s",
                        body=[cancellation],
                    )
                ),
                2.0,
            )


def _answer(reply: Message | None) -> PolkitAnswer:
    if reply is None:
        raise PolkitError("polkit gave no answer")
    if reply.message_type == MessageType.ERROR:
        log.warning("polkit refused to check: %s %s", reply.error_name, reply.body)
        raise PolkitError(f"polkit could not check the authorization ({reply.error_name})")
    authorized, challenge, details = reply.body[0]
    extra: dict[str, Any] = dict(details)
    return PolkitAnswer(bool(authorized), bool(challenge), extra.get("polkit.dismissed") == "true")
