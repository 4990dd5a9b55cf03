"""Shared by the vision engine's benchmarks: an accessible desktop at a chosen size, xterms showing
text, the capture service with the vision key registered as an agent, and the stand-in sensor's focus
on a window of the desktop."""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

from Xlib import display as xdisplay

from tests.desktop import focus_window
from tests.infra import InfraUrls
from tests.integration.capture.capture_support import (
    CaptureProc,
    FakeSensor,
    PlantedWindow,
    capture_env,
    planted_window,
    start_capture,
)
from tests.integration.vision import vision_desktop
from tests.integration.vision.vision_desktop import A11yDesktop, GtkForm, form_window_id

__all__ = [
    "CaptureForVision",
    "a11y_desktop",
    "bring_to_front",
    "form_as_window",
    "load_average",
    "move_window",
    "register_with_capture",
    "start_capture_for_vision",
    "text_xterm",
]

KRONII = str(Path(sys.executable).with_name("kronii"))
_serial = itertools.count()


def a11y_desktop(screen: str) -> contextlib.AbstractContextManager[A11yDesktop]:
    """start_a11y_desktop on an Xvfb screen of `screen` ("1920x1080x24")."""
    return vision_desktop.start_a11y_desktop(screen=screen)


def text_xterm(
    display: str, text: str, geometry: str, *, then_bash: bool = False
) -> contextlib.AbstractContextManager[PlantedWindow]:
    """An xterm (DejaVu Sans Mono 12, black on white, no cursor blink) printing `text` and then waiting,
    or with `then_bash` a bash without rc files after it, where typed lines run (capture's test helper)."""
    return planted_window(display, text, geometry=geometry, then_bash=then_bash)


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages: the other work sharing the machine's cores."""
    return [round(load, 2) for load in os.getloadavg()]


def _wm_class(display: str, window_id: int) -> str:
    connection = xdisplay.Display(display)
    try:
        found = connection.create_resource_object("window", window_id).get_wm_class()
        return str(found[1]) if found else ""
    finally:
        connection.close()


def form_as_window(desktop: A11yDesktop, form: GtkForm) -> PlantedWindow:
    """The GTK form as the capture tests' window: what the stand-in sensor reports as focused."""
    window_id = form_window_id(desktop.display)
    process = cast("subprocess.Popen[bytes]", form.process)
    return PlantedWindow(desktop.display, process, window_id, _wm_class(desktop.display, window_id))


def move_window(display: str, window_id: int, x: int, y: int) -> None:
    subprocess.run(
        ["xdotool", "windowmove", "--sync", str(window_id), str(x), str(y)],
        env={**os.environ, "DISPLAY": display}, capture_output=True, timeout=10, check=True,
    )  # fmt: skip


async def bring_to_front(window: PlantedWindow, sensor: FakeSensor | None = None) -> None:
    """Activate the window through the window manager and, for capture, tell the stand-in sensor."""
    focus_window(window.display, window.window_id)
    if sensor is not None:
        await sensor.focus(window)


def register_with_capture(infra: InfraUrls, database: str, client_id: str, public_key: Path) -> None:
    """`kronii capture clients add CLIENT --public-key FILE`, as a person registers an agent."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    env.update(KRONII_DATABASE_URL=database, KRONII_REDIS_URL=infra.redis)
    done = subprocess.run(
        [KRONII, "capture", "clients", "add", client_id, "--public-key", str(public_key)],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"registering {client_id} with capture failed: {done.stderr.strip()}")


class CaptureForVision:
    """The capture service on the bench's display with a stand-in sensor, the vision key registered."""

    def __init__(self, service: CaptureProc, sensor: FakeSensor, socket_dir: Path) -> None:
        self.service = service
        self.sensor = sensor
        self.socket_dir = socket_dir

    def settings(self) -> dict[str, str]:
        """What a vision engine process needs to take its frames from this capture."""
        return {"KRONII_VISION_USE_CAPTURE": "true", "KRONII_CAPTURE_SOCKET_DIR": str(self.socket_dir)}


@contextlib.asynccontextmanager
async def start_capture_for_vision(
    infra: InfraUrls, database: str, display: str, folder: Path, public_key: Path
) -> AsyncIterator[CaptureForVision]:
    """Yields a CaptureForVision. The rate limits are lifted (a benchmark asks far more often than a
    person's desktop would), as bench/capture_latency.py does."""
    env = capture_env(infra, database, folder / "capture", display)
    env.update(KRONII_CAPTURE_GLOBAL_PER_MINUTE="100000", KRONII_CAPTURE_PER_APP_PER_MINUTE="100000")
    register_with_capture(infra, database, "vision", public_key)
    sensor = FakeSensor(infra)
    await sensor.start()
    try:
        with start_capture(env) as service:
            yield CaptureForVision(service, sensor, Path(env["KRONII_CAPTURE_SOCKET_DIR"]))
    finally:
        await sensor.close()
