"""kronii's own confirmation bubble does not make the plan it asks about stale (issue 31): a real
notification daemon (dunst) on the test desktop's X screen and session bus draws the bubble over the
target window, and the person's yes still runs the plan (typing, flagged by the input policy, into
the GTK3 form's Name field, which prints what it holds); a real change inside the window (the field
filled meanwhile) still makes it stale. The bubble's place over the window is checked on the screen's pixels.

One desktop, dunst, broker and engine serve the module."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.screen_thumbnail import ScreenThumbnails
from kronii.vision.adapters.x_windows import XWindows
from kronii.vision.core.context import Bounds
from kronii.vision.core.diff import cells_of, diff_score

from tests.desktop import stop_process, wait_until
from tests.infra import InfraUrls
from tests.integration.vision.conftest import FORM_SECRET
from tests.integration.vision.vision_desktop import (
    A11yDesktop,
    GtkForm,
    client_rect,
    form_window_id,
    start_a11y_desktop,
    start_gtk_form,
)
from tests.integration.vision.vision_service_support import VisionEngine, start_vision

BUBBLE = (260, 70)  # dunst's width and its largest height, in X pixels


@pytest.fixture(scope="module")
def desktop() -> Iterator[A11yDesktop]:
    with start_a11y_desktop() as shared:
        yield shared


@pytest.fixture(scope="module")
def form(desktop: A11yDesktop) -> Iterator[GtkForm]:
    with start_gtk_form(desktop, FORM_SECRET) as running:
        yield running


@pytest.fixture(scope="module")
def area(desktop: A11yDesktop, form: GtkForm) -> Bounds:
    return client_rect(desktop.display, form_window_id(desktop.display))


def _has_notifier(desktop: A11yDesktop) -> bool:
    out = subprocess.run(
        ["dbus-send", f"--bus={desktop.bus_address}", "--print-reply", "--dest=org.freedesktop.DBus",
         "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications"],
        capture_output=True, text=True, timeout=5, check=False,
    ).stdout  # fmt: skip
    return "boolean true" in out


@pytest.fixture(scope="module")
def dunst(desktop: A11yDesktop, area: Bounds, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """dunst drawing its bubbles over the lower right of the form (where its buttons are, away from
    its Name field), kept until closed."""
    left = area.x + area.width - BUBBLE[0] - 4
    top = area.y + area.height - BUBBLE[1] - 4
    conf = Path(tmp_path_factory.mktemp("dunst")) / "dunstrc"
    conf.write_text(
        "[global]\n"
        f"    origin = top-left\n    offset = {left}x{top}\n    width = {BUBBLE[0]}\n    height = {BUBBLE[1]}\n"
        "    notification_limit = 1\n    follow = none\n    font = Monospace 8\n"
        "    background = \"#202020\"\n    foreground = \"#f0f0f0\"\n    frame_color = \"#ff8000\"\n"
        "[urgency_low]\n    timeout = 0\n[urgency_normal]\n    timeout = 0\n[urgency_critical]\n    timeout = 0\n"
    )  # fmt: skip
    process = subprocess.Popen(
        ["dunst", "-conf", str(conf)], env=desktop.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        wait_until(lambda: _has_notifier(desktop), timeout_s=10, what="dunst on the session bus")
        yield process.pid
    finally:
        stop_process(process)


@pytest.fixture(scope="module")
def vision(
    infra: InfraUrls,
    migrated_database: str,
    desktop: A11yDesktop,
    dunst: int,
    form: GtkForm,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[VisionEngine]:
    # Typing asks the person first (the input class's policy): a flagged plan whose effect shows.
    confirm_input = {"KRONII_VISION_INPUT_POLICY": "confirm"}
    folder = tmp_path_factory.mktemp("bubble")
    with start_vision(infra, migrated_database, desktop, folder, settings=confirm_input) as engine:
        deadline = time.monotonic() + 15
        while "Cancel" not in httpx.get(f"{engine.url}/v1/vision/context", timeout=30).text:
            assert time.monotonic() < deadline, "the engine never saw the form"
            time.sleep(0.1)
        yield engine


def bubble_over(desktop: A11yDesktop, area: Bounds) -> Bounds | None:
    """The part of the form dunst's mapped bubble covers, as the X server stacks it (None: no bubble)."""
    windows = XWindows(desktop.display)
    try:
        desk = windows.desk()
    finally:
        windows.close()
    form_index = next(i for i, w in enumerate(desk.stack) if w.area == area or w.title == "Kronii Test Form")
    for window in desk.stack[form_index + 1 :]:
        if window.notification and window.wm_class == "Dunst":  # dunst names no _NET_WM_PID
            box = window.area
            left, top = max(box.x, area.x), max(box.y, area.y)
            right = min(box.x + box.width, area.x + area.width)
            bottom = min(box.y + box.height, area.y + area.height)
            if right > left and bottom > top:
                return Bounds(left, top, right - left, bottom - top)
    return None


