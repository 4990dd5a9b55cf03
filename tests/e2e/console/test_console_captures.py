"""The Captures page in a real browser against a real `kronii up` on Xvfb: a real window captured by
the real capture service shows as a redacted thumbnail with its time and redaction level; opening the
full frame from the page is refused without the person's proof of presence, with capture's own
sentence, and no image reaches the page. Screenshots go to the test's tmp dir, to look at."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from playwright.sync_api import Page, expect

from tests.desktop import open_window
from tests.e2e.console.conftest import ConsoleMesh, screenshot
from tests.e2e.console.console_records_support import captured, count, database_url

pytestmark = pytest.mark.e2e


def test_a_capture_opened_without_presence_is_refused_with_captures_sentence(
    console_mesh: ConsoleMesh, console_page: Page, tmp_path: Path
) -> None:
    with open_window(console_mesh.display, "frames to keep", "ConsoleFrames") as window:
        job = captured(console_mesh, window)
    screenshot_id = _primary(console_mesh, job)

    console_page.goto(f"{console_mesh.console_url}/captures")
    thumb = console_page.locator(f"img[src='/captures/thumbs/{screenshot_id}.png']")
    expect(thumb).to_have_count(1)
    thumb.scroll_into_view_if_needed()
    console_page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle(), timeout=15_000
    )
    card = console_page.locator("li.frame", has=thumb)
    expect(card.locator(".level")).to_have_text(_level(console_mesh, screenshot_id))
    screenshot(console_page, tmp_path, "captures-day")

    card.get_by_role("link", name="Open").click()

    expect(console_page.locator("h1")).to_have_text("The frame was not opened")
    refusal = console_page.locator("#refusal")
    expect(refusal).to_contain_text("person")
    expect(console_page.locator("img.full-frame")).to_have_count(0)
    refused = count(
        console_mesh,
        "SELECT count(*) FROM audit_log WHERE action = 'console.captures.open' AND subject = %s AND outcome = 'refused'",
        screenshot_id,
    )
    presence = count(
        console_mesh,
        "SELECT count(*) FROM audit_log WHERE action = 'capture.presence' AND outcome = 'refused'",
    )
    assert refused == 1 and presence >= 1
    print(f"refusal: {refusal.text_content()}")
    screenshot(console_page, tmp_path, "captures-refused")


def _primary(mesh: ConsoleMesh, job_id: str) -> str:
    with psycopg.connect(database_url(mesh)) as connection:
        row = connection.execute(
            "SELECT object_id FROM capture_objects WHERE job_id = %s AND kind = 'redacted' ORDER BY created_at LIMIT 1",
            (job_id,),
        ).fetchone()
    assert row, f"the job {job_id} stored no redacted frame"
    return str(row[0])


def _level(mesh: ConsoleMesh, screenshot_id: str) -> str:
    with psycopg.connect(database_url(mesh)) as connection:
        row = connection.execute(
            "SELECT redaction_level FROM capture_objects WHERE object_id = %s", (screenshot_id,)
        ).fetchone()
    assert row
    return str(row[0]) or "not graded"
