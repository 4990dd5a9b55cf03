"""The pipeline as a process follows the input broker on a real NATS: while a ControlChanged says the
person holds the desktop, a round still runs to the Planner but ends silent with the reason noted
and nothing on kronii.notify; once a WAIT ends the hold, the next round notifies."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from kronii.broker.v1 import broker_pb2 as bpb
from kronii.stores import subjects
from kronii.stores.bus import Bus

from tests.infra import InfraUrls
from tests.integration.pipeline.pipeline_support import (
    Pipeline,
    pipeline_database,
    pipeline_env,
    start_pipeline,
)
from tests.mesh import wait_until

SESSION = f"desk-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def pipeline(infra: InfraUrls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    database = pipeline_database(infra, "desktop")
    with start_pipeline(
        pipeline_env(infra, database, tmp_path_factory.mktemp("pipeline_desktop"))
    ) as running:
        yield running


def _stamp(at: float) -> Timestamp:
    out = Timestamp()
    out.FromNanoseconds(round(at * 1e9))
    return out


def _changed(holds_for: float | None, cause: str) -> bpb.ControlChanged:
    now = time.time()
    state = bpb.ControlState(session_id=SESSION, control_mode="USER")
    if holds_for is not None:
        state.user_holds_until.CopyFrom(_stamp(now + holds_for))
    return bpb.ControlChanged(state=state, cause=cause, signal=cause, at=_stamp(now))


def _controls_received(pipeline: Pipeline) -> float:
    text = httpx.get(f"{pipeline.url}/metrics", timeout=10).text
    found = re.search(r'kronii_bus_received_total\{[^}]*subject="kronii\.broker\.control"[^}]*\} (\S+)', text)
    return float(found.group(1)) if found else 0.0


def _broker_says(pipeline: Pipeline, nats: str, message: bpb.ControlChanged) -> None:
    before = _controls_received(pipeline)

    async def publish() -> None:
        bus = Bus("test-broker")
        await bus.connect(nats)
        try:
            await bus.publish(subjects.BROKER_CONTROL, message)
            await bus.client.flush()
        finally:
            await bus.close()

    asyncio.run(publish())
    wait_until(lambda: _controls_received(pipeline) > before, 5, "the pipeline to take the control change")


def _focus(pipeline: Pipeline, title: str) -> None:
    response = pipeline.trigger(
        kind="focus_changed",
        source="test",
        app_id="code",
        high_priority=True,
        attributes={"wm_class": "Code", "title": title, "window_id": "4243"},
    )
    assert response.status_code == 202, response.text


def test_a_round_while_the_user_holds_the_desktop_ends_silent_and_the_next_after_a_wait_notifies(
    pipeline: Pipeline, infra: InfraUrls
) -> None:
    _broker_says(pipeline, infra.nats, _changed(120, "stop_now"))
    try:
        _focus(pipeline, "machine.py - kronii - Visual Studio Code")
        held = pipeline.wait_for_run(lambda r: r["decision"] == "silent", what="a silent run while held")
    finally:
        _broker_says(pipeline, infra.nats, _changed(None, "wait"))

    assert f"silent: the user holds the desktop of session {SESSION!r} (stop_now)" in held["notes"]
    assert "planner" in [call["role"] for call in held["model_calls"]]
    assert not held["notification_id"]

    time.sleep(0.6)  # past the test settings' cooldown (0.5 s)
    _focus(pipeline, "runner.py - kronii - Visual Studio Code")
    freed = pipeline.wait_for_run(lambda r: r["decision"] == "notify", what="a notifying run after the hold")
    assert freed["notification_id"] and freed["created_at"] > held["created_at"]
