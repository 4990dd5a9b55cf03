"""Screen lock adapter: screensaver ActiveChanged on the session bus, logind Lock/Unlock on the system bus.

Either bus may be missing (a bare X session, a container, CI); the watcher then runs with the other
one, or with none, and `sources` says which it has.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

from dbus_fast import BusType, DBusFastError, Message, MessageType
from dbus_fast.aio import MessageBus

__all__ = [
    "LOGIND_SERVICE",
    "LOGIND_SESSION_INTERFACE",
    "SCREENSAVER_INTERFACES",
    "SOURCE_LOGIND",
    "SOURCE_SCREENSAVER",
    "LockWatcher",
]

log = logging.getLogger(__name__)

SOURCE_SCREENSAVER = "screensaver"
SOURCE_LOGIND = "logind"

SCREENSAVER_INTERFACES = ("org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver")
LOGIND_SERVICE = "org.freedesktop.login1"
LOGIND_SESSION_INTERFACE = "org.freedesktop.login1.Session"

_DBUS_SERVICE = "org.freedesktop.DBus"
_DBUS_PATH = "/org/freedesktop/DBus"
_DEFAULT_SYSTEM_ADDRESS = "unix:path=/run/dbus/system_bus_socket"

LockCallback = Callable[[bool, str], None]


def _default_session_address() -> str | None:
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if address:
        return address
    # systemd user sessions often leave the variable unset and put the bus at a fixed place.
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir and (Path(runtime_dir) / "bus").exists():
        return f"unix:path={runtime_dir}/bus"
    return None


def _default_system_address() -> str:
    return os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or _DEFAULT_SYSTEM_ADDRESS


def _add_match(rule: str) -> Message:
    return Message(
        destination=_DBUS_SERVICE,
        path=_DBUS_PATH,
        interface=_DBUS_SERVICE,
        member="AddMatch",
        signature="s",
        body=[rule],
    )


class LockWatcher:
    """Reports screen lock and unlock as `on_lock(locked, source)`, source "screensaver" or "logind".

    Addresses default to the environment (DBUS_SESSION_BUS_ADDRESS or $XDG_RUNTIME_DIR/bus;
    DBUS_SYSTEM_BUS_ADDRESS or the standard system socket). Logind signals are taken only from the
    owner of org.freedesktop.login1 and only for one session: `logind_session_path` if given, else
    the session logind resolves for $XDG_SESSION_ID or "auto" (ours, or the user's display session);
    if that cannot be resolved, every session's signals count.

    The callback runs on the event loop. A source reporting the state it last reported is not
    repeated, since GNOME announces one change on both screensaver interfaces.
    """

    def __init__(
        self,
        *,
        session_address: str | None = None,
        system_address: str | None = None,
        logind_session_path: str | None = None,
        connect_timeout_s: float = 5.0,
    ) -> None:
        self._session_address = session_address if session_address is not None else _default_session_address()
        self._system_address = system_address if system_address is not None else _default_system_address()
        self._logind_session_path = logind_session_path
        self._timeout_s = connect_timeout_s
        self._buses: dict[str, MessageBus] = {}
        self._on_lock: LockCallback | None = None
        self._last: dict[str, bool] = {}

    @property
    def sources(self) -> list[str]:
        """The sources whose bus is connected and subscribed: a subset of ["screensaver", "logind"]."""
        return [source for source, bus in self._buses.items() if bus.connected]

    @property
    def logind_session_path(self) -> str | None:
        """The logind session object whose Lock/Unlock count; None means any session."""
        return self._logind_session_path

    async def start(self, on_lock: LockCallback) -> None:
        if self._buses:
            raise RuntimeError("LockWatcher is already started")
        self._on_lock = on_lock
        self._last.clear()
        session = await self._connect(SOURCE_SCREENSAVER, "session", self._session_address, BusType.SESSION)
        if session is not None:
            await self._subscribe_screensaver(session)
            # Subscribed first, then asked: a lock between the two is seen either way.
            await self._report_screensaver_now(session)
        system = await self._connect(SOURCE_LOGIND, "system", self._system_address, BusType.SYSTEM)
        if system is not None:
            await self._subscribe_logind(system)

    async def stop(self) -> None:
        buses, self._buses = self._buses, {}
        for bus in buses.values():
            bus.disconnect()
        for bus in buses.values():
            try:
                await asyncio.wait_for(bus.wait_for_disconnect(), self._timeout_s)  # type: ignore[no-untyped-call]
            except (TimeoutError, OSError, DBusFastError, EOFError):
                # Tearing down anyway; a bus that breaks while closing has nothing left to report.
                pass
        self._on_lock = None

    # ---- connecting ----

    async def _connect(
        self, source: str, kind: str, address: str | None, bus_type: BusType
    ) -> MessageBus | None:
        if not address:
            log.info("no D-Bus %s bus address; lock source %r is off", kind, source)
            return None
        bus: MessageBus | None = None
        try:
            bus = MessageBus(bus_address=address, bus_type=bus_type)
            await asyncio.wait_for(bus.connect(), self._timeout_s)
        except (OSError, DBusFastError, TimeoutError, ValueError, EOFError) as exc:
            log.info("no D-Bus %s bus at %s (%s); lock source %r is off", kind, address, exc, source)
            if bus is not None:
                bus.disconnect()
            return None
        return bus

    async def _subscribe(self, source: str, bus: MessageBus, rules: list[str]) -> bool:
        try:
            for rule in rules:
                reply = await asyncio.wait_for(bus.call(_add_match(rule)), self._timeout_s)
                if reply.message_type == MessageType.ERROR:
                    raise DBusFastError(f"AddMatch {rule!r} failed: {reply.error_name} {reply.body}")
        except (OSError, DBusFastError, TimeoutError, EOFError) as exc:
            log.warning("cannot subscribe to lock signals for %r: %s", source, exc)
            bus.disconnect()
            return False
        self._buses[source] = bus
        return True

    async def _subscribe_screensaver(self, bus: MessageBus) -> None:
        # No sender or path in the rules: the owning service and object path differ between desktops.
        rules = [
            f"type='signal',interface='{iface}',member='ActiveChanged'" for iface in SCREENSAVER_INTERFACES
        ]
        bus.add_message_handler(self._on_session_message)
        await self._subscribe(SOURCE_SCREENSAVER, bus, rules)

    async def _subscribe_logind(self, bus: MessageBus) -> None:
        if self._logind_session_path is None:
            self._logind_session_path = await self._resolve_logind_session(bus)
        path = f",path='{self._logind_session_path}'" if self._logind_session_path else ""
        # sender= makes the bus daemon check the signal really comes from logind: signals are
        # anyone's to send on the system bus.
        rules = [
            f"type='signal',sender='{LOGIND_SERVICE}',interface='{LOGIND_SESSION_INTERFACE}',member='{member}'{path}"
            for member in ("Lock", "Unlock")
        ]
        bus.add_message_handler(self._on_system_message)
        await self._subscribe(SOURCE_LOGIND, bus, rules)

    async def _resolve_logind_session(self, bus: MessageBus) -> str | None:
        session_id = os.environ.get("XDG_SESSION_ID") or "auto"
        call = Message(
            destination=LOGIND_SERVICE,
            path="/org/freedesktop/login1",
            interface="org.freedesktop.login1.Manager",
            member="GetSession",
            signature="s",
            body=[session_id],
        )
        try:
            reply = await asyncio.wait_for(bus.call(call), self._timeout_s)
        except (OSError, DBusFastError, TimeoutError, EOFError) as exc:
            reply_error = str(exc)
        else:
            if reply.message_type == MessageType.METHOD_RETURN and reply.body:
                return str(reply.body[0])
            reply_error = f"{reply.error_name} {reply.body}"
        log.info(
            "logind has no session %r for us (%s); taking Lock/Unlock of any session", session_id, reply_error
        )
        return None

    async def _report_screensaver_now(self, bus: MessageBus) -> None:
        """Started while the screen is already locked: ask the screen saver instead of waiting for a
        change that already happened."""
        call = Message(
            destination=SCREENSAVER_INTERFACES[0],
            path="/org/freedesktop/ScreenSaver",
            interface=SCREENSAVER_INTERFACES[0],
            member="GetActive",
        )
        try:
            reply = await asyncio.wait_for(bus.call(call), self._timeout_s)
        except (OSError, DBusFastError, TimeoutError, EOFError) as exc:
            log.debug("screen saver state unknown at start: %s", exc)
            return
        if reply.message_type == MessageType.METHOD_RETURN and reply.signature == "b" and reply.body[0]:
            self._report(True, SOURCE_SCREENSAVER)

    # ---- receiving ----

    def _on_session_message(self, message: Message) -> None:
        if not self._is_broadcast_signal(message) or message.interface not in SCREENSAVER_INTERFACES:
            return
        if message.member != "ActiveChanged" or message.signature != "b":
            return
        self._report(bool(message.body[0]), SOURCE_SCREENSAVER)

    def _on_system_message(self, message: Message) -> None:
        if not self._is_broadcast_signal(message) or message.interface != LOGIND_SESSION_INTERFACE:
            return
        if self._logind_session_path is not None and message.path != self._logind_session_path:
            return
        if message.member == "Lock":
            self._report(True, SOURCE_LOGIND)
        elif message.member == "Unlock":
            self._report(False, SOURCE_LOGIND)

    @staticmethod
    def _is_broadcast_signal(message: Message) -> bool:
        # A signal addressed to us bypasses the match rules (and their sender check), so only
        # broadcasts, which the rules filtered, are believed.
        return message.message_type == MessageType.SIGNAL and not message.destination

    def _report(self, locked: bool, source: str) -> None:
        if self._last.get(source) == locked:
            return
        self._last[source] = locked
        if self._on_lock is None:
            return
        try:
            self._on_lock(locked, source)
        except Exception:
            log.exception("lock callback failed")
