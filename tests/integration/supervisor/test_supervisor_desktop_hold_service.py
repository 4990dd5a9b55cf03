"""The supervisor as a process follows the input broker on a real NATS: a ControlChanged whose
`user_holds_until` is ahead defers triggers into its panes with USER_HOLDS_DESKTOP (nothing typed),
and the change that ends the hold lets the deferred trigger through, typed once."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from kronii.broker.v1 import broker_pb2 as bpb
from kronii.stores import subjects
from kronii.stores.bus import Bus

from tests.agents.harness import private_socket
from tests.infra import InfraUrls
from tests.integration.supervisor.conftest import SETTINGS, Supervisor, start_supervisor, wait_ready_pane

# A session id of this module's own: other supervisors on the same NATS pay it no mind, and this one
# (narrowed to it) no mind to theirs.
SESSION = f"desk-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def supervisor(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Supervisor]:
    folder = tmp_path_factory.mktemp("supervisor_desktop")
    settings = {**SETTINGS, "KRONII_SUPERVISOR_DESKTOP_SESSION": SESSION}
    with (
        private_socket() as socket,
        start_supervisor(infra, migrated_database, folder, socket, settings=settings) as sup,
    ):
        yield sup


def _stamp(at: float) -> Timestamp:
    out = Timestamp()
    out.FromNanoseconds(round(at * 1e9))
    return out


def _changed(session: str, holds_for: float | None, cause: str) -> bpb.ControlChanged:
    now = time.time()
    state = bpb.ControlState(session_id=session, control_mode="USER", agent_status="STOPPED")
    if holds_for is not None:
        state.user_holds_until.CopyFrom(_stamp(now + holds_for))
    return bpb.ControlChanged(state=state, cause=cause, signal=cause, at=_stamp(now))


def _broker_controls_received(sup: Supervisor) -> float:
    pattern = r'kronii_bus_received_total\{[^}]*subject="kronii\.broker\.control"[^}]*\} (\S+)'
    found = re.search(pattern, sup.metrics())
    return float(found.group(1)) if found else 0.0


def _eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _broker_says(sup: Supervisor, message: bpb.ControlChanged) -> None:
    """Publish as the broker does and wait until the supervisor took it (its received counter moved;
    the handler runs before the next request is answered)."""
    before = _broker_controls_received(sup)

    async def publish() -> None:
        bus = Bus("test-broker")
        await bus.connect(sup.nats)
        try:
            await bus.publish(subjects.BROKER_CONTROL, message)
            await bus.client.flush()
        finally:
            await bus.close()

    asyncio.run(publish())
    _eventually(
        lambda: _broker_controls_received(sup) > before, 5, "the supervisor to take the control change"
    )


def _live(sup: Supervisor, agent: str) -> dict[str, Any]:
    runtime: dict[str, Any] = sup.spawn(agent)["runtime"]
    wait_ready_pane(sup, runtime["runtime_id"])
    return runtime


def _submits_for(sup: Supervisor, prompt: str) -> list[dict[str, Any]]:
    return [entry for entry in sup.codex.submits() if entry["prompt"] == prompt]


def test_a_hold_published_by_the_broker_defers_triggers_until_a_wait_ends_it(supervisor: Supervisor) -> None:
    agent = f"held-{uuid.uuid4().hex[:6]}"
    _live(supervisor, agent)
    _broker_says(supervisor, _changed(SESSION, 120, "stop_now"))
    try:
        outcome = supervisor.trigger(agent, "wait until the desktop is handed back")

        assert outcome["result"] == "deferred" and outcome["error_code"] == "USER_HOLDS_DESKTOP", outcome
        assert "the user holds the desktop" in outcome["detail"] and "stop_now" in outcome["detail"]
        time.sleep(1.0)  # a few rechecks (0.3 s each): still held, still nothing typed
        assert supervisor.get_trigger(outcome["trigger_id"])["result"] == "deferred"
        assert _submits_for(supervisor, "wait until the desktop is handed back") == []
    finally:
        _broker_says(supervisor, _changed(SESSION, None, "wait"))

    _eventually(lambda: supervisor.get_trigger(outcome["trigger_id"])["result"] == "delivered", 8,
                "delivery once the hold ended")  # fmt: skip
    assert len(_submits_for(supervisor, "wait until the desktop is handed back")) == 1


def test_a_hold_on_another_broker_session_leaves_this_supervisors_panes_alone(supervisor: Supervisor) -> None:
    agent = f"free-{uuid.uuid4().hex[:6]}"
    _live(supervisor, agent)
    other = f"other-{uuid.uuid4().hex[:6]}"
    _broker_says(supervisor, _changed(other, 120, "user_input_override"))
    try:
        outcome = supervisor.trigger(agent, "not this desktop's hold")
    finally:
        _broker_says(supervisor, _changed(other, None, "wait"))

    assert outcome["result"] == "delivered", outcome
