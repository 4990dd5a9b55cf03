"""KDE Plasma adapter: the focused window from kronii's KWin script, idle time from the compositor's
idle protocol. KWin lets no other program read the focus over Wayland, so the sensor loads a small
script into KWin's scripting (kronii.desktop.kwin_script: org.kde.KWin /Scripting loadScript, then
run), with this adapter's unique bus name written in, and KWin calls back
org.kronii.KWinFocus1.Focus(app, class, caption, pid, id) on /org/kronii/KWinFocus at every change of
the active window or its caption. Only calls from KWin's own connection are taken: any other program
on the bus could call the method too. At close the script is unloaded and its file removed.

Idle comes from the Wayland connection (org_kde_kwin_idle or ext_idle_notifier_v1), as on any compositor
(adapters/wayland.py). dbus-fast runs on an asyncio loop of this adapter's own thread.

`Focus` fields: `app_name` the window's desktop file name (else its resource class, on Wayland the app
id), `wm_class` its resource class, `title` raw (the caller redacts it), `pid`; `window_id` is KWin's
internal id (a UUID) folded to 63 bits.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from dbus_fast import Message, MessageType
from kronii.desktop.kwin_screenshot import kwin_window_number
from kronii.desktop.session import KWIN_BUS, SessionFacts, session_bus_address
from kronii.sensor.adapters.bus_thread import BUS_ERRORS, DBUS, BusThread, bus_call
from kronii.sensor.adapters.processes import ProcessReader
from kronii.sensor.adapters.wayland import WaylandDisplay
from kronii.sensor.core.model import Focus
from kronii.sensor.core.prompts import WindowFacts, prompt_kind
from kronii.sensor.ports import DisplayUnavailable

__all__ = ["FOCUS_INTERFACE", "FOCUS_PATH", "SCRIPT_NAME", "KdeDisplay", "focus_from_script"]

log = logging.getLogger(__name__)

FOCUS_PATH = "/org/kronii/KWinFocus"
FOCUS_INTERFACE = "org.kronii.KWinFocus1"
SCRIPT_NAME = "kronii-focus"
_SCRIPTING = "org.kde.kwin.Scripting"
_TIMEOUT_S = 3.0


def focus_from_script(fields: Sequence[str], processes: ProcessReader | None = None) -> Focus:
    """The Focus of the script's (app, class, caption, pid, id); empty when no window is active."""
    app, window_class, caption, pid_text, internal_id = (str(field) for field in fields[:5])
    if not internal_id:
        return Focus()
    pid = int(pid_text) if pid_text.isdigit() else 0
    program = processes.program(pid) if processes is not None and pid else ""
    return Focus(
        app_name=app,
        wm_class=window_class,
        window_id=kwin_window_number(internal_id),
        title=caption,
        pid=pid,
        app_start_time_ms=processes.start_time_ms(pid) if processes is not None and pid else 0,
        prompt=prompt_kind(WindowFacts(app, window_class, program, ())),
    )


def _script_text(destination: str) -> str:
    source = resources.files("kronii.desktop").joinpath("kwin_script", "kronii-focus.js")
    return source.read_text(encoding="utf-8").replace("@DEST@", destination)


