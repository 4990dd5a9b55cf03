"""RecordActivity's gather and what must not wait for it: envelopes queued within a gather are one
transaction; a stop's or a delete's flush writes them at once; a person's delete never runs before
the envelopes already queued are written (one written after it would bring back what was deleted)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from kronii.foundation.clock import ManualClock
from kronii.sensor.core.activity_query import DeleteSelector
from kronii.sensor.core.snapshot import Envelope
from kronii.sensor.core.spans import SpanTracker
from kronii.sensor.usecases.forget_activity import ForgetActivity
from kronii.sensor.usecases.keep_spans import KeepSpans
from kronii.sensor.usecases.record_activity import RecordActivity

START = 1_796_000_000.0
LONG_GATHER_SECS = 30.0


class Journal:
    """The envelope store and the span store's delete, writing what happened in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    async def write(self, envelopes: Sequence[Envelope]) -> None:
        self.events.append(("envelopes", [envelope.detail["app"] for envelope in envelopes]))

    async def delete(self, selector: DeleteSelector) -> tuple[int, int]:
        self.events.append(("delete", selector.app))
        return (0, 0)

    async def write_closed(self, spans: Sequence[object]) -> None:
        self.events.append(("spans", len(spans)))


async def _no_audit(**_fields: object) -> None:
    return None


def _envelope(app: str) -> Envelope:
    return Envelope(at=START, kind="focus_changed", state="active", detail={"app": app})


def test_envelopes_queued_within_a_gather_are_one_transaction() -> None:
    async def scenario() -> None:
        journal = Journal()
        record = RecordActivity(journal, _no_audit, gather_secs=0.05)
        writer = asyncio.create_task(record.run())
        for app in ("xterm", "gedit", "xterm"):
            record.envelope(_envelope(app))
            await asyncio.sleep(0.005)
        assert journal.events == [], "written before the gather was over"
        await asyncio.sleep(0.2)
        writer.cancel()
        assert journal.events == [("envelopes", ["xterm", "gedit", "xterm"])]

    asyncio.run(scenario())


def test_a_flush_writes_the_queued_envelopes_without_waiting_for_the_gather() -> None:
    async def scenario() -> None:
        journal = Journal()
        record = RecordActivity(journal, _no_audit, gather_secs=LONG_GATHER_SECS)
        writer = asyncio.create_task(record.run())
        record.envelope(_envelope("xterm"))
        await asyncio.sleep(0.01)
        await asyncio.wait_for(record.flush(wait_secs=LONG_GATHER_SECS), 2.0)
        assert journal.events == [("envelopes", ["xterm"])]
        record.envelope(_envelope("gedit"))  # the next gather is a gather again
        await asyncio.sleep(0.05)
        assert journal.events == [("envelopes", ["xterm"])]
        writer.cancel()

    asyncio.run(scenario())


def test_a_delete_runs_after_the_envelopes_already_queued_are_written() -> None:
    async def scenario() -> None:
        journal = Journal()
        clock = ManualClock(START)
        record = RecordActivity(journal, _no_audit, gather_secs=LONG_GATHER_SECS)
        spans = KeepSpans(SpanTracker(10.0), journal, _Titles(), clock, flush_secs=30.0)  # type: ignore[arg-type]
        forget = ForgetActivity(journal, spans, record, _no_audit, clock, retention_days=30)  # type: ignore[arg-type]
        writer = asyncio.create_task(record.run())
        record.envelope(_envelope("secret-app"))
        await asyncio.sleep(0.01)
        await asyncio.wait_for(forget.delete(DeleteSelector(app="secret-app"), actor="person"), 2.0)
        writer.cancel()
        assert journal.events == [("envelopes", ["secret-app"]), ("delete", "secret-app")]

    asyncio.run(scenario())


class _Titles:
    def clean(self, focus: object) -> object:
        return focus