def ticks(vision: VisionEngine) -> float:
    text = httpx.get(f"{vision.url}/metrics", timeout=10).text
    return sum(
        float(line.split()[-1]) for line in text.splitlines() if line.startswith("kronii_vision_ticks_total")
    )


def flagged_plan_with_the_bubble_shown(
    vision: VisionEngine, desktop: A11yDesktop, dunst: int, area: Bounds
) -> dict[str, Any]:
    """A flagged plan (typing asks first), its bubble on the screen over the form, and the screen
    watch past two ticks with the bubble there."""
    # No bubble of an earlier plan left: the screen before this one's is the window alone.
    subprocess.run(["dunstctl", "close-all"], env=desktop.env, timeout=5, check=True)
    wait_until(lambda: bubble_over(desktop, area) is None, timeout_s=5, what="earlier bubbles closed")
    with ScreenThumbnails(desktop.display) as screen:
        before = screen.grab()
        plan = vision.plan("type hello into Name")
        assert plan["state"] == "awaiting_confirmation" and "P2" in plan["safety_rows"], plan
        wait_until(lambda: bubble_over(desktop, area) is not None, timeout_s=10, what="dunst's bubble")
        over = bubble_over(desktop, area)
        assert over is not None
        region = cells_of(over.x, over.y, over.width, over.height)
        # The bubble is on the screen, over the form: its pixels there changed.
        wait_until(
            lambda: diff_score(before, screen.grab(), region) > 0.3, timeout_s=5, what="the bubble drawn"
        )
    seen = ticks(vision)
    wait_until(lambda: ticks(vision) >= seen + 2, timeout_s=10, what="two screen ticks with the bubble")
    return plan


def test_the_confirmation_bubble_over_the_window_does_not_make_the_approved_plan_stale(
    vision: VisionEngine, desktop: A11yDesktop, dunst: int, area: Bounds, form: GtkForm
) -> None:
    plan = flagged_plan_with_the_bubble_shown(vision, desktop, dunst, area)
    assert vision.get(plan["plan_id"])["state"] == "awaiting_confirmation"
    run = vision.kronii("vision", "approve", plan["plan_id"])
    assert run.code == 0, run.shown
    form.expect(lambda line: line.startswith("NAME") and line.endswith("hello"))
    assert vision.wait_for(plan["plan_id"])["state"] == "done"


def _fill_name(desktop: A11yDesktop, text: str) -> None:
    async def fill() -> None:
        reader = AtspiReader(desktop.bus_address)
        await reader.connect()
        try:
            nodes = await reader.snapshot()
            name = next(n for n in nodes if n.name == "Name" and n.editable)
            assert await reader.set_text(name.ref, text)
        finally:
            await reader.close()

    asyncio.run(fill())


def test_a_real_change_inside_the_window_with_the_bubble_shown_still_makes_the_plan_stale(
    vision: VisionEngine, desktop: A11yDesktop, dunst: int, area: Bounds, form: GtkForm
) -> None:
    plan = flagged_plan_with_the_bubble_shown(vision, desktop, dunst, area)
    _fill_name(desktop, "a field filled by the person meanwhile")
    form.expect(lambda line: line.startswith("NAME a field filled"))
    run = vision.kronii("vision", "approve", plan["plan_id"])
    assert run.code == 4, run.shown
    stale = vision.get(plan["plan_id"])
    assert stale["state"] == "stale", stale
    assert "changed" in stale["reason"], stale["reason"]
    time.sleep(0.5)  # the text, had it been typed, would have printed by now
    assert form.seen[-1] == "NAME a field filled by the person meanwhile", form.seen[-3:]