class KdeDisplay:
    """A DisplaySource on KDE Plasma: focus from kronii's KWin script over the session bus, idle from
    the Wayland connection. Raises DisplayUnavailable when the Wayland socket or the bus does not answer."""

    def __init__(
        self, facts: SessionFacts, processes: ProcessReader | None = None, address: str | None = None
    ) -> None:
        self._processes = processes or ProcessReader()
        self._idle = WaylandDisplay(facts, self._processes)
        self._address = address or session_bus_address(os.environ)
        if not self._address:
            self._idle.close()
            raise DisplayUnavailable("KDE: no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        self._bus = BusThread("sensor-kwin", _TIMEOUT_S)
        self._kwin = ""  # KWin's unique name on the bus: the only caller taken
        self._script: Path | None = None
        self._callback: Callable[[Focus], None] | None = None
        self._errors = 0
        try:
            self._bus.wait(self._bus.connect(self._address, self._on_message))
        except BUS_ERRORS as error:
            self.close()
            raise DisplayUnavailable(
                f"KDE: the session bus {self._address} does not answer ({error})"
            ) from error
        self.display_name = f"Wayland ({facts.name}) session bus {self._address}"
        self.problem = self._idle.problem

    # ---- the DisplaySource port ----

    @property
    def has_idle(self) -> bool:
        return self._idle.has_idle

    @property
    def errors(self) -> int:
        return self._errors + self._idle.errors

    def idle_ms(self) -> int:
        return self._idle.idle_ms()

    def watch_idle(self, on_idle: Callable[[int], None]) -> bool:
        return self._idle.watch_idle(on_idle)

    def start(self, callback: Callable[[Focus], None]) -> None:
        self._callback = callback
        self._idle.start(lambda _focus: None)  # idle only: the toplevel list is not KWin's to give
        try:
            self._bus.wait(self._load_script())
        except (*BUS_ERRORS, RuntimeError) as error:
            self._errors += 1
            self.problem = (
                f"KWin did not run kronii's KWin script ({error}): the sensor follows idle and lock only"
            )
            log.warning("%s", self.problem)

    def close(self) -> None:
        if self._bus.closed:
            return
        if self._bus.bus is not None and self._bus.bus.connected:
            try:
                self._bus.wait(self._unload_script())
            except (*BUS_ERRORS, RuntimeError) as error:
                log.debug("unloading kronii's KWin script failed: %s", error)
        if self._script is not None:
            self._script.unlink(missing_ok=True)
        self._bus.close()
        self._idle.close()

    # ---- on the adapter's loop ----

    async def _ask(self, message: Message) -> list[Any]:
        reply = await self._bus.ask(message)
        if reply.message_type == MessageType.ERROR:
            detail = reply.body[0] if reply.body else "an error without a text"
            raise RuntimeError(f"{message.member}: {detail}")
        return list(reply.body)

    async def _load_script(self) -> None:
        """The script written with our unique name, loaded and run; a previous sensor's is unloaded
        first (KWin keeps scripts by name)."""
        bus = self._bus.bus
        assert bus is not None and bus.unique_name
        (self._kwin,) = await self._ask(
            bus_call(DBUS, "/org/freedesktop/DBus", DBUS, "GetNameOwner", "s", [KWIN_BUS])
        )
        await self._unload_script()
        runtime = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
        handle, name = tempfile.mkstemp(prefix="kronii-kwin-focus-", suffix=".js", dir=runtime)
        with os.fdopen(handle, "w", encoding="utf-8") as script:
            script.write(_script_text(bus.unique_name))
        self._script = Path(name)
        (number,) = await self._ask(
            bus_call(KWIN_BUS, "/Scripting", _SCRIPTING, "loadScript", "ss", [name, SCRIPT_NAME])
        )
        if int(number) < 0:
            raise RuntimeError(f"KWin refused to load {name}")
        # KWin 5.27 puts a loaded script at /Scripting/Script<n>, KWin 6 at /Scripting/Script<n> too;
        # KWin 5.2x before it at /<n>.
        failures = []
        for path in (f"/Scripting/Script{number}", f"/{number}"):
            try:
                await self._ask(bus_call(KWIN_BUS, path, "org.kde.kwin.Script", "run"))
                return
            except RuntimeError as error:
                failures.append(str(error))
        raise RuntimeError("; ".join(failures))

    async def _unload_script(self) -> None:
        await self._ask(bus_call(KWIN_BUS, "/Scripting", _SCRIPTING, "unloadScript", "s", [SCRIPT_NAME]))

    def _on_message(self, message: Message) -> Message | None:
        wanted = (
            message.message_type == MessageType.METHOD_CALL
            and message.path == FOCUS_PATH
            and message.interface == FOCUS_INTERFACE
            and message.member == "Focus"
        )
        if not wanted:
            return None
        if not self._kwin or message.sender != self._kwin or message.signature != "sssss":
            return Message.new_error(
                message, "org.freedesktop.DBus.Error.AccessDenied", "only KWin tells the focus"
            )
        if self._callback is not None:
            try:
                self._callback(focus_from_script(message.body, self._processes))
            except Exception:
                log.exception("focus callback failed")
        return Message.new_method_return(message)
