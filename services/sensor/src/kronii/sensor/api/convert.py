"""Conversions between the core's vocabulary and the protobuf messages of kronii.activity.v1."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.activity.v1 import activity_pb2 as pb
from kronii.sensor.core.model import ActivityState, Focus, StateChanged

__all__ = ["focus_message", "state_message", "timestamp", "transition_message"]

_STATES = {
    ActivityState.ACTIVE: pb.ACTIVITY_STATE_ACTIVE,
    ActivityState.PASSIVE: pb.ACTIVITY_STATE_PASSIVE,
    ActivityState.INACTIVE: pb.ACTIVITY_STATE_INACTIVE,
    ActivityState.LOCKED: pb.ACTIVITY_STATE_LOCKED,
}


def state_message(state: ActivityState) -> pb.ActivityState.ValueType:
    return _STATES[state]


def timestamp(at: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromNanoseconds(int(at * 1_000_000_000))
    return stamp


def focus_message(focus: Focus) -> pb.Focus:
    """The focus as published. The caller passes a focus whose title is already redacted."""
    return pb.Focus(
        app_name=focus.app_name,
        wm_class=focus.wm_class,
        window_id=focus.window_id,
        title=focus.title,
        pid=focus.pid,
        app_start_time=focus.app_start_time_ms,
    )


def transition_message(change: StateChanged) -> pb.Transition:
    return pb.Transition(
        **{"from": state_message(change.from_state)},
        to=state_message(change.to_state),
        at=timestamp(change.at),
    )
