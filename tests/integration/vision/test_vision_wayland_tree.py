"""The accessibility tree of real GTK windows on a real headless sway, placed on sway's layout by the
vision engine's own adapters (AtspiReader -> DesktopTree -> LayoutTree with SwayDesktop).

On Wayland GTK3 (galculator) and GTK4 (gnome-calculator) give AT-SPI extents relative to their own
window; sway tiles the two side by side, so the second window's raw extents are far from where it is.
Placed, a button's bounds lie inside sway's rectangle of its window and over its pixels: Tesseract reads
the button's label in a wlr-screencopy crop taken at those bounds."""

from __future__ import annotations

import io
import subprocess
from collections.abc import AsyncIterator, Iterator
from typing import Any

import numpy as np
import pytest
import pytest_asyncio
from kronii.desktop.wayland_screencopy import ScreenCopy
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.desktop import DesktopTree
from kronii.vision.adapters.wl_desktop import LayoutTree, SwayDesktop
from kronii.vision.core.context import Bounds, RawNode
from PIL import Image, ImageOps

from tests.integration.vision.wayland_a11y import (
    GTK3_CALCULATOR,
    GTK4_CALCULATOR,
    WaylandA11y,
    start_wayland_a11y,
    wait_for_app,
)


@pytest.fixture(scope="module")
def desktop() -> Iterator[tuple[WaylandA11y, dict[str, Any], dict[str, Any]]]:
    with start_wayland_a11y() as started:
        gtk3 = started.open(GTK3_CALCULATOR)
        gtk4 = started.open(GTK4_CALCULATOR)
        yield started, gtk3, gtk4


@pytest_asyncio.fixture
async def reader(desktop: tuple[WaylandA11y, dict[str, Any], dict[str, Any]]) -> AsyncIterator[AtspiReader]:
    started, gtk3, gtk4 = desktop
    reader = AtspiReader(started.bus_address)
    await reader.connect()
    try:
        await wait_for_app(reader, gtk3["pid"], "sqrt")
        await wait_for_app(reader, gtk4["pid"], "mod")
        yield reader
    finally:
        await reader.close()


def _label_at(socket: Any, box: Bounds) -> str:
    """Tesseract's reading (one line) of the middle of `box`, copied from the screen."""
    cx, cy = box.center()
    width, height = min(box.width - 8, 64), min(box.height - 8, 36)
    with ScreenCopy(socket) as screen:
        pixels = screen.region(cx - width // 2, cy - height // 2, width, height)
    image = ImageOps.autocontrast(Image.fromarray(pixels).convert("L"))
    image = ImageOps.expand(image.resize((width * 4, height * 4), Image.Resampling.LANCZOS), 20, fill=255)
    png = io.BytesIO()
    image.save(png, "PNG")
    done = subprocess.run(
        ["tesseract", "stdin", "stdout", "--psm", "7"], input=png.getvalue(), capture_output=True, timeout=30
    )
    return done.stdout.decode().strip()


def _named(nodes: tuple[RawNode, ...], pid: int, name: str) -> RawNode:
    return next(n for n in nodes if n.pid == pid and n.name == name and n.bounds is not None)


def _rect(started: WaylandA11y, pid: int) -> Bounds:
    """sway's rectangle of the process's window now (as swaymsg prints it)."""
    rect = next(w["rect"] for w in started.sway.windows() if w["pid"] == pid)
    return Bounds(rect["x"], rect["y"], rect["width"], rect["height"])


@pytest.mark.asyncio
@pytest.mark.parametrize(("toolkit", "labels"), [("gtk3", ("7", "sqrt")), ("gtk4", ("7", "mod"))])
async def test_a_gtk_buttons_placed_bounds_lie_inside_its_sway_window_and_over_its_label(
    desktop: tuple[WaylandA11y, dict[str, Any], dict[str, Any]],
    reader: AtspiReader,
    toolkit: str,
    labels: tuple[str, ...],
) -> None:
    started, gtk3, gtk4 = desktop
    window = gtk3 if toolkit == "gtk3" else gtk4
    sway_desk = SwayDesktop(started.sway.socket, started.sway.ipc)
    raw = await reader.snapshot()
    placed = await LayoutTree(DesktopTree(reader), sway_desk).snapshot(fresh=True)
    area = _rect(started, window["pid"])
    for label in labels:
        button = _named(placed, window["pid"], label).bounds
        assert button is not None and area.contains(button), (label, button, area)
        assert _label_at(started.sway.socket, button) == label, (label, button)
        # What the toolkit itself said is relative to its window: the placing is what moved it.
        said = _named(raw, window["pid"], label).bounds
        assert said is not None and (button.x - said.x, button.y - said.y) == (area.x, area.y)
    sway_desk.close()


def test_the_sway_desktop_lists_the_focused_window_and_copies_the_whole_layout(
    desktop: tuple[WaylandA11y, dict[str, Any], dict[str, Any]],
) -> None:
    started, gtk3, gtk4 = desktop
    sway_desk = SwayDesktop(started.sway.socket, started.sway.ipc)
    try:
        started.sway.focus("galculator")
        desk = sway_desk.desk()
        assert desk is not None
        front = desk.window(desk.focus)
        assert front is not None and front.pid == gtk3["pid"] and front.wm_class == "galculator"
        assert {w.pid for w in desk.stack} == {gtk3["pid"], gtk4["pid"]}
        assert sway_desk.front_window() == (gtk3["pid"], _rect(started, gtk3["pid"]))
        assert sway_desk.screen_size() == (1280, 800)
        frame = sway_desk.grab()
        # 1280x800 reduced 8 times; the two windows differ, so the frame is not one colour.
        assert frame.shape == (100, 160) and frame.dtype == np.uint8 and int(frame.max()) > int(frame.min())
    finally:
        sway_desk.close()
