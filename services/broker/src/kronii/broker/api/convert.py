"""Between the broker's values and broker.proto's messages, both ways (the HTTP API's JSON is the
proto's): the state and its changes out (also for the NATS publisher), commands in."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp
from kronii.broker.core.commands import (
    GrantCommand,
    InputCommand,
    IntentCommand,
    LeaseCommand,
    SafePointCommand,
    SignInCommand,
)
from kronii.broker.core.model import ControlState
from kronii.broker.core.results import ControlChange, InputResult, SafePointAnswer
from kronii.broker.core.table import Event
from kronii.broker.v1 import broker_pb2 as pb
from kronii.desktop.input_actions import InputAction, parse_action

__all__ = [
    "action_from",
    "change_message",
    "control_changed",
    "grant_command",
    "input_command",
    "intent_command",
    "lease_command",
    "result_message",
    "safe_point_command",
    "safe_point_message",
    "sign_in_command",
    "state_message",
    "timestamp",
]


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


def change_message(change: ControlChange) -> pb.ControlChanged:
    return control_changed(change.state, change.cause, change.signal, change.at_ms)


def result_message(result: InputResult) -> pb.AgentInputResult:
    return pb.AgentInputResult(injected=result.injected, dropped=result.dropped, epoch=result.epoch)


def safe_point_message(answer: SafePointAnswer) -> pb.SafePointResponse:
    return pb.SafePointResponse(action=answer.action.value, state=state_message(answer.state))


def action_from(message: pb.InputAction) -> InputAction:
    """The proto's action validated like the JSON one (InvalidArgument naming the field)."""
    body: dict[str, object] = {"kind": message.kind}
    if message.kind == "key":
        body["keys"] = message.keys
    elif message.kind == "type":
        body["text"] = message.text
    elif message.kind == "scroll":
        body.update(dx=message.dx, dy=message.dy)
    else:
        body.update(x=message.x, y=message.y, button=message.button or 1)
    return parse_action(body)


def intent_command(session_id: str, message: pb.UserIntentRequest) -> IntentCommand:
    return IntentCommand(session_id, message.intent)


def grant_command(session_id: str, message: pb.GrantRequest) -> GrantCommand:
    return GrantCommand(session_id, message.agent, message.lease_seconds, message.window)


def lease_command(session_id: str, event: Event, message: pb.LeaseRequest) -> LeaseCommand:
    return LeaseCommand(session_id, event, message.lease_seconds)


def safe_point_command(session_id: str, message: pb.SafePointRequest) -> SafePointCommand:
    return SafePointCommand(session_id, message.step, message.sequence)


def input_command(session_id: str, action: InputAction, epoch: int) -> InputCommand[InputAction]:
    return InputCommand(session_id, action, epoch)


def sign_in_command(message: pb.SignInRequest) -> SignInCommand:
    return SignInCommand(message.challenge_id, message.client_id, message.signature)
