"""Live updates (usecases/live_updates.py, api/bus.py): only names, ids and states reach a page (never a
title or a notice's text), each page gets only its topics through a bounded queue that drops the
oldest when the page falls behind, and a page that leaves is forgotten."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.activity.v1 import activity_pb2 as apb
from kronii.console.api.bus import LiveBus, live_fields
from kronii.console.usecases.live_updates import QUEUE_SIZE, LiveHub, LiveUpdate
from kronii.pipeline.v1 import pipeline_pb2 as ppb


def test_a_focus_change_reaches_the_page_without_its_title() -> None:
    message = apb.FocusChanged(
        previous=apb.Focus(app_name="XTerm", title="ssh root@10.0.0.7"),
        current=apb.Focus(app_name="Firefox", title="Bank of X - statement for Jane Doe", window_id=42),
        at=Timestamp(seconds=1),
        change="app",
    )
    data = live_fields("kronii.activity.focus_changed", message)
    assert data == {"event": "focus_changed", "change": "app", "app": "Firefox"}


def test_a_notice_reaches_the_page_without_its_title_or_body() -> None:
    notice = ppb.Notice(
        source="critic", kind="warning", title="rm -rf in /home/jane", body="password=hunter2"
    )
    data = live_fields("kronii.pipeline.notice", notice)
    assert data == {"event": "notice", "source": "critic", "kind": "warning"}
    assert "hunter2" not in str(data) and "jane" not in str(data)


async def test_a_page_gets_only_its_topics_and_is_forgotten_when_it_leaves() -> None:
    counts: list[int] = []
    hub = LiveHub(["activity", "agents"], on_count=counts.append)
    async with hub.listen(["activity", "control"]) as queue:
        assert hub.listening == 1
        hub.publish(LiveUpdate("agents", {"event": "outcome"}))
        hub.publish(LiveUpdate("activity", {"event": "focus_changed"}))
        assert queue.qsize() == 1
        assert (await queue.get()).data == {"event": "focus_changed"}
    assert hub.listening == 0
    assert counts == [1, 0]


async def test_a_page_that_falls_behind_loses_its_oldest_updates_not_memory() -> None:
    dropped: list[int] = []
    hub = LiveHub(["activity"], on_drop=lambda: dropped.append(1))
    async with hub.listen(["activity"]) as queue:
        for n in range(QUEUE_SIZE + 10):
            hub.publish(LiveUpdate("activity", {"n": n}))
        assert queue.qsize() == QUEUE_SIZE
        assert (await queue.get()).data == {"n": 10}
    assert len(dropped) == 10


async def test_the_bus_handler_passes_updates_under_the_consoles_topic() -> None:
    hub = LiveHub(["activity"])
    handler = LiveBus(hub).handler("activity")
    async with hub.listen(["activity"]) as queue:
        await handler("kronii.activity.lock_changed", apb.LockChanged(locked=True, source="logind"))
        assert (await queue.get()) == LiveUpdate("activity", {"event": "lock_changed", "locked": True})
