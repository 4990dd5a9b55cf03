"""broker.proto's messages for the broker's values: one mapping, used by the API layers and by the
NATS publisher alike."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.broker.core.model import ControlState
from kronii.broker.v1 import broker_pb2 as pb

__all__ = ["control_changed", "state_message", "timestamp"]


def timestamp(ms: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMilliseconds(ms)
    return stamp


def state_message(state: ControlState) -> pb.ControlState:
    message = pb.ControlState(
        session_id=state.session_id,
        interactive=state.interactive,
        control_mode=state.control_mode.value,
        user_intent=state.user_intent.value,
        agent_status=state.agent_status.value,
        epoch=state.epoch,
        holder=state.holder,
        window=state.window,
        interactive_reason=state.interactive_reason,
    )
    if state.lease_expiry_ms is not None:
        message.lease_expiry.CopyFrom(timestamp(state.lease_expiry_ms))
    if state.user_holds_until_ms is not None:
        message.user_holds_until.CopyFrom(timestamp(state.user_holds_until_ms))
    return message


def control_changed(state: ControlState, cause: str, signal: str, at_ms: int) -> pb.ControlChanged:
    return pb.ControlChanged(state=state_message(state), cause=cause, signal=signal, at=timestamp(at_ms))
