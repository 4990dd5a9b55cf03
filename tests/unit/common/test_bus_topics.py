"""Topics pair each subject with its message type: the Bus refuses a wrong payload with a sentence,
and labels its counters with the topic's pattern, never the concrete subject (a job id, an app id)."""

from __future__ import annotations

import re
from typing import Any, cast

import pytest
from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as apb
from kronii.capture.v1 import capture_pb2 as cpb
from kronii.foundation.telemetry import CommonMetrics
from kronii.pipeline.v1 import pipeline_pb2 as ppb
from kronii.scheduler.v1 import scheduler_pb2 as spb
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.stores.metrics_zero import RUNTIME_AUDIT_ACTIONS, zero_common_series
from nats.aio.client import Client
from prometheus_client import CollectorRegistry

from tests.metrics_samples import missing_common_zeros, samples


class _Wire:
    """Stands in for the NATS client: keeps what was published, answers requests with `reply`."""

    def __init__(self, reply: bytes = b"") -> None:
        self.sent: list[tuple[str, bytes]] = []
        self.reply = reply

    async def publish(self, subject: str, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.sent.append((subject, payload))

    async def request(self, subject: str, payload: bytes, **_: Any) -> Any:
        self.sent.append((subject, payload))
        return type("Msg", (), {"data": self.reply})()


def _bus(wire: _Wire) -> tuple[Bus, CollectorRegistry]:
    registry = CollectorRegistry()
    bus = Bus("capture", CommonMetrics("capture", registry))
    bus._client = cast(Client, wire)
    return bus, registry


async def test_publishing_the_wrong_message_type_on_a_topic_raises_a_type_error_and_sends_nothing() -> None:
    wire = _Wire()
    bus, _ = _bus(wire)
    wrong = cast(Any, apb.LockChanged(locked=True))

    with pytest.raises(
        TypeError,
        match=r"kronii\.capture\.status\.\* carries kronii\.capture\.v1\.CaptureStatus, "
        r"not kronii\.activity\.v1\.LockChanged: the message was not sent",
    ):
        await bus.publish(subjects.CAPTURE_STATUS, wrong, "job-1")
    assert wire.sent == []


async def test_publishing_on_a_recorded_subject_checks_its_topic() -> None:
    wire = _Wire()
    bus, _ = _bus(wire)

    with pytest.raises(TypeError, match=re.escape("carries kronii.activity.v1.FocusChanged")):
        await bus.publish_on("kronii.activity.focus_changed", apb.LockChanged())
    with pytest.raises(ValueError, match="no subject kronii uses"):
        await bus.publish_on("kronii.activity.keystrokes", apb.LockChanged())
    await bus.publish_on("kronii.activity.lock_changed", apb.LockChanged(locked=True))

    assert [subject for subject, _ in wire.sent] == ["kronii.activity.lock_changed"]


async def test_a_request_of_the_wrong_type_raises_a_type_error() -> None:
    wire = _Wire()
    bus, _ = _bus(wire)

    with pytest.raises(
        TypeError, match=re.escape("kronii.scheduler.admit carries kronii.scheduler.v1.AdmitRequest")
    ):
        await bus.request(subjects.SCHEDULER_ADMIT, cast(Any, spb.Plan()), wait_secs=1)
    assert wire.sent == []


async def test_a_request_returns_the_reply_type_of_its_topic() -> None:
    wire = _Wire(reply=spb.AdmitResponse(allowed=True, reason="admitted").SerializeToString())
    bus, _ = _bus(wire)

    reply = await bus.request(subjects.SCHEDULER_ADMIT, spb.AdmitRequest(app="code"), wait_secs=1)

    assert isinstance(reply, spb.AdmitResponse)
    assert (reply.allowed, reply.reason) == (True, "admitted")


async def test_the_published_counter_is_labelled_with_the_pattern_not_the_job_id() -> None:
    wire = _Wire()
    bus, registry = _bus(wire)

    await bus.publish(subjects.CAPTURE_STATUS, cpb.CaptureStatus(job_id="job-1"), "job-1")
    await bus.publish(subjects.CAPTURE_STATUS, cpb.CaptureStatus(job_id="job-2"), "job-2")

    assert [subject for subject, _ in wire.sent] == [
        "kronii.capture.status.job-1",
        "kronii.capture.status.job-2",
    ]
    published = {
        dict(labels)["subject"]: value
        for (name, labels), value in samples(registry).items()
        if name == "kronii_bus_published_total"
    }
    assert published == {"kronii.capture.status.*": 2.0}


def test_a_family_needs_one_valid_token_per_wildcard() -> None:
    assert subjects.NOTIFY.subject("desktop") == "kronii.notify.desktop"
    assert subjects.SCHEDULER_TICK.subject() == "kronii.scheduler.tick"
    with pytest.raises(ValueError, match="takes 1 token"):
        subjects.NOTIFY.subject()
    with pytest.raises(ValueError, match="not a valid NATS subject token"):
        subjects.PLUGIN_EVENT.subject("tmux.evil")


def test_every_concrete_subject_resolves_to_exactly_its_topic() -> None:
    patterns = [topic.pattern for topic in subjects.TOPICS]

    assert len(patterns) == len(set(patterns))
    for topic in subjects.TOPICS:
        concrete = topic.subject(*(["x1"] * topic.wildcards))
        assert [t for t in subjects.TOPICS if t.matches(concrete)] == [topic], concrete
    assert subjects.topic_for("kronii.capture.status.j-9") is subjects.CAPTURE_STATUS
    assert subjects.topic_for("kronii.capture.status.j-9.extra") is None


def test_request_topics_carry_their_reply_type() -> None:
    assert subjects.PLUGIN_SNAPSHOT.message_type is ppb.PluginSnapshotRequest
    assert subjects.PLUGIN_SNAPSHOT.reply_type is ppb.PluginSnapshot
    assert subjects.SCHEDULER_ADMIT.reply_type is spb.AdmitResponse
    assert all(isinstance(t.message_type(), Message) for t in subjects.TOPICS)


def test_zero_common_series_starts_topics_and_audit_actions_at_zero() -> None:
    registry = CollectorRegistry()

    zero_common_series(
        CommonMetrics("scheduler", registry),
        publishes=[subjects.SCHEDULER_TICK],
        receives=[subjects.SCHEDULER_PLAN],
        audit_actions=["schedule.tick"],
    )

    assert not missing_common_zeros(
        samples(registry),
        "scheduler",
        publishes=[subjects.SCHEDULER_TICK],
        receives=[subjects.SCHEDULER_PLAN],
        audit_actions=["schedule.tick", *RUNTIME_AUDIT_ACTIONS],
    )
