"""Today in a real browser against a real `kronii up` on Xvfb: a person focuses two real windows in
turn, and both show on Today's timeline and in its time per app, as `kronii activity report` counts
them; a third window focused while the page is open appears without a reload (NATS -> the console's
server-sent events -> htmx). Screenshots go to the test's tmp dir, to look at."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.desktop import focus_window, open_window, send_input
from tests.e2e.console.conftest import ConsoleMesh, screenshot
from tests.mesh import wait_until

pytestmark = pytest.mark.e2e

APPS = ("ConsoleAlpha", "ConsoleBravo")


def _seconds_per_app(mesh: ConsoleMesh) -> dict[str, float]:
    summary = httpx.get(f"{mesh.url('sensor')}/v1/activity/summary", params={"by": "app"}, timeout=10).json()
    return {row["key"]: row["seconds"] for row in summary["rows"]}


def _report(mesh: ConsoleMesh) -> dict[str, float]:
    done = mesh.kronii("activity", "report", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    body = json.loads(done.stdout)
    rows = body.get("apps") or body.get("by_app") or []
    return {row.get("app") or row.get("key"): float(row["seconds"]) for row in rows}


def test_two_windows_focused_in_turn_show_on_todays_timeline_and_in_the_report(
    console_mesh: ConsoleMesh, console_page: Page, tmp_path: Path
) -> None:
    display = console_mesh.display
    with (
        open_window(display, "alpha notes", APPS[0]) as alpha,
        open_window(display, "bravo mail", APPS[1]) as bravo,
    ):
        for window in (alpha, bravo, alpha, bravo):
            focus_window(display, window.window_id)
            send_input(display)
            time.sleep(4)
        wait_until(
            lambda: set(APPS) <= set(_seconds_per_app(console_mesh)), 30, "both apps in the sensor's history"
        )
        console_page.reload()
        timeline = console_page.locator("svg.timeline")
        for app in APPS:
            expect(timeline.locator("rect title", has_text=re.compile(f"^{app}: "))).not_to_have_count(0)
            expect(
                console_page.locator("section[aria-label='Time per app'] text.bar-label", has_text=app)
            ).to_have_count(1)
        shot = screenshot(console_page, tmp_path, "today-two-windows")
        print(f"screenshot: {shot}")

        report = _report(console_mesh)
        sensor = _seconds_per_app(console_mesh)
        for app in APPS:
            assert report[app] >= 6, report
            assert abs(report[app] - sensor[app]) < 5, (report, sensor)

        # Live: a third window focused while the page is open appears without a reload.
        with open_window(display, "charlie", "ConsoleCharlie") as charlie:
            focus_window(display, charlie.window_id)
            send_input(display)
            expect(
                timeline.locator("rect title", has_text=re.compile("^ConsoleCharlie: "))
            ).not_to_have_count(0, timeout=25_000)
            screenshot(console_page, tmp_path, "today-live")


def test_the_date_picker_reaches_an_earlier_day_and_back(
    console_mesh: ConsoleMesh, console_page: Page
) -> None:
    console_page.get_by_role("link", name="← Earlier").click()
    expect(console_page.locator("h1")).not_to_have_text("Today")
    expect(console_page.get_by_role("link", name="Today", exact=True).last).to_be_visible()
    console_page.get_by_label("Range").select_option("7")
    console_page.get_by_role("button", name="Show").click()
    expect(console_page.locator("h1")).to_contain_text("7 days to")
    console_page.get_by_role("link", name="Later →").click()
    assert "days=7" in console_page.url


def test_the_page_is_usable_at_200_percent_zoom_and_from_the_keyboard(
    console_mesh: ConsoleMesh, console_page: Page, tmp_path: Path
) -> None:
    console_page.set_viewport_size({"width": 640, "height": 860})  # 1280 px at 200 %
    width = console_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 645, f"the page scrolls sideways at 200 % zoom ({width} px)"
    console_page.keyboard.press("Tab")
    focused = console_page.evaluate("document.activeElement.textContent")
    assert focused == "Skip to content"
    console_page.keyboard.press("Enter")
    assert console_page.evaluate("document.activeElement.id") == "main"
    screenshot(console_page, tmp_path, "today-200-percent")


def _background(page: Page) -> list[int]:
    color = page.evaluate("getComputedStyle(document.body).backgroundColor")
    return [int(part) for part in re.findall(r"\d+", color)[:3]]


def test_dark_and_light_follow_the_system_and_the_toggle(
    console_mesh: ConsoleMesh, console_page: Page, tmp_path: Path
) -> None:
    console_page.emulate_media(color_scheme="dark")
    assert sum(_background(console_page)) < 150, "a dark system gets the dark page"
    screenshot(console_page, tmp_path, "today-dark")
    toggle = console_page.get_by_role("button", name=re.compile("^Theme"))
    toggle.click()
    expect(toggle).to_have_text("Theme: light")
    assert sum(_background(console_page)) > 600, "the toggle overrides the system"
    console_page.reload()
    expect(console_page.get_by_role("button", name=re.compile("^Theme"))).to_have_text("Theme: light")
    console_page.get_by_role("button", name=re.compile("^Theme")).click()
    assert sum(_background(console_page)) < 150


def test_sign_out_is_a_plain_form_post_the_edge_accepts_and_the_cookie_is_gone(
    console_mesh: ConsoleMesh, console_page: Page
) -> None:
    # A plain form's POST carries the page's real Origin only under a referrer policy that keeps it
    # for the same origin (no-referrer made Chromium send `Origin: null`, which the edge refuses).
    with console_page.expect_response(lambda r: r.url.endswith("/logout")) as posted:
        console_page.get_by_role("button", name="Sign out").click()
    assert posted.value.status == 303, posted.value.status
    expect(console_page.locator("body")).to_contain_text("kronii console")
    assert [c for c in console_page.context.cookies() if c["name"].startswith("kronii")] == []
    answer = console_page.goto(f"{console_mesh.console_url}/today")
    assert answer is not None and answer.status == 401
