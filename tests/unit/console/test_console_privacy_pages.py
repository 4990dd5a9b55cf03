"""The Privacy page in process (sensor and capture answered in their own JSON shapes): what is kept,
for how long; "delete a day" is confirmed first, then asks the sensor AND capture for the same local
day and says both results; one button, both done."""

from __future__ import annotations

from tests.unit.console.console_records_harness import FakeServices, build_pages, csrf_of


def _services() -> FakeServices:
    services = FakeServices()
    usage = {"redacted": {"objects": 3, "bytes": 3000}, "raw": {"objects": 1, "bytes": 5000}, "oldest": None,
             "retention": {"raw_days": 1, "redacted_days": 7}}  # fmt: skip
    services.on("capture", "GET", "/v1/capture/shelf/usage", lambda params, body: usage)
    services.on(
        "capture", "DELETE", "/v1/capture/shelf", lambda params, body: {"deleted": 2, "files_removed": 2}
    )
    services.on(
        "sensor", "DELETE", "/v1/activity", lambda params, body: {"deleted_spans": 40, "deleted_events": 90}
    )
    services.on(
        "pipeline", "DELETE", "/v1/runs", lambda params, body: {"deleted_runs": 5, "deleted_notifications": 1}
    )
    return services


async def test_the_page_says_what_is_kept_and_for_how_long() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        page = await client.get("/privacy")

    html = page.text
    assert page.status_code == 200
    assert "redacted 7 days, raw 1 day" in html and "3 redacted, 1 raw" in html
    assert "30 days" in html and "until you delete them (not pruned)" in html
    assert "no PostgreSQL connection" in html


async def test_delete_a_day_is_confirmed_then_deletes_spans_and_frames_of_the_persons_day() -> None:
    services = _services()
    pages = await build_pages(services, timezone="Europe/Paris")
    async with pages.session() as client:
        token = csrf_of((await client.get("/privacy")).text)
        asked = await client.post(
            "/privacy/delete", data={"scope": "day", "day": "2026-12-05", "csrf_token": token}
        )
        nothing_yet = [call for call in services.calls if call[1] == "DELETE"]
        done = await client.post(
            "/privacy/delete",
            data={"scope": "day", "day": "2026-12-05", "confirm": "yes", "csrf_token": token},
        )

    assert asked.status_code == 200 and "Yes, delete this day" in asked.text and nothing_yet == []
    assert done.status_code == 200
    assert (
        "2026-12-05: deleted 40 activity spans, 90 raw events, 2 frames (2 files removed from disk) and 5 decisions of the pipeline."
        in done.text
    )
    paris_day = {"since": "2026-12-04T23:00:00Z", "until": "2026-12-05T23:00:00Z"}
    epoch_day = {"since": 1_796_425_200.0, "until": 1_796_511_600.0}
    assert [call for call in services.calls if call[1] == "DELETE"] == [
        ("sensor", "DELETE", "/v1/activity", paris_day),
        ("capture", "DELETE", "/v1/capture/shelf", paris_day),
        ("pipeline", "DELETE", "/v1/runs", epoch_day),
    ]
    row = next(row for row in pages.audit if row["action"] == "console.privacy.delete_day")
    assert row["deleted_spans"] == 40 and row["deleted_frames"] == 2 and row["deleted_decisions"] == 5
    assert row["outcome"] == "ok"


async def test_when_the_sensor_is_down_the_frames_are_still_deleted_and_the_page_says_so() -> None:
    services = _services()
    services.down.add("sensor")
    pages = await build_pages(services)
    async with pages.session() as client:
        token = csrf_of((await client.get("/privacy")).text)
        done = await client.post(
            "/privacy/delete",
            data={"scope": "day", "day": "2026-12-05", "confirm": "yes", "csrf_token": token},
        )

    assert done.status_code == 200
    assert "deleted 2 frames" in done.text and "Not done: sensor is not answering" in done.text


async def test_an_apps_activity_without_a_name_is_refused_and_nothing_is_deleted() -> None:
    services = _services()
    pages = await build_pages(services)
    async with pages.session() as client:
        token = csrf_of((await client.get("/privacy")).text)
        done = await client.post(
            "/privacy/delete", data={"scope": "app", "app": " ", "confirm": "yes", "csrf_token": token}
        )

    assert done.status_code == 400 and "name the app" in done.text
    assert [call for call in services.calls if call[1] == "DELETE"] == []


async def test_a_refusal_to_the_pages_own_htmx_request_is_swapped_in_with_its_sentence() -> None:
    services = _services()
    pages = await build_pages(services)
    async with pages.session() as client:
        token = csrf_of((await client.get("/privacy")).text)
        done = await client.post(
            "/privacy/delete",
            data={"scope": "app", "app": "", "confirm": "yes"},
            headers={"hx-request": "true", "x-csrf-token": token},
        )

    assert done.status_code == 200 and 'role="alert">name the app' in done.text
    assert [call for call in services.calls if call[1] == "DELETE"] == []
