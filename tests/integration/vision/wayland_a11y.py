"""An accessible Wayland desktop for the vision engine's tests: a real headless sway (tests/wayland.py),
a private session bus whose at-spi-bus-launcher puts the accessibility bus in a private runtime
directory, and GTK windows on sway (GDK_BACKEND=wayland) registered on that bus.

tests/wayland.py's `Sway.open` gives each client a bus of its own (dbus-run-session); here every client
shares the one bus, so one AT-SPI reader sees them all. What the bus activated is stopped with it, as in
vision_desktop.start_a11y_desktop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kronii.desktop.wayland_input import VirtualKeyboard, seat_named
from kronii.desktop.wayland_wire import WaylandConnection
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.capture_frames import ensure_key, load_private_key
from kronii.vision.core.context import RawNode

from tests.desktop import start_session_bus
from tests.infra import InfraUrls
from tests.integration.broker.broker_support import register_agent, start_broker
from tests.integration.vision.vision_desktop import (
    ACTIVATION_ENV,
    _adopting_orphans,
    _bus_pid,
    _stop_activated,
)
from tests.integration.vision.vision_service_support import VisionEngine
from tests.mesh import service_ports, start_service, wait_until
from tests.wayland import Sway, start_sway

__all__ = [
    "GTK3_CALCULATOR",
    "GTK4_CALCULATOR",
    "WaylandA11y",
    "start_wayland_a11y",
    "start_wayland_vision",
    "wait_for_app",
]

# (argv, the app id sway reports, extra environment): GTK4 speaks AT-SPI itself when GTK_A11Y=atspi.
GTK3_CALCULATOR = (("galculator",), "galculator", (("GDK_BACKEND", "wayland"),))
GTK4_CALCULATOR = (
    ("gnome-calculator",),
    "org.gnome.Calculator",
    (("GDK_BACKEND", "wayland"), ("GTK_A11Y", "atspi")),
)


@dataclass
class WaylandA11y:
    """sway, the session bus address and the runtime directory the accessibility bus lives in."""

    sway: Sway
    bus_address: str
    runtime_dir: str

    def env(self, extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
        """What an application of this desktop runs with: sway's socket, the shared bus, no X."""
        env = self.sway.env(extra)
        for name in ("NO_AT_BRIDGE", "AT_SPI_BUS_ADDRESS", "DISPLAY"):
            env.pop(name, None)
        env.update(DBUS_SESSION_BUS_ADDRESS=self.bus_address, **ACTIVATION_ENV)
        return env

    def open(
        self, app: tuple[tuple[str, ...], str, tuple[tuple[str, str], ...]], timeout_s: float = 30.0
    ) -> dict[str, Any]:
        """Start `app` on sway and the shared bus; its window as sway describes it."""
        argv, app_id, extra = app
        process = subprocess.Popen(
            list(argv), env=self.env(extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        self.sway.clients.append(process)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for window in self.sway.windows():
                if window["app_id"] == app_id and window["pid"] == process.pid:
                    return window
            if process.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited {process.returncode}")
            time.sleep(0.1)
        raise TimeoutError(f"no {app_id} window within {timeout_s} s")


@contextlib.contextmanager
def start_wayland_a11y(size: str = "1280x800") -> Iterator[WaylandA11y]:
    """A headless sway and a private accessible session bus; everything stopped at the end."""
    runtime_dir = tempfile.mkdtemp(prefix="kronii-wl-a11y-")
    os.chmod(runtime_dir, 0o700)
    try:
        with _adopting_orphans(), start_sway(size) as sway, start_session_bus() as bus_address:
            desktop = WaylandA11y(sway, bus_address, runtime_dir)
            # The accessibility bus's socket goes to our runtime directory, not sway's (nobody's).
            subprocess.run(
                ["dbus-update-activation-environment", f"XDG_RUNTIME_DIR={runtime_dir}",
                 f"WAYLAND_DISPLAY={sway.socket}", *(f"{key}={value}" for key, value in ACTIVATION_ENV.items())],
                env=desktop.env(), capture_output=True, timeout=5, check=True,
            )  # fmt: skip
            bus_pid = _bus_pid(bus_address)
            sid = os.getsid(bus_pid)
            try:
                # The accessibility bus up and switched on before any application asks for it: under
                # load, an application's first call racing the launcher's start left a reader's
                # connection reset.
                with ThreadPoolExecutor(1) as aside:  # callers may be inside an event loop
                    aside.submit(asyncio.run, _accessibility_on(bus_address)).result(30)
                yield desktop
            finally:
                for client in sway.clients:
                    with contextlib.suppress(ProcessLookupError):
                        client.terminate()
                _stop_activated(sid, bus_pid)
    finally:
        shutil.rmtree(runtime_dir, ignore_errors=True)


async def _accessibility_on(bus_address: str) -> None:
    reader = AtspiReader(bus_address)
    await reader.connect()
    await reader.close()


def sway_settings(sway: Sway) -> dict[str, str]:
    """What makes a kronii service work on this sway and not on any X display."""
    return {"WAYLAND_DISPLAY": str(sway.socket), "SWAYSOCK": str(sway.ipc), "DISPLAY": ""}


@contextlib.contextmanager
def start_wayland_vision(
    infra: InfraUrls, database: str, desktop: WaylandA11y, folder: Path
) -> Iterator[VisionEngine]:
    """A real input broker on sway (agents on its seat kronii-agent; a person's keyboard on seat0 so
    the session is a person's), and a real vision engine process on this desktop's buses and sway,
    registered with the broker by its own key (vision_service_support.start_vision, for Wayland)."""
    key_path = folder / "vision" / "vision.key"
    ensure_key(key_path)
    asyncio.run(register_agent(infra.redis, database, "vision", load_private_key(key_path)))
    settings = {**sway_settings(desktop.sway), "KRONII_BROKER_DISPLAY": ""}
    with start_broker(infra, database, "", folder / "broker", settings=settings) as broker:
        person = WaylandConnection(desktop.sway.socket)
        try:
            seat = seat_named(person, "seat0")
            assert seat is not None
            VirtualKeyboard(person, seat)
            person.roundtrip()
            wait_until(lambda: broker.state().get("interactive") is True, 15, "the person attached")
            env = service_ports("vision", {**desktop.env(), **infra.env(), **sway_settings(desktop.sway)})
            env.update(
                KRONII_DATABASE_URL=database,
                KRONII_DATA_DIR=str(folder / "data"),
                KRONII_VISION_KEY_PATH=str(key_path),
                KRONII_VISION_BROKER_URL=broker.url,
                KRONII_VISION_USE_CAPTURE="false",
                KRONII_VISION_URL=f"http://127.0.0.1:{env['KRONII_VISION_HTTP_PORT']}",
                KRONII_LOG_FORMAT="json",
            )
            with start_service("vision", env) as vision:
                yield VisionEngine(vision.proc, vision.url, vision.grpc_port, folder, vision.env, broker)
        finally:
            person.close()


async def wait_for_app(
    reader: AtspiReader, pid: int, wanted: str, timeout_s: float = 20.0
) -> tuple[RawNode, ...]:
    """The tree once the application of `pid` shows an object named `wanted` with bounds."""
    deadline = time.monotonic() + timeout_s
    nodes: tuple[RawNode, ...] = ()
    while time.monotonic() < deadline:
        nodes = await reader.snapshot()
        if any(n.pid == pid and n.name == wanted and n.bounds is not None for n in nodes):
            return nodes
        await asyncio.sleep(0.3)
    names = sorted({n.name for n in nodes if n.pid == pid})[:40]
    raise TimeoutError(f"pid {pid} showed no {wanted!r} within {timeout_s} s; it showed {names}")
