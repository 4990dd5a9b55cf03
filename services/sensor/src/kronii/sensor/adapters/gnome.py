"""GNOME adapter: the focused window from kronii's GNOME Shell extension, idle time from mutter, both on
the session bus. mutter lets no other program read the focus over Wayland, so the extension
(kronii.desktop.gnome_extension, installed by `kronii gnome-extension install`) publishes it as
org.kronii.Shell1: GetFocus() and the signal FocusChanged, each (app_id, wm_class, title, pid, window_id).
Idle is mutter's own: org.gnome.Mutter.IdleMonitor.GetIdletime on /org/gnome/Mutter/IdleMonitor/Core.

dbus-fast runs on an asyncio loop of this adapter's own thread; the sensor's calls (idle_ms) wait for
their answer there. Without the extension, idle still works and `problem` says how to install it.

`Focus` fields as this adapter fills them: `app_name` the shell's app id (the desktop file's name,
else the Wayland app id), `wm_class` the window's (on Wayland its app id), `title` raw (the caller
redacts it), `pid` and `window_id` mutter's, `app_start_time_ms` and `prompt` from /proc and the ids.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from dbus_fast import Message, MessageType
from kronii.desktop.session import GNOME_EXTENSION_BUS, SessionFacts, assess, session_bus_address
from kronii.sensor.adapters.bus_thread import BUS_ERRORS, DBUS, BusThread, bus_call
from kronii.sensor.adapters.processes import ProcessReader
from kronii.sensor.core.model import Focus
from kronii.sensor.core.prompts import WindowFacts, prompt_kind
from kronii.sensor.ports import DisplayUnavailable, IdleUnavailable

__all__ = ["SHELL_INTERFACE", "SHELL_PATH", "GnomeDisplay", "focus_from_fields"]

log = logging.getLogger(__name__)

SHELL_PATH = "/org/kronii/Shell1"
SHELL_INTERFACE = "org.kronii.Shell1"
_FIELDS = "sssut"
_IDLE_SERVICE = "org.gnome.Mutter.IdleMonitor"
_IDLE_PATH = "/org/gnome/Mutter/IdleMonitor/Core"
_TIMEOUT_S = 3.0


def focus_from_fields(fields: Sequence[Any], processes: ProcessReader | None = None) -> Focus:
    """The Focus of the extension's (app_id, wm_class, title, pid, window_id); empty when no window is."""
    app_id, wm_class, title, pid, window_id = (str(fields[0]), str(fields[1]), str(fields[2]), *fields[3:5])
    if not window_id:
        return Focus()
    program = processes.program(pid) if processes is not None and pid else ""
    return Focus(
        app_name=app_id,
        wm_class=wm_class,
        window_id=int(window_id),
        title=title,
        pid=int(pid),
        app_start_time_ms=processes.start_time_ms(pid) if processes is not None and pid else 0,
        prompt=prompt_kind(WindowFacts(app_id, wm_class, program, ())),
    )


