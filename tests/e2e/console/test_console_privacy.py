"""The Privacy page in a real browser against a real `kronii up` on Xvfb: a day with real activity
(two real windows focused in turn) and a real captured frame; "delete this day" on the page, confirmed,
removes that day's spans and raw events from PostgreSQL AND the frame's row and its sealed file from
disk (and the pipeline's decisions of that day), and says so; the audit chain is shown verified.
Screenshots go to the test's tmp dir."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.desktop import focus_window, open_window, send_input
from tests.e2e.console.conftest import ConsoleMesh, screenshot
from tests.e2e.console.console_records_support import captured, count, local_day, vault_files
from tests.mesh import wait_until

pytestmark = pytest.mark.e2e

APPS = ("PrivacyAlpha", "PrivacyBravo")
SPANS_OF_DAY = "SELECT count(*) FROM activity_spans WHERE started_at < %s AND ended_at > %s AND app = ANY(%s)"


def _apps_seen(mesh: ConsoleMesh) -> set[str]:
    summary = httpx.get(f"{mesh.url('sensor')}/v1/activity/summary", params={"by": "app"}, timeout=10).json()
    return {row["key"] for row in summary["rows"]}


def _wait_until_written(mesh: ConsoleMesh, apps: list[str]) -> None:
    """Until the closed windows' spans are in PostgreSQL and no longer move (the sensor writes a
    span's end off the event path, every KRONII_SENSOR_ACTIVITY_FLUSH_SECS=1)."""
    sql = "SELECT count(*) * 1000000 + coalesce(extract(epoch FROM max(ended_at)), 0) FROM activity_spans WHERE app = ANY(%s)"
    seen: list[int] = []

    def still() -> bool:
        seen.append(count(mesh, sql, apps))
        time.sleep(1.5)
        return seen[-1] == count(mesh, sql, apps)

    wait_until(still, 30, "the closed windows' spans written and still")


def test_delete_of_a_day_removes_its_spans_and_frames_in_postgresql_and_on_disk(
    console_mesh: ConsoleMesh, console_page: Page, tmp_path: Path
) -> None:
    display = console_mesh.display
    with (
        open_window(display, "elsewhere", "PrivacyElsewhere") as elsewhere,
        open_window(display, "alpha", APPS[0]) as alpha,
        open_window(display, "bravo", APPS[1]) as bravo,
    ):
        for window in (alpha, bravo, alpha):
            focus_window(display, window.window_id)
            send_input(display)
            time.sleep(2.5)
        job = captured(console_mesh, bravo)
        wait_until(lambda: set(APPS) <= _apps_seen(console_mesh), 30, "both apps in the sensor's history")
        # The person moves on to another window: the day's spans of the two apps are closed (the
        # sensor keeps a span open while its window has the focus, and, as measured, also after that
        # window is closed with nothing else focused).
        focus_window(display, elsewhere.window_id)
        send_input(display)
        _wait_until_written(console_mesh, list(APPS))
    day, start, end = local_day()
    apps = list(APPS)
    assert count(console_mesh, SPANS_OF_DAY, end, start, apps) >= 2
    assert count(console_mesh, "SELECT count(*) FROM capture_objects WHERE job_id = %s", job) >= 1
    assert vault_files(console_mesh), "the captured frame is not on disk"
    events_before = count(
        console_mesh, "SELECT count(*) FROM activity_events WHERE at >= %s AND at < %s", start, end
    )
    assert events_before > 0
    wait_until(
        lambda: count(console_mesh, "SELECT count(*) FROM pipeline_runs WHERE created_at >= %s", start) > 0,
        30, "the pipeline's runs of the focus changes",
    )  # fmt: skip

    console_page.goto(f"{console_mesh.console_url}/privacy")
    expect(console_page.locator("#chain")).to_contain_text("The chain holds")
    screenshot(console_page, tmp_path, "privacy-before")
    console_page.get_by_label("Day").fill(day)
    console_page.get_by_role("button", name="Delete this day…").click()
    expect(console_page.locator("h1")).to_contain_text(
        "Delete this day's activity, captured frames and decisions?"
    )
    screenshot(console_page, tmp_path, "privacy-confirm")
    asked_at = time.time()
    console_page.locator("#confirm-delete").click()

    result = console_page.locator("#result")
    expect(result).to_contain_text(f"{day}: deleted")
    expect(result).to_contain_text("frame")
    assert "Not done" not in (result.text_content() or "")
    screenshot(console_page, tmp_path, "privacy-deleted")

    assert count(console_mesh, SPANS_OF_DAY, end, start, apps) == 0
    assert (
        count(
            console_mesh,
            "SELECT count(*) FROM capture_objects WHERE created_at >= %s AND created_at < %s",
            start,
            end,
        )
        == 0
    )
    assert vault_files(console_mesh) == []
    runs_left = count(
        console_mesh,
        "SELECT count(*) FROM pipeline_runs WHERE created_at >= %s AND created_at < to_timestamp(%s)",
        start,
        asked_at - 1,
    )
    assert runs_left == 0
    events_left = count(
        console_mesh,
        "SELECT count(*) FROM activity_events WHERE at >= %s AND at < to_timestamp(%s)",
        start,
        asked_at - 1,
    )
    assert events_left == 0
    rows = count(
        console_mesh,
        "SELECT count(*) FROM audit_log WHERE action = 'console.privacy.delete_day' AND subject = %s AND outcome = 'ok'",
        day,
    )
    assert rows == 1
    expect(console_page.locator("#chain")).to_contain_text("The chain holds")
