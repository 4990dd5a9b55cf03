"""The Today page in process, against a fake of the sensor's /v1/activity API in its own shapes (the
real sensor is in tests/e2e/console/test_console_today.py and bench/console_today.py): the picture
and the charts show what the sensor holds for the person's day, a date picker reaches earlier days, a
range draws the state row, and a sensor that does not answer is a sentence on the page, never a 500."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from kronii.console.adapters.sensor_history import SensorHistory, iso_utc
from kronii.console.core.timeline import COLUMNS, SummaryRow, chart_rows
from kronii.console.usecases.show_today import ShowToday
from kronii.foundation.clock import ManualClock
from kronii.foundation.errors import InvalidArgument

from tests.unit.console.console_core_harness import FakeSensor, build_console, focus, state

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 12, 6, 15, 0, tzinfo=UTC)  # 00:00 on 7 December in Tokyo
MIDNIGHT_UTC = datetime(2026, 12, 6, tzinfo=UTC).timestamp()


def _rect_titles(page: str) -> list[str]:
    return re.findall(r"<rect [^>]*><title>([^<]*)</title>", page)


async def test_today_shows_the_days_focus_and_states_as_a_picture_and_charts() -> None:
    console = build_console(start=NOW)
    console.sensor.spans = [
        state("active", MIDNIGHT_UTC + 9 * 3600, 3 * 3600),
        focus("xterm", MIDNIGHT_UTC + 9 * 3600, 3600, "make test"),
        focus("firefox", MIDNIGHT_UTC + 10 * 3600, 1800, "docs"),
    ]
    async with console.session() as client:
        answer = await client.get("/today")
    page = answer.text
    assert answer.status_code == 200
    titles = _rect_titles(page)
    assert "xterm: 09:00 to 10:00 (1 h 00 min)" in titles
    assert "firefox: 10:00 to 10:30 (30 min)" in titles
    assert "active: 09:00 to 12:00 (3 h 00 min)" in titles
    assert "Time per app" in page and "Time per title" in page
    assert "make test" in page and ">1 h 00 min<" in page and ">30 min<" in page
    assert re.search(r"Focused <strong>1 h 30 min</strong>", page)
    assert 'aria-current="page"' in page  # Today is the active nav entry


async def test_an_earlier_day_is_reached_by_the_date_picker_and_the_earlier_link() -> None:
    console = build_console(start=NOW)
    console.sensor.spans = [focus("gimp", MIDNIGHT_UTC - 86400 + 8 * 3600, 600)]
    async with console.session() as client:
        today = (await client.get("/today")).text
        assert 'href="/today?day=2026-12-05&amp;days=1"' in today
        earlier = (await client.get("/today", params={"day": "2026-12-05"})).text
    assert "gimp: 08:00 to 08:10 (10 min)" in _rect_titles(earlier)
    assert "Saturday 05 December 2026" in earlier
    assert 'href="/today?day=2026-12-06&amp;days=1"' in earlier  # and back


async def test_the_sensor_is_asked_for_the_persons_day_in_their_timezone() -> None:
    console = build_console(start=NOW, tz=TOKYO)
    async with console.session() as client:
        assert (await client.get("/today")).status_code == 200
    path, query = console.sensor.calls[0]
    assert path == "/v1/activity/spans"
    assert (query["since"], query["until"]) == ("2026-12-06T15:00:00Z", "2026-12-07T15:00:00Z")


@pytest.mark.parametrize(
    ("params", "sentence"),
    [({"day": "yesterday"}, "YYYY-MM-DD"), ({"day": "2027-01-01"}, "not happened yet"), ({"days": "90"}, "between 1 and 31")],
    ids=["not-a-date", "future", "too-many-days"],
)  # fmt: skip
async def test_a_bad_day_is_a_400_with_a_sentence(params: dict[str, str], sentence: str) -> None:
    console = build_console(start=NOW)
    async with console.session() as client:
        answer = await client.get("/today", params=params)
    assert answer.status_code == 400
    assert sentence in answer.text
    assert console.sensor.calls == []


async def test_a_sensor_that_does_not_answer_is_a_sentence_on_the_page() -> None:
    console = build_console(start=NOW)
    console.sensor.down = True
    async with console.session() as client:
        answer = await client.get("/today")
        body = await client.get("/today/body")
    # The page's frame was sent before the sensor was asked: the page is a 200 that says what failed;
    # the fragment htmx re-fetches is a 503 with the same sentence.
    assert answer.status_code == 200
    assert 'role="alert">sensor is not answering' in answer.text
    assert "<nav" in answer.text and answer.text.rstrip().endswith("</html>")
    assert body.status_code == 503 and "sensor is not answering" in body.text


async def test_the_pages_frame_is_sent_before_the_sensor_answers() -> None:
    console = build_console(start=NOW)
    answered = asyncio.Event()
    chunks: list[str] = []

    async def slow_get_json(service: str, path: str, params: object = None) -> object:
        await answered.wait()
        return await FakeSensor.get_json(console.sensor, service, path, params)  # type: ignore[arg-type]

    async with console.session() as client:
        cookie = f"kronii_console={client.cookies['kronii_console']}"
    console.sensor.get_json = slow_get_json  # type: ignore[method-assign]

    requested = False
    stay = asyncio.Event()

    async def receive() -> dict[str, object]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await stay.wait()  # the browser stays connected
        return {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        if message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")).decode())  # type: ignore[call-overload]
            if len(chunks) == 1:  # the frame went out while the sensor had not answered
                assert "Pick a day" in chunks[0] and "Timeline" not in chunks[0]
                answered.set()

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": "/today", "raw_path": b"/today", "query_string": b"", "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8109"), (b"cookie", cookie.encode())],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8109),
    }  # fmt: skip
    # Were the frame held back until the sensor answered, this would wait forever: 10 s is plenty.
    await asyncio.wait_for(console.app(scope, receive, send), 10)  # type: ignore[arg-type]
    page = "".join(chunks)
    assert answered.is_set() and "Timeline" in page and page.rstrip().endswith("</html>")


async def test_the_live_fragment_listens_to_activity_only_on_today() -> None:
    console = build_console(start=NOW)
    async with console.session() as client:
        today = (await client.get("/today")).text
        earlier = (await client.get("/today", params={"day": "2026-12-01"})).text
        fragment = (await client.get("/today/body")).text
    assert 'data-live="activity"' in today and 'hx-get="/today/body"' in today
    assert 'data-live="activity"' not in earlier
    assert "<html" not in fragment and "Timeline" in fragment


async def test_a_month_draws_the_state_row_and_sums_focus_from_the_summary() -> None:
    clock = ManualClock(NOW.timestamp())
    sensor = FakeSensor(
        [focus("xterm", MIDNIGHT_UTC - d * 86400 + 9 * 3600, 3600) for d in range(30)]
        + [state("active", MIDNIGHT_UTC - d * 86400 + 9 * 3600, 3600) for d in range(30)]
    )
    view = await ShowToday(SensorHistory(sensor), clock, UTC).view("2026-12-06", 30)
    assert not view.focus_row_drawn and view.timeline.focus_bars == []
    assert len(view.timeline.state_bars) == 30
    assert view.apps[0].key == "xterm" and view.apps[0].seconds == 30 * 3600
    assert {query.get("kind") for path, query in sensor.calls if path.endswith("spans")} == {"state"}


async def test_a_day_of_more_than_one_page_of_spans_is_read_to_its_end() -> None:
    clock = ManualClock(NOW.timestamp())
    sensor = FakeSensor([focus(f"app{i % 3}", MIDNIGHT_UTC + i * 5, 5) for i in range(7000)])
    view = await ShowToday(SensorHistory(sensor), clock, UTC).view(None)
    assert view.day == date(2026, 12, 6) and not view.truncated
    assert sum(1 for path, _ in sensor.calls if path.endswith("spans")) == 2
    column_secs = (view.timeline.until - view.timeline.since) / COLUMNS
    covered = sum(bar.width for bar in view.timeline.focus_bars) * column_secs
    assert covered == pytest.approx(7000 * 5, rel=0.01)


async def test_a_days_picture_covers_the_time_the_person_was_there() -> None:
    clock = ManualClock(NOW.timestamp())
    sensor = FakeSensor(
        [focus("xterm", MIDNIGHT_UTC + 9.5 * 3600, 5), focus("vim", MIDNIGHT_UTC + 11.2 * 3600, 5)]
    )
    view = await ShowToday(SensorHistory(sensor), clock, UTC).view(None)
    # 09:30 to 11:12: quarter hours (whole hours from three hours on, five minutes under 45 minutes).
    assert (view.timeline.since, view.timeline.until) == (
        MIDNIGHT_UTC + 9.5 * 3600,
        MIDNIGHT_UTC + 11.25 * 3600,
    )
    # Five seconds in a three-hour picture is still a bar of its own.
    assert [bar.key for bar in view.timeline.focus_bars] == ["xterm", "vim"]
    empty = await ShowToday(SensorHistory(FakeSensor()), clock, UTC).view(None)
    assert (empty.timeline.since, empty.timeline.until) == (empty.since, empty.until)


async def test_a_date_that_is_not_iso_is_refused_by_the_use_case() -> None:
    show = ShowToday(SensorHistory(FakeSensor()), ManualClock(NOW.timestamp()), UTC)
    with pytest.raises(InvalidArgument, match="YYYY-MM-DD"):
        await show.view("06/12/2026")


async def test_a_days_sums_are_added_up_from_its_spans_as_the_sensor_would() -> None:
    clock = ManualClock(NOW.timestamp())
    spans = [focus(f"app{i % 5}", MIDNIGHT_UTC - 30 + i * 7, 6, f"t{i % 9}") for i in range(3000)]
    spans += [state("active", MIDNIGHT_UTC - 600, 4 * 3600), state("passive", MIDNIGHT_UTC + 4 * 3600, 600)]
    sensor = FakeSensor(spans)
    view = await ShowToday(SensorHistory(sensor), clock, UTC).view(None)
    assert [path for path, _ in sensor.calls] == ["/v1/activity/spans"]  # one call for a whole day
    since, until = iso_utc(view.since), iso_utc(view.until)
    for by, rows in (("app", view.apps), ("title", view.titles), ("state", view.states)):
        summary = sensor._summary(view.since, view.until, by)["rows"]
        expected = chart_rows(
            [SummaryRow(row["key"], row["app"], row["seconds"]) for row in summary],
            kind="state" if by == "state" else "focus",
            limit=4 if by == "state" else 15,
        )
        assert [(row.key, round(row.seconds, 3)) for row in rows] == [
            (row.key, round(row.seconds, 3)) for row in expected
        ], (by, since, until)
