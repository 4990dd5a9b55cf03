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
import os
import shutil
import time
from pathlib import Path

from kronii.broker.adapters.remote_view import RemoteView
from kronii.broker.adapters.viewer_hands import ViewerHands
from kronii.broker.adapters.vnc import VncSettings
from kronii.broker.adapters.wl_hands import (
    PERSON_IDLE_MS,
    WaylandHands,
    make_agent_seat,
    person_seats_with_input,
)
from kronii.broker.adapters.x_clients import SenderFinder
from kronii.broker.adapters.x_focus import focused_window
from kronii.broker.adapters.x_injection import InjectorUnavailable
from kronii.broker.adapters.x_master import XMasterInjector
from kronii.broker.adapters.x_plain_xtest import PlainXTestInjector
from kronii.broker.adapters.x_watch import DEBOUNCE_S, RawInputWatcher, physical_input_devices
from kronii.broker.core.facts import UnbrokeredInput, UserInputSeen
from kronii.broker.ports import DesktopWitness, Injector
from kronii.broker.settings import BrokerSettings
from kronii.desktop.session import SessionFacts, capability
from kronii.desktop.session import probe as probe_session
from kronii.desktop.sway_ipc import sway_socket
from kronii.desktop.wayland_toplevels import AGENT_SEAT, ToplevelWatch
from kronii.desktop.wayland_wire import WaylandError
from kronii.foundation.clock import Clock, SystemClock
from kronii.foundation.errors import Unavailable

__all__ = ["Desktop", "NoDisplay"]

log = logging.getLogger(__name__)

_DEVICE_POLL_S = 5.0


def session_facts(display: str | None) -> SessionFacts:
    """The session, with the broker's own DISPLAY setting over the environment's."""
    env = dict(os.environ)
    if display:
        env["DISPLAY"] = display
    return probe_session(env)


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
        self.injector: XMasterInjector | PlainXTestInjector | WaylandHands | None = None
        self._watcher: RawInputWatcher | None = None
        self._finder: SenderFinder | None = None
        self.remote: RemoteView | None = None
        self._viewer_hands: ViewerHands | None = None
        self._devices_task: asyncio.Task[None] | None = None
        self.display_problem = ""
        self._remote_off = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wayland: WaylandHands | None = None
        self._person: ToplevelWatch | None = None
        self._last_person_report = 0.0

    def focused_window(self) -> int:
        """The window the person has in front of them (0 without a display or a focused window)."""
        if self._wayland is not None:
            try:
                return self._wayland.focused_window()
            except WaylandError as error:
                log.warning("broker: the focused window could not be read: %s", error)
                return 0
        if not self._settings.display or self.injector is None:
            return 0
        try:
            return focused_window(self._settings.display)
        except OSError as error:
            log.warning("broker: the focused window could not be read: %s", error)
            return 0

    @property
    def input_path(self) -> str:
        """How agents' input reaches the desktop, for readiness."""
        if self._wayland is not None:
            return f"Wayland: injecting through {self._wayland.description}"
        return "injecting through its own device"

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
        facts = await asyncio.to_thread(session_facts, display)
        if facts.kind == "wayland":
            await self._start_wayland(facts)
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

    async def _start_wayland(self, facts: SessionFacts) -> None:
        """On a compositor that can host the broker's own seat: the agent's devices there and the watch of
        the person's seats; elsewhere the session's sentence, and agents' input is refused."""
        refusal = capability(facts, "broker", "input")
        if not refusal.ok or facts.wayland_socket is None:
            self.display_problem = refusal.detail
            log.warning("broker: %s; agents' input is refused", refusal.detail)
            return
        problem = await asyncio.to_thread(make_agent_seat, sway_socket(os.environ))
        hands = WaylandHands(facts.wayland_socket)
        try:
            if problem:
                raise InjectorUnavailable(problem)
            await asyncio.to_thread(hands.start)
            self._person = await asyncio.to_thread(self._watch_person_seats, facts.wayland_socket)
        except (InjectorUnavailable, WaylandError) as error:
            self.display_problem = f"Wayland ({facts.name}): {error}"
            log.warning("broker: %s; agents' input is refused", self.display_problem)
            await asyncio.to_thread(hands.stop)
            return
        self.injector = hands
        self._wayland = hands
        self._devices_task = asyncio.create_task(
            self._poll_person_seats(facts.wayland_socket), name="broker-seats"
        )

    async def _poll_person_seats(self, socket: Path) -> None:
        """A person is attached while one of their seats has a keyboard or a pointer."""
        while True:
            try:
                count = await asyncio.to_thread(person_seats_with_input, socket)
                self._attachment.devices(count)
            except Exception as error:
                log.debug("broker: the person's seats could not be read: %s", error)
            await asyncio.sleep(_DEVICE_POLL_S)

    def _watch_person_seats(self, socket: Path) -> ToplevelWatch:
        watch = ToplevelWatch(
            socket, idle_timeout_ms=PERSON_IDLE_MS, on_input=self._from_person_seat, watch_agent_seat=True
        )
        watch.start(lambda _focused: None)
        return watch

    def _from_person_seat(self, seat: str, at: float) -> None:
        """The person's input on one of their seats (the watcher's thread): as the X watcher does, the
        fence first, then the loop; repeated input within the debounce is one report."""
        if seat == AGENT_SEAT:
            self._from_agent_seat(at)
            return
        closed = self._attachment.close_fence("user_input")
        if not closed and at - self._last_person_report < DEBOUNCE_S:
            return
        self._last_person_report = at
        self._from_watcher_input(UserInputSeen("input", 0, f"seat {seat}", at))

    def _from_agent_seat(self, at: float) -> None:
        """Input on the broker's own seat that the broker did not send: a program that makes its own
        virtual keyboard there (wtype picks the last seat listed) goes around the broker."""
        hands = self._wayland
        if hands is None or hands.is_own(at):
            return
        self._attachment.close_fence("unbrokered_input")
        seen = UserInputSeen("input", 0, f"seat {AGENT_SEAT}", at)
        self._from_finder(UnbrokeredInput(seen))

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
        if self._person is not None:
            self._person.close()
            self._person = None
        self._wayland = None
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
