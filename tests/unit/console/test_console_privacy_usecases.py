"""The Privacy page's use cases: "delete a day" asks the sensor AND capture for the same local day,
does the other when one fails and says which did not happen; an app's activity and everything ask
the sensor (and capture for everything); each is audited with counts; the page shows what is kept
where, for how long and how much, and the audit chain's verdict."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from kronii.console.core.captures import Frame, day_range
from kronii.console.core.privacy import AuditEntry
from kronii.console.usecases.forget_data import ForgetData
from kronii.console.usecases.show_privacy import ShowPrivacy
from kronii.foundation.errors import InvalidArgument

from tests.unit.console.console_records_fakes import (
    FakeAuditChain,
    FakeCapture,
    FakeDecisions,
    FakeSensor,
    FakeSizes,
)
from tests.unit.console.test_console_agents_usecases import FakeAudit

TOKYO = ZoneInfo("Asia/Tokyo")
PERSON = "person:uid:1000"


def _frame(ident: str, local: datetime) -> Frame:
    return Frame(ident * 24, local.timestamp(), "xterm", 800, 500, "green", 0.0, 1000)


async def test_deleting_a_day_deletes_its_spans_frames_and_decisions_for_the_same_local_day() -> None:
    sensor, decisions = FakeSensor(), FakeDecisions()
    capture = FakeCapture(
        [
            _frame("a", datetime(2026, 12, 6, 1, tzinfo=TOKYO)),
            _frame("b", datetime(2026, 12, 7, 1, tzinfo=TOKYO)),
        ]
    )
    audit = FakeAudit()

    done = await ForgetData(sensor, capture, decisions, audit, TOKYO).day(PERSON, "2026-12-06")

    expected = day_range(date(2026, 12, 6), TOKYO)
    assert sensor.asked == [("between", expected)] and decisions.asked == [("between", expected)]
    assert capture.asked == [("forget_between", expected)]
    assert [frame.screenshot_id[0] for frame in capture.stored] == ["b"]
    assert done.sentence() == (
        "2026-12-06: deleted 12 activity spans, 30 raw events, 1 frame (1 files removed from disk) "
        "and 3 decisions of the pipeline."
    )
    assert audit.rows == [
        {"actor": PERSON, "action": "console.privacy.delete_day", "subject": "2026-12-06", "outcome": "ok",
         "deleted_spans": 12, "deleted_events": 30, "deleted_frames": 1, "files_removed": 1,
         "deleted_decisions": 3, "problems": []}
    ]  # fmt: skip


async def test_when_capture_is_down_the_spans_are_still_deleted_and_the_sentence_says_what_was_not() -> None:
    sensor, audit = FakeSensor(), FakeAudit()

    done = await ForgetData(sensor, FakeCapture(answering=False), FakeDecisions(), audit, TOKYO).day(
        PERSON, "2026-12-06"
    )

    assert sensor.asked and done.spans == 12 and done.frames is None
    assert done.sentence() == (
        "2026-12-06: deleted 12 activity spans, 30 raw events and 3 decisions of the pipeline. "
        "Not done: capture is not answering: it cannot be reached (is `kronii up` running it?)."
    )
    assert audit.rows[0]["outcome"] == "partial"


async def test_when_every_service_is_down_nothing_is_said_deleted_and_the_audit_says_unavailable() -> None:
    audit = FakeAudit()

    done = await ForgetData(
        FakeSensor(answering=False),
        FakeCapture(answering=False),
        FakeDecisions(answering=False),
        audit,
        TOKYO,
    ).everything(PERSON)

    assert done.spans is None and done.frames is None and done.decisions is None and len(done.problems) == 3
    assert done.sentence().startswith("Everything: nothing deleted. Not done: sensor is not answering")
    assert audit.rows[0]["outcome"] == "unavailable"


async def test_an_apps_activity_is_asked_of_the_sensor_only() -> None:
    sensor, capture = FakeSensor(), FakeCapture()

    done = await ForgetData(sensor, capture, FakeDecisions(), FakeAudit(), TOKYO).app(PERSON, "  firefox ")

    assert sensor.asked == [("app", "firefox")] and capture.asked == []
    assert done.sentence() == "Activity of firefox: deleted 4 activity spans and 9 raw events."


@pytest.mark.parametrize(
    ("scope", "value"), [("day", ""), ("day", "12/06/2026"), ("app", ""), ("app", "x" * 300)]
)
async def test_a_delete_without_a_proper_target_asks_nobody(scope: str, value: str) -> None:
    sensor, capture = FakeSensor(), FakeCapture()
    forget = ForgetData(sensor, capture, FakeDecisions(), FakeAudit(), TOKYO)

    with pytest.raises(InvalidArgument):
        await (forget.day(PERSON, value) if scope == "day" else forget.app(PERSON, value))

    assert sensor.asked == [] and capture.asked == []


async def test_the_view_says_what_is_kept_where_for_how_long_and_how_much() -> None:
    sizes = FakeSizes(
        {"activity_spans": (1200, 245_760), "activity_events": (5000, 1_048_576), "audit_log": (42, 81920)}
    )
    chain = FakeAuditChain(
        [AuditEntry(42, 1.0, "console", PERSON, "console.privacy.delete_day", "2026-12-06", "ok")]
    )
    capture = FakeCapture([_frame("a", datetime(2026, 12, 6, 1, tzinfo=TOKYO))])

    view = await ShowPrivacy(capture, sizes, chain, 30.0).view()

    kept = {item.what.split(" (")[0]: item for item in view.kept}
    assert (
        kept["Activity spans"].how_long == "30 days"
        and kept["Activity spans"].size == "1,200 rows, 240.0 KB on disk"
    )
    assert kept["Captured frames"].how_long == "redacted 7 days, raw 1 day"
    assert kept["Captured frames"].rows == 1
    assert kept["Decisions of the pipeline"].size == "unknown"
    assert view.chain is not None and view.chain.sentence().startswith("The chain holds: 1 rows checked")
    assert view.tail[0].action == "console.privacy.delete_day" and view.problems == ()


async def test_a_broken_chain_names_its_row() -> None:
    view = await ShowPrivacy(FakeCapture(), FakeSizes({}), FakeAuditChain([], broken_at=17), 30.0).view()

    assert view.chain is not None and not view.chain.ok
    assert (
        view.chain.sentence()
        == "The chain is broken at row 17: its content does not match its hash (the row was altered)."
    )


async def test_without_postgresql_the_page_still_shows_captures_and_says_why_sizes_are_missing() -> None:
    view = await ShowPrivacy(FakeCapture(), None, None, 30.0).view()

    assert view.problems == (
        "The console has no PostgreSQL connection: sizes and the audit log cannot be shown.",
    )
    assert view.chain is None and any(item.how_long.startswith("redacted 7 days") for item in view.kept)


async def test_everything_asks_the_sensor_capture_and_the_pipeline_to_delete_all() -> None:
    sensor, capture, decisions = (
        FakeSensor(),
        FakeCapture([_frame("a", datetime(2026, 12, 6, 1, tzinfo=TOKYO))]),
        FakeDecisions(),
    )

    done = await ForgetData(sensor, capture, decisions, FakeAudit(), TOKYO).everything(PERSON)

    assert (
        sensor.asked == [("all", None)]
        and capture.asked == [("forget_all", None)]
        and decisions.asked == [("all", None)]
    )
    assert done.sentence() == (
        "Everything: deleted 100 activity spans, 250 raw events, 1 frame (1 files removed from disk) "
        "and 8 decisions of the pipeline."
    )
