"""Every NATS subject kronii uses, each paired with the protobuf message it carries.

Services never spell a subject: they publish and subscribe through a Topic, so the Bus can refuse
a wrong payload (mypy before it runs, a TypeError when it does) and label its metrics with the
topic's pattern, never with a job id or an app id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as apb
from kronii.broker.v1 import broker_pb2 as bpb
from kronii.capture.v1 import capture_pb2 as cpb
from kronii.pipeline.v1 import pipeline_pb2 as ppb
from kronii.scheduler.v1 import scheduler_pb2 as spb
from kronii.supervisor.v1 import supervisor_pb2 as svpb

__all__ = [
    "ACTIVITY_ALL",
    "ACTIVITY_EVENTS",
    "ACTIVITY_PREFIX",
    "ACTIVITY_PULSE",
    "ACTIVITY_STREAM",
    "BROKER_CONTROL",
    "CAPTURE_STATUS",
    "FOCUS_CHANGED",
    "LOCK_CHANGED",
    "NOTIFY",
    "PIPELINE_NOTICE",
    "PIPELINE_TRIGGER",
    "PLUGIN_EVENT",
    "PLUGIN_REGISTER",
    "PLUGIN_SNAPSHOT",
    "SCHEDULER_ADMIT",
    "SCHEDULER_PLAN",
    "SCHEDULER_TICK",
    "STATE_CHANGED",
    "SUPERVISOR_ACK",
    "SUPERVISOR_COLLISION",
    "SUPERVISOR_OFFER",
    "SUPERVISOR_OFFER_ACCEPT",
    "SUPERVISOR_OUTCOME",
    "TITLE_CHANGED",
    "TOPICS",
    "RequestTopic",
    "Topic",
    "activity_topic",
    "topic_for",
]

M = TypeVar("M", bound=Message)
R = TypeVar("R", bound=Message)


@dataclass(frozen=True)
class Topic(Generic[M]):
    """One subject, or one family of subjects where each `*` is filled by a token (a job id, an
    app id, a channel), and the one message type published on it."""

    pattern: str
    message_type: type[M]
    _parts: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if ">" in self.pattern:
            raise ValueError(f"a topic names one subject or a `*` family, not {self.pattern!r}")
        object.__setattr__(self, "_parts", tuple(self.pattern.split(".")))

    @property
    def wildcards(self) -> int:
        """How many tokens `subject` takes."""
        return self._parts.count("*")

    def subject(self, *tokens: str) -> str:
        """The concrete subject: each `*` of the pattern replaced, in order, by a valid token."""
        if len(tokens) != self.wildcards:
            raise ValueError(f"{self.pattern} takes {self.wildcards} token(s), got {len(tokens)}")
        filled = iter(tokens)
        return ".".join(_token(next(filled)) if part == "*" else part for part in self._parts)

    def matches(self, subject: str) -> bool:
        parts = subject.split(".")
        return len(parts) == len(self._parts) and all(
            mine in ("*", theirs) for mine, theirs in zip(self._parts, parts, strict=True)
        )


@dataclass(frozen=True)
class RequestTopic(Topic[M], Generic[M, R]):
    """A request/reply subject: requests of `message_type`, answered with one `reply_type`."""

    reply_type: type[R] = field(kw_only=True)


# The sensor's activity events, one subject per kind, kept by a JetStream stream for late consumers.
ACTIVITY_PREFIX = "kronii.activity"
ACTIVITY_ALL = f"{ACTIVITY_PREFIX}.>"
ACTIVITY_STREAM = "KRONII_ACTIVITY"
STATE_CHANGED = Topic(f"{ACTIVITY_PREFIX}.state_changed", apb.StateChanged)
FOCUS_CHANGED = Topic(f"{ACTIVITY_PREFIX}.focus_changed", apb.FocusChanged)
TITLE_CHANGED = Topic(f"{ACTIVITY_PREFIX}.title_changed", apb.TitleChanged)
ACTIVITY_PULSE = Topic(f"{ACTIVITY_PREFIX}.activity_pulse", apb.ActivityPulse)
LOCK_CHANGED = Topic(f"{ACTIVITY_PREFIX}.lock_changed", apb.LockChanged)
_ACTIVITY: Mapping[str, Topic[Any]] = {
    topic.pattern.removeprefix(f"{ACTIVITY_PREFIX}."): topic
    for topic in (STATE_CHANGED, FOCUS_CHANGED, TITLE_CHANGED, ACTIVITY_PULSE, LOCK_CHANGED)
}
ACTIVITY_EVENTS = tuple(_ACTIVITY)


def activity_topic(event: str) -> Topic[Any]:
    """The topic of `kronii.activity.<event>` for one of ACTIVITY_EVENTS."""
    try:
        return _ACTIVITY[event]
    except KeyError:
        raise ValueError(f"unknown activity event {event!r}; known: {', '.join(ACTIVITY_EVENTS)}") from None


# The supervisor (seed 002): trigger outcomes and collision events it publishes, and the subject
# agents' hooks may acknowledge a delivery on.
# Who holds the desktop's input: every change of control, intent or agent status (seed 004).
BROKER_CONTROL = Topic("kronii.broker.control", bpb.ControlChanged)

SUPERVISOR_OUTCOME = Topic("kronii.supervisor.outcome", svpb.TriggerOutcome)
SUPERVISOR_COLLISION = Topic("kronii.supervisor.collision", svpb.CollisionEvent)
SUPERVISOR_ACK = Topic("kronii.supervisor.ack", svpb.AckTriggerRequest)
# The critic's offer of a repeated failure to an agent, and the person's yes to one (the pipeline's
# bubble button): the supervisor keeps offers and posts an accepted one to the agent's thread.
SUPERVISOR_OFFER = Topic("kronii.supervisor.offer", svpb.FailureOffer)
SUPERVISOR_OFFER_ACCEPT = Topic("kronii.supervisor.offer.accept", svpb.HandOfferRequest)

# The capture service: every status change of a job, on `kronii.capture.status.<job_id>`.
CAPTURE_STATUS = Topic("kronii.capture.status.*", cpb.CaptureStatus)

# The pipeline: triggers from agents and plugins, the plugin protocol (events on
# `kronii.plugin.event.<app_id>`, snapshots asked on `kronii.plugin.snapshot.<app_id>`), and
# user-facing notifications on `kronii.notify.<channel>`; notices other services composed (the
# critic's warnings), which the pipeline shows through its gates without a round.
PIPELINE_TRIGGER = Topic("kronii.pipeline.trigger", ppb.TriggerRequest)
PIPELINE_NOTICE = Topic("kronii.pipeline.notice", ppb.Notice)
PLUGIN_REGISTER = Topic("kronii.plugin.register", ppb.PluginRegistration)
PLUGIN_EVENT = Topic("kronii.plugin.event.*", ppb.PluginEvent)
PLUGIN_SNAPSHOT = RequestTopic(
    "kronii.plugin.snapshot.*", ppb.PluginSnapshotRequest, reply_type=ppb.PluginSnapshot
)
NOTIFY = Topic("kronii.notify.*", ppb.Notification)

# The scheduler: wake-ups it emits when due, the plan the pipeline hands it after a run, and
# whether a run may start now (ceilings, cooldown, preemption).
SCHEDULER_TICK = Topic("kronii.scheduler.tick", spb.Tick)
SCHEDULER_PLAN = Topic("kronii.scheduler.plan", spb.Plan)
SCHEDULER_ADMIT = RequestTopic("kronii.scheduler.admit", spb.AdmitRequest, reply_type=spb.AdmitResponse)

TOPICS: tuple[Topic[Any], ...] = (
    *_ACTIVITY.values(),
    BROKER_CONTROL,
    SUPERVISOR_OUTCOME,
    SUPERVISOR_COLLISION,
    SUPERVISOR_ACK,
    SUPERVISOR_OFFER,
    SUPERVISOR_OFFER_ACCEPT,
    CAPTURE_STATUS,
    PIPELINE_TRIGGER,
    PIPELINE_NOTICE,
    PLUGIN_REGISTER,
    PLUGIN_EVENT,
    PLUGIN_SNAPSHOT,
    NOTIFY,
    SCHEDULER_TICK,
    SCHEDULER_PLAN,
    SCHEDULER_ADMIT,
)


def topic_for(subject: str) -> Topic[Any] | None:
    """The topic a concrete subject belongs to, or None for a subject kronii does not use."""
    return next((topic for topic in TOPICS if topic.matches(subject)), None)


def _token(value: str) -> str:
    if not value or any(char in value for char in ".*> \t"):
        raise ValueError(f"not a valid NATS subject token: {value!r}")
    return value
