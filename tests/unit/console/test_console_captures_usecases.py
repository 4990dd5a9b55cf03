"""The Captures page's use cases on an in-process capture service: a day is the person's day (their
timezone, 23 hours when the clocks go forward), frames grouped by local hour, a full frame refused
without presence shows capture's own sentence and is audited as refused, deletes ask capture for the
right thing and are audited with the person as actor, and bad ids or days never reach capture."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from kronii.console.core.captures import Frame, day_range, frames_by_hour
from kronii.console.usecases.forget_captures import ForgetCaptures
from kronii.console.usecases.show_captures import ShowCaptures
from kronii.foundation.clock import ManualClock
from kronii.foundation.errors import InvalidArgument, NotFound

from tests.unit.console.console_records_fakes import PRESENCE_REFUSAL, FakeCapture
from tests.unit.console.test_console_agents_usecases import FakeAudit

PARIS = ZoneInfo("Europe/Paris")
PERSON = "person:uid:1000"


def _frame(ident: str, local: datetime, app: str = "xterm", level: str = "amber") -> Frame:
    return Frame(ident * 24, local.timestamp(), app, 800, 500, level, 0.1, 1000)


def test_a_day_is_the_persons_day_and_23_hours_when_the_clocks_go_forward() -> None:
    since, until = day_range(date(2026, 3, 29), PARIS)

    assert datetime.fromtimestamp(since, PARIS) == datetime(2026, 3, 29, tzinfo=PARIS)
    assert until - since == 23 * 3600
    assert day_range(date(2026, 12, 6), PARIS)[1] - day_range(date(2026, 12, 6), PARIS)[0] == 24 * 3600


def test_frames_are_grouped_by_the_local_hour_in_time_order() -> None:
    late = _frame("b", datetime(2026, 12, 6, 9, 59, tzinfo=PARIS))
    early = _frame("a", datetime(2026, 12, 6, 9, 1, tzinfo=PARIS))
    noon = _frame("c", datetime(2026, 12, 6, 12, 30, tzinfo=PARIS))

    hours = frames_by_hour([noon, late, early], PARIS)

    assert [(hour.label, [f.screenshot_id[0] for f in hour.frames]) for hour in hours] == [
        ("09:00", ["a", "b"]),
        ("12:00", ["c"]),
    ]


async def test_the_day_asks_capture_for_the_persons_day_and_shows_only_its_frames() -> None:
    capture = FakeCapture(
        [
            _frame("a", datetime(2026, 12, 6, 0, 30, tzinfo=PARIS)),
            _frame("b", datetime(2026, 12, 5, 23, 30, tzinfo=PARIS)),
        ]
    )
    clock = ManualClock(datetime(2026, 12, 6, 15, tzinfo=PARIS).timestamp())
    show = ShowCaptures(capture, FakeAudit(), clock, PARIS)

    shown = await show.day("")

    assert shown.day == date(2026, 12, 6) and shown.following is None
    assert shown.count == 1 and shown.hours[0].frames[0].screenshot_id == "a" * 24
    assert capture.asked == [("frames", day_range(date(2026, 12, 6), PARIS))]
    earlier = await show.day("2026-12-05")
    assert earlier.following == date(2026, 12, 6) and earlier.count == 1


async def test_a_capture_service_that_does_not_answer_is_a_sentence_not_an_error() -> None:
    show = ShowCaptures(FakeCapture(answering=False), FakeAudit(), ManualClock(), PARIS)

    shown = await show.day("")

    assert shown.count == 0
    assert shown.problem == "capture is not answering: it cannot be reached (is `kronii up` running it?)"


async def test_a_full_frame_without_presence_shows_captures_refusal_and_is_audited_as_refused() -> None:
    audit = FakeAudit()
    show = ShowCaptures(FakeCapture(), audit, ManualClock(), PARIS)

    opened = await show.open(PERSON, "a" * 24)

    assert opened.png is None and opened.refusal == PRESENCE_REFUSAL
    assert audit.rows == [
        {"actor": PERSON, "action": "console.captures.open", "subject": "a" * 24, "outcome": "refused",
         "reason": PRESENCE_REFUSAL}
    ]  # fmt: skip


async def test_a_full_frame_with_presence_is_the_redacted_png() -> None:
    audit = FakeAudit()
    show = ShowCaptures(FakeCapture(present=True), audit, ManualClock(), PARIS)

    opened = await show.open(PERSON, "a" * 24)

    assert opened.png == b"full:" + b"a" * 24 and opened.refusal == ""
    assert audit.rows[0]["outcome"] == "ok"


@pytest.mark.parametrize("bad", ["../../etc/passwd", "short", "a" * 65, "", "a b" * 10])
async def test_an_id_that_is_not_a_frame_id_never_reaches_capture(bad: str) -> None:
    capture = FakeCapture()
    show = ShowCaptures(capture, FakeAudit(), ManualClock(), PARIS)
    forget = ForgetCaptures(capture, FakeAudit(), PARIS)

    with pytest.raises(InvalidArgument):
        await show.open(PERSON, bad)
    with pytest.raises(InvalidArgument):
        await forget.one(PERSON, bad)
    assert capture.asked == []


async def test_deleting_a_day_asks_capture_for_that_local_day_and_is_audited() -> None:
    capture = FakeCapture(
        [
            _frame("a", datetime(2026, 12, 6, 8, tzinfo=PARIS)),
            _frame("b", datetime(2026, 12, 7, 8, tzinfo=PARIS)),
        ]
    )
    audit = FakeAudit()

    done = await ForgetCaptures(capture, audit, PARIS).day(PERSON, "2026-12-06")

    assert done.deleted == 1 and [f.screenshot_id[0] for f in capture.stored] == ["b"]
    assert capture.asked == [("forget_between", day_range(date(2026, 12, 6), PARIS))]
    assert done.sentence() == "Deleted 1 frame (1 files removed from disk)."
    assert audit.rows[0]["action"] == "console.captures.delete" and audit.rows[0]["scope"] == "day"
    assert audit.rows[0]["actor"] == PERSON and audit.rows[0]["deleted"] == 1


async def test_deleting_an_unknown_frame_is_not_found_and_audited_as_such() -> None:
    audit = FakeAudit()

    with pytest.raises(NotFound):
        await ForgetCaptures(FakeCapture(), audit, PARIS).one(PERSON, "z" * 24)

    assert audit.rows[0]["outcome"] == "not_found"


@pytest.mark.parametrize("day", ["", "yesterday", "2026-13-01", "06/12/2026"])
async def test_a_day_that_is_not_a_date_is_refused_with_a_sentence(day: str) -> None:
    capture = FakeCapture()

    with pytest.raises(InvalidArgument, match="YYYY-MM-DD"):
        await ForgetCaptures(capture, FakeAudit(), PARIS).day(PERSON, day)

    assert capture.asked == []


async def test_deleting_everything_empties_the_store() -> None:
    capture = FakeCapture([_frame("a", datetime(2026, 12, 6, 8, tzinfo=PARIS))])

    done = await ForgetCaptures(capture, FakeAudit(), PARIS).everything(PERSON)

    assert done.deleted == 1 and capture.stored == []
    assert capture.asked == [("forget_all", None)]


async def test_a_busy_day_is_shown_240_frames_a_page_in_time_order() -> None:
    frames = [
        _frame(f"{i:03d}"[-1], datetime(2026, 12, 6, 8, tzinfo=PARIS) + timedelta(seconds=30 * i))
        for i in range(500)
    ]
    frames = [replace(frame, screenshot_id=f"{i:024d}") for i, frame in enumerate(frames)]
    show = ShowCaptures(
        FakeCapture(frames),
        FakeAudit(),
        ManualClock(datetime(2026, 12, 6, 20, tzinfo=PARIS).timestamp()),
        PARIS,
    )

    first, last, beyond = await show.day("", 1), await show.day("", 3), await show.day("", 9)

    shown = [frame.screenshot_id for hour in first.hours for frame in hour.frames]
    assert first.count == 500 and first.pages == 3 and len(shown) == 240 and shown[0] == f"{0:024d}"
    assert sum(len(hour.frames) for hour in last.hours) == 20 and last.page == 3
    assert beyond.page == 3