class GnomeDisplay:
    """A DisplaySource on GNOME's session bus. Raises DisplayUnavailable when the bus does not answer."""

    def __init__(
        self, facts: SessionFacts, processes: ProcessReader | None = None, address: str | None = None
    ) -> None:
        self._processes = processes or ProcessReader()
        self._address = address or session_bus_address(os.environ)
        if not self._address:
            raise DisplayUnavailable("GNOME: no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        self._bus = BusThread("sensor-gnome", _TIMEOUT_S)
        self._callback: Callable[[Focus], None] | None = None
        self._errors = 0
        try:
            self._bus.wait(self._bus.connect(self._address, self._on_message))
            extension = self._bus.wait(self._name_owned(GNOME_EXTENSION_BUS))
            self._has_idle = self._bus.wait(self._idle_time()) is not None
        except BUS_ERRORS as error:
            self.close()
            raise DisplayUnavailable(
                f"GNOME: the session bus {self._address} does not answer ({error})"
            ) from error
        self.display_name = f"Wayland ({facts.name}) session bus {self._address}"
        self._facts = facts
        self._set_extension(extension)

    def _set_extension(self, present: bool) -> None:
        """`problem` as the extension now is: it may be installed, enabled or stopped while we run."""
        facts = replace(self._facts, gnome_extension=present)
        self.problem = "; ".join(
            item.detail for item in assess(facts) if item.agent == "sensor" and not item.ok
        )

    # ---- the DisplaySource port ----

    @property
    def has_idle(self) -> bool:
        return self._has_idle

    @property
    def errors(self) -> int:
        return self._errors

    def idle_ms(self) -> int:
        if self._bus.bus is None or not self._bus.bus.connected:
            raise DisplayUnavailable("GNOME: the session bus went away")
        try:
            idle: int | None = self._bus.wait(self._idle_time())
        except BUS_ERRORS as error:
            raise DisplayUnavailable(f"GNOME: the session bus does not answer ({error})") from error
        if idle is None:
            raise IdleUnavailable("mutter's IdleMonitor does not answer on the session bus")
        return idle

    def watch_idle(self, on_idle: Callable[[int], None]) -> bool:
        """mutter's idle time is a bus call each time (GetIdletime): polled, never from memory."""
        return False

    def start(self, callback: Callable[[Focus], None]) -> None:
        self._callback = callback
        self._bus.wait(self._watch())

    def close(self) -> None:
        self._bus.close()

    # ---- on the adapter's loop ----

    async def _name_owned(self, name: str) -> bool:
        reply = await self._bus.ask(
            bus_call(DBUS, "/org/freedesktop/DBus", DBUS, "NameHasOwner", "s", [name])
        )
        return reply.message_type == MessageType.METHOD_RETURN and bool(reply.body[0])

    async def _idle_time(self) -> int | None:
        reply = await self._bus.ask(bus_call(_IDLE_SERVICE, _IDLE_PATH, _IDLE_SERVICE, "GetIdletime"))
        if reply.message_type != MessageType.METHOD_RETURN or reply.signature != "t":
            return None
        return int(reply.body[0])

    async def _watch(self) -> None:
        """Subscribed first (the extension's signal, and its name coming and going), then asked: a change
        between the two is seen either way."""
        rules = [
            f"type='signal',sender='{GNOME_EXTENSION_BUS}',interface='{SHELL_INTERFACE}',member='FocusChanged'",
            f"type='signal',sender='{DBUS}',member='NameOwnerChanged',arg0='{GNOME_EXTENSION_BUS}'",
        ]
        for rule in rules:
            await self._bus.ask(bus_call(DBUS, "/org/freedesktop/DBus", DBUS, "AddMatch", "s", [rule]))
        await self._ask_focus()

    async def _ask_focus(self) -> None:
        try:
            reply = await self._bus.ask(
                bus_call(GNOME_EXTENSION_BUS, SHELL_PATH, SHELL_INTERFACE, "GetFocus")
            )
        except BUS_ERRORS as error:
            self._errors += 1
            log.debug("the extension's GetFocus failed: %s", error)
            return
        if reply.message_type == MessageType.METHOD_RETURN and reply.signature == _FIELDS:
            self._report(reply.body)

    def _on_message(self, message: Message) -> None:
        if message.message_type != MessageType.SIGNAL or message.destination:
            return  # a signal sent to us alone bypassed the match rules' sender check
        if message.interface == SHELL_INTERFACE and message.member == "FocusChanged":
            if message.signature == _FIELDS and message.path == SHELL_PATH:
                self._report(message.body)
        elif message.member == "NameOwnerChanged" and message.body[:1] == [GNOME_EXTENSION_BUS]:
            self._set_extension(bool(message.body[2]))
            if message.body[2]:
                self._bus.spawn(self._ask_focus())  # the extension came (back): its focus now

    def _report(self, fields: Sequence[Any]) -> None:
        if self._callback is None:
            return
        try:
            self._callback(focus_from_fields(fields, self._processes))
        except Exception:
            log.exception("focus callback failed")
