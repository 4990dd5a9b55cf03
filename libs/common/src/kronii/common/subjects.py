"""Every NATS subject kronii uses, in one place. Services never spell a subject themselves."""

from __future__ import annotations

__all__ = [
    "ACTIVITY_ALL",
    "ACTIVITY_PREFIX",
    "SUPERVISOR_ACK",
    "SUPERVISOR_COLLISION",
    "SUPERVISOR_OUTCOME",
    "SUPERVISOR_PREFIX",
    "activity",
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
