"""Conversions between the core's vocabulary and the protobuf messages of kronii.activity.v1, both
ways: the events published and streamed, and the snapshot kept in Redis and answered."""

from __future__ import annotations

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from kronii.activity.v1 import activity_pb2 as pb
from kronii.sensor.core.model import (
    ActivityState,
    Focus,
    FocusChanged,
    LockRecorded,
    PulseEmitted,
    StateChanged,
    TitleChanged,
)
from kronii.sensor.core.snapshot import ActivityEvent, SensorSnapshot, Transition, nanoseconds

__all__ = [
    "activity_event_message",
    "event_message",
    "focus_message",
    "snapshot_from_message",
    "snapshot_message",
    "state_message",
    "timestamp",
    "transition_message",
]

_STATES = {
    ActivityState.ACTIVE: pb.ACTIVITY_STATE_ACTIVE,
    ActivityState.PASSIVE: pb.ACTIVITY_STATE_PASSIVE,
    ActivityState.INACTIVE: pb.ACTIVITY_STATE_INACTIVE,
    ActivityState.LOCKED: pb.ACTIVITY_STATE_LOCKED,
}
_FROM_WIRE = {value: state for state, value in _STATES.items()}


def state_message(state: ActivityState) -> pb.ActivityState.ValueType:
    return _STATES[state]


def _state_or_unspecified(state: ActivityState | None) -> pb.ActivityState.ValueType:
    return _STATES[state] if state is not None else pb.ACTIVITY_STATE_UNSPECIFIED


def _stamp_ns(at_ns: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromNanoseconds(at_ns)
    return stamp


def timestamp(at: float) -> Timestamp:
    return _stamp_ns(nanoseconds(at))


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


def _focus_from(message: pb.Focus) -> Focus:
    return Focus(
        app_name=message.app_name,
        wm_class=message.wm_class,
        window_id=message.window_id,
        title=message.title,
        pid=message.pid,
        app_start_time_ms=message.app_start_time,
    )


def transition_message(change: StateChanged) -> pb.Transition:
    return pb.Transition(
        **{"from": state_message(change.from_state)},
        to=state_message(change.to_state),
        at=timestamp(change.at),
    )


def event_message(event: ActivityEvent) -> Message:
    """The message published on kronii.activity.<kind> for the event."""
    match event:
        case StateChanged():
            return pb.StateChanged(transition=transition_message(event), cause=event.cause)
        case FocusChanged():
            return pb.FocusChanged(
                previous=focus_message(event.previous),
                current=focus_message(event.current),
                at=timestamp(event.at),
                change=event.change,
            )
        case TitleChanged():
            return pb.TitleChanged(focus=focus_message(event.focus), at=timestamp(event.at))
        case PulseEmitted():
            return pb.ActivityPulse(source=event.source, at=timestamp(event.at))
        case LockRecorded():
            return pb.LockChanged(locked=event.locked, source=event.source, at=timestamp(event.at))


def activity_event_message(event: ActivityEvent) -> pb.ActivityEvent:
    """The event as WatchActivity streams it."""
    message = event_message(event)
    match message:
        case pb.StateChanged():
            return pb.ActivityEvent(state_changed=message)
        case pb.FocusChanged():
            return pb.ActivityEvent(focus_changed=message)
        case pb.TitleChanged():
            return pb.ActivityEvent(title_changed=message)
        case pb.ActivityPulse():
            return pb.ActivityEvent(activity_pulse=message)
    assert isinstance(message, pb.LockChanged)
    return pb.ActivityEvent(lock_changed=message)


def snapshot_message(snapshot: SensorSnapshot) -> pb.Snapshot:
    message = pb.Snapshot(
        activity_state=_state_or_unspecified(snapshot.state),
        focus=focus_message(snapshot.focus),
        idle_ms=snapshot.idle_ms,
        locked=snapshot.locked,
        updated_at=_stamp_ns(snapshot.updated_at_ns),
        display_available=snapshot.display_available,
        prompt=snapshot.prompt,
    )
    if snapshot.last_transition is not None:
        change = snapshot.last_transition
        message.last_transition.CopyFrom(
            pb.Transition(
                **{"from": _state_or_unspecified(change.from_state)},
                to=_state_or_unspecified(change.to_state),
                at=_stamp_ns(change.at_ns),
            )
        )
    return message


def snapshot_from_message(message: pb.Snapshot) -> SensorSnapshot:
    transition = None
    if message.HasField("last_transition"):
        change = message.last_transition
        transition = Transition(
            from_state=_FROM_WIRE.get(getattr(change, "from")),
            to_state=_FROM_WIRE.get(change.to),
            at_ns=change.at.ToNanoseconds(),
        )
    return SensorSnapshot(
        state=_FROM_WIRE.get(message.activity_state),
        focus=_focus_from(message.focus),
        idle_ms=message.idle_ms,
        locked=message.locked,
        updated_at_ns=message.updated_at.ToNanoseconds(),
        display_available=message.display_available,
        prompt=message.prompt,
        last_transition=transition,
    )
