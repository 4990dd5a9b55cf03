"""The Captures page in process (real routes, templates, edge and adapters; capture answered in its
own JSON shapes): the day's thumbnails with app, time and level; thumbnails served as PNG; a frame
that cannot be opened says why; a delete is confirmed first, needs the CSRF token, and asks capture
for the person's day."""

from __future__ import annotations

import base64
from typing import Any

from tests.unit.console.console_records_harness import FakeServices, build_pages, csrf_of

FRAME = "Qm9yaW5nSWRPZkFGcmFtZTAx"
SHELF = "/v1/capture/shelf"


def _services() -> FakeServices:
    services = FakeServices()
    listed = {
        "screenshots": [
            {"screenshot_id": FRAME, "job_id": "j1", "app": "xterm", "width": 800, "height": 500,
             "redaction_level": "amber", "masked_fraction": 0.1, "size_bytes": 900,
             "created_at": "2026-12-06T09:15:02+00:00"},
        ]
    }  # fmt: skip
    services.on("capture", "GET", SHELF, lambda params, body: listed)
    services.on(
        "capture", "GET", f"{SHELF}/{FRAME}/thumbnail",
        lambda params, body: {"screenshot_id": FRAME, "png_base64": base64.b64encode(b"\x89PNG-thumb").decode()},
    )  # fmt: skip
    deleted: dict[str, Any] = {"deleted": 3, "files_removed": 3, "files_missing": 0, "files_kept": 0}
    services.on("capture", "DELETE", SHELF, lambda params, body: deleted)
    services.on(
        "capture",
        "DELETE",
        f"{SHELF}/{FRAME}",
        lambda params, body: {**deleted, "deleted": 1, "files_removed": 1},
    )
    return services


async def test_the_day_shows_each_frames_thumbnail_app_time_and_redaction_level() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        page = await client.get("/captures", params={"day": "2026-12-06"})
        thumb = await client.get(f"/captures/thumbs/{FRAME}.png")

    assert page.status_code == 200
    html = page.text
    assert f'src="/captures/thumbs/{FRAME}.png"' in html
    assert "09:15:02" in html and "xterm" in html and "level-amber" in html
    assert ">1</strong> redacted frame on Sunday 6 December 2026" in html
    listing = next(call for call in pages.services.calls if call[2] == SHELF)
    assert listing[3]["since"] == "2026-12-06T00:00:00Z" and listing[3]["until"] == "2026-12-07T00:00:00Z"
    assert thumb.status_code == 200 and thumb.headers["content-type"] == "image/png"
    assert thumb.content == b"\x89PNG-thumb"


async def test_a_capture_service_that_does_not_answer_is_a_sentence_on_the_page() -> None:
    services = _services()
    services.down.add("capture")
    pages = await build_pages(services)
    async with pages.session() as client:
        page = await client.get("/captures")

    assert page.status_code == 200
    assert "capture is not answering: it cannot be reached" in page.text


async def test_a_day_that_is_not_a_date_is_said_and_today_is_shown() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        page = await client.get("/captures", params={"day": "someday"})

    assert page.status_code == 400 and "a day is written YYYY-MM-DD" in page.text


async def test_deleting_a_day_is_confirmed_first_then_asks_capture_for_that_day() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        token = csrf_of((await client.get("/captures")).text)
        without_token = await client.post(
            "/captures/delete", data={"scope": "day", "day": "2026-12-05", "confirm": "yes"}
        )
        asked = await client.post(
            "/captures/delete", data={"scope": "day", "day": "2026-12-05", "csrf_token": token}
        )
        deletes_before = [call for call in pages.services.calls if call[1] == "DELETE"]
        done = await client.post(
            "/captures/delete",
            data={"scope": "day", "day": "2026-12-05", "confirm": "yes", "csrf_token": token},
        )

    assert without_token.status_code == 403
    assert asked.status_code == 200 and "Yes, delete every frame of that day" in asked.text
    assert deletes_before == []
    assert done.status_code == 200 and "Deleted 3 frames (3 files removed from disk)." in done.text
    deletes = [call for call in pages.services.calls if call[1] == "DELETE"]
    assert deletes == [
        ("capture", "DELETE", SHELF, {"since": "2026-12-05T00:00:00Z", "until": "2026-12-06T00:00:00Z"})
    ]
    row = next(row for row in pages.audit if row["action"] == "console.captures.delete")
    assert row["subject"] == "2026-12-05" and row["deleted"] == 3 and row["actor"].startswith("person")


async def test_deleting_one_frame_asks_capture_for_that_frame() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        token = csrf_of((await client.get("/captures")).text)
        done = await client.post(
            "/captures/delete",
            data={"scope": "one", "screenshot_id": FRAME, "confirm": "yes", "csrf_token": token},
        )
        odd = await client.post(
            "/captures/delete", data={"scope": "some", "confirm": "yes", "csrf_token": token}
        )

    assert done.status_code == 200 and "Deleted 1 frame (1 files removed from disk)." in done.text
    assert ("capture", "DELETE", f"{SHELF}/{FRAME}", {}) in pages.services.calls
    assert odd.status_code == 400 and "Choose what to delete" in odd.text


async def test_a_frame_that_cannot_be_opened_says_why_and_shows_no_image() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        page = await client.get(f"/captures/frames/{FRAME}")
        bad = await client.get("/captures/frames/..%2F..%2Fetc")

    assert page.status_code in (403, 503)
    assert "The frame was not opened" in page.text and "<img" not in page.text.split("<main", 1)[1]
    assert bad.status_code in (400, 404)


async def test_the_page_refetches_its_frames_when_a_capture_job_changes() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        page = await client.get("/captures", params={"day": "2026-12-06"})
        fragment = await client.get("/captures/fragment", params={"day": "2026-12-06"})

    assert 'data-live="captures"' in page.text and 'hx-trigger="kronii:captures"' in page.text
    assert fragment.status_code == 200 and fragment.text.lstrip().startswith('<div id="frames"')
    assert f'src="/captures/thumbs/{FRAME}.png"' in fragment.text and "<html" not in fragment.text


async def test_a_frames_delete_link_opens_its_confirmation_and_deletes_nothing() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        day = await client.get("/captures", params={"day": "2026-12-06"})
        confirm = await client.get(
            "/captures/delete", params={"scope": "one", "screenshot_id": FRAME, "day": "2026-12-06"}
        )

    assert f"/captures/delete?scope=one&amp;screenshot_id={FRAME}" in day.text
    assert confirm.status_code == 200 and "Yes, delete this frame" in confirm.text
    assert [call for call in pages.services.calls if call[1] == "DELETE"] == []
