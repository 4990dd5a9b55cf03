"""The broker's hold on its X display: the injector (its own master device, or plain XTEST), the
watcher of the person's input and the STOP keys, the count of a person's devices, and remote viewing
with x11vnc and its hooks (remote_view: whether the broker can see who watches). What they see goes
to the DesktopWitness port (the use case that follows the person). Each part that cannot start says
why (readiness), and the rest goes on: without a display the broker still answers, refuses agents'
input (NoDisplay), and keeps its state."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import shutil
import time
from pathlib import Path

from kronii.broker.adapters.remote_view import RemoteView
from kronii.broker.adapters.viewer_hands import ViewerHands
from kronii.broker.adapters.vnc import VncSettings
from kronii.broker.adapters.x_clients import SenderFinder
from kronii.broker.adapters.x_focus import focused_window
from kronii.broker.adapters.x_master import XMasterInjector
from kronii.broker.adapters.x_plain_xtest import PlainXTestInjector
from kronii.broker.adapters.x_watch import RawInputWatcher, physical_input_devices
from kronii.broker.core.facts import UnbrokeredInput, UserInputSeen
from kronii.broker.ports import DesktopWitness, Injector
from kronii.broker.settings import BrokerSettings
from kronii.desktop.session import wayland_refusal
from kronii.foundation.clock import Clock, SystemClock
from kronii.foundation.errors import Unavailable

__all__ = ["Desktop", "NoDisplay"]

log = logging.getLogger(__name__)

_DEVICE_POLL_S = 5.0


class NoDisplay:
    """The injector while the broker has no display: every action is refused with the reason."""

    def __init__(self, problem: str) -> None:
        self._problem = problem

    def inject(self, *_: object) -> bool:
        raise Unavailable(f"the broker cannot reach the desktop: {self._problem}")


class Desktop:
    def __init__(
        self, settings: BrokerSettings, attachment: DesktopWitness, clock: Clock | None = None
    ) -> None:
        self._settings = settings
        self._attachment = attachment
        self._clock = clock or SystemClock()
        self.injector: XMasterInjector | PlainXTestInjector | None = None
        self._watcher: RawInputWatcher | None = None
        self._finder: SenderFinder | None = None
        self.remote: RemoteView | None = None
        self._viewer_hands: ViewerHands | None = None
        self._devices_task: asyncio.Task[None] | None = None
        self.display_problem = ""
        self._remote_off = ""
        self._loop: asyncio.AbstractEventLoop | None = None

    def focused_window(self) -> int:
        """The window the person has in front of them (0 without a display or a focused window)."""
        if not self._settings.display or self.injector is None:
            return 0
        try:
            return focused_window(self._settings.display)
        except OSError as error:
            log.warning("broker: the focused window could not be read: %s", error)
            return 0

    def injector_or_refusal(self) -> Injector:
        """The injector, or one that refuses every action saying why there is none."""
        return self.injector or NoDisplay(self.display_problem)

    @property
    def vnc_port(self) -> int:
        return self.remote.port if self.remote is not None else 0

    @property
    def vnc_problem(self) -> str:
        """Why remote viewing is off or not working ("" while x11vnc serves the desktop)."""
        return self._remote_off or (self.remote.failure if self.remote is not None else "")

    @property
    def viewer_problem(self) -> str:
        """Why the broker cannot see the desktop's viewers now ("" when it can, or has none to see)."""
        return self.remote.problem if self.remote is not None else ""

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        display = self._settings.display
        refusal = await asyncio.to_thread(wayland_refusal, "broker", display)
        if refusal is not None:
            self.display_problem = refusal
            log.warning("broker: %s; agents' input is refused", refusal)
            return
        if not display:
            self.display_problem = "no X display (set DISPLAY or KRONII_BROKER_DISPLAY)"
            log.warning("broker: %s; agents' input is refused until it has one", self.display_problem)
            return
        try:
            await asyncio.to_thread(self._start_x, display)
        except Exception as error:  # a display that went away, a server without XInput2 or XTEST
            self.display_problem = f"the X display {display} cannot be used: {error}"
            log.warning("broker: %s", self.display_problem)
            await asyncio.to_thread(self._stop_x)
            return
        self._devices_task = asyncio.create_task(self._poll_devices(display), name="broker-devices")
        if self._settings.remote_view:
            await self._start_remote_view(display)

    def _start_x(self, display: str) -> None:
        injector: XMasterInjector | PlainXTestInjector
        if self._settings.injection == "master":
            injector = XMasterInjector(display)
        else:
            injector = PlainXTestInjector(display)
        injector.start()
        self.injector = injector
        self._finder = SenderFinder(display, self._from_finder)
        self._finder.start()
        watcher = RawInputWatcher(
            display,
            on_user_input=self._from_watcher_input,
            on_hotkey=self._from_watcher_hotkey,
            own_input=injector,
            hotkeys=self._settings.stop_keys,
            close_fence=self._attachment.close_fence,
            on_at_screen=self._from_watcher_at_screen,
            fence_still_closed=self._attachment.fence_still_closed,
            on_unbrokered_input=self._finder.find,
        )
        watcher.start()
        self._watcher = watcher

    # The watcher's thread hands over to the event loop, where the control desk lives.
    def _from_watcher_input(self, seen: UserInputSeen) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._attachment.user_input, self._on_clock(seen))

    def _on_clock(self, seen: UserInputSeen) -> UserInputSeen:
        # The watcher reads the system's monotonic clock; the use case measures on the service's.
        return dataclasses.replace(seen, at=self._clock.monotonic() - (time.monotonic() - seen.at))

    def _from_finder(self, found: UnbrokeredInput) -> None:
        """Unbrokered input (the watcher closed the fence), with who may have sent it, from the finder's thread."""
        assert self._loop is not None
        on_clock = dataclasses.replace(found, seen=self._on_clock(found.seen))
        self._loop.call_soon_threadsafe(self._attachment.unbrokered_input, on_clock)

    def _from_watcher_hotkey(self) -> None:
        assert self._loop is not None
        self._attachment.close_fence("stop_now")
        self._loop.call_soon_threadsafe(self._attachment.stop_keys)

    def _from_watcher_at_screen(self, delay_s: float, late_events: int) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._attachment.at_screen, delay_s, late_events)

    async def _poll_devices(self, display: str) -> None:
        while True:
            try:
                names = await asyncio.to_thread(physical_input_devices, display)
                self._attachment.devices(len(names))
            except Exception as error:
                log.debug("broker: the input devices could not be listed: %s", error)
            await asyncio.sleep(_DEVICE_POLL_S)

    async def _start_remote_view(self, display: str) -> None:
        if shutil.which("x11vnc") is None:
            self._remote_off = "x11vnc is not installed: remote viewing is off"
            log.info("broker: %s", self._remote_off)
            return
        private = Path(self._settings.data_dir) / "broker"
        fifo = await self._start_viewer_hands(display, private)
        remote = RemoteView(
            display,
            private,
            VncSettings(port=self._settings.vnc_port, viewonly=self._settings.vnc_view_only, pipe_input=fifo),
            self._attachment,
            reconnect_grace_s=self._settings.vnc_reconnect_grace_secs,
        )
        self.remote = remote
        await remote.start()

    async def _start_viewer_hands(self, display: str, private: Path) -> Path | None:
        """The broker types the viewers' input itself, after stopping the agent (viewer_hands.py);
        None (x11vnc types it, on a master of its own) where that cannot start."""
        injector = self.injector
        if not isinstance(injector, XMasterInjector):
            return None
        await asyncio.to_thread(private.mkdir, mode=0o700, parents=True, exist_ok=True)
        hands = ViewerHands(
            display,
            private / "viewer-input.fifo",
            injector.quiet,
            self._attachment.close_fence,
            self._from_watcher_input,
        )
        try:
            await asyncio.to_thread(hands.start)
        except Exception as error:
            log.warning("broker: viewers' input goes through x11vnc itself: %s", error)
            await asyncio.to_thread(hands.stop)
            return None
        self._viewer_hands = hands
        return hands.fifo

    async def stop(self) -> None:
        if self._devices_task is not None:
            self._devices_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._devices_task
        if self.remote is not None:
            await self.remote.stop()
        if self._viewer_hands is not None:
            await asyncio.to_thread(self._viewer_hands.stop)
            self._viewer_hands = None
        await asyncio.to_thread(self._stop_x)

    def _stop_x(self) -> None:
        if self._watcher is not None:
            with contextlib.suppress(Exception):
                self._watcher.stop()
            self._watcher = None
        if self._finder is not None:
            with contextlib.suppress(Exception):
                self._finder.stop()
            self._finder = None
        if self.injector is not None:
            with contextlib.suppress(Exception):
                self.injector.stop()
            self.injector = None
