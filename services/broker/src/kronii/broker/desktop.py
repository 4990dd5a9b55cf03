"""The broker's hold on its X display: the injector (its own master device, or plain XTEST), the
watcher of the person's input and the STOP keys, the count of a person's devices, and remote viewing
with x11vnc and its hooks. Each part that cannot start says why (readiness), and the rest goes on:
without a display the broker still answers, refuses agents' input, and keeps its state."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from pathlib import Path

from kronii.broker.adapters.viewer_socket import ViewerHookListener, hook_socket_path
from kronii.broker.adapters.vnc import VncServer, VncSettings
from kronii.broker.adapters.x_focus import focused_window
from kronii.broker.adapters.x_master import PlainXTestInjector, XMasterInjector
from kronii.broker.adapters.x_watch import RawInputWatcher, physical_input_devices
from kronii.broker.attachment import Attachment
from kronii.broker.ports import UserInputSeen
from kronii.broker.settings import BrokerSettings

__all__ = ["Desktop"]

log = logging.getLogger(__name__)

_DEVICE_POLL_S = 5.0


class Desktop:
    def __init__(self, settings: BrokerSettings, attachment: Attachment) -> None:
        self._settings = settings
        self._attachment = attachment
        self.injector: XMasterInjector | PlainXTestInjector | None = None
        self._watcher: RawInputWatcher | None = None
        self._viewers: ViewerHookListener | None = None
        self._vnc: VncServer | None = None
        self._devices_task: asyncio.Task[None] | None = None
        self.display_problem = ""
        self.vnc_problem = ""
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

    @property
    def vnc_port(self) -> int:
        return self._vnc.port if self._vnc is not None else 0

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        display = self._settings.display
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
        watcher = RawInputWatcher(
            display,
            on_user_input=self._from_watcher_input,
            on_hotkey=self._from_watcher_hotkey,
            own_input=injector,
            hotkeys=self._settings.stop_keys,
        )
        watcher.start()
        self._watcher = watcher

    # The watcher's thread hands over to the event loop, where the control desk lives.
    def _from_watcher_input(self, seen: UserInputSeen) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._attachment.user_input, seen)

    def _from_watcher_hotkey(self) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._attachment.stop_keys)

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
            self.vnc_problem = "x11vnc is not installed: remote viewing is off"
            log.info("broker: %s", self.vnc_problem)
            return
        data_dir = Path(self._settings.data_dir) / "broker"
        listener = ViewerHookListener(hook_socket_path(data_dir), self._on_viewer)
        await listener.start()
        self._viewers = listener
        vnc = VncServer(
            display,
            data_dir,
            listener.path,
            VncSettings(port=self._settings.vnc_port, viewonly=self._settings.vnc_view_only),
        )
        try:
            await asyncio.to_thread(vnc.start)
        except Exception as error:
            self.vnc_problem = f"x11vnc did not start: {error}"
            log.warning("broker: %s", self.vnc_problem)
            return
        self._vnc = vnc
        log.info("broker: remote viewing on 127.0.0.1:%d (password in the data dir)", vnc.port)

    def _on_viewer(self, attached: bool, client_id: str) -> None:
        count = self._viewers.viewer_count if self._viewers is not None else 0
        self._attachment.viewers(count)

    async def stop(self) -> None:
        if self._devices_task is not None:
            self._devices_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._devices_task
        if self._vnc is not None:
            await asyncio.to_thread(self._vnc.stop)
        if self._viewers is not None:
            self._viewers.clear()
            await self._viewers.stop()
        await asyncio.to_thread(self._stop_x)

    def _stop_x(self) -> None:
        if self._watcher is not None:
            with contextlib.suppress(Exception):
                self._watcher.stop()
            self._watcher = None
        if self.injector is not None:
            with contextlib.suppress(Exception):
                self.injector.stop()
            self.injector = None
