"""Between the broker's values and broker.proto's messages (the HTTP API's JSON is the proto's)."""

from __future__ import annotations

from kronii.broker.control_desk import ControlChange
from kronii.broker.input_lane import InputResult
from kronii.broker.messages import control_changed, state_message
from kronii.broker.v1 import broker_pb2 as pb
from kronii.common.desktop_input import InputAction, parse_action

__all__ = ["action_from", "change_message", "result_message", "state_message"]


def change_message(change: ControlChange) -> pb.ControlChanged:
    return control_changed(change.state, change.cause, change.signal, change.at_ms)


def result_message(result: InputResult) -> pb.AgentInputResult:
    return pb.AgentInputResult(injected=result.injected, dropped=result.dropped, epoch=result.epoch)


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
