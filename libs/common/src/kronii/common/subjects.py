"""Every NATS subject kronii uses, in one place. Services never spell a subject themselves."""

from __future__ import annotations

__all__ = [
    "ACTIVITY_ALL",
    "ACTIVITY_PREFIX",
    "CAPTURE_STATUS_ALL",
    "CAPTURE_STATUS_PREFIX",
    "NOTIFY_ALL",
    "PIPELINE_TRIGGER",
    "PLUGIN_EVENTS_ALL",
    "PLUGIN_REGISTER",
    "SCHEDULER_ADMIT",
    "SCHEDULER_PLAN",
    "SCHEDULER_TICK",
    "SUPERVISOR_ACK",
    "SUPERVISOR_COLLISION",
    "SUPERVISOR_OUTCOME",
    "SUPERVISOR_PREFIX",
    "activity",
    "capture_status",
    "notify",
    "plugin_event",
    "plugin_snapshot",
]

ACTIVITY_PREFIX = "kronii.activity"
ACTIVITY_ALL = f"{ACTIVITY_PREFIX}.>"
ACTIVITY_STREAM = "KRONII_ACTIVITY"

ACTIVITY_EVENTS = ("state_changed", "focus_changed", "title_changed", "activity_pulse", "lock_changed")


def activity(event: str) -> str:
    """`kronii.activity.<event>` for one of ACTIVITY_EVENTS."""
    if event not in ACTIVITY_EVENTS:
        raise ValueError(f"unknown activity event {event!r}; known: {', '.join(ACTIVITY_EVENTS)}")
    return f"{ACTIVITY_PREFIX}.{event}"


# The supervisor (seed 002): trigger outcomes and collision events it publishes, and the subject
# agents' hooks may acknowledge a delivery on (payload kronii.supervisor.v1.AckTriggerRequest).
SUPERVISOR_PREFIX = "kronii.supervisor"
SUPERVISOR_OUTCOME = f"{SUPERVISOR_PREFIX}.outcome"
SUPERVISOR_COLLISION = f"{SUPERVISOR_PREFIX}.collision"
SUPERVISOR_ACK = f"{SUPERVISOR_PREFIX}.ack"


# The capture service: every status change of a job (payload kronii.capture.v1.CaptureStatus).
CAPTURE_PREFIX = "kronii.capture"
CAPTURE_STATUS_PREFIX = f"{CAPTURE_PREFIX}.status"
CAPTURE_STATUS_ALL = f"{CAPTURE_STATUS_PREFIX}.*"


def capture_status(job_id: str) -> str:
    """`kronii.capture.status.<job_id>`."""
    return f"{CAPTURE_STATUS_PREFIX}.{_token(job_id)}"


# The pipeline: triggers from agents and plugins, the plugin protocol, and notifications.
PIPELINE_PREFIX = "kronii.pipeline"
PIPELINE_TRIGGER = f"{PIPELINE_PREFIX}.trigger"
PLUGIN_PREFIX = "kronii.plugin"
PLUGIN_REGISTER = f"{PLUGIN_PREFIX}.register"
PLUGIN_EVENTS_ALL = f"{PLUGIN_PREFIX}.event.*"


def plugin_event(app_id: str) -> str:
    """`kronii.plugin.event.<app_id>`: events a plugin publishes."""
    return f"{PLUGIN_PREFIX}.event.{_token(app_id)}"


def plugin_snapshot(app_id: str) -> str:
    """`kronii.plugin.snapshot.<app_id>`: request/reply for a plugin's summary or full data."""
    return f"{PLUGIN_PREFIX}.snapshot.{_token(app_id)}"


NOTIFY_PREFIX = "kronii.notify"
NOTIFY_ALL = f"{NOTIFY_PREFIX}.>"


def notify(channel: str) -> str:
    """`kronii.notify.<channel>`: a user-facing notification."""
    return f"{NOTIFY_PREFIX}.{_token(channel)}"


# The scheduler: wake-ups it emits when due, and the plan the pipeline hands it after a run.
SCHEDULER_PREFIX = "kronii.scheduler"
SCHEDULER_TICK = f"{SCHEDULER_PREFIX}.tick"
SCHEDULER_PLAN = f"{SCHEDULER_PREFIX}.plan"
# Request/reply: may a run start now (ceilings, cooldown, preemption)?
SCHEDULER_ADMIT = f"{SCHEDULER_PREFIX}.admit"


def _token(value: str) -> str:
    if not value or any(char in value for char in ".*> \t"):
        raise ValueError(f"not a valid NATS subject token: {value!r}")
    return value
